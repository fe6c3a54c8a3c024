"""Which plots the site draws and what each holds: a board's per-condition plots, the learning
curves and the generalisation-gap scatter, as values (`structbench.reports.figures`) keyed by their
path in the site. Drawn by `structbench.reports.writers.plots`.
"""

from __future__ import annotations

from dataclasses import dataclass

from structbench.reports.boards import SuiteBoard
from structbench.reports.conditions import Condition
from structbench.reports.figures import OTHER, PALETTE, PLOTTED, GapPlot, Line, LinePlot, Plot
from structbench.reports.overview import OverviewRow, Summary
from structbench.reports.site import Site

PLOT_DIR = "plots"
"""The plots' folder, relative to the site root."""
GAP_PLOT = f"{PLOT_DIR}/gap.svg"


@dataclass(frozen=True)
class PlotView:
    """One per-condition plot as a page shows it."""

    condition: Condition
    path: str
    """The SVG, relative to the site root; empty when the condition is shown as a table only."""
    plotted: list[tuple[str, str]]
    """(model, colour) of the lines drawn, in legend order."""


def condition_plots(
    board: SuiteBoard, board_conditions: tuple[Condition, ...]
) -> tuple[list[PlotView], dict[str, Plot]]:
    """The board's plot views and the plots to draw for them (path relative to the site root -> plot)."""
    plotted = [model for model, _ in board.ranked_rows][:PLOTTED]
    colours = dict(zip(plotted, PALETTE, strict=False))
    views: list[PlotView] = []
    jobs: dict[str, Plot] = {}
    for index, condition in enumerate(board_conditions):
        lines = [
            Line.of(model, colours[model], condition.cells[model])
            for model in plotted
            if any(c is not None for c in condition.cells[model])
        ]
        if not lines or not condition.plotted:
            views.append(PlotView(condition, "", []))
            continue
        path = f"{PLOT_DIR}/{board.slug}-{index}.svg"
        jobs[path] = LinePlot(condition.axis, f"{board.spec.primary_metric} (%)", condition.levels, lines)
        views.append(PlotView(condition, path, [(line.label, line.colour) for line in lines]))
    return views, jobs


def gap_colours(rows: tuple[OverviewRow, ...]) -> dict[str, str]:
    """model -> its colour in the gap plot: the ranked overview rows, best first, while the palette lasts."""
    return {row.model: colour for row, colour in zip(rows, PALETTE, strict=False) if not row.apart}


def gap_plot(summaries: tuple[Summary, ...], colours: dict[str, str]) -> GapPlot | None:
    """In-distribution against generalisation of every model on every suite that has both; None when none has."""
    points = [
        (within.mean, summary.cells["generalisation"][model].mean, colours.get(model, OTHER))
        for summary in summaries
        if summary.board.generalises
        for model, within in summary.cells["in-distribution"].items()
        if model in summary.cells["generalisation"]
    ]
    return GapPlot(points) if points else None


def site_plots(site: Site, colours: dict[str, str]) -> tuple[dict[str, list[PlotView]], dict[str, Plot]]:
    """board slug -> its plot views, and every plot of the site (path relative to the site root -> plot);
    `colours` are the gap plot's (`gap_colours`), which the overview's legend shows too."""
    views: dict[str, list[PlotView]] = {}
    jobs: dict[str, Plot] = {}
    for board in site.boards:
        views[board.slug], board_jobs = condition_plots(board, site.conditions[board.slug])
        jobs.update(board_jobs)
    gap = gap_plot(site.summaries, colours)
    if gap is not None:
        jobs[GAP_PLOT] = gap
    for curve in site.curves:
        jobs[curve.path] = curve.plot(f"{curve.boards[0].spec.primary_metric} (%)")
    return views, jobs
