"""Every page of the site as a context: the overview (`index.html`), one page per suite board and one
error browser per board with finished runs, each with the values its template shows.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from structbench.reports.builders.cards import SuiteCard
from structbench.reports.builders.conditions import Condition
from structbench.reports.builders.families import Column
from structbench.reports.builders.overview import OverviewRow, Summary
from structbench.reports.builders.plots import Plot, Style
from structbench.reports.builders.provenance import Provenance
from structbench.reports.builders.published import PublishedRow
from structbench.reports.builders.rankings import Ranking
from structbench.reports.builders.series import Curve
from structbench.reports.builders.site import Site
from structbench.reports.builders.suite_board import SuiteBoard, slug
from structbench.reports.builders.verdicts import OWN_RUNS, REFERENCE_RUNS, ClaimCheck
from structbench.reports.views.plots import GAP_PLOT, PlotView, gap_styles, site_plots

REFERENCE_GROUP = f"{REFERENCE_RUNS} (shipped with structbench)"
"""The error browser's group of reference runs in its list of models."""
Families = list[tuple[str, list[SuiteBoard]]]
"""(family, its boards) in site order: the overview's column groups and every page's suite index."""


@dataclass(frozen=True)
class ModelData:
    """One model's runs on a suite page, as its error browser loads them."""

    model: str
    script: str
    """Its runs' script, relative to the site root."""


@dataclass(frozen=True)
class ErrorPage:
    """One suite page's error browser: where it is and the models it can show."""

    board: SuiteBoard
    path: str
    """The page, relative to the site root."""
    models: list[ModelData]
    has_examples: bool
    """Whether the suite's inputs and answers are there (built here with this hash)."""

    def shows(self, model: str) -> bool:
        return any(data.model == model for data in self.models)

    def link(self, model: str) -> str:
        """The page, opened on `model`."""
        return f"{self.path}#model={slug(model)}"

    @property
    def groups(self) -> list[tuple[str, list[ModelData]]]:
        """The models as its list shows them: the user's runs, then the reference runs apart; one
        group without a name where there are no reference runs."""
        reference = [data for data in self.models if data.model in self.board.reference_runs]
        if not reference:
            return [("", self.models)]
        own = [data for data in self.models if data.model not in self.board.reference_runs]
        return [(name, models) for name, models in ((OWN_RUNS, own), (REFERENCE_GROUP, reference)) if models]


@dataclass(frozen=True)
class IndexPage:
    """The overview's context."""

    title: str
    families: Families
    boards: tuple[SuiteBoard, ...]
    summaries: tuple[Summary, ...]
    rows: tuple[OverviewRow, ...]
    columns: tuple[Column, ...]
    """The summary columns (`structbench.reports.builders.families`): generalisation ones, then in-distribution ones."""
    gap_boards: list[Summary]
    """The boards of the gap table: a generalisation split and both kinds of cell."""
    gap_styles: dict[str, Style]
    """The gap plot's legend: model -> its site-wide style, for the models with a point there."""
    has_gap_plot: bool
    skipped: tuple[tuple[str, str], ...]
    claims: tuple[ClaimCheck, ...]
    curves: tuple[Curve, ...]
    reference_runs: Mapping[str, Provenance]
    """model -> what made its runs over every suite, for the rows of reference runs."""
    rankings: tuple[Ranking, ...] = ()
    """Per family, its question and the models ranked on its headline suites: the page's first screen."""


@dataclass(frozen=True)
class SuitePage:
    """One suite board's page."""

    title: str
    families: Families
    board: SuiteBoard
    card: SuiteCard
    plots: list[PlotView]
    claims: list[ClaimCheck]
    """The claims about this suite."""
    errors: ErrorPage | None
    """Its error browser, where it has one."""
    curves: list[tuple[Curve, float]]
    """The learning curves the suite is a point of, with its number on each."""
    published: tuple[PublishedRow, ...] = ()
    """The published runs of its suite, version and data: rows apart from the measured ones."""
    published_values: tuple[tuple[str, str, float | None, Mapping[str, float]], ...] = ()
    """(model, `reported` or `published`, its suite score, split -> value of the primary metric) of every
    published row, for the tables that average them as they average measured rows (the "By group" table)."""

    @property
    def path(self) -> str:
        return f"suites/{self.board.slug}.html"

    def published_levels(self, condition: Condition) -> list[tuple[str, list[str | None]]]:
        """(model as the paper names it, its printed number per level of `condition`, None where it gives
        none) of every published row with numbers for this condition's split and key (SLOG's per-case table)."""
        if condition.split is None or condition.key is None:
            return []
        metric, split, key = self.board.spec.primary_metric, condition.split, condition.key
        rows = []
        for reference in self.board.references:
            printed = [reference.printed_condition(metric, split, key, level) for level in condition.levels]
            if any(value is not None for value in printed):
                rows.append((reference.model, printed))
        return rows


@dataclass(frozen=True)
class Pages:
    """Every page of a site and the plots they show."""

    index: IndexPage
    suites: list[SuitePage]
    errors: list[ErrorPage]
    plots: dict[str, Plot]
    """path relative to the site root -> the plot drawn there."""


def published_values(
    board: SuiteBoard, published: tuple[PublishedRow, ...]
) -> tuple[tuple[str, str, float | None, Mapping[str, float]], ...]:
    """The published rows of `board`: its reported numbers (`structbench.analysis.references`), scored as
    the mean over the board's score splits, then its published runs with the score of their seeds
    (`PublishedRow.score`), each with its values of the primary metric by split."""
    out: list[tuple[str, str, float | None, Mapping[str, float]]] = []
    for reference in board.references:
        values = reference.values.get(board.spec.primary_metric, {})
        out.append((reference.model, "reported", board.split_mean(values, board.generalisation), values))
    out += [(row.name, "published", row.score, row.values) for row in published]
    return tuple(out)


def families(board_list: tuple[SuiteBoard, ...]) -> Families:
    """The boards grouped by family, in their order."""
    out: Families = []
    for board in board_list:
        if not out or out[-1][0] != board.spec.family:
            out.append((board.spec.family, []))
        out[-1][1].append(board)
    return out


def error_pages(site: Site) -> list[ErrorPage]:
    """The error browser of every board with finished runs."""
    out = []
    for board in site.boards:
        predictions = site.predictions.get(board.slug)
        if predictions is None:
            continue
        models = [ModelData(model, f"errors/{board.slug}/{slug(model)}.js") for model in predictions.runs]
        out.append(ErrorPage(board, f"errors/{board.slug}.html", models, bool(predictions.examples)))
    return out


def pages(site: Site) -> Pages:
    """The context of every page of `site`."""
    grouped = families(site.boards)
    plot_views, plots = site_plots(site)
    errors = error_pages(site)
    errors_of = {page.board.slug: page for page in errors}
    index = IndexPage(
        title=site.title,
        families=grouped,
        boards=site.boards,
        summaries=site.summaries,
        rows=site.rows,
        columns=site.columns,
        gap_boards=[
            s
            for s in site.summaries
            if s.board.generalises and s.cells["in-distribution"] and s.cells["generalisation"]
        ],
        gap_styles=gap_styles(site.rows, site.summaries, dict(site.styles)),
        has_gap_plot=GAP_PLOT in plots,
        skipped=site.skipped,
        claims=site.claims,
        curves=site.curves,
        reference_runs=site.reference_runs,
        rankings=site.rankings,
    )
    suites = [
        SuitePage(
            title=site.title,
            families=grouped,
            board=board,
            card=site.cards[board.slug],
            plots=plot_views[board.slug],
            claims=[check for check in site.claims if check.claim.suite == board.spec.id],
            errors=errors_of.get(board.slug),
            curves=[(c, x) for c in site.curves if (x := c.x_of(board)) is not None],
            published=site.published.get(board.slug, ()),
            published_values=published_values(board, site.published.get(board.slug, ())),
        )
        for board in site.boards
    ]
    return Pages(index, suites, errors, plots)
