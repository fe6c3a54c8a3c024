"""The adapter protocols a model can implement, and how the runner asks each of them.

A model declares the protocols it speaks in its `protocols` attribute and implements the
matching method. Tokens are whitespace tokens of the suite's own vocabulary. Each
`ask_*` function sends a whole split in batches and returns one JSON-serialisable
prediction per example, which is what the store keeps and the scorers read.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any, Protocol, runtime_checkable

from structbench.errors import NotApplicable
from structbench.specs import PROTOCOLS, Example, Split, SuiteSpec
from structbench.specs import Protocol as ProtocolName

METHOD_OF_PROTOCOL: dict[str, str] = {
    "transduction": "transduce",
    "minimal-pair": "logprob",
    "forced-choice": "logprob",
    "classification": "classify",
    "tag-induction": "induce",
}


@runtime_checkable
class Model(Protocol):
    """Anything evaluated by the harness. `fit` is optional: zero-shot models omit it."""

    name: str
    protocols: Sequence[ProtocolName]


class Trainable(Protocol):
    def fit(self, train: Split, dev: Split | None, *, seed: int) -> None: ...


class Transducer(Model, Protocol):
    def transduce(self, inputs: list[list[str]]) -> list[list[str]]: ...


class SequenceScorer(Model, Protocol):
    """Minimal-pair and forced-choice: sum of natural-log token probabilities per sequence."""

    def logprob(self, sequences: list[list[str]]) -> list[float]: ...


class Classifier(Model, Protocol):
    def classify(self, inputs: list[list[str]], labels: list[str]) -> list[str]: ...


class TagInducer(Model, Protocol):
    def induce(self, sentences: list[list[str]], n_clusters: int) -> list[list[int]]: ...


def speaks(model: object, protocol: str) -> bool:
    """Whether `model` declares `protocol` and has the method that serves it."""
    declared = getattr(model, "protocols", ())
    return protocol in declared and callable(getattr(model, METHOD_OF_PROTOCOL[protocol], None))


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
        clusters = model.induce(sentences, spec.n_clusters or 0)
        induced = _checked(clusters, len(examples), method)
        if on_batch:
            on_batch(len(examples))
        return [list(map(int, p)) for p in induced]
    predictions: list[Any] = []
    for batch in _batched(examples, batch_size):
        if protocol == "transduction":
            answers = _checked(model.transduce([list(e.input) for e in batch]), len(batch), method)
            predictions.extend([str(token) for token in answer] for answer in answers)
        elif protocol == "classification":
            answers = _checked(
                model.classify([list(e.input) for e in batch], list(spec.labels or [])), len(batch), method
            )
            predictions.extend(str(a) for a in answers)
        else:
            flat = [list(c) for e in batch for c in (e.candidates or [])]
            scores = _checked(model.logprob(flat), len(flat), method)
            start = 0
            for example in batch:
                k = len(example.candidates or [])
                predictions.append([float(s) for s in scores[start : start + k]])
                start += k
        if on_batch:
            on_batch(len(batch))
    return predictions
