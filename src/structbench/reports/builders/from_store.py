"""The build stage's entry: the results store (with the registry and the frozen data) -> one `Site`
value (`structbench.reports.builders.site`) that holds everything the pages show.

`build_site` is the only step of a report that reads the store: here (the runs, scores and stored
predictions), and through the three modules it calls that read it too: the boards
(`structbench.reports.builders.boards`, whose ≈best marks re-score stored predictions in
`structbench.reports.builders.ties`) and the reference runs apart from the user's
(`structbench.reports.builders.reference_runs`). Every other module of the stage computes from what
they read, and so do the views (`structbench.reports.views`) and the writers
(`structbench.reports.writers`), neither with a store. Every reader sees the current runs only
(`structbench.cells.current_runs`).

`suites` and `models` take ids and labels or shell patterns (`seq2seq*`), so that debugging runs stay
out of a published site.
"""

from __future__ import annotations

import fnmatch
from collections.abc import Callable, Sequence
from concurrent.futures import Executor

import pandas as pd

from structbench import registry
from structbench.analysis.labels import did_you_mean, store_option
from structbench.analysis.references import load_references
from structbench.cells import current_runs, current_scores
from structbench.data import freeze, sources
from structbench.errors import UserError
from structbench.reports.builders.boards import boards, cell_table
from structbench.reports.builders.cards import suite_card
from structbench.reports.builders.conditions import Condition, conditions
from structbench.reports.builders.families import columns
from structbench.reports.builders.model_facts import answers, questions
from structbench.reports.builders.overview import overview_rows, summarise
from structbench.reports.builders.plots import model_styles
from structbench.reports.builders.predictions import board_predictions
from structbench.reports.builders.published import PublishedRow, published_row
from structbench.reports.builders.rankings import rankings
from structbench.reports.builders.reference_runs import claim_checks, reference_rows
from structbench.reports.builders.series import curves
from structbench.reports.builders.site import DEFAULT_TITLE, Site
from structbench.reports.builders.suite_board import SuiteBoard, board_order
from structbench.reports.builders.verdicts import ClaimCheck
from structbench.reports.worker import outcome, submit
from structbench.store import StoreReader
from structbench.store.bundle import plain_label


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
    store: StoreReader, stored: pd.DataFrame, suites: Sequence[str] | None, models: Sequence[str] | None
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
    store: StoreReader,
    *,
    suites: Sequence[str] | None = None,
    models: Sequence[str] | None = None,
    title: str = DEFAULT_TITLE,
    worker: Executor | None = None,
    then: Callable[[], object] | None = None,
) -> Site:
    """The site of `store`; `suites` and `models` keep only the matching suite ids and model labels
    (shell patterns). `worker`, where given, asks the model classes (`structbench.reports.builders.model_facts`)
    while this process reads the store, then checks the claims (an import of
    scipy.stats) while it builds the boards. `then` is called once the claims are handed over: what the
    caller has the worker do after them (`structbench.reports.writers.plots.Drawing.warm`)."""
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
    asked = questions(runs)
    answering = submit(worker, answers, asked)
    scores = current_scores(_select(store.scores(), suites, models), runs)
    results = cell_table(scores)
    references = [r for r in load_references() if _matches(r.suite, suites)]
    facts = outcome(answering, answers, asked)
    checking = submit(worker, claim_checks, results, runs, facts.shortfalls)
    if then is not None:
        then()
    board_list = sorted(boards(store, results, references, runs, scores, facts), key=board_order)
    summaries = summarise(scores, board_list)
    styles = model_styles(model for board in board_list for model, _ in board.rows)
    current = current_runs(runs)
    by_condition = _conditions(board_list, results)  # before the claims: the worker may still check them
    claims: list[ClaimCheck] = outcome(checking, claim_checks, results, runs, facts.shortfalls)
    return Site(
        title=title,
        results=results,
        summaries=tuple(summaries),
        rows=tuple(overview_rows(summaries)),
        columns=tuple(columns(summaries)),
        rankings=tuple(rankings(summaries)),
        curves=tuple(curves(summaries, styles)),
        conditions=by_condition,
        cards={board.slug: suite_card(board.spec, board.suite_hash) for board in board_list},
        references=tuple(references),
        claims=tuple(claims),
        skipped=tuple(_skipped(board_list, suites)),
        predictions=board_predictions(
            store.prediction_blocks(current[current.status == "done"]["id"].tolist()), current, board_list
        ),
        styles=styles,
        reference_runs=reference_rows(current)[0],
        published=_published(store, board_list),
    )


def _published(store: StoreReader, board_list: Sequence[SuiteBoard]) -> dict[str, tuple[PublishedRow, ...]]:
    """board slug -> a row per published model stored for its suite, version and data hash."""
    out: dict[str, tuple[PublishedRow, ...]] = {}
    for board in board_list:
        rows = []
        for _, version, label, _ in store.published_labels(board.spec.id):
            if version != board.spec.version:
                continue
            runs = [r for r in store.published_runs(board.spec.id, version, label) if r.suite_hash == board.suite_hash]
            if runs:
                rows.append(published_row(runs, board.generalisation))
        if rows:
            out[board.slug] = tuple(rows)
    return out
