"""The papers' qualitative findings, checked on the measured cells of a store.

`claims.yaml` (packaged with the reports) states each finding as a comparison of cell means:
one cell `greater` (or `lower`, or `not_below`) than each cell in `than`, or one `cell`
`at_most` a bound. A cell is a test split's metric, or, on the split `training`, a statistic the
models report of their training (`statistics()`: a language model's `dev_perplexity`, DSR's
`trials_to_criterion`). A claim is

- `reproduced` when the 95% intervals say so: the greater (lower) cell's interval lies above
  (below) every other cell's interval, or the cell's interval lies at or below the bound; for
  two statistics of training, when Welch's t-test over their seeds puts the difference on the
  claimed side at the 5% level (the test the papers report for trials to criterion);
- `not reproduced` when the means contradict it;
- `inconclusive` when the means agree with it but the intervals overlap (or a cell has none);
- `not measured` when a cell it needs has no finished run in the store.

`not_below` is a finding that one cell is no worse (Monner's strong systematicity against weak):
reproduced when its mean is at least each other's, not reproduced when its interval lies wholly
below another's, else inconclusive.

Separated intervals are a conservative test (two models' paired difference is sharper: see
`structbench compare`), so `reproduced` errs on the side of caution.
"""

from __future__ import annotations

from pathlib import Path
from typing import Literal

import pandas as pd
from pydantic import Field, model_validator

from structbench import registry
from structbench.cells import CELL_KEYS, current_configuration
from structbench.cells import cells as seed_cells
from structbench.compare_statistics import welch
from structbench.reports.entries import load_entries
from structbench.specs import Frozen
from structbench.store import run_statistics

CLAIMS = Path(__file__).resolve().parent / "claims.yaml"
Status = Literal["reproduced", "not reproduced", "inconclusive", "not measured"]
TRAINING = "training"
"""The split name under which a claim reads a training statistic instead of a test split's metric."""


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
    lower: CellRef | None = None
    not_below: CellRef | None = None
    than: list[CellRef] = Field(default_factory=list)
    cell: CellRef | None = None
    at_most: float | None = None

    @model_validator(mode="after")
    def _one_form(self) -> Claim:
        compared = [ref for ref in (self.greater, self.lower, self.not_below) if ref is not None]
        forms = [len(compared) == 1 and bool(self.than), self.cell is not None and self.at_most is not None]
        if sum(forms) != 1 or len(compared) > 1:
            raise ValueError("give one of `greater`, `lower` or `not_below` with `than`, or `cell` with `at_most`")
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
    """A cell as evidence: scores in %, a training statistic as it is."""
    scale, digits = (1, 2) if ref.split == TRAINING else (100, 1)
    interval = (
        ""
        if row["ci_low"] != row["ci_low"]
        else f" [{scale * row['ci_low']:.{digits}f}, {scale * row['ci_high']:.{digits}f}]"
    )
    metric = f" {ref.metric}" if ref.metric else ""
    suite = f" ({ref.suite})" if ref.suite else ""
    return f"{ref.model}{suite} {ref.split}{metric}: {scale * row['mean']:.{digits}f}{interval} ({row['interval']})"


def check(claim: Claim, cells: pd.DataFrame) -> Verdict:
    """`claim` on `cells` (rows as the report's `results` frame holds them)."""
    first = claim.greater or claim.lower or claim.not_below
    refs = [first, *claim.than] if first is not None else [claim.cell]
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
    if claim.not_below is not None:
        if any(top["ci_high"] < other["ci_low"] for other in others):
            return Verdict(claim=claim, status="not reproduced", evidence=evidence)
        holds = all(top["mean"] >= other["mean"] for other in others)
        return Verdict(claim=claim, status="reproduced" if holds else "inconclusive", evidence=evidence)
    sign = 1.0 if claim.greater is not None else -1.0  # `lower`: the same test on negated values
    if any(sign * top["mean"] <= sign * other["mean"] for other in others):
        return Verdict(claim=claim, status="not reproduced", evidence=evidence)
    if all(ref.split == TRAINING for ref, _ in rows) and all(len(row["per_seed"]) > 1 for _, row in rows):
        tests = [welch(list(top["per_seed"]), list(other["per_seed"])) for other in others]
        evidence += "; Welch's t-test: " + ", ".join(f"t {t:.3g}, df {df:.3g}, p {p:.3g}" for *_, t, df, p in tests)
        separated = all(low > 0 if claim.greater is not None else high < 0 for _, low, high, *_ in tests)
    elif claim.greater is not None:
        separated = all(top["ci_low"] > other["ci_high"] for other in others)  # False where an interval is NaN
    else:
        separated = all(top["ci_high"] < other["ci_low"] for other in others)
    return Verdict(claim=claim, status="reproduced" if separated else "inconclusive", evidence=evidence)


def statistic_cells(runs: pd.DataFrame) -> pd.DataFrame:
    """The cells of the training statistics of `runs` (`Store.runs()`; each cell's newest
    configuration, finished runs): split `training`, metric the statistic's name, over seeds."""
    current = current_configuration(runs, runs)
    done = current[current.status == "done"]
    rows = [
        {
            "suite": suite, "version": version, "suite_hash": suite_hash, "model": model, "model_hash": model_hash,
            "split": TRAINING, "metric": name, "breakdown": "", "level": "", "seed": seed, "value": value,
            "n": 0, "proportion": False,
        }
        for suite, version, suite_hash, model, model_hash, seed, environment in done[
            ["suite", "version", "suite_hash", "model", "model_hash", "seed", "environment"]
        ].itertuples(index=False)
        for name, value in run_statistics(environment).items()
    ]  # fmt: skip
    return seed_cells(pd.DataFrame(rows, columns=[*CELL_KEYS, "seed", "value", "n", "proportion"]))


def claim_cells(results: pd.DataFrame, runs: pd.DataFrame) -> pd.DataFrame:
    """What claims are checked on: the report's cells (`results`) and the training statistics of `runs`."""
    statistics = statistic_cells(runs)
    return results if statistics.empty else pd.concat([results, statistics], ignore_index=True)


def check_all(cells: pd.DataFrame, claims: list[Claim] | None = None) -> list[Verdict]:
    """Every claim of the claims file on `cells`, in file order."""
    return [check(claim, cells) for claim in (claims if claims is not None else load_claims())]
