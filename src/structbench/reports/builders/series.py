"""Learning curves: the suites of a series (`SuiteSpec.series`) against the series' number.

A series is the suites whose specs name it, each at its number on the series' axis (the SCAN
few-shot suites at k = 0, 1, 2, ..., 1024; the filler suites at 0 to 3 fillers). Per model, one
point per suite: its overview cell there (per seed the primary metric over the suite's ranked
generalisation splits, then mean and 95% interval over seeds; `structbench.reports.builders.overview`), so a
curve shows the numbers the overview shows, and its band is their interval. Published numbers of the
member suites (`references.yaml`, on the same splits) are markers beside the curves, never joined
to them. Ranked models only: ceilings, not-comparable and partial runs are set apart, as on every
board. Where a suite has boards of several versions or data hashes, the installed version's counts;
where two suites claim one number of a series, the first by suite id does. Any later series (more
training examples of a kind, longer inputs) needs only `series` in its suites' specs.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

from structbench import registry
from structbench.errors import UserError
from structbench.reports.builders.overview import Summary
from structbench.reports.builders.plots import (
    MARKERS,
    PLOTTED,
    CurvePlot,
    Line,
    Markers,
    Style,
    merge_equal,
    model_styles,
)
from structbench.reports.builders.suite_board import SuiteBoard, slug
from structbench.specs import SeedStats

MIN_POINTS = 2
"""A series is drawn once at least this many of its suites have results."""


@dataclass
class Curve:
    """One series: its suites in the order of their number, and every ranked model's cell on each."""

    name: str
    axis: str
    log_axis: bool
    xs: list[float]
    boards: list[SuiteBoard]
    """The suite at each number."""
    cells: dict[str, list[SeedStats | None]] = field(default_factory=dict)
    """Ranked model -> its cell on each suite (None where it has none); best mean first."""
    reported: dict[str, list[float | None]] = field(default_factory=dict)
    """Published model (as its paper names it) -> its value on each suite, where published."""
    sources: dict[str, str] = field(default_factory=dict)
    """Published model -> where its numbers stand (citation and place, as `references.yaml` gives them)."""
    styles: dict[str, Style] = field(default_factory=dict)
    """Model -> its site-wide style (`structbench.reports.builders.plots.model_styles`); a model not in it is
    styled among the curve's own models."""

    def x_of(self, board: SuiteBoard) -> float | None:
        """The number of `board`'s suite on this curve, if it is one of its points."""
        return next((x for x, member in zip(self.xs, self.boards, strict=True) if member is board), None)

    @property
    def anchor(self) -> str:
        """The curve's id on the overview page."""
        return f"series-{slug(self.name)}"

    @property
    def path(self) -> str:
        """The plot's SVG, relative to the site root."""
        return f"plots/{self.anchor}.svg"

    @property
    def plotted(self) -> list[tuple[str, Style]]:
        """(model, style) of the lines drawn: the best-ranked models, at most `PLOTTED`."""
        own = model_styles(self.cells)
        return [(model, self.styles.get(model, own[model])) for model in list(self.cells)[:PLOTTED]]

    @property
    def lines(self) -> list[Line]:
        """The lines drawn: those of the `plotted` models, equal ones once (`merge_equal`)."""
        return merge_equal([Line.of(model, style, self.cells[model]) for model, style in self.plotted])

    @property
    def legend(self) -> list[tuple[tuple[str, ...], Style]]:
        """(the models a drawn line stands for, its style), in drawing order."""
        return [(line.labels, line.style) for line in self.lines]

    @property
    def markers(self) -> list[tuple[str, str, str]]:
        """(published model, matplotlib marker, the character the legend shows) of each marker row."""
        return [(label, symbol, MARKERS[symbol]) for label, symbol in zip(self.reported, MARKERS, strict=False)]

    def label(self, x: float) -> str:
        """A number on the axis as the page writes it."""
        return str(int(x)) if float(x).is_integer() else f"{x:g}"

    @property
    def x_labels(self) -> list[str]:
        return [self.label(x) for x in self.xs]

    def plot(self, y_label: str) -> CurvePlot:
        lines = self.lines
        markers = [Markers(label, symbol, self.reported[label]) for label, symbol, _ in self.markers]
        return CurvePlot(self.axis, y_label, self.xs, self.log_axis, lines, markers)


def _installed_version(suite: str) -> str | None:
    try:
        return registry.suite(suite).spec.version
    except UserError:
        return None


def series_members(summaries: list[Summary]) -> dict[str, dict[float, Summary]]:
    """series -> number -> the summary of the suite there (the installed version's board first,
    then the board with the most models; the first suite id where two claim one number)."""
    candidates: dict[str, dict[float, list[Summary]]] = {}
    for summary in summaries:
        for point in summary.board.spec.series:
            candidates.setdefault(point.series, {}).setdefault(point.value, []).append(summary)
    chosen: dict[str, dict[float, Summary]] = {}
    for series, by_value in candidates.items():
        for value, found in by_value.items():
            first_suite = min(s.board.spec.id for s in found)
            mine = [s for s in found if s.board.spec.id == first_suite]
            installed = _installed_version(first_suite)
            chosen.setdefault(series, {})[value] = max(
                mine, key=lambda s: (s.board.spec.version == installed, len(s.board.rows), s.board.suite_hash)
            )
    return chosen


def _reported(summary: Summary) -> dict[str, tuple[float, str]]:
    """Published model -> (its value on the suite's generalisation splits, its source), where given on all."""
    board = summary.board
    out = {}
    for reference in board.references:
        values = [reference.value(board.spec.primary_metric, split) for split in board.generalisation]
        known = [v for v in values if v is not None]
        if known and len(known) == len(values):
            label = reference.model if reference.comparable else f"{reference.model} (not comparable)"
            out[label] = (sum(known) / len(known), f"{reference.citation}, {reference.where}")
    return out


def _order(cells: list[SeedStats | None], model: str, higher_is_better: bool) -> tuple[float, str]:
    """Best mean over a model's points first (a model without points last), then by name."""
    means = [c.mean for c in cells if c is not None]
    if not means:
        return (math.inf, model)
    mean = sum(means) / len(means)
    return (-mean if higher_is_better else mean, model)


def curves(summaries: list[Summary], styles: dict[str, Style] | None = None) -> list[Curve]:
    """Every series with results on at least `MIN_POINTS` of its suites, by name; `styles` are the
    models' site-wide styles (default: styled among each curve's own models)."""
    out = []
    for name, by_value in sorted(series_members(summaries).items()):
        if len(by_value) < MIN_POINTS:
            continue
        xs = sorted(by_value)
        members = [by_value[x] for x in xs]
        point = next(p for p in members[0].board.spec.series if p.series == name)
        curve = Curve(name, point.axis, point.log_axis, xs, [m.board for m in members], styles=dict(styles or {}))
        models = {model for m in members for model in m.cells["generalisation"] if not m.board.set_apart(model)}
        for model in models:
            curve.cells[model] = [
                None if m.board.set_apart(model) else m.cells["generalisation"].get(model) for m in members
            ]
        higher = members[0].board.spec.higher_is_better
        ordered = sorted(curve.cells, key=lambda model: _order(curve.cells[model], model, higher))
        curve.cells = {model: curve.cells[model] for model in ordered}
        for position, member in enumerate(members):
            for label, (value, source) in _reported(member).items():
                curve.reported.setdefault(label, [None] * len(xs))[position] = value
                curve.sources.setdefault(label, source)
        out.append(curve)
    return out
