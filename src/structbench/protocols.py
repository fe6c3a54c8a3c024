"""The model contract: every hook the harness looks for on a model, declared once, and how the runner asks it.

Each hook is declared once, in a small typed protocol with its documentation: the protocol
methods (`Transducer`, `SequenceScorer`, `ContinuationScorer`, `Classifier`, `TagInducer`,
`RegionSurprisalScorer`), the
optional hooks of a built model (`Trainable`, `OracleUser`, `ComputeReporter`,
`StatisticsReporter`, `ConvergenceReporter`, `Closable`) and those read from the model's class
before it is built (`ModelClass`). `Model` is their union, the reference for a model's author, and
everything else is derived from it: `HOOKS`, the names `hook` may read, and `METHOD_OF_PROTOCOL`,
from `SERVES`. The typed protocols are what the runner's `isinstance` checks use.

A model declares the protocols it speaks in its `protocols` attribute and implements the
matching method. Tokens are whitespace tokens of the suite's own vocabulary. `ask` sends a whole
split in batches and returns one JSON-serialisable prediction per example, which is what the
store keeps and the scorers read. The optional reports (compute, statistics, convergence) are
checked where they enter (`checked_compute`, `checked_statistics`,
`structbench.convergence.checked_convergence`).

`BuiltInRecipes` is not part of the contract: what the engine asks the built-in baselines about
the recipes they ship (`recipe_hook`), which the engine cannot import.
"""

from __future__ import annotations

import math
import numbers
import re
from collections.abc import Callable, Collection, Hashable, Mapping, Sequence
from itertools import chain
from operator import attrgetter
from typing import Any, ClassVar, Protocol, TypeVar, cast, runtime_checkable

from structbench.errors import NotApplicable
from structbench.specs import PROTOCOLS, Example, ProtocolName, Split, SuiteSpec

# The methods that serve a suite's protocol: a model implements the one of each protocol it declares.


@runtime_checkable
class Transducer(Protocol):
    def transduce(self, inputs: list[list[str]]) -> list[list[str]]:
        """Required for `transduction`: one output token sequence per input sequence, in order."""
        ...


@runtime_checkable
class SequenceScorer(Protocol):
    def logprob(self, sequences: list[list[str]]) -> list[float]:
        """Required for `minimal-pair` and `forced-choice`: the summed natural-log token probability
        of each sequence, in order."""
        ...


@runtime_checkable
class ContinuationScorer(Protocol):
    def loglikelihood(self, requests: list[tuple[list[str], list[str]]]) -> list[float]:
        """Required for a minimal-pair or forced-choice suite with `continuations` (`SuiteSpec.continuations`,
        agreement scored at the verb), asked instead of `logprob`: for each (context, continuation), the
        summed natural-log probability of the continuation's tokens given the context, with no end token
        (lm-evaluation-harness's `loglikelihood`), in order. Many requests share a context:
        `shared_contexts` groups them, so that each context is computed once."""
        ...


@runtime_checkable
class Classifier(Protocol):
    def classify(self, inputs: list[list[str]], labels: list[str]) -> list[str]:
        """Required for `classification`: one of `labels` per input, in order."""
        ...


@runtime_checkable
class TagInducer(Protocol):
    def induce(self, sentences: list[list[str]], n_clusters: int) -> list[list[int]]:
        """Required for `tag-induction`: one cluster id (below `n_clusters`) per token of each
        sentence, the whole corpus at once."""
        ...


@runtime_checkable
class RegionSurprisalScorer(Protocol):
    def region_surprisals(self, sentences: list[list[list[str]]]) -> list[list[float]]:
        """Required for `region-surprisal`: each sentence comes as its regions, each region a non-empty list
        of whitespace tokens (the sentence is the regions' tokens joined by single spaces); answer, per
        sentence, the surprisal in bits (-log2 p) of each region, summed over the tokens that make it up,
        each token given every token before it in the sentence, in order. `REGION_RULE` says which of a
        sub-word tokenizer's tokens make up a region."""
        ...


REGION_RULE = (
    "a token belongs to the region in which its first character falls, and the space that joins a region to "
    "the one before it belongs to the region it opens, so a token that starts with that space (GPT-2's "
    "`Ġword`) is the next region's"
)
"""Which tokens make up a region (`RegionSurprisalScorer.region_surprisals`), for a model whose tokens do
not fall on whitespace: the rule of SyntaxGym's own aligner for tokenizers with character offsets
(syntaxgym-core, `Suite.iter_region_edges` and `compute_mapping_huggingface`: a region's left edge is
the space before it)."""


# The optional hooks of a built model; the runner asks each where the model has it.


@runtime_checkable
class Trainable(Protocol):
    def fit(self, train: Split, dev: Split | None, *, seed: int) -> None:
        """Optional: learn from the draw's train split (dev for model selection only), once per seed,
        after the global generators are seeded with `seed`. Without it the model is asked untrained."""
        ...


@runtime_checkable
class OracleUser(Protocol):
    def use_oracle(self, solver: object) -> None:
        """Optional: take the suite's oracle solver, built from the draw's frozen splits (the oracle
        splits: every split of the draw, test included), before `fit`. A model with it answers from
        test-time information and should declare `comparable = False` (the `oracle` baseline)."""
        ...


@runtime_checkable
class ComputeReporter(Protocol):
    def compute(self) -> Mapping[str, int | str]:
        """Optional, any protocol: what the run cost, for the leaderboard's compute column, asked once
        after fit and prediction: any of `COMPUTE_FIELDS`, `parameters` (int, the trainable parameter
        count) and `device` (str, e.g. "cpu", "cuda:0"). Unknown keys and wrong types are dropped
        (`checked_compute`), and a `compute` that raises is logged: a bug here never loses a finished run."""
        ...


@runtime_checkable
class StatisticsReporter(Protocol):
    def statistics(self) -> Mapping[str, float]:
        """Optional, any protocol: numbers the training produced that the leaderboard shows beside the
        scores (a language model's `dev_perplexity`), asked once after fit and prediction. Names are
        snake_case identifiers (the column headers), values finite numbers; at most `MAX_STATISTICS`.
        Invalid entries are dropped (`checked_statistics`) and a `statistics` that raises is logged."""
        ...


@runtime_checkable
class ConvergenceReporter(Protocol):
    def convergence(self) -> Mapping[str, Any]:
        """Optional: whether training reached the criterion of "learned the training distribution",
        a `structbench.convergence.Convergence` or its fields; asked once after prediction, checked by
        `checked_convergence`. A run that reports it did not is flagged under-trained; a report that
        does not validate is logged and left out."""
        ...


@runtime_checkable
class Closable(Protocol):
    def close(self) -> None:
        """Optional: release what the model holds (a subprocess, a GPU) once its seed is done. The runner
        never closes a model object a Python API caller passed in: that stays theirs."""
        ...


class ModelClass(Protocol):
    """The optional hooks read from a model's class (its factory) before any model is built. A model's
    settings are its constructor's keyword arguments (`structbench.runs.settings`)."""

    name: ClassVar[str]
    """Optional: the label a `module:Class` model (or a model object) is shown under, where its own
    class defines it (an inherited one is not used); default the class name."""

    label: ClassVar[str | Callable[..., str]]
    """Optional: a classmethod `label(**settings)` that decides the shown label (a Hugging Face model:
    its folder's name); or a string, a default without settings that the built model replaces with
    an instance attribute `label` of its own (the command model's hello name)."""

    fingerprint: ClassVar[Callable[..., str]]
    """Optional classmethod `fingerprint(**settings)`: a digest of the files the model's numbers come
    from (a command's script, a checkpoint), part of the run key; default, for a `module:Class`
    model, its module's source (`structbench.runs.fingerprint`)."""

    configuration: ClassVar[Callable[..., dict[str, Any]]]
    """Optional classmethod `configuration(suite_id, **settings)`: the model's resolved settings on a
    suite (a neural baseline's recipe), part of the run key, so that a changed recipe is a new model."""

    unkeyed_settings: ClassVar[Collection[str]]
    """Optional: settings that do not change the model's answers (device, time-outs): left
    out of the run key and of the shown label. Default none."""

    comparable: ClassVar[bool]
    """Optional: False for a model that sees test-time information (an oracle): stored as such, and
    never ranked among comparable models. Default True."""

    ceiling: ClassVar[bool]
    """Optional: True for a model whose score is the suite's ceiling (the oracle), which the
    leaderboard draws as such. Default False."""


class Model(
    ModelClass,
    Transducer,
    SequenceScorer,
    ContinuationScorer,
    Classifier,
    TagInducer,
    RegionSurprisalScorer,
    Trainable,
    OracleUser,
    ComputeReporter,
    StatisticsReporter,
    ConvergenceReporter,
    Closable,
    Protocol,
):
    """Every hook the harness looks for on a model: the reference for a model's author.

    Required: `protocols`, and for each protocol declared there the method that serves it
    (`METHOD_OF_PROTOCOL`): `transduce`, `logprob`, `classify`, `induce` or `region_surprisals`; a minimal-pair or
    forced-choice suite whose candidates are continuations of a shared prefix asks `loglikelihood`
    instead of `logprob`. Everything else is optional; the engine reads each through `hook`, and a
    model that lacks one gets the default its docstring names. The hooks of `ModelClass` are read
    from the model's class before any model is built; the others from the built model.

    Not a runtime check: a model implements the hooks it needs, never all of them; its bases are
    what `isinstance` checks use.
    """

    protocols: Collection[str]
    """Required: the protocols the model speaks (`structbench.specs.PROTOCOLS`); a suite of any
    other protocol is `n/a` for it."""


def protocol_members(protocol: type) -> frozenset[str]:
    """The names `protocol` declares, its protocol bases' included: its methods and annotated attributes."""
    members: set[str] = set()
    for owner in protocol.__mro__:
        if owner is Protocol or not getattr(owner, "_is_protocol", False):
            continue
        members.update(name for name in (*vars(owner), *vars(owner).get("__annotations__", {})) if name[0] != "_")
    return frozenset(members)


HOOKS: frozenset[str] = protocol_members(Model)
"""The name of every member of `Model`: what `hook` may read."""
CLASS_HOOKS: frozenset[str] = protocol_members(ModelClass)
"""The hooks read from a model's class (its factory), before any model is built."""


def hook(owner: object, name: str, default: Any = None) -> Any:
    """`owner`'s hook `name` (see `Model`), or `default` where it has none. `owner` is a model, or
    its class for the class-level hooks. A name that is no hook is the engine's bug: a ValueError."""
    if name not in HOOKS:
        raise ValueError(f"{name!r} is not a hook of structbench.protocols.Model; declare it there first")
    return getattr(owner, name, default)


SERVES: dict[ProtocolName, type] = {
    "transduction": Transducer,
    "minimal-pair": SequenceScorer,
    "forced-choice": SequenceScorer,
    "classification": Classifier,
    "tag-induction": TagInducer,
    "region-surprisal": RegionSurprisalScorer,
}
"""The typed protocol whose one method serves each protocol (`ContinuationScorer` where a suite has
`continuations`)."""


def _only_member(protocol: type) -> str:
    (method,) = protocol_members(protocol)
    return method


METHOD_OF_PROTOCOL: dict[ProtocolName, str] = {name: _only_member(served) for name, served in SERVES.items()}
"""The method that serves each protocol, e.g. `transduction` -> `transduce`."""


# Not part of the contract: what the engine asks the built-in baselines about their recipes.


class BuiltInRecipes(Protocol):
    """An extension of the built-in baselines, not of the model contract: what the engine asks a
    registered model about the recipes it ships (the neural baselines' `recipes/MODEL/TASK.yaml`),
    through `recipe_hook`, since the engine never imports the baselines. A plugin need not define
    these, and they may change without notice; each is optional, asked on its own."""

    in_quickstart: ClassVar[Callable[[str], bool]]
    """Classmethod `in_quickstart(suite_id)`: whether `structbench quickstart --neural` trains the
    model on that suite (an id as quickstart is given it), where it learns in seconds (its recipe
    lists the suite under `quickstart`). Default: never."""

    budget_shortfall: ClassVar[Callable[[str, Mapping[str, Any]], str | None]]
    """Classmethod `budget_shortfall(suite_id, configuration)`: where runs of that stored
    configuration (`ModelClass.configuration`) on that suite are known to stop short of their
    convergence criterion, what was measured and what reaching it takes (the recipe's
    `cpu_small_shortfall`); `structbench claims` shows it beside a claim such runs leave
    undecided. Default: None."""


RECIPE_HOOKS: frozenset[str] = protocol_members(BuiltInRecipes)
"""What `recipe_hook` may read."""


def recipe_hook(factory: object, name: str) -> Any:
    """The model class `factory`'s `BuiltInRecipes` member `name`, or None where it has none."""
    if name not in RECIPE_HOOKS:
        raise ValueError(f"{name!r} is not a member of structbench.protocols.BuiltInRecipes")
    return getattr(factory, name, None)


T = TypeVar("T", bound=Hashable)


def shared_contexts(contexts: Sequence[Sequence[T]], chosen: Sequence[int]) -> tuple[list[list[T]], list[list[int]]]:
    """The distinct contexts among `contexts[i]` for `i` in `chosen`, in order of first use, and for
    each the chosen indices that have it: what a `loglikelihood` computes once per context instead
    of once per candidate."""
    groups: dict[tuple[T, ...], list[int]] = {}
    for i in chosen:
        groups.setdefault(tuple(contexts[i]), []).append(i)
    return [list(context) for context in groups], list(groups.values())


COMPUTE_FIELDS: dict[str, type] = {"parameters": int, "device": str}
"""What `ComputeReporter.compute` may report, with each value's type."""


def checked_compute(reported: object) -> tuple[dict[str, int | str], list[str]]:
    """The valid entries of a model's `compute()` answer, and one phrase per entry dropped.

    Valid: `parameters` a non-negative integer (a numpy integer too, not a bool), `device` a
    non-empty string. Anything else is dropped rather than raised, because the run it describes
    has finished and must be stored whatever its compute report says."""
    if not isinstance(reported, Mapping):
        return {}, [f"compute() returned a {type(reported).__name__}, not a mapping"]
    valid: dict[str, int | str] = {}
    dropped: list[str] = []
    for key, value in reported.items():
        if (
            key == "parameters"
            and isinstance(value, numbers.Integral)
            and not isinstance(value, bool)
            and int(value) >= 0
        ):
            valid[key] = int(value)
        elif key == "device" and isinstance(value, str) and value.strip():
            valid[key] = value.strip()
        elif key in COMPUTE_FIELDS:
            wanted = "a non-negative int" if key == "parameters" else "a non-empty str"
            dropped.append(f"{key}={repr(value)[:40]} is not {wanted}")
        else:
            dropped.append(f"unknown key {repr(key)[:40]} (known: {', '.join(COMPUTE_FIELDS)})")
    return valid, dropped


MAX_STATISTICS = 12
STATISTIC_NAME = re.compile(r"[a-z][a-z0-9_]{0,39}")


def checked_statistics(reported: object) -> tuple[dict[str, float], list[str]]:
    """The valid entries of a model's `statistics()` answer, and one phrase per entry dropped."""
    if not isinstance(reported, Mapping):
        return {}, [f"statistics() returned a {type(reported).__name__}, not a mapping"]
    valid: dict[str, float] = {}
    dropped: list[str] = []
    for key, value in reported.items():
        if not isinstance(key, str) or not STATISTIC_NAME.fullmatch(key):
            dropped.append(f"name {repr(key)[:40]} is not a snake_case identifier of at most 40 characters")
        elif isinstance(value, bool) or not isinstance(value, numbers.Real) or not math.isfinite(value):
            dropped.append(f"{key}={repr(value)[:40]} is not a finite number")
        elif len(valid) == MAX_STATISTICS:
            dropped.append(f"{key}: more than {MAX_STATISTICS} statistics")
        else:
            valid[key] = float(value)
    return valid, dropped


def method_of(spec: SuiteSpec) -> str:
    """The model method that serves `spec`: its protocol's (`METHOD_OF_PROTOCOL`), or `loglikelihood`
    where its candidates are continuations of a shared prefix."""
    return "loglikelihood" if spec.continuations else METHOD_OF_PROTOCOL[spec.protocol]


def speaks(model: object, protocol: ProtocolName, *, continuations: bool = False) -> bool:
    """Whether `model` declares `protocol` and has the method that serves it (`loglikelihood` for
    continuations)."""
    declared = hook(model, "protocols", ())
    served_by = ContinuationScorer if continuations else SERVES[protocol]
    return protocol in declared and isinstance(model, served_by)


def undeclared(model: object, protocol: ProtocolName) -> str | None:
    """The fix, in one sentence, for a model (class or object) that has the method of `protocol` but
    no `protocols` attribute at all; None otherwise. Without it the run reads as "does not speak"
    and hides why. A model that declares some protocols and leaves this one out means it: `n/a`."""
    method = METHOD_OF_PROTOCOL[protocol]
    if hasattr(model, "protocols") or not callable(hook(model, method)):
        return None
    name = model.__name__ if isinstance(model, type) else type(model).__name__
    return f"{name} has {method}() but no `protocols` attribute; add `protocols = ({protocol!r},)` to the class."


def not_spoken(label: str, model: object, spec: SuiteSpec) -> str:
    """Why `model`, shown as `label`, is `n/a` on `spec`, in one sentence."""
    if spec.continuations and speaks(model, spec.protocol):
        return (
            f"{label} does not score continuations: {spec.key} compares its candidates as continuations of a "
            "shared prefix, asked through loglikelihood(requests), which it lacks"
        )
    return f"{label} does not speak the {spec.protocol} protocol"


_INPUT = attrgetter("input")


def _inputs(examples: list[Example]) -> list[list[str]]:
    """The examples' inputs as the model is asked them: copies, so that a model cannot change the frozen data."""
    return list(map(list, map(_INPUT, examples)))


def _batched(items: list[Any], size: int) -> list[list[Any]]:
    return [items[i : i + size] for i in range(0, len(items), size)]


class InvalidAnswer(ValueError):
    """A model's answer that cannot be scored: the run fails with this one sentence, naming the
    example and what was expected, instead of being scored as if it meant something."""


def _checked(answers: Any, expected: int, method: str) -> list[Any]:
    if not isinstance(answers, list | tuple) or len(answers) != expected:
        got = len(answers) if isinstance(answers, list | tuple) else f"a {type(answers).__name__} instead of a list of"
        raise InvalidAnswer(f"{method} returned {got} answers for {expected} inputs; return one per input, in order.")
    return list(answers)


def _tokens(answer: Any, example: Example) -> list[str]:
    """A transduction answer: a list of string tokens (a string would be scored as its characters)."""
    if isinstance(answer, list | tuple):
        if set(map(type, answer)) <= {str}:  # the common case, checked at C speed: plain strings
            return list(answer)
        if all(isinstance(token, str) for token in answer):  # subclasses of str, stored as plain strings
            return [str(token) for token in answer]
    shown = type(answer).__name__ if isinstance(answer, list | tuple) else repr(answer)[:40]
    raise InvalidAnswer(
        f"transduce answered example {example.id} with {shown}, not a list of string tokens; "
        "return e.g. ['I_JUMP', 'I_WALK'], never one string."
    )


def _token_lists(answers: list[Any], examples: list[Example]) -> list[list[str]]:
    """`_tokens` of every answer of a batch: each checked at C speed when every answer is a list or tuple
    of plain strings (the common case), one by one otherwise, so that a bad answer is named."""
    if set(map(type, answers)) <= {list, tuple} and set(map(type, chain.from_iterable(answers))) <= {str}:
        return list(map(list, answers))
    return [_tokens(answer, example) for answer, example in zip(answers, examples, strict=True)]


def _label(answer: Any, labels: list[str], example: Example) -> str:
    if not isinstance(answer, str) or answer not in labels:
        raise InvalidAnswer(
            f"classify answered example {example.id} with {repr(answer)[:40]}, which is not one of the "
            f"labels {', '.join(labels)}; return one of them."
        )
    return str(answer)


def _logprob(value: Any, example: Example, method: str) -> float:
    if isinstance(value, bool) or not isinstance(value, numbers.Real) or not math.isfinite(value):
        raise InvalidAnswer(
            f"{method} answered a candidate of example {example.id} with {repr(value)[:40]}; "
            "return a finite log-probability (a float) for every candidate."
        )
    return float(value)


def _region_sentences(example: Example) -> list[list[list[str]]]:
    """What a region-surprisal model is asked for `example`: each condition's non-empty regions."""
    return [[list(region) for region in condition.regions if region] for condition in example.conditions or []]


def _region_surprisals(answers: list[Any], example: Example) -> list[list[float]]:
    """One condition's answer per entry of `answers`, checked, with 0.0 put back for each empty region
    (no token, no surprisal): the stored prediction, one list of region surprisals per condition."""
    out: list[list[float]] = []
    for answer, condition in zip(answers, example.conditions or [], strict=True):
        asked = sum(1 for region in condition.regions if region)
        if (
            not isinstance(answer, list | tuple)
            or len(answer) != asked
            or not all(isinstance(v, numbers.Real) and not isinstance(v, bool) and math.isfinite(v) for v in answer)
        ):
            raise InvalidAnswer(
                f"region_surprisals answered condition {condition.name} of example {example.id} ({asked} regions) "
                f"with {repr(answer)[:40]}; return one finite surprisal in bits per region."
            )
        values = iter(float(v) for v in answer)
        out.append([next(values) if region else 0.0 for region in condition.regions])
    return out


def _clusters(answer: Any, example: Example) -> list[int]:
    length = len(example.input)
    if (
        not isinstance(answer, list | tuple)
        or len(answer) != length
        or not all(isinstance(c, numbers.Integral) and not isinstance(c, bool) for c in answer)
    ):
        raise InvalidAnswer(
            f"induce answered sentence {example.id} ({length} tokens) with {repr(answer)[:40]}; "
            "return one integer cluster id per token."
        )
    return [int(c) for c in answer]


def ask(
    model: Any,
    spec: SuiteSpec,
    examples: list[Example],
    *,
    batch_size: int = 2048,
    on_batch: Callable[[int], object] | None = None,
) -> list[Any]:
    """Predictions of `model` for `examples` under the suite's protocol, in example order."""
    protocol = spec.protocol
    if protocol not in PROTOCOLS:
        raise ValueError(f"unknown protocol {protocol!r}")
    if not speaks(model, protocol, continuations=spec.continuations):
        raise NotApplicable(not_spoken(str(hook(model, "name", model)), model, spec))
    method = method_of(spec)
    if protocol == "tag-induction":
        # Induction clusters a whole corpus at once: batching would change the answer.
        sentences = [list(e.input) for e in examples]
        clusters = cast(TagInducer, model).induce(sentences, spec.n_clusters or 0)
        induced = _checked(clusters, len(examples), method)
        if on_batch:
            on_batch(len(examples))
        return [_clusters(answer, example) for answer, example in zip(induced, examples, strict=True)]
    predictions: list[Any] = []
    for batch in _batched(examples, batch_size):
        if protocol == "transduction":
            answers = _checked(cast(Transducer, model).transduce(_inputs(batch)), len(batch), method)
            predictions.extend(_token_lists(answers, batch))
        elif protocol == "classification":
            answers = _checked(
                cast(Classifier, model).classify(_inputs(batch), list(spec.labels or [])),
                len(batch),
                method,
            )
            labels = list(spec.labels or [])
            predictions.extend(_label(answer, labels, example) for answer, example in zip(answers, batch, strict=True))
        elif protocol == "region-surprisal":
            asked = [_region_sentences(example) for example in batch]
            regioned = [sentence for conditions in asked for sentence in conditions]
            answers = _checked(cast(RegionSurprisalScorer, model).region_surprisals(regioned), len(regioned), method)
            start = 0
            for example, conditions in zip(batch, asked, strict=True):
                predictions.append(_region_surprisals(answers[start : start + len(conditions)], example))
                start += len(conditions)
        else:
            if spec.continuations:
                requests = [(list(e.input), list(c)) for e in batch for c in (e.candidates or [])]
                scores = _checked(cast(ContinuationScorer, model).loglikelihood(requests), len(requests), method)
            else:
                flat = [list(c) for e in batch for c in (e.candidates or [])]
                scores = _checked(cast(SequenceScorer, model).logprob(flat), len(flat), method)
            start = 0
            for example in batch:
                k = len(example.candidates or [])
                predictions.append([_logprob(value, example, method) for value in scores[start : start + k]])
                start += k
        if on_batch:
            on_batch(len(batch))
    return predictions
