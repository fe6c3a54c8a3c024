"""The adapter protocols a model can implement, and how the runner asks each of them.

A model declares the protocols it speaks in its `protocols` attribute and implements the
matching method. Tokens are whitespace tokens of the suite's own vocabulary. Each
`ask_*` function sends a whole split in batches and returns one JSON-serialisable
prediction per example, which is what the store keeps and the scorers read.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Protocol, cast, runtime_checkable

from structbench.errors import NotApplicable
from structbench.specs import PROTOCOLS, Example, Split, SuiteSpec

METHOD_OF_PROTOCOL: dict[str, str] = {
    "transduction": "transduce",
    "minimal-pair": "logprob",
    "forced-choice": "logprob",
    "classification": "classify",
    "tag-induction": "induce",
}


@runtime_checkable
class Trainable(Protocol):
    """A model that learns from the train split (dev for model selection only) before it is asked."""

    def fit(self, train: Split, dev: Split | None, *, seed: int) -> None: ...


@runtime_checkable
class OracleUser(Protocol):
    """A model that answers with the suite's own oracle solver (the `oracle` baseline): the runner
    builds the solver from the frozen splits of the draw and hands it over before `fit`."""

    def use_oracle(self, solver: object) -> None: ...


@runtime_checkable
class Transducer(Protocol):
    def transduce(self, inputs: list[list[str]]) -> list[list[str]]: ...


@runtime_checkable
class SequenceScorer(Protocol):
    """Minimal-pair and forced-choice: sum of natural-log token probabilities per sequence."""

    def logprob(self, sequences: list[list[str]]) -> list[float]: ...


@runtime_checkable
class Classifier(Protocol):
    def classify(self, inputs: list[list[str]], labels: list[str]) -> list[str]: ...


@runtime_checkable
class TagInducer(Protocol):
    def induce(self, sentences: list[list[str]], n_clusters: int) -> list[list[int]]: ...


SERVES: dict[str, type] = {
    "transduction": Transducer,
    "minimal-pair": SequenceScorer,
    "forced-choice": SequenceScorer,
    "classification": Classifier,
    "tag-induction": TagInducer,
}
"""The typed protocol class whose method serves each protocol."""


def speaks(model: object, protocol: str) -> bool:
    """Whether `model` declares `protocol` and has the method that serves it."""
    declared = getattr(model, "protocols", ())
    return protocol in declared and isinstance(model, SERVES[protocol])


def _batched(items: list[Any], size: int) -> list[list[Any]]:
    return [items[i : i + size] for i in range(0, len(items), size)]


def _checked(answers: list[Any], expected: int, method: str) -> list[Any]:
    if not isinstance(answers, list) or len(answers) != expected:
        got = len(answers) if isinstance(answers, list) else type(answers).__name__
        raise ValueError(f"{method} returned {got} answers for {expected} inputs")
    return answers


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
    if not speaks(model, protocol):
        raise NotApplicable(f"{getattr(model, 'name', model)} does not speak {protocol}")
    method = METHOD_OF_PROTOCOL[protocol]
    if protocol == "tag-induction":
        # Induction clusters a whole corpus at once: batching would change the answer.
        sentences = [list(e.input) for e in examples]
        clusters = cast(TagInducer, model).induce(sentences, spec.n_clusters or 0)
        induced = _checked(clusters, len(examples), method)
        if on_batch:
            on_batch(len(examples))
        return [list(map(int, p)) for p in induced]
    predictions: list[Any] = []
    for batch in _batched(examples, batch_size):
        if protocol == "transduction":
            answers = _checked(cast(Transducer, model).transduce([list(e.input) for e in batch]), len(batch), method)
            predictions.extend([str(token) for token in answer] for answer in answers)
        elif protocol == "classification":
            answers = _checked(
                cast(Classifier, model).classify([list(e.input) for e in batch], list(spec.labels or [])),
                len(batch),
                method,
            )
            predictions.extend(str(a) for a in answers)
        else:
            flat = [list(c) for e in batch for c in (e.candidates or [])]
            scores = _checked(cast(SequenceScorer, model).logprob(flat), len(flat), method)
            start = 0
            for example in batch:
                k = len(example.candidates or [])
                predictions.append([float(s) for s in scores[start : start + k]])
                start += k
        if on_batch:
            on_batch(len(batch))
    return predictions
