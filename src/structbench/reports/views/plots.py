"""Which plots the site draws and what each holds: a board's per-condition plots, the learning
curves and the generalisation-gap scatter, as values (`structbench.reports.builders.plots`) keyed by their
path in the site, and how a page shows each (`PlotView`: its legend, or why a condition has no plot).
Drawn by `structbench.reports.writers.plots`.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from structbench.reports.builders.conditions import MAX_CATEGORIES, Condition
from structbench.reports.builders.overview import OverviewRow, Summary
from structbench.reports.builders.plots import PLOTTED, GapPlot, Line, LinePlot, Plot, Style, merge_equal
from structbench.reports.builders.site import Site
from structbench.reports.builders.suite_board import SuiteBoard

PLOT_DIR = "plots"
"""The plots' folder, relative to the site root."""
GAP_PLOT = f"{PLOT_DIR}/gap.svg"


@dataclass(frozen=True)
class PlotView:
    """One per-condition plot as a page shows it."""

    condition: Condition
    path: str
    """The SVG, relative to the site root; empty when the condition is shown as a table only."""
    plotted: list[tuple[str, Style]]
    """(model, its style) of the models drawn, in legend order."""
    legend: list[tuple[tuple[str, ...], Style]] = field(default_factory=list)
    """(the models a drawn line stands for, its style): models of exactly equal values share one line."""
    reason: str = ""
    """Why the condition has no plot, in words (empty where it has one)."""


def no_plot_reason(board: SuiteBoard, condition: Condition, plotted: list[str]) -> str:
    """Why `condition` cannot be drawn for the `plotted` models (the best-ranked ones), or "" if it can."""
    ranked = [model for model, _ in board.ranked_rows]
    if not any(cell is not None for model in ranked for cell in condition.cells.get(model, [])):
        return "no ranked model has a value here (only models set apart below them do); the table holds every value"
    if not any(cell is not None for model in plotted for cell in condition.cells.get(model, [])):
        return f"none of the {len(plotted)} best-ranked models has a value here; the table holds every value"
    if not condition.plotted:
        return f"{len(condition.levels)} levels, more than a plot can show ({MAX_CATEGORIES}); the table holds them"
    return ""


def condition_plots(
    board: SuiteBoard, board_conditions: tuple[Condition, ...], styles: dict[str, Style]
) -> tuple[list[PlotView], dict[str, Plot]]:
    """The board's plot views and the plots to draw for them (path relative to the site root -> plot);
    each model drawn in its site-wide style (`styles`), models of exactly equal values as one line."""
    plotted = [model for model, _ in board.ranked_rows][:PLOTTED]
    views: list[PlotView] = []
    jobs: dict[str, Plot] = {}
    for index, condition in enumerate(board_conditions):
        reason = no_plot_reason(board, condition, plotted)
        if reason:
            views.append(PlotView(condition, "", [], reason=reason))
            continue
        lines = [
            Line.of(model, styles[model], condition.cells[model])
            for model in plotted
            if any(c is not None for c in condition.cells[model])
        ]
        drawn = merge_equal(lines)
        path = f"{PLOT_DIR}/{board.slug}-{index}.svg"
        jobs[path] = LinePlot(condition.axis, f"{board.spec.primary_metric} (%)", condition.levels, drawn)
        legend = [(line.labels, line.style) for line in drawn]
        views.append(PlotView(condition, path, [(line.label, styles[line.label]) for line in lines], legend))
    return views, jobs


def gap_styles(
    rows: tuple[OverviewRow, ...], summaries: tuple[Summary, ...], styles: dict[str, Style]
) -> dict[str, Style]:
    """model -> its style, for the models with a point in the gap plot, in the overview's row order."""
    shown = {model for model, _, _ in _gap_points(summaries)}
    return {row.model: styles[row.model] for row in rows if row.model in shown and row.model in styles}


def _gap_points(summaries: tuple[Summary, ...]) -> list[tuple[str, float, float]]:
    """(model, in-distribution, generalisation) of every model on every suite that has both."""
    return [
        (model, within.mean, summary.cells["generalisation"][model].mean)
        for summary in summaries
        if summary.board.generalises
        for model, within in summary.cells["in-distribution"].items()
        if model in summary.cells["generalisation"]
    ]


def gap_plot(summaries: tuple[Summary, ...], styles: dict[str, Style]) -> GapPlot | None:
    """In-distribution against generalisation of every model on every suite that has both, each
    in its site-wide style; None when none has."""
    points = [
        (within, general, styles[model].colour, styles[model].marker)
        for model, within, general in _gap_points(summaries)
        if model in styles
    ]
    return GapPlot(points) if points else None


def site_plots(site: Site) -> tuple[dict[str, list[PlotView]], dict[str, Plot]]:
    """board slug -> its plot views, and every plot of the site (path relative to the site root -> plot),
    each model in its site-wide style (`Site.styles`)."""
    views: dict[str, list[PlotView]] = {}
    jobs: dict[str, Plot] = {}
    for board in site.boards:
        views[board.slug], board_jobs = condition_plots(board, site.conditions[board.slug], dict(site.styles))
        jobs.update(board_jobs)
    gap = gap_plot(site.summaries, dict(site.styles))
    if gap is not None:
        jobs[GAP_PLOT] = gap
    for curve in site.curves:
        jobs[curve.path] = curve.plot(f"{curve.boards[0].spec.primary_metric} (%)")
    return views, jobs
