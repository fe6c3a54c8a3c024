"""The rows of published runs on a suite page: each published model's accuracy per split and its suite score,
with where its per-item results came from, set apart from the measured rows and never ranked.

A value, not a reader: `from_store` reads the published runs (`structbench.store.published`) of each board's
suite, version and data hash and hands them here. A split's value is the share of its items right, averaged
over the model's seeds; the suite score is each seed's mean over the board's score splits, averaged over the
seeds, as a measured row's.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

if TYPE_CHECKING:  # the site's views import this module, and never the store
    from structbench.store.published import PublishedRun


@dataclass(frozen=True)
class PublishedRow:
    """One published model on one board."""

    label: str
    """`published:NAME`."""
    seeds: int
    values: Mapping[str, float]
    """split -> share of its items right, mean over seeds (splits the model reports)."""
    score: float | None
    """Mean over seeds of the mean over the score splits; None where a score split is missing."""
    sources: tuple[Mapping[str, str], ...]
    """Each distinct source of its seeds (paper, file, sha256, url, commit)."""

    @property
    def name(self) -> str:
        """The model's name without `published:`."""
        return self.label.partition(":")[2]


def published_row(runs: Sequence[PublishedRun], score_splits: Sequence[str]) -> PublishedRow:
    """The row of one published model's seeds (`runs`, all of one label)."""
    per_seed = [
        {split: sum(ok for ok, _ in items.values()) / len(items) for split, items in run.items.items() if items}
        for run in runs
    ]
    splits = sorted({split for values in per_seed for split in values})
    values = {
        split: sum(v[split] for v in per_seed if split in v) / sum(1 for v in per_seed if split in v)
        for split in splits
    }
    complete = bool(score_splits) and all(all(s in v for s in score_splits) for v in per_seed)
    score = (
        sum(sum(v[s] for s in score_splits) / len(score_splits) for v in per_seed) / len(per_seed) if complete else None
    )
    sources: list[Mapping[str, str]] = []
    for run in runs:
        if dict(run.source) not in [dict(s) for s in sources]:
            sources.append(dict(run.source))
    return PublishedRow(label=runs[0].model, seeds=len(runs), values=values, score=score, sources=tuple(sources))
