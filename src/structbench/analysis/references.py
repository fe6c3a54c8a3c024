"""Published numbers of the literature, shown beside measured rows as reported reference rows.

`references.yaml` (packaged with the reports) holds one entry per (paper, model): the
suite it refers to, its values per metric and split (fractions, like the store), the
reported spread and run count, and where in the paper it stands. The report marks them as
reported and never ranks or mixes them with measured cells.
"""

from __future__ import annotations

from pathlib import Path

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
    undefined_metrics: list[str] = Field(default_factory=list)
    """Metrics the source reports without defining them: shown, marked as not comparable with
    ours, whose definition may be another quantity of the same name."""
    note: str = ""
    """What to know when comparing with our numbers."""

    def value(self, metric: str, split: str) -> float | None:
        return self.values.get(metric, {}).get(split)


def load_references(path: Path | None = None) -> list[Reference]:
    """Every entry of the references file, validated; a malformed entry is named with its problem."""
    path = path or REFERENCES
    references = load_entries(path, Reference, "reference entry")
    for number, reference in enumerate(references, start=1):
        bad = [v for split in reference.values.values() for v in split.values() if not 0.0 <= v <= 1.0]
        if bad:
            raise UserError(f"reference entry {number} in {path} has values outside [0, 1] ({bad}); give fractions.")
    return references
