"""The measured rows of a cell beside the papers' numbers: which (split, metric) rows a cell shows,
each measured value with its interval and seeds, the published values beside it with their spread,
and the sources they cite, numbered per section in order of first citation (`Sources`).
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import pandas as pd

from structbench.analysis.claims import TRAINING
from structbench.analysis.references import Reference
from structbench.reports.views.format import percent
from structbench.specs import SuiteSpec


@dataclass(frozen=True)
class Row:
    """One measured (suite, model, split, metric) beside its published numbers, as text."""

    suite: str
    model: str
    split: str
    metric: str
    mean: str
    interval: str
    per_seed: str
    published: str


def _number(value: float) -> str:
    """A training statistic as it is: `66,420`, `3.36`."""
    return f"{value:,.0f}" if abs(value) >= 1000 else f"{value:.3g}"


def _shown(value: float, split: str) -> str:
    """A test split's score in percent, a training statistic as it is."""
    return _number(value) if split == TRAINING else percent(value)


class Sources:
    """The published sources a section's rows cite, numbered in order of first citation."""

    def __init__(self) -> None:
        self.numbers: dict[str, int] = {}

    def cite(self, reference: Reference, measured_on: str) -> int:
        citation, _, last = reference.citation.rpartition(", ")
        # "Korrel 2018, ..., §6.3.3" and "§6.3.3, the text on ...": the section once
        citation = citation if citation and reference.where.startswith(last) else reference.citation
        text = f"{citation}, {reference.where}"
        if reference.runs is not None:
            text += f"; {reference.runs} runs"
        if reference.spread:
            text += f"; spread: {reference.spread}"
        if reference.suite != measured_on:
            text += f"; measured on `{reference.suite}`, not on the suite of our row"
        if reference.note:
            text += f". {reference.note}"
        return self.numbers.setdefault(text, len(self.numbers) + 1)

    def listed(self) -> tuple[tuple[int, str], ...]:
        return tuple((number, text) for text, number in self.numbers.items())


def _published(
    references: Sequence[Reference],
    metric: str,
    split: str,
    sources: Sources,
    suite: str,
    elsewhere: Mapping[str, str] | None = None,
) -> str:
    """The published values of (metric, split) of `references`, each with its spread and source number,
    and, for a number measured on another suite than `suite`, what it was measured on (`elsewhere`)."""
    shown = []
    for reference in references:
        text = reference.printed(metric, split)
        if text is None:
            continue
        if metric in reference.undefined_metrics:
            text += " (not defined there: not comparable)"
        if reference.suite != suite:
            text += f" ({(elsewhere or {}).get(reference.suite, f'on {reference.suite}')})"
        shown.append(f"{text} [{sources.cite(reference, suite)}]")
    return "; ".join(shown)


def _wanted(spec: SuiteSpec, references: Sequence[Reference], claimed: set[tuple[str, str]]) -> list[tuple[str, str]]:
    """The (split, metric) rows of a cell, in split order, the primary metric first: the primary metric
    on the ranked generalisation splits, and whatever its published numbers and its suite's claims read;
    a suite with neither generalisation splits nor claims or numbers on a test split shows every test split."""
    tests = [split.name for split in spec.splits if split.role == "test"]
    wanted = {(split, metric) for reference in references for metric, by in reference.values.items() for split in by}
    wanted |= {(split, metric) for split, metric in claimed if split in tests or split == TRAINING}
    ranked = [s.name for s in spec.splits if s.role == "test" and s.test_role == "generalisation" and s.ranked]
    if not ranked and not any(split in tests for split, _ in wanted):
        ranked = tests
    wanted |= {(split, spec.primary_metric) for split in ranked}
    order = {name: index for index, name in enumerate([*tests, TRAINING])}
    return sorted(wanted, key=lambda p: (order.get(p[0], len(order)), p[0], p[1] != spec.primary_metric, p[1]))


def rows_of(
    spec: SuiteSpec,
    model: str,
    cells: pd.DataFrame,
    references: Sequence[Reference],
    claimed: set[tuple[str, str]],
    sources: Sources,
    elsewhere: Mapping[str, str] | None = None,
) -> list[Row]:
    """The rows of one (suite, model) cell: `cells` are its cells as the claims read them; `elsewhere`
    labels the published numbers of other suites (`Layout.elsewhere`)."""
    measured = {(str(r["split"]), str(r["metric"])): r for r in cells.to_dict("records")}
    rows = []
    for split, metric in _wanted(spec, references, claimed):
        published = _published(references, metric, split, sources, spec.id, elsewhere)
        cell = measured.get((split, metric))
        if cell is None:
            if published:  # a published number without a measured one: shown, not dropped
                rows.append(Row(spec.key, model, split, metric, "not measured", "", "", published))
            continue  # a claim's statistic this model does not report
        low, high = float(cell["ci_low"]), float(cell["ci_high"])
        bracket = "" if math.isnan(low) else f"[{_shown(low, split)}, {_shown(high, split)}], "
        interval = bracket + str(cell["interval"])
        bounds = cell.get("censored")
        values = [_shown(float(v), split) for v in cell["per_seed"]]
        values += [f">{_shown(float(b), split)}" for b in (bounds if isinstance(bounds, list) else [])]
        mean = _shown(float(cell["mean"]), split)
        rows.append(Row(spec.key, model, split, metric, mean, interval, ", ".join(values), published))
    return rows


def other_published(reference: Reference, sources: Sources, measured_on: str) -> str:
    """A published row with no reference run beside it, in one line citing its source."""
    values = "; ".join(
        f"{metric} {', '.join(f'{split} {reference.printed(metric, split)}' for split in by)}"
        for metric, by in reference.values.items()
    )
    apart = "" if reference.comparable else " (not a comparable model)"
    return f"{reference.model}{apart} on `{reference.suite}`: {values} [{sources.cite(reference, measured_on)}]"
