"""Trivial baselines that prove the harness: oracle, copy, random and majority.

`oracle` solves each suite from its definition (the suite's own solver, built from the
training split), so it must score 1.0 everywhere: that proves data and scorers agree.
`copy`, `random` and `majority` are the floors a real model must clear.

Only `copy` reports compute (0 parameters): the oracle's solver, the random baseline's
vocabulary and length list, and the majority output are not parameters a leaderboard should
set beside a network's, so those rows show none.
"""

from __future__ import annotations

from collections import Counter
from typing import Any

import numpy as np

from structbench.errors import NotApplicable
from structbench.specs import PROTOCOLS, Split


class Oracle:
    """Delegates every protocol to the suite's oracle solver, which the runner builds from the frozen splits."""

    name = "oracle"
    protocols = PROTOCOLS
    ceiling = True
    """It solves a suite from its definition: the report shows it as an upper bound, never ranked."""

    def __init__(self) -> None:
        self._solver: Any = None

    def use_oracle(self, solver: object) -> None:
        self._solver = solver

    def _method(self, method: str) -> Any:
        function = getattr(self._solver, method, None)
        if function is None:
            raise NotApplicable(f"the oracle of this suite does not implement {method}")
        return function

    def transduce(self, inputs: list[list[str]]) -> list[list[str]]:
        return self._method("transduce")(inputs)  # type: ignore[no-any-return]

    def logprob(self, sequences: list[list[str]]) -> list[float]:
        return self._method("logprob")(sequences)  # type: ignore[no-any-return]

    def loglikelihood(self, requests: list[tuple[list[str], list[str]]]) -> list[float]:
        return self._method("loglikelihood")(requests)  # type: ignore[no-any-return]

    def classify(self, inputs: list[list[str]], labels: list[str]) -> list[str]:
        return self._method("classify")(inputs, labels)  # type: ignore[no-any-return]

    def induce(self, sentences: list[list[str]], n_clusters: int) -> list[list[int]]:
        return self._method("induce")(sentences, n_clusters)  # type: ignore[no-any-return]


class Copy:
    """Outputs its input tokens unchanged."""

    name = "copy"
    protocols = ("transduction",)

    def transduce(self, inputs: list[list[str]]) -> list[list[str]]:
        return [list(tokens) for tokens in inputs]

    def compute(self) -> dict[str, int | str]:
        """The leaderboard's compute: `parameters` is 0, since copying learns nothing; `device` "cpu"."""
        return {"parameters": 0, "device": "cpu"}


class Random:
    """Uniform tokens of the training output vocabulary, lengths drawn from the training targets.

    For classification it draws a label uniformly; for tag induction a cluster per token.
    Deterministic given the seed passed to `fit`.
    """

    name = "random"
    protocols = ("transduction", "classification", "tag-induction")

    def __init__(self) -> None:
        self._rng = np.random.default_rng(0)
        self._vocabulary: list[str] = []
        self._lengths: list[int] = []

    def fit(self, train: Split, dev: Split | None, *, seed: int) -> None:
        self._rng = np.random.default_rng(seed)
        targets = [e.target for e in train.examples if e.target is not None]
        self._vocabulary = sorted({token for target in targets for token in target})
        self._lengths = [len(target) for target in targets]

    def transduce(self, inputs: list[list[str]]) -> list[list[str]]:
        if not self._vocabulary:
            return [[] for _ in inputs]
        lengths = self._rng.choice(self._lengths, size=len(inputs))
        vocabulary = np.asarray(self._vocabulary)
        return [vocabulary[self._rng.integers(len(vocabulary), size=n)].tolist() for n in lengths]

    def classify(self, inputs: list[list[str]], labels: list[str]) -> list[str]:
        return [labels[i] for i in self._rng.integers(len(labels), size=len(inputs))]

    def induce(self, sentences: list[list[str]], n_clusters: int) -> list[list[int]]:
        return [self._rng.integers(n_clusters, size=len(s)).tolist() for s in sentences]


class Majority:
    """The most frequent training output (whole target sequence, or label), for every input."""

    name = "majority"
    protocols = ("transduction", "classification")

    def __init__(self) -> None:
        self._target: list[str] = []
        self._label: str | None = None

    def fit(self, train: Split, dev: Split | None, *, seed: int) -> None:
        targets = Counter(tuple(e.target) for e in train.examples if e.target is not None)
        labels = Counter(e.label for e in train.examples if e.label is not None)
        self._target = list(targets.most_common(1)[0][0]) if targets else []
        self._label = labels.most_common(1)[0][0] if labels else None

    def transduce(self, inputs: list[list[str]]) -> list[list[str]]:
        return [list(self._target) for _ in inputs]

    def classify(self, inputs: list[list[str]], labels: list[str]) -> list[str]:
        return [self._label if self._label is not None else labels[0] for _ in inputs]
