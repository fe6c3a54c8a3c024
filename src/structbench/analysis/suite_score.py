"""A model's score on a suite: the one number that orders models on the suite's page, fills the
suite's overview cell and is printed by `structbench quickstart`.

A suite's score splits (`score_splits`) are its ranked generalisation splits, or every ranked
split where it has no generalisation split. A model's score is, per seed, the unweighted mean of
the suite's primary metric over those splits, then the one cell function (`structbench.cells`)
over those per-seed values, so its interval is the same kind as every other cell's: Student-t
over seeds (clipped to the metric's declared range, `structbench.metrics`, as every cell's is, or to
[0, 1] for a mean of proportions of a metric that declares none), or,
for one seed of a single split of 0/1 items, Wilson over its items (a mean over several splits of
one seed gets no interval, as it is not one proportion of items). A seed that lacks any of the
splits does not count. `split_means` makes such a cell over any list of splits (the overview's
in-distribution cell is one over the in-distribution splits); it reads score rows of current runs
only (`structbench.cells.current_scores`), so that every reader scores the same seeds.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from structbench.cells import CELL_KEYS, as_stats, cells, current_scores
from structbench.specs import SeedStats, SuiteSpec

if TYPE_CHECKING:
    import pandas as pd

    from structbench.store import StoreReader


def score_splits(spec: SuiteSpec) -> list[str]:
    """The splits a model's score on `spec` averages: the ranked generalisation splits, or every
    ranked split where the suite has none."""
    ranked = [split.name for split in spec.ranked_splits]
    general = [name for name in ranked if spec.split(name).test_role == "generalisation"]
    return general or ranked


@dataclass(frozen=True)
class SplitMean:
    """One wanted cell family: per model, the per-seed mean of `metric` over `splits` of one suite's data."""

    suite: str
    version: str
    suite_hash: str
    metric: str
    splits: tuple[str, ...]


def split_means(current_scores: pd.DataFrame, wanted: Sequence[SplitMean]) -> list[dict[str, SeedStats]]:
    """model -> its cell of per-seed means (as the module docstring says), for each wanted family in
    order, from score rows of current runs; empty for a family without any such cell."""
    import pandas as pd

    rows_wanted = [
        (want.suite, want.version, want.suite_hash, split, want.metric, index, len(want.splits))
        for index, want in enumerate(wanted)
        for split in want.splits
    ]
    out: list[dict[str, SeedStats]] = [{} for _ in wanted]
    if not rows_wanted or current_scores.empty:
        return out
    targets = pd.DataFrame(
        rows_wanted, columns=["suite", "version", "suite_hash", "split", "metric", "target", "n_splits"]
    )
    rows = current_scores[current_scores.breakdown == ""].merge(
        targets, on=["suite", "version", "suite_hash", "split", "metric"]
    )
    rows = rows.dropna(subset=["value"])
    if rows.empty:
        return out
    per_seed = rows.groupby(["target", "model", "model_hash", "seed"], sort=False).agg(
        value=("value", "mean"),
        present=("split", "nunique"),
        n_splits=("n_splits", "first"),
        n=("n", "min"),
        proportion=("proportion", "all"),
    )
    per_seed = per_seed[per_seed["present"] == per_seed["n_splits"]].reset_index()
    # a mean of proportions lies in [0, 1], so its interval is clipped there; but only one split's
    # proportion is a fraction of items, which a one-seed (Wilson) interval needs
    bounded = per_seed.groupby(["target", "model"])["proportion"].all()
    per_seed["proportion"] = per_seed["proportion"] & (per_seed["n_splits"] == 1)
    # the cell function's keys: one cell per (target, model)
    frame = pd.DataFrame({key: "" for key in CELL_KEYS}, index=per_seed.index)
    frame["suite"] = per_seed["target"].astype(str)
    frame["metric"] = [wanted[int(target)].metric for target in per_seed["target"].tolist()]  # its range clips
    frame["model"] = per_seed["model"]
    frame["model_hash"] = per_seed["model_hash"]
    for column in ("seed", "value", "n", "proportion"):
        frame[column] = per_seed[column].to_numpy()
    table = cells(frame)
    clip = [bool(bounded.get((int(t), m), False)) for t, m in zip(table["suite"], table["model"], strict=True)]
    table.loc[clip, "ci_low"] = table.loc[clip, "ci_low"].clip(lower=0.0)
    table.loc[clip, "ci_high"] = table.loc[clip, "ci_high"].clip(upper=1.0)
    for row in table.to_dict("records"):
        out[int(row["suite"])][str(row["model"])] = as_stats(row)
    return out


def suite_scores(current_scores: pd.DataFrame, specs: Sequence[tuple[SuiteSpec, str]]) -> list[dict[str, SeedStats]]:
    """model -> its score, for each (suite spec, data hash) of `specs` in order, from score rows of current runs."""
    wanted = [
        SplitMean(spec.id, spec.version, suite_hash, spec.primary_metric, tuple(score_splits(spec)))
        for spec, suite_hash in specs
    ]
    return split_means(current_scores, wanted)


def group_scores(
    current_scores: pd.DataFrame, spec: SuiteSpec, suite_hash: str, groups: Mapping[str, Sequence[str]]
) -> dict[str, dict[str, SeedStats]]:
    """group -> model -> its cell of per-seed means of the primary metric over the group's splits (a suite's
    `split_groups`: SyntaxGym's circuits), from score rows of current runs, in the order of `groups`."""
    wanted = [
        SplitMean(spec.id, spec.version, suite_hash, spec.primary_metric, tuple(splits)) for splits in groups.values()
    ]
    return dict(zip(groups, split_means(current_scores, wanted), strict=True))


def stored_score(store: StoreReader, spec: SuiteSpec, suite_hash: str, label: str) -> SeedStats | None:
    """`label`'s score on `spec`'s data `suite_hash` over the current runs `store` holds; None without one."""
    scores = store.scores(suite=spec.id, version=spec.version, suite_hash=suite_hash)
    current = current_scores(scores[scores.model == label], store.runs())
    return suite_scores(current, [(spec, suite_hash)])[0].get(label)
