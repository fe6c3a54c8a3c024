"""The site's build stage: the results store (with the registry and the frozen data) -> one `Site`
value that holds everything the pages show.

`build_site` is the only step of a report that reads the store: the boards with their ranks, marks
and compute (`structbench.reports.boards`), the overview cells (`structbench.reports.overview`) and
its summary columns per family (`structbench.reports.families`), the learning curves
(`structbench.reports.series`), each board's conditions (`structbench.reports.conditions`) and suite
card (`structbench.reports.cards`), the claims' verdicts (on the reference runs and on the user's own
apart, `structbench.reports.verdicts`), what made each row of reference runs
(`structbench.reports.provenance`), the published numbers, the suites without results and the
stored predictions the error browser shows (`structbench.reports.outputs`). Every reader sees the
current runs only (`structbench.cells.current_runs`). The views (`structbench.reports.views`) turn a
`Site` into page contexts and the writers (`structbench.reports.writers`) write them, neither with a
store.

`suites` and `models` take ids and labels or shell patterns (`seq2seq*`), so that debugging runs stay
out of a published site.
"""

from __future__ import annotations

import fnmatch
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import pandas as pd

from structbench import registry
from structbench.analysis.references import Reference, load_references
from structbench.analysis.stored import did_you_mean, store_option
from structbench.cells import current_runs, current_scores
from structbench.data import freeze, sources
from structbench.errors import UserError
from structbench.reports.boards import SuiteBoard, boards, cell_table
from structbench.reports.cards import SuiteCard, suite_card
from structbench.reports.conditions import Condition, conditions
from structbench.reports.families import Column, columns
from structbench.reports.figures import Style, model_styles
from structbench.reports.outputs import BoardOutputs, board_outputs
from structbench.reports.overview import OverviewRow, Summary, overview_rows, summarise
from structbench.reports.provenance import Provenance, reference_rows
from structbench.reports.series import Curve, curves
from structbench.reports.verdicts import ClaimCheck, claim_checks
from structbench.specs import family_rank, natural_key
from structbench.store import Store
from structbench.store.bundle import plain_label

DEFAULT_TITLE = "structbench leaderboard"


@dataclass(frozen=True)
class Site:
    """Everything the site shows, read from one store: built once, then only viewed and written."""

    title: str
    results: pd.DataFrame
    """Every cell of the current runs (`structbench.reports.boards.RESULT_COLUMNS`), in cell-key order."""
    summaries: tuple[Summary, ...]
    """Each board's overview cells, one per board in board order."""
    rows: tuple[OverviewRow, ...]
    """The overview's rows: ranked models by mean win rate over head-to-head comparisons, then the set-apart ones."""
    columns: tuple[Column, ...]
    """The overview's summary columns: one per family and kind of suite (generalisation, in-distribution)."""
    curves: tuple[Curve, ...]
    """The learning curves of the suite series with results."""
    conditions: Mapping[str, tuple[Condition, ...]]
    """board slug -> its per-condition cells of the primary metric."""
    cards: Mapping[str, SuiteCard]
    """board slug -> its suite card."""
    references: tuple[Reference, ...]
    """The published rows of the shown suites."""
    claims: tuple[ClaimCheck, ...]
    """Each claim checked on the measured cells: on the reference runs and on the user's apart, where
    the store holds reference runs (`structbench.reports.verdicts`)."""
    skipped: tuple[tuple[str, str], ...]
    """(suite key, why it has no results) of every installed suite the site would show but has no board."""
    outputs: Mapping[str, BoardOutputs]
    """board slug -> the predictions and examples its error browser shows (boards with finished runs)."""
    styles: Mapping[str, Style]
    """model label -> how every plot of the site draws it (`model_styles` of every label shown)."""
    reference_runs: Mapping[str, Provenance]
    """model label -> what made its runs, over every board, for the rows of reference runs
    (`structbench.reports.provenance`); each board holds its own (`SuiteBoard.reference_runs`)."""

    @property
    def boards(self) -> tuple[SuiteBoard, ...]:
        """One per suite version and data hash, grouped by family (`FAMILY_ORDER`), then by page name
        with its numbers by value (`board_order`): the boards of `summaries`, which hold one each."""
        return tuple(summary.board for summary in self.summaries)


def _matches(value: str, patterns: Sequence[str] | None) -> bool:
    return patterns is None or any(fnmatch.fnmatchcase(value, pattern) for pattern in patterns)


def _select(frame: pd.DataFrame, suites: Sequence[str] | None, models: Sequence[str] | None) -> pd.DataFrame:
    """The rows of `frame` (runs or scores) whose suite and model match (a reference run's label as the
    model's: `--models ngram` keeps `ngram (reference)` too); the patterns are tried on each distinct
    name once, not on each of the score rows."""
    for column, patterns in (("suite", suites), ("model", models)):
        if patterns is not None:
            names = [
                name
                for name in frame[column].unique().tolist()
                if _matches(str(name), patterns) or (column == "model" and _matches(plain_label(str(name)), patterns))
            ]
            frame = frame[frame[column].isin(names)]
    return frame


def board_order(board: SuiteBoard) -> tuple[int, str, tuple[tuple[str | int, ...], str]]:
    """Where a board stands in every list of suites (overview columns, suite indexes, `leaderboard.md`):
    by family (`FAMILY_ORDER`), then by page name with its numbers by value (`natural_key`)."""
    return (*family_rank(board.spec.family), natural_key(board.slug))


def _skipped(board_list: Sequence[SuiteBoard], suites: Sequence[str] | None) -> list[tuple[str, str]]:
    """(suite key, why it has no results) of every installed suite the site would show but has no board."""
    shown = {board.spec.id for board in board_list}
    out = []
    for name in registry.suite_names():
        if name in shown or not _matches(name, suites):
            continue
        suite = registry.suite(name)
        user_files = [source for source in suite.sources if not source.pinned]
        missing = [source.path for source in suite.sources if source.pinned and not sources.is_local(source)]
        if user_files:
            reason = "needs your own copy of licensed data (" + ", ".join(s.path for s in user_files) + ")"
        elif freeze.built_manifest(suite) is not None:
            reason = "no runs in this store"
        elif missing:
            reason = (
                f"not built here: {len(missing)} published file{'s are' if len(missing) > 1 else ' is'} not on this "
                f"machine ({missing[0]}{', …' if len(missing) > 1 else ''}); `structbench build {suite.spec.id}` "
                "downloads them from their pinned addresses"
            )
        else:
            reason = "no runs in this store, and not built here"
        out.append((suite.spec.key, reason))
    return out


def _conditions(board_list: Sequence[SuiteBoard], results: pd.DataFrame) -> dict[str, tuple[Condition, ...]]:
    """board slug -> its conditions, from the cells of its primary metric with a breakdown."""
    breakdowns = results[results.breakdown != ""]
    by_board = dict(list(breakdowns.groupby(["suite", "version", "suite_hash"])))
    out = {}
    for board in board_list:
        mine = by_board.get((board.spec.id, board.spec.version, board.suite_hash), breakdowns.iloc[:0])
        out[board.slug] = tuple(conditions(board, mine[mine.metric == board.spec.primary_metric]))
    return out


def _refuse_unmatched(
    store: Store, stored: pd.DataFrame, suites: Sequence[str] | None, models: Sequence[str] | None
) -> None:
    """Refuse a `--suites` pattern that matches no suite of the store or of this installation, and a
    `--models` pattern that matches no stored label, in one sentence with the closest names: one typo
    among several patterns (`'scan-*,typo'`) would otherwise narrow the site silently. `stored` is
    every run of the store."""
    for what, patterns, names in (
        ("suites", suites, sorted(set(map(str, stored.suite)) | set(registry.suite_names()))),
        ("models", models, sorted({name for label in map(str, stored.model) for name in (label, plain_label(label))})),
    ):
        unmatched = [pattern for pattern in patterns or () if not any(_matches(name, [pattern]) for name in names)]
        if unmatched:
            kind = "suite of the store or installed here" if what == "suites" else "model label of the store"
            raise UserError(
                f"--{what} {', '.join(map(repr, unmatched))} matches no {kind}; {did_you_mean(unmatched, names)}"
                f"give them as `structbench runs{store_option(store.path)}` lists them (shell patterns such as "
                "'scan-*' work), or leave the unmatched ones out."
            )


def build_site(
    store: Store,
    *,
    suites: Sequence[str] | None = None,
    models: Sequence[str] | None = None,
    title: str = DEFAULT_TITLE,
) -> Site:
    """The site of `store`; `suites` and `models` keep only the matching suite ids and model labels
    (shell patterns)."""
    stored = store.runs()
    runs = _select(stored, suites, models)
    if runs.empty and (suites or models):
        guess = did_you_mean(suites or [], sorted(set(stored.suite))) + did_you_mean(
            models or [], sorted(set(stored.model))
        )
        raise UserError(
            f"no runs in {store.path} match "
            + " and ".join(
                f"--{what} {' '.join(given)}" for what, given in (("suites", suites), ("models", models)) if given
            )
            + f"; {guess}give suite ids and model labels as the report shows them (shell patterns such as 'scan-*' "
            f"work; `structbench runs{store_option(store.path)}` lists them)."
        )
    _refuse_unmatched(store, stored, suites, models)
    scores = current_scores(_select(store.scores(), suites, models), runs)
    results = cell_table(scores)
    references = [r for r in load_references() if _matches(r.suite, suites)]
    board_list = sorted(boards(store, results, references, runs, scores), key=board_order)
    summaries = summarise(scores, board_list)
    styles = model_styles(model for board in board_list for model, _ in board.rows)
    current = current_runs(runs)
    return Site(
        title=title,
        results=results,
        summaries=tuple(summaries),
        rows=tuple(overview_rows(summaries)),
        columns=tuple(columns(summaries)),
        curves=tuple(curves(summaries, styles)),
        conditions=_conditions(board_list, results),
        cards={board.slug: suite_card(board.spec, board.suite_hash) for board in board_list},
        references=tuple(references),
        claims=tuple(claim_checks(results, runs)),
        skipped=tuple(_skipped(board_list, suites)),
        outputs=board_outputs(store, current, board_list),
        styles=styles,
        reference_runs=reference_rows(current)[0],
    )
