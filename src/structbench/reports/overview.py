"""The overview's numbers: per model and suite, one generalisation cell and one in-distribution cell.

A suite's overview cell is the model's suite score (`structbench.analysis.suite_score`, carried by
its board as `SuiteBoard.scores`), the number that orders the suite's own page: per seed, the
unweighted mean of the primary metric over the suite's ranked generalisation splits, then mean and
interval over seeds. The in-distribution cell is made the same way over the board's in-distribution
splits (`split_means`); the gap view sets the two side by side. `overview_rows` orders the models by
mean rank and marks each suite's best. Models on different data hashes of one suite are separate
boards and never mix.
"""

from __future__ import annotations

from dataclasses import dataclass

import pandas as pd

from structbench.analysis.suite_score import SplitMean, split_means
from structbench.reports.boards import SuiteBoard
from structbench.specs import SeedStats

APART = (("ceiling", "ceilings"), ("not comparable", "not_comparable"), ("partial", "partial"))
"""Why a row is set apart, and the board's set of such models, in the order a tag is chosen."""


@dataclass
class Summary:
    """One board's overview cells: role (`generalisation`, `in-distribution`) -> model -> cell."""

    board: SuiteBoard
    cells: dict[str, dict[str, SeedStats]]

    def gap(self, model: str) -> float | None:
        """In-distribution minus generalisation mean (in the direction where positive means a drop)."""
        general = self.cells["generalisation"].get(model)
        within = self.cells["in-distribution"].get(model)
        if general is None or within is None:
            return None
        difference = within.mean - general.mean
        return difference if self.board.spec.higher_is_better else -difference


def summarise(current_scores: pd.DataFrame, board_list: list[SuiteBoard]) -> list[Summary]:
    """The overview cells of every board: its suite scores, and the in-distribution cells from score rows
    of the current runs."""
    wanted = [
        SplitMean(board.spec.id, board.spec.version, board.suite_hash, board.spec.primary_metric,
                  tuple(board.in_distribution))
        for board in board_list
    ]  # fmt: skip
    within = split_means(current_scores, wanted)
    return [
        Summary(board, {"generalisation": dict(board.scores), "in-distribution": cells})
        for board, cells in zip(board_list, within, strict=True)
    ]


@dataclass
class OverviewRow:
    """One model's row of the overview matrix."""

    model: str
    apart: str
    """"" for ranked models, else why the row is set apart (`ceiling`, `not comparable`, `partial`)."""
    mean_rank: float | None
    cells: dict[str, tuple[SeedStats, str]]
    """board slug -> (cell, mark: `best`, `tie`, `under-trained` or "")."""


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
        trained = [m for m in ranked if m not in board.under_trained]  # an under-trained row is never best
        best_mean = general[trained[0]].mean if len(means) > 1 and trained else None  # no best where all are equal
        for model, cell in general.items():
            apart = next((tag for tag, models in APART if model in getattr(board, models)), "")
            row = rows.setdefault(model, OverviewRow(model, apart, None, {}))
            row.apart = row.apart or apart
            mark = "under-trained" if model in board.under_trained else ""
            if not apart and not mark and best_mean is not None:
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
