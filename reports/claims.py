"""The papers' qualitative findings, checked on the measured cells of a store.

`claims.yaml` (packaged with the reports) states each finding as a comparison of cell means:
one cell `greater` than each cell in `than`, or one `cell` `at_most` a bound. A claim is

- `reproduced` when the 95% intervals say so: the greater cell's interval lies above every
  other cell's interval, or the cell's interval lies at or below the bound;
- `not reproduced` when the means contradict it;
- `inconclusive` when the means agree with it but the intervals overlap (or a cell has none);
- `not measured` when a cell it needs has no finished run in the store.

Separated intervals are a conservative test (two models' paired difference is sharper: see
`structbench compare`), so `reproduced` errs on the side of caution.
"""

from __future__ import annotations

from pathlib import Path
from typing import Literal

import pandas as pd
from pydantic import Field, model_validator

from structbench import registry
from structbench.reports.entries import load_entries
from structbench.specs import Frozen

CLAIMS = Path(__file__).resolve().parent / "claims.yaml"
Status = Literal["reproduced", "not reproduced", "inconclusive", "not measured"]


class CellRef(Frozen):
    """One measured cell: a model label (as the report shows it), a test split and a metric."""

    model: str
    split: str
    metric: str | None = None
    """The claim's metric unless given."""
    suite: str | None = None
    """The claim's suite unless given: a finding across two suites (one objective against another)."""


class Claim(Frozen):
    """One finding of a paper, checkable on measured cells."""

    id: str
    statement: str
    source: str
    """The paper, table or repository file the finding stands in."""
    suite: str
    """Suite id; the cells of its installed version are read."""
    metric: str
    greater: CellRef | None = None
    than: list[CellRef] = Field(default_factory=list)
    cell: CellRef | None = None
    at_most: float | None = None

    @model_validator(mode="after")
    def _one_form(self) -> Claim:
        comparison = self.greater is not None and bool(self.than)
        bound = self.cell is not None and self.at_most is not None
        if comparison == bound:
            raise ValueError("give either `greater` with `than`, or `cell` with `at_most`")
        return self


class Verdict(Frozen):
    """A claim checked on a store."""

    claim: Claim
    status: Status
    evidence: str
    """The cells (mean and interval, %) the status rests on."""


def load_claims(path: Path | None = None) -> list[Claim]:
    """Every claim of the claims file, validated; a malformed one is named with its problem."""
    return load_entries(path or CLAIMS, Claim, "claim")


def _find(cells: pd.DataFrame, claim: Claim, ref: CellRef) -> pd.Series | None:
    """The whole-split cell of `ref` among `cells` (the report's rows), on the installed version of its
    suite (the claim's, unless the cell names one), if measured."""
    suite = ref.suite or claim.suite
    rows = cells[
        (cells["suite"] == suite)
        & (cells["version"] == registry.suite(suite).spec.version)
        & (cells["model"] == ref.model)
        & (cells["split"] == ref.split)
        & (cells["metric"] == (ref.metric or claim.metric))
        & (cells["breakdown"] == "")
    ]
    return None if rows.empty else rows.iloc[0]


def _shown(ref: CellRef, row: pd.Series) -> str:
    interval = "" if row["ci_low"] != row["ci_low"] else f" [{100 * row['ci_low']:.1f}, {100 * row['ci_high']:.1f}]"
    metric = f" {ref.metric}" if ref.metric else ""
    suite = f" ({ref.suite})" if ref.suite else ""
    return f"{ref.model}{suite} {ref.split}{metric}: {100 * row['mean']:.1f}{interval} ({row['interval']})"


def check(claim: Claim, cells: pd.DataFrame) -> Verdict:
    """`claim` on `cells` (rows as the report's `results` frame holds them)."""
    refs = [claim.greater, *claim.than] if claim.greater is not None else [claim.cell]
    found = [(ref, _find(cells, claim, ref)) for ref in refs if ref is not None]
    missing = [ref for ref, row in found if row is None]
    if missing:
        names = "; ".join(f"{ref.model} on {ref.split}" + (f" ({ref.metric})" if ref.metric else "") for ref in missing)
        return Verdict(claim=claim, status="not measured", evidence=f"no finished run of {names}")
    rows = [(ref, row) for ref, row in found if row is not None]
    evidence = " vs ".join(_shown(ref, row) for ref, row in rows)
    if claim.at_most is not None:
        (_, row), bound = rows[0], claim.at_most
        evidence += f"; bound {100 * bound:.1f}"
        if row["mean"] > bound:
            return Verdict(claim=claim, status="not reproduced", evidence=evidence)
        holds = row["ci_high"] == row["ci_high"] and row["ci_high"] <= bound
        return Verdict(claim=claim, status="reproduced" if holds else "inconclusive", evidence=evidence)
    (_, top), others = rows[0], [row for _, row in rows[1:]]
    if any(top["mean"] <= other["mean"] for other in others):
        return Verdict(claim=claim, status="not reproduced", evidence=evidence)
    separated = all(top["ci_low"] > other["ci_high"] for other in others)  # False where an interval is NaN
    return Verdict(claim=claim, status="reproduced" if separated else "inconclusive", evidence=evidence)


def check_all(cells: pd.DataFrame, claims: list[Claim] | None = None) -> list[Verdict]:
    """Every claim of the claims file on `cells`, in file order."""
    return [check(claim, cells) for claim in (claims if claims is not None else load_claims())]
