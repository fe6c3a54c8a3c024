"""The overview's numbers: per model and suite, one generalisation cell and one in-distribution cell.

A suite's overview cell is its ranked generalisation metric: per seed, the unweighted mean of
the primary metric over the board's ranked generalisation splits (`SuiteBoard.generalisation`),
then the one cell function (`structbench.cells`) over those per-seed values, so its interval is
the same kind as every other cell's: Student-t over seeds (clipped to [0, 1] for a mean of
proportions, as the cells of proportions are), or, for one seed of a single split of 0/1 items,
Wilson over its items (a mean over several splits of one seed gets no interval, as it is not one
proportion of items). A seed that lacks any of the splits does not count. The in-distribution
cell is made the same way over the board's in-distribution splits; the gap view sets the two
side by side. `overview_rows` orders the models by mean rank and marks each suite's best. Models on different data hashes of one suite are separate boards and never mix.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
import pandas as pd

from structbench.cells import CELL_KEYS, as_stats, cells
from structbench.reports.boards import SuiteBoard
from structbench.specs import SeedStats

ROLES = ("generalisation", "in-distribution")
APART = (("ceiling", "ceilings"), ("not comparable", "not_comparable"), ("partial", "partial"))
"""Why a row is set apart, and the board's set of such models, in the order a tag is chosen."""


@dataclass
class Summary:
    """One board's overview cells: role -> model -> cell."""

    board: SuiteBoard
    cells: dict[str, dict[str, SeedStats]] = field(default_factory=lambda: {role: {} for role in ROLES})

    def gap(self, model: str) -> float | None:
        """In-distribution minus generalisation mean (in the direction where positive means a drop)."""
        general = self.cells["generalisation"].get(model)
        within = self.cells["in-distribution"].get(model)
        if general is None or within is None:
            return None
        difference = within.mean - general.mean
        return difference if self.board.spec.higher_is_better else -difference


def summarise(current_scores: pd.DataFrame, board_list: list[SuiteBoard]) -> list[Summary]:
    """The overview cells of every board, from score rows of the current configurations."""
    summaries = [Summary(board) for board in board_list]
    wanted = []
    for index, board in enumerate(board_list):
        for role, splits in (("generalisation", board.generalisation), ("in-distribution", board.in_distribution)):
            wanted += [(board.spec.id, board.spec.version, board.suite_hash, split, board.spec.primary_metric, index,
                        role, len(splits)) for split in splits]  # fmt: skip
    if not wanted or current_scores.empty:
        return summaries
    targets = pd.DataFrame(
        wanted, columns=["suite", "version", "suite_hash", "split", "metric", "board", "role", "n_splits"]
    )
    rows = current_scores[current_scores.breakdown == ""].merge(
        targets, on=["suite", "version", "suite_hash", "split", "metric"]
    )
    rows = rows.dropna(subset=["value"])
    if rows.empty:
        return summaries
    per_seed = rows.groupby(["board", "role", "model", "model_hash", "seed"], sort=False).agg(
        value=("value", "mean"),
        present=("split", "nunique"),
        n_splits=("n_splits", "first"),
        n=("n", "min"),
        proportion=("proportion", "all"),
    )
    per_seed = per_seed[per_seed["present"] == per_seed["n_splits"]].reset_index()
    # a mean of proportions lies in [0, 1], so its interval is clipped there; but only one split's
    # proportion is a fraction of items, which a one-seed (Wilson) interval needs
    bounded = per_seed.groupby(["board", "role", "model"])["proportion"].all()
    per_seed["proportion"] = per_seed["proportion"] & (per_seed["n_splits"] == 1)
    # the cell function's keys: one cell per (board, role, model)
    frame = pd.DataFrame({key: "" for key in CELL_KEYS}, index=per_seed.index)
    frame["suite"] = per_seed["board"].astype(str)
    frame["split"] = per_seed["role"]
    frame["model"] = per_seed["model"]
    frame["model_hash"] = per_seed["model_hash"]
    for column in ("seed", "value", "n", "proportion"):
        frame[column] = per_seed[column].to_numpy()
    table = cells(frame)
    clip = [
        bool(bounded.get((int(b), r, m), False))
        for b, r, m in zip(table["suite"], table["split"], table["model"], strict=True)
    ]
    table.loc[clip, "ci_low"] = table.loc[clip, "ci_low"].clip(lower=0.0)
    table.loc[clip, "ci_high"] = table.loc[clip, "ci_high"].clip(upper=1.0)
    boards_index = table["suite"].astype(int).to_numpy()
    for position, row in zip(np.arange(len(table)), table.to_dict("records"), strict=True):
        summaries[int(boards_index[position])].cells[str(row["split"])][str(row["model"])] = as_stats(row)
    return summaries


@dataclass
class OverviewRow:
    """One model's row of the overview matrix."""

    model: str
    apart: str
    """"" for ranked models, else why the row is set apart (`ceiling`, `not comparable`, `partial`)."""
    mean_rank: float | None
    cells: dict[str, tuple[SeedStats, str]]
    """board slug -> (cell, mark)."""


def overview_rows(summaries: list[Summary]) -> list[OverviewRow]:
    """Ranked models by mean rank over the shown suites (a suite a model has no cell on ranks it
    last there), then the set-apart models."""
    positions: list[dict[str, int]] = []
    rows: dict[str, OverviewRow] = {}
    for summary in summaries:
        board = summary.board
        general = summary.cells["generalisation"]
        ranked = sorted(
            (m for m in general if not board.set_apart(m)),
            key=lambda m: -general[m].mean if board.spec.higher_is_better else general[m].mean,
        )
        positions.append({model: position for position, model in enumerate(ranked, start=1)})
        means = {general[m].mean for m in ranked}
        best_mean = general[ranked[0]].mean if len(means) > 1 else None  # no best where all are equal
        for model, cell in general.items():
            apart = next((tag for tag, models in APART if model in getattr(board, models)), "")
            row = rows.setdefault(model, OverviewRow(model, apart, None, {}))
            row.apart = row.apart or apart
            mark = ""
            if not apart and best_mean is not None:
                if cell.mean == best_mean:
                    mark = "best"
                elif all(board.mark(model, split) for split in board.generalisation):
                    mark = "tie"
            row.cells[board.slug] = (cell, mark)
    ranked_models = {model for ranks in positions for model in ranks}
    suites = [ranks for ranks in positions if ranks]
    for model in ranked_models:
        if not rows[model].apart:
            rows[model].mean_rank = sum(ranks.get(model, len(ranks) + 1) for ranks in suites) / len(suites)
    return sorted(
        rows.values(),
        key=lambda r: (bool(r.apart), r.mean_rank if r.mean_rank is not None else float("inf"), r.model),
    )
