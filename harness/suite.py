"""The abstract base every suite derives from: spec, data generation, extra metrics and oracle.

A suite declares what it is (`spec`, made with the helpers of `structbench.specs`), which
published files it reads (`sources`), and implements `generate` (the examples of every split
of one draw, deterministically). Optionally it adds per-example metrics (`extra_metrics`),
meta keys to break its primary metric down by (`breakdown_keys`) and an oracle solver built
from the frozen splits the runner hands it. Aggregation (means, n, breakdowns) belongs to the
harness, freezing and storage too: a suite module imports neither, nor another suite module
(shared pieces live in `structbench.suites.common`). The harness freezes what `generate`
returns and never calls it at evaluation time once the data is built.
"""

from __future__ import annotations

import sys
from abc import ABC, abstractmethod
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any, ClassVar

from structbench.errors import NotApplicable
from structbench.scoring import PerExample, SplitScores, score_split
from structbench.sources import SourceFile, resolve
from structbench.specs import Example, Split, SuiteSpec


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


class Suite(ABC):
    """A versioned benchmark unit. Subclasses set `spec` and implement `generate`."""

    spec: ClassVar[SuiteSpec]
    sources: ClassVar[tuple[SourceFile, ...]] = ()
    breakdown_keys: ClassVar[tuple[str, ...]] = ()
    """`Example.meta` keys over which the primary metric is broken down (attractors, length, bin)."""
    superseded: ClassVar[tuple[type[Suite], ...]] = ()
    """Earlier versions of this suite, kept loadable as `ID@VERSION` so that stored results and
    released manifests of theirs stay usable; the registry serves the class itself by default."""

    @abstractmethod
    def generate(self, draw: int, files: SourceFiles) -> Mapping[str, list[Example]]:
        """Return the examples of every declared split of `draw`; must be deterministic."""

    def extra_metrics(
        self, split: str, examples: Sequence[Example], predictions: Sequence[Any]
    ) -> Mapping[str, PerExample]:
        """Suite-specific metrics as per-example values (the harness aggregates them); none by default."""
        return {}

    def score(self, split: Split, predictions: Sequence[Any]) -> SplitScores:
        """Every metric of one split: the protocol's, the suite's extras, breakdowns of the primary one."""
        return score_split(
            self.spec.protocol,
            self.spec.primary_metric,
            split.examples,
            predictions,
            self.extra_metrics(split.name, split.examples, predictions),
            self.breakdown_keys,
        )

    def oracle(self, splits: Mapping[str, Split]) -> object:
        """A solver implementing the suite's protocol from its definition (see structbench.baselines.trivial).

        `splits` holds the frozen splits of the draw being evaluated, by name; an oracle reads
        the gold answers of test splits only where the suite has no rule to compute them from."""
        raise NotApplicable(f"{self.spec.id} has no oracle solver")

    @classmethod
    def released_manifest(cls) -> Path | None:
        """The committed manifest of this version, if it was released: `manifests/ID@VERSION.json`."""
        module_file = getattr(sys.modules[cls.__module__], "__file__", None)
        if module_file is None:
            return None
        path = Path(module_file).parent / "manifests" / f"{cls.spec.key}.json"
        return path if path.is_file() else None
