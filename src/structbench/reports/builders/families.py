"""The overview at a glance: one summary column per family and kind of suite, each the mean of its units.

A suite's kind comes from its declared split roles (`SplitSpec.test_role`): a suite with a ranked
generalisation split is a *generalisation* suite; one without (scan-simple, grounded-weak,
logic-inference-le12, the POS and completion suites) is an *in-distribution* suite, whose score
says how well a model learned the training distribution, not whether it generalises. The
overview keeps the two apart: one column per (kind, family, metric direction), generalisation
columns first, each in family order (`FAMILY_ORDER`), and one table per column with its suites.

A column's units are its suites, except that the suites of a series (`SuiteSpec.series`: the SCAN
few-shot suites, the filler suites) with results on at least two of them are one unit, shown as
one small curve: twelve few-shot suites then weigh as much as scan-length in the family's mean, not
twelve times as much. A suite of two series (scan-filler-0 is k = 0 of few-shot and 0 fillers)
is a point of both.

A model's summary on a column is the unweighted mean, over the units it has a suite score on, of
its score there (a series: the mean over the points it has), with how many of the column's suites
it has a score on: a reader sees a mean over two of twenty suites for what it is.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from structbench.reports.builders.overview import OverviewRow, Summary
from structbench.reports.builders.series import MIN_POINTS, series_members
from structbench.reports.builders.suite_board import SuiteBoard, slug
from structbench.specs import SeedStats, family_rank

KINDS = ("generalisation", "in-distribution")
"""The two kinds of overview column, in the order the overview shows them."""
SPARK_WIDTH, SPARK_HEIGHT = 100.0, 30.0
"""A series' small curve's drawing box (its SVG viewBox), scaled by the page."""


def kind(board: SuiteBoard) -> str:
    """`generalisation` for a board with a ranked generalisation split, else `in-distribution`."""
    return KINDS[0] if board.generalises else KINDS[1]


@dataclass(frozen=True)
class Unit:
    """One suite, or one series of suites, of a summary column."""

    name: str
    """The suite's key, or the series' name."""
    boards: tuple[SuiteBoard, ...]
    """The suite; or the series' suites in the order of their number."""
    xs: tuple[float, ...] = ()
    """A series' numbers (empty for one suite)."""
    axis: str = ""
    """What a series' number counts."""

    @property
    def is_series(self) -> bool:
        return bool(self.xs)

    @property
    def anchor(self) -> str:
        """Where the overview shows a series' full curve (`structbench.reports.builders.series.Curve.anchor`)."""
        return f"series-{slug(self.name)}"

    @property
    def symbol(self) -> str:
        """The series' number in a word or two: its axis up to a colon (`k` of `k: look around right
        commands in train`), or the whole axis."""
        return self.axis.split(":", 1)[0].strip() or self.axis

    @property
    def x_labels(self) -> list[str]:
        return [str(int(x)) if float(x).is_integer() else f"{x:g}" for x in self.xs]

    def cells(self, row: OverviewRow) -> list[SeedStats | None]:
        """The row's overview cell on each of the unit's suites (None where it has none)."""
        return [entry[0] if (entry := row.cells.get(board.slug)) else None for board in self.boards]

    def value(self, row: OverviewRow) -> float | None:
        """The row's score on the unit: its suite score, or its mean over the series' points it has."""
        means = [cell.mean for cell in self.cells(row) if cell is not None]
        return sum(means) / len(means) if means else None

    def spark(self, row: OverviewRow) -> list[str]:
        """A series' curve for `row` as SVG polyline point lists (`x,y x,y`), one per run of points
        with a value (a missing point breaks the line); x by position, y by value (0 to 100%)."""
        segments: list[list[str]] = [[]]
        step = SPARK_WIDTH / max(len(self.boards) - 1, 1)
        for index, cell in enumerate(self.cells(row)):
            if cell is None:
                segments.append([])
                continue
            height = min(max(cell.mean, 0.0), 1.0) * (SPARK_HEIGHT - 4)
            segments[-1].append(f"{index * step:.1f},{SPARK_HEIGHT - 2 - height:.1f}")
        # a lone point is drawn as a line of no length, which the round line cap shows as a dot
        return [" ".join(points if len(points) > 1 else points * 2) for points in segments if points]

    def described(self, row: OverviewRow) -> str:
        """The row's values (%) along a series, as words (the small curve's title): `fillers: 0 → 3.1, 1 → –`."""
        values = ", ".join(
            f"{x} → {'–' if cell is None else f'{100 * cell.mean:.1f}'}"
            for x, cell in zip(self.x_labels, self.cells(row), strict=True)
        )
        return f"{self.axis}: {values}"


@dataclass(frozen=True)
class Column:
    """One summary column: the suites of one kind of one family (of one metric direction)."""

    family: str
    kind: str
    higher_is_better: bool
    units: tuple[Unit, ...]

    @property
    def boards(self) -> list[SuiteBoard]:
        """Every board of the column, once each (a suite of two series is in both), in unit order."""
        seen: dict[str, SuiteBoard] = {}
        for unit in self.units:
            for board in unit.boards:
                seen.setdefault(board.slug, board)
        return list(seen.values())

    @property
    def title(self) -> str:
        return self.family if self.higher_is_better else f"{self.family} (lower is better)"

    @property
    def anchor(self) -> str:
        """The id of the column's table of suites on the overview."""
        direction = "" if self.higher_is_better else "-lower"
        return f"{self.kind}-{slug(self.family)}{direction}"

    @property
    def contents(self) -> str:
        """How many suites and series the column holds, in words: `20 suites, 2 series of them`."""
        series = sum(unit.is_series for unit in self.units)
        suites = len(self.boards)
        text = f"{suites} suite{'' if suites == 1 else 's'}"
        return text + (f" ({series} series as curves)" if series else "")

    def shows(self, row: OverviewRow) -> bool:
        """Whether `row` has a cell on any of the column's suites."""
        return any(board.slug in row.cells for board in self.boards)

    def apart(self, rows: Iterable[OverviewRow]) -> list[OverviewRow]:
        """The set-apart rows (ceilings, not comparable, partial) of `rows` with a cell in the column."""
        return [row for row in rows if row.apart and self.shows(row)]

    def summary(self, row: OverviewRow) -> tuple[float, int] | None:
        """(the row's mean over the units it has a score on, how many of the column's suites it has a
        score on); None where it has none."""
        values = [value for unit in self.units if (value := unit.value(row)) is not None]
        covered = sum(1 for board in self.boards if board.slug in row.cells)
        return (sum(values) / len(values), covered) if values else None

    def under_trained(self, row: OverviewRow) -> int:
        """On how many of the column's suites the row's runs are under-trained (its mean rests on them)."""
        return sum(1 for board in self.boards if (entry := row.cells.get(board.slug)) and entry[1] == "under-trained")

    def described(self, row: OverviewRow) -> str:
        """Each unit's value for `row`, as the summary cell's title says them."""
        parts = []
        for unit in self.units:
            value = unit.value(row)
            shown = "–" if value is None else f"{100 * value:.1f}"
            parts.append(f"{unit.name}{' (series mean)' if unit.is_series else ''} {shown}")
        return "; ".join(parts)


def columns(summaries: list[Summary]) -> list[Column]:
    """The overview's summary columns of the boards of `summaries` (in board order): generalisation
    columns first, then in-distribution ones, each kind in family order."""
    chosen = series_members(summaries)
    grouped: dict[tuple[str, str, bool], list[SuiteBoard]] = {}
    for summary in summaries:
        board = summary.board
        grouped.setdefault((kind(board), board.spec.family, board.spec.higher_is_better), []).append(board)
    out = []
    for (board_kind, family, higher), boards in grouped.items():
        slugs = {board.slug for board in boards}
        units: list[Unit] = []
        in_series: set[str] = set()
        for board in boards:
            for point in board.spec.series:
                by_value = chosen.get(point.series, {})
                series_boards = [by_value[x].board for x in sorted(by_value)]
                if len(series_boards) < MIN_POINTS or not all(b.slug in slugs for b in series_boards):
                    continue
                if board.slug in {b.slug for b in series_boards}:
                    in_series.add(board.slug)
                if not any(unit.name == point.series for unit in units):
                    units.append(Unit(point.series, tuple(series_boards), tuple(sorted(by_value)), point.axis))
            if board.slug not in in_series:
                units.append(Unit(board.spec.key, (board,)))
        out.append(Column(family, board_kind, higher, tuple(units)))
    return sorted(out, key=lambda c: (KINDS.index(c.kind), *family_rank(c.family), not c.higher_is_better))
