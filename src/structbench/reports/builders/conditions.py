"""A suite page's per-condition views: which conditions to plot, and their cells per model.

Two sources of conditions:
- a series of test splits named by one number (`attractors-0` … `attractors-4`, `ops-01` …
  `ops-12`, `heldout_tables4` … `heldout_tables10`, `longer_3` … `longer_5`): the number is the
  condition (attractors, operators, composition length), each split's cell one point;
- a breakdown key of the suite's primary metric (`n_actions`, `construction`, `n_attr`, …):
  each level's cell one point, on the test split where the key has the most levels that a plot
  can still show (at most `MAX_CATEGORIES` categories; then a generalisation split, then the
  earlier split). Where no split has few enough, the condition is a table only. Where that split
  is not a generalisation split, the key is also shown on the generalisation split where it has the
  most levels (SLOG's `case`: seven in-distribution structures on test, the 17 cases on gen).

Every condition's cells, for every model, also go into a table beside the plot, so that no
number exists only as a line.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

import pandas as pd

from structbench.cells import STAT_COLUMNS, as_stats
from structbench.reports.builders.suite_board import SuiteBoard
from structbench.specs import SeedStats

SERIES = re.compile(r"^(?P<prefix>.*?[A-Za-z])[-_]?(?P<number>\d+)$")
MIN_SERIES = 3
"""A series needs at least this many splits to be plotted as one."""
MAX_CATEGORIES = 12
"""A condition of more categories than this (e.g. every combination of constructions) gets its table only."""


@dataclass
class Condition:
    """One plotted condition of a board: an x axis and every model's cells along it."""

    title: str
    """What varies, e.g. `attractors (test splits)` or `construction, on split mixed`."""
    axis: str
    """The x axis's label."""
    levels: list[str]
    cells: dict[str, list[SeedStats | None]]
    """model -> its cell per level."""
    split: str | None = None
    key: str | None = None
    """The test split and breakdown key of a condition read from a breakdown (None for a series of splits):
    where a published per-condition number (`Reference.conditions`) belongs."""

    @property
    def plotted(self) -> bool:
        """Whether a plot can show it: a numeric axis, or few enough categories to read."""
        return _plottable(self.levels)


def _plottable(levels: list[str]) -> bool:
    try:
        [float(level) for level in levels]
    except ValueError:
        return len(levels) <= MAX_CATEGORIES
    return True


def _split_series(board: SuiteBoard) -> list[tuple[str, list[tuple[str, str]]]]:
    """(prefix, [(number, split)]) of every numbered series of test splits, in split order."""
    series: dict[str, list[tuple[str, str]]] = {}
    for split in board.splits:
        if match := SERIES.match(split):
            series.setdefault(match["prefix"], []).append((str(int(match["number"])), split))
    return [(prefix, members) for prefix, members in series.items() if len(members) >= MIN_SERIES]


def conditions(board: SuiteBoard, breakdown_rows: pd.DataFrame) -> list[Condition]:
    """The board's conditions; `breakdown_rows` holds its cells of the primary metric with a breakdown."""
    whole = dict(board.rows)
    out = []
    for prefix, members in _split_series(board):
        out.append(
            Condition(
                title=f"{prefix.replace('_', ' ')} (one test split per value)",
                axis=prefix.replace("_", " "),
                levels=[number for number, _ in members],
                cells={model: [row[split] for _, split in members] for model, row in whole.items()},
            )
        )
    if breakdown_rows.empty:
        return out
    # key -> split -> level -> model -> the row of its cell, made into stats only where shown (most are not)
    by_key: dict[str, dict[str, dict[str, dict[str, int]]]] = {}
    for at, (model, split, key, level) in enumerate(
        zip(*(breakdown_rows[k].tolist() for k in ("model", "split", "breakdown", "level")), strict=True)
    ):
        by_key.setdefault(str(key), {}).setdefault(str(split), {}).setdefault(str(level), {})[str(model)] = at
    stat_columns = {column: breakdown_rows[column].tolist() for column in STAT_COLUMNS}

    def stats(at: int | None) -> SeedStats | None:
        return None if at is None else as_stats({column: values[at] for column, values in stat_columns.items()})

    generalisation = set(board.generalisation)
    order = {split: index for index, split in enumerate(board.splits)}
    for key, by_split in sorted(by_key.items()):
        split = max(  # among the splits where the key varies (COGS's test has one case, its gen 21)
            (s for s in by_split if s in order and len(by_split[s]) >= 2),
            key=lambda s: (_plottable(list(by_split[s])), len(by_split[s]), s in generalisation, -order[s]),
            default=None,
        )
        if split is None:
            continue
        shown = [split]
        wide = [s for s in by_split if s in generalisation and len(by_split[s]) >= 2]
        if split not in generalisation and wide:  # the key on a generalisation split too (SLOG's 17 cases)
            shown.append(max(wide, key=lambda s: (len(by_split[s]), -order[s])))
        for chosen in shown:
            levels = _ordered(list(by_split[chosen]))
            out.append(
                Condition(
                    title=f"{key.replace('_', ' ')}, on test split {chosen}",
                    axis=key.replace("_", " "),
                    levels=levels,
                    cells={model: [stats(by_split[chosen][level].get(model)) for level in levels] for model in whole},
                    split=chosen,
                    key=key,
                )
            )
    return out


def _ordered(levels: list[str]) -> list[str]:
    """Numeric levels by value, others alphabetically."""
    try:
        return sorted(levels, key=float)
    except ValueError:
        return sorted(levels)
