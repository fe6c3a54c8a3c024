"""What the site's plots show, as values: lines, bands, markers and points, with their colours.

The first of the three plot modules, one per stage: the build's values (this one: what a plot
holds, and each model's style, fixed for the whole site in `Site.styles`); the views' choice of
plots per page (`structbench.reports.views.plots`, with the learning curves of
`structbench.reports.builders.series`); and the writer's drawing of these values with matplotlib
(`structbench.reports.writers.plots`). Legends are not drawn into the SVG: the page shows them as text beside the plot, in the
same colours (`PALETTE`). A model has one style on the whole site (`model_styles`), so that a reader
who found it by its colour on one page finds it by the same colour on the next.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, replace

from structbench.specs import SeedStats, natural_key

PALETTE = [
    "#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#9467bd", "#8c564b", "#e377c2", "#7f7f7f", "#bcbd22", "#17becf",
]  # fmt: skip
"""matplotlib's `tab10` cycle (its default colours), in order, for the HTML legends."""
PLOTTED = len(PALETTE)
"""At most this many models per line plot: the best-ranked ones; the table beside it holds all."""
DASHES = {"solid": ("o", "●"), "dashed": ("s", "■"), "dotted": ("^", "▲")}
"""Line style (as matplotlib and CSS both name it) -> the gap plot's marker and its legend character:
the models after the first `len(PALETTE)` reuse the colours with the next style."""


@dataclass(frozen=True)
class Style:
    """How one model is drawn on every plot of the site."""

    colour: str
    dash: str = "solid"
    """A key of `DASHES`."""

    @property
    def marker(self) -> str:
        """Its matplotlib marker in the gap plot."""
        return DASHES[self.dash][0]

    @property
    def glyph(self) -> str:
        """The character the page's legend shows for `marker`."""
        return DASHES[self.dash][1]


def model_styles(labels: Iterable[str]) -> dict[str, Style]:
    """model label -> its style on every page: the labels in order (`natural_key`) take the palette's
    colours in turn, then the same colours dashed, then dotted (distinct for 30 models; more repeat).
    Given every label the site plots, a model's colour does not depend on the page or on which
    other models a plot holds."""
    ordered = sorted(set(labels), key=natural_key)
    dashes = list(DASHES)
    return {
        label: Style(PALETTE[index % len(PALETTE)], dashes[index // len(PALETTE) % len(dashes)])
        for index, label in enumerate(ordered)
    }


@dataclass(frozen=True)
class Line:
    """One model's values along a plot's x axis (fractions; None where it has no cell)."""

    label: str
    colour: str
    means: list[float | None]
    lows: list[float | None]
    highs: list[float | None]
    dash: str = "solid"
    """A key of `DASHES`."""
    shared: tuple[str, ...] = ()
    """The other models whose values are exactly these, drawn as this one line (`merge_equal`)."""

    @property
    def labels(self) -> tuple[str, ...]:
        """Every model the line stands for, its own first."""
        return (self.label, *self.shared)

    @property
    def style(self) -> Style:
        return Style(self.colour, self.dash)

    @classmethod
    def of(cls, label: str, style: Style, cells: Sequence[SeedStats | None]) -> Line:
        """The line of one model's cells along the axis (None where it has none): their means and intervals."""
        return cls(
            label,
            style.colour,
            [None if c is None else c.mean for c in cells],
            [None if c is None else c.ci_low for c in cells],
            [None if c is None else c.ci_high for c in cells],
            style.dash,
        )


def merge_equal(lines: Sequence[Line]) -> list[Line]:
    """`lines` with those of exactly equal values (means and intervals) drawn once, in the style of the
    first of them, which names the others (`Line.shared`): copy, majority and random at 0 on every
    point are otherwise three lines on top of each other, of which a reader sees only the last."""
    merged: dict[tuple[tuple[float | None, ...], ...], Line] = {}
    for line in lines:
        key = (tuple(line.means), tuple(line.lows), tuple(line.highs))
        first = merged.get(key)
        merged[key] = line if first is None else replace(first, shared=(*first.shared, line.label))
    return list(merged.values())


@dataclass(frozen=True)
class LinePlot:
    """The primary metric against one condition."""

    x_label: str
    y_label: str
    levels: list[str]
    """x-axis levels in order: when every level is a number, an ordered axis with lines and bands,
    else categories with points and error bars."""
    lines: list[Line]


@dataclass(frozen=True)
class Markers:
    """Published values along a curve's x axis, drawn as one marker shape (None where none was published)."""

    label: str
    symbol: str
    """matplotlib marker, one of `MARKERS`."""
    values: list[float | None]


MARKERS = {"D": "◆", "s": "■", "^": "▲", "v": "▼", "P": "✚", "X": "✖", "o": "●", "*": "★"}
"""matplotlib marker -> the character the page's legend shows for it, in the order markers are given out."""


@dataclass(frozen=True)
class CurvePlot:
    """The primary metric of a series of suites against the series' number, one line per model."""

    x_label: str
    y_label: str
    xs: list[float]
    """The suites' numbers, ascending."""
    log_axis: bool
    """A logarithmic x axis (symmetric log base 2, linear below 1, so that 0 still shows)."""
    lines: list[Line]
    markers: list[Markers]


@dataclass(frozen=True)
class GapPlot:
    """In-distribution (x) against generalisation (y), one point per (model, suite)."""

    points: list[tuple[float, float, str, str]]
    """(in-distribution, generalisation, colour, matplotlib marker)."""


Plot = LinePlot | CurvePlot | GapPlot
