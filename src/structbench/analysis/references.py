"""Published numbers of the literature, shown beside measured rows as reported reference rows.

`references.yaml` (packaged with the reports) holds one entry per (paper, model): the
suite it refers to, its values per metric and split (fractions, like the store), the
reported spread and run count, and where in the paper it stands. The report marks them as
reported and never ranks or mixes them with measured cells.
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

from pydantic import Field

from structbench.analysis.yaml_lists import load_entries
from structbench.errors import UserError
from structbench.specs import Frozen

REFERENCES = Path(__file__).resolve().parent / "references.yaml"


class Reference(Frozen):
    """One published row."""

    suite: str
    """Suite id the numbers refer to (the same data or the published data the suite is built from)."""
    model: str
    """The model as the paper names it."""
    ours: str | None = None
    """The structbench model label closest to it, if any."""
    citation: str
    """The paper."""
    where: str
    """Table, figure or section the numbers are read from."""
    runs: int | None = None
    """Number of runs (seeds, restarts) behind the numbers, where the paper says or it can be inferred."""
    spread: str | None = None
    """What kind of spread `spreads` holds (e.g. population standard deviation), and caveats."""
    comparable: bool = True
    """False for entries that use information no real model has (oracle guidance)."""
    values: dict[str, dict[str, float]]
    """metric -> split -> value, as a fraction in [0, 1]."""
    spreads: dict[str, dict[str, float]] = Field(default_factory=dict)
    """metric -> split -> reported spread, as a fraction."""
    per_run: dict[str, dict[str, list[float]]] = Field(default_factory=dict)
    """metric -> split -> per-run values, where the paper lists them."""
    conditions: dict[str, dict[str, dict[str, dict[str, float]]]] = Field(default_factory=dict)
    """metric -> split -> breakdown key -> level -> value, as a fraction: the numbers a paper gives per
    condition (SLOG's per-case table), shown in the suite page's table of that condition."""
    condition_spreads: dict[str, dict[str, dict[str, dict[str, float]]]] = Field(default_factory=dict)
    """The same shape as `conditions`: each condition's reported spread, as a fraction."""
    undefined_metrics: list[str] = Field(default_factory=list)
    """Metrics the source reports without defining them: shown, marked as not comparable with
    ours, whose definition may be another quantity of the same name."""
    note: str = ""
    """What to know when comparing with our numbers."""
    digits: dict[str, Annotated[int, Field(ge=0, le=6)]] = Field(default_factory=dict)
    """metric -> the decimal places its source prints its percentages with (values and spreads), where
    that is more than a value's shortest form shows: Korrel's `100.00 ± 0.00`, Tran's `63.0`. A value
    given more decimals than that (a source's `1.031` among spreads of two) is printed with all of them;
    a metric not named here prints each value in its shortest form (`8.31`, `20.8`)."""

    def value(self, metric: str, split: str) -> float | None:
        return self.values.get(metric, {}).get(split)

    def printed(self, metric: str, split: str) -> str | None:
        """The published value of (metric, split) in percent with its source's digits, and its spread
        (`100.00 ± 0.00`) where the source gives one; None where it publishes none."""
        return self._printed(metric, self.value(metric, split), self.spreads.get(metric, {}).get(split))

    def printed_condition(self, metric: str, split: str, key: str, level: str) -> str | None:
        """The published value of `metric` on `split` where breakdown `key` is `level`, as `printed` shows a
        split's; None where the source gives none."""
        value = self.conditions.get(metric, {}).get(split, {}).get(key, {}).get(level)
        spread = self.condition_spreads.get(metric, {}).get(split, {}).get(key, {}).get(level)
        return self._printed(metric, value, spread)

    def _printed(self, metric: str, value: float | None, spread: float | None) -> str | None:
        if value is None:
            return None
        places = self.digits.get(metric, 0)
        shown = as_printed(value, places)
        return shown if spread is None else f"{shown} ± {as_printed(spread, places)}"


def as_printed(fraction: float, places: int = 0) -> str:
    """A published fraction in percent with at least `places` decimals, and every decimal it was given:
    (0.63, 1) -> `63.0`, (0.0831, 0) -> `8.31`, (1.0, 2) -> `100.00`, (0.01031, 2) -> `1.031`."""
    shortest = format(round(100 * fraction, 6), "f").rstrip("0").rstrip(".")
    given = len(shortest.partition(".")[2])
    return f"{round(100 * fraction, 6):.{max(places, given)}f}"


def load_references(path: Path | None = None) -> list[Reference]:
    """Every entry of the references file, validated; a malformed entry is named with its problem."""
    path = path or REFERENCES
    references = load_entries(path, Reference, "reference entry")
    for number, reference in enumerate(references, start=1):
        bad = [v for split in reference.values.values() for v in split.values() if not 0.0 <= v <= 1.0]
        bad += [
            v
            for table in (reference.conditions, reference.condition_spreads)
            for splits in table.values()
            for keys in splits.values()
            for levels in keys.values()
            for v in levels.values()
            if not 0.0 <= v <= 1.0
        ]
        if bad:
            raise UserError(f"reference entry {number} in {path} has values outside [0, 1] ({bad}); give fractions.")
        if unknown := sorted(set(reference.digits) - set(reference.values) - set(reference.conditions)):
            raise UserError(
                f"reference entry {number} in {path} gives `digits` of {unknown}, which it publishes no value of; "
                "name the metrics of its `values`."
            )
    return references
