"""The overview's numbers: per model and suite, one generalisation cell and one in-distribution cell.

A suite's overview cell is the model's suite score (`structbench.analysis.suite_score`, carried by
its board as `SuiteBoard.scores`), the number that orders the suite's own page: per seed, the
unweighted mean of the primary metric over the suite's ranked generalisation splits, then mean and
interval over seeds. The in-distribution cell is made the same way over the board's in-distribution
splits (`split_means`); the gap view sets the two side by side. `overview_rows` orders the models by
mean win rate over head-to-head comparisons with the models they share at least `MIN_SHARED`
generalisation suites with (HELM's rule, `win_rates`) and marks each suite's best
(only where its interval lies above the suite's trivial floor's,
`structbench.reports.builders.suite_board.above_floor`).
Models on different data hashes of one suite are separate boards and never mix.
"""

from __future__ import annotations

from dataclasses import dataclass

import pandas as pd

from structbench.analysis.suite_score import SplitMean, split_means
from structbench.reports.builders.suite_board import SuiteBoard, above_floor
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


def _beats(a: float, b: float, higher_is_better: bool) -> float:
    """1 when `a` is the better score, 0.5 when the two are equal, else 0."""
    if a == b:
        return 0.5
    return 1.0 if (a > b) == higher_is_better else 0.0


MIN_SHARED = 5
"""How many generalisation suites two models must both have a score on before their results count
as head-to-head comparisons in either one's win rate."""


def win_rates(summaries: list[Summary]) -> dict[str, tuple[float, int]]:
    """Ranked model -> (share of its head-to-head comparisons it wins, how many there were).

    A comparison is one other ranked model on one generalisation suite where both have a suite
    score, counted only where the two share at least `MIN_SHARED` such suites: a win rate over
    models measured on one or two suites in common says which suites each was run on, not which is
    better (issue 46: fan-lm led with 100.0 on 1 of 3 agreement suites). The better score wins,
    equal scores count half to each. A model is compared only where it has a result, never as last
    on the suites it skipped (HELM's mean win rate counts head-to-head comparisons alone). An
    in-distribution suite (`SuiteBoard.generalises` false: scan-simple, grounded-weak) says whether a
    model learned its training data, not how it generalises: it has its columns, but no say in the
    order. A model with no counted comparison is absent."""
    results: dict[tuple[str, str], list[float]] = {}
    for summary in summaries:
        board = summary.board
        if not board.generalises:
            continue
        general = summary.cells["generalisation"]
        ranked = sorted(m for m in general if not board.set_apart(m))
        for model in ranked:
            for other in ranked:
                if other != model:
                    won = _beats(general[model].mean, general[other].mean, board.spec.higher_is_better)
                    results.setdefault((model, other), []).append(won)
    tally: dict[str, list[float]] = {}
    for (model, _), outcomes in results.items():
        if len(outcomes) >= MIN_SHARED:
            tally.setdefault(model, []).extend(outcomes)
    return {model: (sum(won) / len(won), len(won)) for model, won in tally.items()}


@dataclass
class OverviewRow:
    """One model's row of the overview matrix."""

    model: str
    apart: str
    """"" for ranked models, else why the row is set apart (`ceiling`, `not comparable`, `partial`)."""
    win_rate: float | None
    """The share of its head-to-head comparisons the model wins (`win_rates`); None where set apart or
    where it has none."""
    cells: dict[str, tuple[SeedStats, str]]
    """board slug -> (cell, mark: `best`, `tie`, `under-trained` or "")."""
    comparisons: int = 0
    """How many head-to-head comparisons `win_rate` counts."""


def overview_rows(summaries: list[Summary]) -> list[OverviewRow]:
    """Ranked models by mean win rate over head-to-head comparisons (`win_rates`), best first; then
    ranked models with no comparison; then the set-apart models."""
    rows: dict[str, OverviewRow] = {}
    for summary in summaries:
        board = summary.board
        general = summary.cells["generalisation"]
        ranked = sorted(
            (m for m in general if not board.set_apart(m)),
            key=lambda m: -general[m].mean if board.spec.higher_is_better else general[m].mean,
        )
        means = {general[m].mean for m in ranked}
        floor = board.floor({m: general[m] for m in ranked})
        higher = board.spec.higher_is_better
        # an under-trained row is never best, nor one at or below the trivial baselines or at 0
        trained = [m for m in ranked if m not in board.under_trained and above_floor(general[m], floor, higher)]
        best_mean = general[trained[0]].mean if len(means) > 1 and trained else None  # no best where all are equal
        for model, cell in general.items():
            apart = next((tag for tag, models in APART if model in getattr(board, models)), "")
            row = rows.setdefault(model, OverviewRow(model, apart, None, {}))
            row.apart = row.apart or apart
            mark = "under-trained" if model in board.under_trained else ""
            if not apart and not mark and best_mean is not None:
                if cell.mean == best_mean:
                    mark = "best"
                elif model in trained and all(board.mark(model, split) for split in board.generalisation):
                    mark = "tie"
            row.cells[board.slug] = (cell, mark)
    for model, (rate, count) in win_rates(summaries).items():
        if not rows[model].apart:
            rows[model].win_rate, rows[model].comparisons = rate, count
    return sorted(
        rows.values(),
        key=lambda r: (bool(r.apart), r.win_rate is None, -(r.win_rate or 0.0), r.model),
    )
