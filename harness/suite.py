"""The base class every suite derives from: spec, data generation, scoring and oracle.

A suite is a class with a `spec` (what it is), `sources` (published files it reads, if
any), `generate` (the examples of every split of one draw, deterministically) and
optionally its own metrics and an oracle solver. The harness freezes what `generate`
returns; it never calls `generate` at evaluation time once the data is built.
"""

from __future__ import annotations

import sys
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any, ClassVar

from structbench.errors import NotApplicable
from structbench.scoring import SplitScores, score_protocol
from structbench.sources import SourceFile, resolve
from structbench.specs import Example, Split, SuiteSpec


class RuleTransducer:
    """A transduction oracle made from a rule that maps one input to its output.

    An input the rule rejects (ValueError or IndexError) gets an empty output, which scores
    as wrong, instead of failing the whole run.
    """

    protocols = ("transduction",)

    def __init__(self, name: str, rule: Callable[[list[str]], list[str]]) -> None:
        self.name = name
        self._rule = rule

    def transduce(self, inputs: list[list[str]]) -> list[list[str]]:
        outputs = []
        for tokens in inputs:
            try:
                outputs.append(self._rule(tokens))
            except (ValueError, IndexError):
                outputs.append([])
        return outputs


class SourceFiles:
    """Resolves a suite's pinned files by their relative path, with one source folder override."""

    def __init__(self, sources: Sequence[SourceFile], source_dir: Path | None) -> None:
        self._by_path = {source.path: source for source in sources}
        self._source_dir = source_dir

    def path(self, relative: str) -> Path:
        """Local, hash-checked copy of the pinned file `relative`."""
        return resolve(self._by_path[relative], self._source_dir)

    def read_text(self, relative: str) -> str:
        return self.path(relative).read_text(encoding="utf-8")


class Suite:
    """A versioned benchmark unit. Subclasses set `spec` and implement `generate`."""

    spec: ClassVar[SuiteSpec]
    sources: ClassVar[tuple[SourceFile, ...]] = ()
    breakdown_keys: ClassVar[tuple[str, ...]] = ()
    """`Example.meta` keys over which the per-example correctness is broken down."""

    def generate(self, draw: int, files: SourceFiles) -> Mapping[str, list[Example]]:
        """Return the examples of every declared split of `draw`; must be deterministic."""
        raise NotImplementedError

    def score(self, split: Split, predictions: Sequence[Any]) -> SplitScores:
        """Score one split's predictions; subclasses add suite-specific metrics on top."""
        return score_protocol(self.spec.protocol, split.examples, predictions, self.breakdown_keys)

    def oracle(self, train: Split) -> object:
        """A solver implementing the suite's protocol from its definition (see structbench.baselines.trivial)."""
        raise NotApplicable(f"{self.spec.id} has no oracle solver")

    @classmethod
    def released_manifest(cls) -> Path | None:
        """The committed manifest of this version, if it was released: `manifests/ID@VERSION.json`."""
        module_file = getattr(sys.modules[cls.__module__], "__file__", None)
        if module_file is None:
            return None
        path = Path(module_file).parent / "manifests" / f"{cls.spec.key}.json"
        return path if path.is_file() else None
