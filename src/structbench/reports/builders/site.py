"""The site as one value: everything its pages show, read from one store by the build and then only
viewed and written.

`Site` is what the build stage (`structbench.reports.builders.from_store.build_site`) hands to the views
(`structbench.reports.views`), which turn it into page contexts, and to the writers
(`structbench.reports.writers`), which write the files: the boards with their ranks, marks and compute
(`structbench.reports.builders.suite_board`), the overview cells (`structbench.reports.builders.overview`), each family's ranking on its headline
suites (`structbench.reports.builders.rankings`)
and its summary columns per family (`structbench.reports.builders.families`), the learning curves
(`structbench.reports.builders.series`), each board's conditions (`structbench.reports.builders.conditions`)
and suite card (`structbench.reports.builders.cards`), the claims' verdicts
(`structbench.reports.builders.verdicts`), what made each row of reference runs
(`structbench.reports.builders.provenance`), the published numbers, the suites without results and the
stored predictions the error browser shows (`structbench.reports.builders.predictions`). This module and
every module it imports read no store: a view that holds a `Site` cannot read one.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

import pandas as pd

from structbench.analysis.references import Reference
from structbench.reports.builders.cards import SuiteCard
from structbench.reports.builders.conditions import Condition
from structbench.reports.builders.families import Column
from structbench.reports.builders.overview import OverviewRow, Summary
from structbench.reports.builders.plots import Style
from structbench.reports.builders.predictions import BoardPredictions
from structbench.reports.builders.provenance import Provenance
from structbench.reports.builders.published import PublishedRow
from structbench.reports.builders.rankings import Ranking
from structbench.reports.builders.series import Curve
from structbench.reports.builders.suite_board import SuiteBoard
from structbench.reports.builders.verdicts import ClaimCheck

DEFAULT_TITLE = "structbench leaderboard"


@dataclass(frozen=True)
class Site:
    """Everything the site shows, read from one store: built once, then only viewed and written."""

    title: str
    results: pd.DataFrame
    """Every cell of the current runs (`structbench.reports.builders.boards.RESULT_COLUMNS`), in cell-key order."""
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
    the store holds reference runs (`structbench.reports.builders.verdicts`)."""
    skipped: tuple[tuple[str, str], ...]
    """(suite key, why it has no results) of every installed suite the site would show but has no board."""
    predictions: Mapping[str, BoardPredictions]
    """board slug -> the predictions and examples its error browser shows (boards with finished runs)."""
    styles: Mapping[str, Style]
    """model label -> how every plot of the site draws it (`model_styles` of every label shown)."""
    reference_runs: Mapping[str, Provenance]
    """model label -> what made its runs, over every board, for the rows of reference runs
    (`structbench.reports.builders.provenance`); each board holds its own (`SuiteBoard.reference_runs`)."""
    published: Mapping[str, tuple[PublishedRow, ...]] = field(default_factory=dict)
    """board slug -> the published runs of its suite, version and data (`structbench.store.published`), by label."""
    rankings: tuple[Ranking, ...] = ()
    """Per family, its question and the models ranked on its headline suites (`structbench.reports.builders.rankings`)."""

    @property
    def boards(self) -> tuple[SuiteBoard, ...]:
        """One per suite version and data hash, grouped by family (`FAMILY_ORDER`), then by page name
        with its numbers by value (`board_order`): the boards of `summaries`, which hold one each."""
        return tuple(summary.board for summary in self.summaries)
