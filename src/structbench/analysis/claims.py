"""The papers' qualitative findings, checked on the measured cells of a store.

`claims.yaml` (packaged with the reports) states each finding as a comparison of cell means:
one cell `greater` (or `lower`, or `not_below`) than each cell in `than`, or one `cell`
`at_most` a bound. A cell is a test split's metric, over the whole split or over one breakdown
condition of it (COGS's structural cases against its lexical ones), or, on the split `training`, a statistic the
models report of their training (`statistics()`: a language model's `dev_perplexity`, DSR's
`trials_to_criterion`). A claim is

- `reproduced` when the 95% intervals say so: the greater (lower) cell's interval lies above
  (below) every other cell's interval, or the cell's interval lies at or below the bound; for
  two statistics of training, when Welch's t-test over their seeds puts the difference on the
  claimed side at the 5% level (the test the papers report for trials to criterion), or the
  logrank test where some seeds stopped before reaching a statistic their suite declares
  censorable (see `structbench.analysis.statistics`; such a cell's mean is a restricted mean);
- `not reproduced` when the means contradict it (another cell is strictly better);
- `inconclusive` when the means agree with it but the intervals overlap (or a cell has none), and
  when they are equal: the cells cannot tell the models apart (both at a suite's ceiling, say),
  which neither supports nor refutes a claim that one is better;
- `not measured` when a cell it needs has no finished run in the store;
- `undecided (under-trained)` when a cell it needs rests on runs whose training did not reach their
  recipe's criterion of having learned the training distribution (`structbench.convergence`): what
  such a cell measures is the budget, not the architecture, so the claim is neither reproduced nor
  refuted by it. The evidence names the dev values.

`not_below` is a finding that one cell is no worse (Monner's strong systematicity against weak):
reproduced when its mean is at least each other's, not reproduced when its interval lies wholly
below another's, else inconclusive.

A claim's `caveat` says where the check differs from the paper's own (a model's handicap, a step of
the paper's statistical test not taken here); every place that shows the verdict shows it too.

Separated intervals are a conservative test (two models' paired difference is sharper: see
`structbench compare`), so `reproduced` errs on the side of caution.
"""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Literal

import pandas as pd
from pydantic import Field, model_validator

from structbench import registry
from structbench.analysis.statistics import Sample, two_sample_test
from structbench.analysis.yaml_lists import load_entries
from structbench.cells import CELL_KEYS, RUN_CELL, current_runs
from structbench.cells import cells as seed_cells
from structbench.convergence import Convergence, under_trained
from structbench.errors import UserError
from structbench.protocols import recipe_hook
from structbench.specs import Frozen
from structbench.store import run_convergence, run_statistics

CLAIMS = Path(__file__).resolve().parent / "claims.yaml"
Status = Literal["reproduced", "not reproduced", "inconclusive", "not measured", "undecided (under-trained)"]
UNDER_TRAINED: Status = "undecided (under-trained)"
TRAINING = "training"
"""The split name under which a claim reads a training statistic instead of a test split's metric."""


class CellRef(Frozen):
    """One measured cell: a model label (as the report shows it), a test split and a metric, over the
    whole split or over one breakdown condition of it."""

    model: str
    split: str
    metric: str | None = None
    """The claim's metric unless given."""
    suite: str | None = None
    """The claim's suite unless given: a finding across two suites (one objective against another)."""
    breakdown: str = ""
    """An `Example.meta` key the suite breaks its primary metric down by (COGS's `kind`), with `level`
    its value (`structural`): the cell of the split's examples of that condition; empty for the whole split."""
    level: str = ""

    @model_validator(mode="after")
    def _condition_whole(self) -> CellRef:
        if bool(self.breakdown) != bool(self.level):
            raise ValueError("give both `breakdown` and `level` (a condition of the split), or neither")
        return self


class Claim(Frozen):
    """One finding of a paper, checkable on measured cells."""

    id: str
    statement: str
    source: str
    """The paper, table or repository file the finding stands in."""
    caveat: str = ""
    """What makes this check differ from the paper's own, stated beside the verdict wherever it is
    shown (`structbench claims`, the leaderboard): a handicap one model carries here and not in the
    paper (an optimiser it could not have), or a step of the paper's test this check does not take.
    A verdict is read with it: a handicap that favours the claimed side makes "reproduced" weaker."""
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
    """The cell of `ref` among `cells` (the report's rows; the whole split's, or its breakdown condition's),
    on the installed version of its suite (the claim's, unless the cell names one), if measured."""
    suite = ref.suite or claim.suite
    rows = cells[
        (cells["suite"] == suite)
        & (cells["version"] == registry.suite(suite).spec.version)
        & (cells["model"] == ref.model)
        & (cells["split"] == ref.split)
        & (cells["metric"] == (ref.metric or claim.metric))
        & (cells["breakdown"] == ref.breakdown)
    ]
    if ref.breakdown:
        rows = rows[rows["level"].astype(str) == ref.level]
    return None if rows.empty else rows.iloc[0]


def _sample(row: pd.Series) -> Sample:
    """A training statistic's cell as the sample of its seeds (the order of seeds does not matter here)."""
    censored = row.get("censored")
    bounds = censored if isinstance(censored, list) else []
    return Sample(dict(enumerate(row["per_seed"])), dict(enumerate(bounds)))


def _where(claim: Claim, ref: CellRef) -> str:
    """A cell's name in evidence: model, suite and split (and the metric where the cell names its own),
    e.g. `ngram on agreement-attractors/attractors-4`, so that a split is never read without its suite."""
    metric = f" {ref.metric}" if ref.metric else ""
    condition = f"[{ref.breakdown}={ref.level}]" if ref.breakdown else ""
    return f"{ref.model} on {ref.suite or claim.suite}/{ref.split}{condition}{metric}"


def _shown(claim: Claim, ref: CellRef, row: pd.Series) -> str:
    """A cell as evidence: scores in %, a training statistic as it is (with its censored seeds)."""
    scale, digits = (1, 2) if ref.split == TRAINING else (100, 1)
    where = _where(claim, ref)
    censored = row.get("censored")
    if isinstance(censored, list) and censored:
        reached = len(row["per_seed"])
        return (
            f"{where}: ≥{row['mean']:.{digits}f} ({reached} of "
            f"{reached + len(censored)} seeds reached it, the others counted at their bound)"
        )
    interval = (
        ""
        if row["ci_low"] != row["ci_low"]
        else f" [{scale * row['ci_low']:.{digits}f}, {scale * row['ci_high']:.{digits}f}]"
    )
    return f"{where}: {scale * row['mean']:.{digits}f}{interval} ({row['interval']})"


def check(claim: Claim, cells: pd.DataFrame) -> Verdict:
    """`claim` on `cells` (rows as the report's `results` frame holds them)."""
    first = claim.greater or claim.lower or claim.not_below
    refs = [first, *claim.than] if first is not None else [claim.cell]
    found = [(ref, _find(cells, claim, ref)) for ref in refs if ref is not None]
    missing = [ref for ref, row in found if row is None]
    if missing:
        names = "; ".join(_where(claim, ref) for ref in missing)
        return Verdict(claim=claim, status="not measured", evidence=f"no finished run of {names}")
    rows = [(ref, row) for ref, row in found if row is not None]
    evidence = " vs ".join(_shown(claim, ref, row) for ref, row in rows)
    under = {f"{ref.model}: {why}" for ref, row in rows if (why := row.get("under_trained"))}
    if under:
        return Verdict(claim=claim, status=UNDER_TRAINED, evidence=f"{evidence}; {'; '.join(sorted(under))}")
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
    if any(sign * top["mean"] < sign * other["mean"] for other in others):
        return Verdict(claim=claim, status="not reproduced", evidence=evidence)
    samples = [_sample(row) for ref, row in rows if ref.split == TRAINING]
    if len(samples) == len(rows) and all(found.n > 1 for found in samples):
        tests = [two_sample_test(samples[0], other) for other in samples[1:]]
        evidence += "; " + ", ".join(test.shown() for test in tests)
        separated = all(test.a_lower is (claim.lower is not None) for test in tests)
    elif claim.greater is not None:
        separated = all(top["ci_low"] > other["ci_high"] for other in others)  # False where an interval is NaN
    else:
        separated = all(top["ci_high"] < other["ci_low"] for other in others)
    return Verdict(claim=claim, status="reproduced" if separated else "inconclusive", evidence=evidence)


def _censoring(suite: str) -> dict[str, str]:
    """statistic -> the statistic that bounds it on a seed that never reached it, as `suite` declares."""
    try:
        declared = registry.suite(suite).spec.statistics
    except UserError:  # a suite no longer installed: its statistics are read as reported
        return {}
    return {s.name: s.censored_by for s in declared if s.censored_by}


def statistic_cells(runs: pd.DataFrame) -> pd.DataFrame:
    """The cells of the training statistics of `runs` (`Store.runs()`; each cell's newest
    configuration, finished runs): split `training`, metric the statistic's name, over seeds.

    `censored` lists the bounds of the seeds that stopped before a statistic their suite declares
    censorable was reached; such a cell's mean counts them at their bound (a restricted mean, see
    `structbench.analysis.statistics`) and has no t-interval."""
    current = current_runs(runs)
    done = current[current.status == "done"]
    rows: list[dict[str, object]] = []
    censored: dict[tuple[str, ...], list[float]] = {}
    for suite, version, suite_hash, model, model_hash, seed, environment in done[
        ["suite", "version", "suite_hash", "model", "model_hash", "seed", "environment"]
    ].itertuples(index=False):
        reported = run_statistics(environment)
        cell = (str(suite), str(version), str(suite_hash), str(model), str(model_hash), TRAINING)
        rows += [
            {**dict(zip(CELL_KEYS, (*cell, name, "", ""), strict=True)), "seed": seed, "value": value, "n": 0,
             "proportion": False}
            for name, value in reported.items()
        ]  # fmt: skip
        for name, bound in _censoring(str(suite)).items():
            if name not in reported and bound in reported:
                censored.setdefault((*cell, name, "", ""), []).append(reported[bound])
    measured = seed_cells(pd.DataFrame(rows, columns=[*CELL_KEYS, "seed", "value", "n", "proportion"]))
    records = {tuple(map(str, (r[k] for k in CELL_KEYS))): r for r in measured.to_dict("records")}
    for key, bounds in censored.items():
        record = records.setdefault(key, {**dict(zip(CELL_KEYS, key, strict=True)), "per_seed": [], "n_seeds": 0})
        counted = [*record["per_seed"], *bounds]
        record |= {"censored": bounds, "mean": sum(counted) / len(counted), "ci_low": math.nan, "ci_high": math.nan}
        record["interval"] = "restricted mean, censored seeds at their bound"
    frame = pd.DataFrame(list(records.values()), columns=[*measured.columns, "censored"])
    frame["censored"] = [bounds if isinstance(bounds, list) else [] for bounds in frame["censored"]]
    return frame


def under_trained_cells(runs: pd.DataFrame) -> dict[tuple[str, str, str, str], str]:
    """(suite, version, suite_hash, model) -> why the cell's finished runs (each cell's newest
    configuration) did not all reach their recipe's criterion, and what reaching it takes where the
    model states it (`budget_shortfall`); cells whose runs did are absent."""
    current = current_runs(runs)
    done = current[current.status == "done"].sort_values("seed")
    records: dict[tuple[str, str, str, str], list[Convergence]] = {}
    specs: dict[tuple[str, str, str, str], str] = {}
    for *cell, spec, environment in done[[*RUN_CELL, "model_spec", "environment"]].itertuples(index=False):
        if (judged := run_convergence(environment)) is not None:
            key = (str(cell[0]), str(cell[1]), str(cell[2]), str(cell[3]))
            records.setdefault(key, []).append(judged)
            specs.setdefault(key, str(spec))
    under: dict[tuple[str, str, str, str], str] = {}
    for key, found in records.items():
        if (why := under_trained(found)) is not None:
            shortfall = _shortfall(key[0], specs[key])
            under[key] = why if shortfall is None else f"{why}; {shortfall}"
    return under


def _shortfall(suite: str, model_spec: str) -> str | None:
    """What the stored configuration (`model_spec`, the run's model record) lacks to reach its criterion
    on `suite`, as its model states it (`structbench.protocols.BuiltInRecipes.budget_shortfall`); None
    where it states nothing."""
    record = json.loads(model_spec)
    try:
        factory = registry.model_factory(str(record.get("name", "")))
    except UserError:  # a model no longer installed: nothing to ask
        return None
    shortfall = recipe_hook(factory, "budget_shortfall")
    found = None if shortfall is None else shortfall(suite, record.get("configuration") or {})
    return str(found) if found else None


def claim_cells(results: pd.DataFrame, runs: pd.DataFrame) -> pd.DataFrame:
    """What claims are checked on: the report's cells (`results`) and the training statistics of `runs`,
    each with `under_trained`, why its runs count as under-trained ("" where they do not).

    A censorable training statistic (trials to Monner's criterion) measures the criterion itself: a seed
    that never reached it is a censored observation of that statistic, counted at its bound, so such a
    cell is never undecided for being under-trained."""
    statistics = statistic_cells(runs)
    cells = results if statistics.empty else pd.concat([results, statistics], ignore_index=True)
    under = under_trained_cells(runs)
    keys = zip(*(cells[column].astype(str).tolist() for column in RUN_CELL), strict=True)
    splits, metrics, suites = (cells[column].astype(str).tolist() for column in ("split", "metric", "suite"))
    censorable = {suite: _censoring(suite) for suite in set(suites)}
    censored_by_criterion = [
        split == TRAINING and metric in censorable[suite]
        for split, metric, suite in zip(splits, metrics, suites, strict=True)
    ]
    return cells.assign(
        under_trained=[
            "" if censored else under.get(key, "") for key, censored in zip(keys, censored_by_criterion, strict=True)
        ]
    )


def check_all(cells: pd.DataFrame, claims: list[Claim] | None = None) -> list[Verdict]:
    """Every claim of the claims file on `cells`, in file order."""
    return [check(claim, cells) for claim in (claims if claims is not None else load_claims())]
