"""The papers' qualitative findings, checked on the measured cells of a store.

`claims.yaml` (packaged with the reports) states each finding as a comparison: one cell `greater`
(or `lower`, or `not_below`) than each cell in `than`, or one `cell` `at_most` a bound. A cell is a
test split's metric, over the whole split or over one breakdown condition of it (COGS's structural
cases against its lexical ones), or, on the split `training`, a statistic the models report of their
training (`statistics()`: a language model's `dev_perplexity`, DSR's `trials_to_criterion`).

Each comparison is a two-sided test at the 5% level (`structbench.analysis.significance`, whose
`RULE` every page prints), and a claim is

- `reproduced` when every comparison finds the difference in the claimed direction;
- `contradicted` when any finds it in the opposite direction (the claim's cell significantly worse
  than another, or above its bound); this word replaced "not reproduced", which was said whenever
  the means pointed the other way, however far apart the seeds left them;
- `inconclusive` otherwise, with each undecided comparison's p and the seeds (or items) per cell
  that would decide a difference the size of the one observed; cells that cannot be told apart
  (both at a suite's ceiling) neither support nor refute a claim that one is better;
- `not measured` when a cell it needs has no finished run in the store;
- `undecided (under-trained)` when a cell it needs rests on runs whose training did not reach their
  recipe's criterion of having learned the training distribution (`structbench.convergence`): what
  such a cell measures is the budget, not the architecture, so the claim is neither reproduced nor
  refuted by it. The evidence names the dev values.

The test is over seeds when any of the claim's cells varies over its seeds, or is a statistic of
training: Welch's t-test between two cells, the logrank test where some seeds stopped before reaching
a statistic their suite declares censorable (such a cell's mean is a restricted mean, see
`structbench.analysis.statistics`), the one-sample t-test against a bound. It is over the test items
when every cell's seeds agree and its metric is a fraction of items: the score test of two
proportions, or of one against the bound. The evidence shows each cell with the interval of that
same kind, so that the intervals shown are the uncertainty the test weighs: a t-interval over seeds
(a cell whose seeds agree has none over seeds, and says so), or Wilson's over items.

`not_below` (Monner's strong systematicity against weak) is tested as `greater` is: without a
margin, a difference too small to be significant shows no more that a cell is no worse than that it
is better, and a significantly lower cell contradicts it.

A claim's `caveat` says where the check differs from the paper's own (a model's handicap, a step of
the paper's statistical test not taken here); every place that shows the verdict shows it too.
"""

from __future__ import annotations

import json
import math
import statistics
import warnings
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Literal

import pandas as pd
from pydantic import Field, model_validator

from structbench import registry
from structbench.analysis import significance
from structbench.analysis.statistics import Sample, two_sample_test
from structbench.analysis.yaml_lists import load_entries
from structbench.cells import CELL_KEYS, RUN_CELL, current_runs, wilson_items
from structbench.cells import cells as seed_cells
from structbench.convergence import Convergence, under_trained
from structbench.errors import UserError
from structbench.protocols import recipe_hook
from structbench.specs import Frozen
from structbench.store import run_convergence, run_statistics

CLAIMS = Path(__file__).resolve().parent / "claims.yaml"
Status = Literal["reproduced", "contradicted", "inconclusive", "not measured", "undecided (under-trained)"]
UNDER_TRAINED: Status = "undecided (under-trained)"
Outcome = Literal["claimed", "opposite", "neither"]
"""What one comparison's test found at the 5% level: the claimed direction, the opposite one, or neither."""
Kind = Literal["seeds", "items"]
"""What a claim's tests sample over (see the module docstring)."""
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

    @property
    def refs(self) -> list[CellRef]:
        """The cells the claim reads: its compared cell, then those it is compared with (or its one bounded cell)."""
        first = self.greater or self.lower or self.not_below
        return [first, *self.than] if first is not None else [self.cell] if self.cell is not None else []


class Comparison(Frozen):
    """One test a verdict rests on: the claim's cell against one other cell, or against its bound."""

    against: str
    """The other cell (`model on suite/split`), or `bound 59.0`."""
    test: str
    """The test, e.g. `Welch's t-test over seeds`; `none` where no test applies (one seed; seeds that
    agree on a metric that is not a fraction of items)."""
    statistic: float | None = None
    """t or z, positive when the claim's cell lies above the other (or the bound); None without a test."""
    p_value: float | None = None
    """Two-sided; None where no test applies or it is undefined."""
    outcome: Outcome
    needed: int | None = None
    """Where the test found neither direction: the seeds (or items: `unit`) per cell that would find a
    difference the size of the observed one with 80% power; None where no number would or none is estimated."""
    unit: Kind = "seeds"
    shown: str
    """The test and what deciding it would take, as the evidence states it."""


class Verdict(Frozen):
    """A claim checked on a store."""

    claim: Claim
    status: Status
    evidence: str
    """The cells (mean and interval, %) and the tests the status rests on."""
    comparisons: list[Comparison] = Field(default_factory=list)
    """The tests, one per cell the claim's cell is compared with (or its bound); none where the claim
    is not measured or undecided."""


def load_claims(path: Path | None = None) -> list[Claim]:
    """Every claim of the claims file, validated; a malformed one is named with its problem."""
    return load_entries(path or CLAIMS, Claim, "claim")


class _Cells:
    """The report's rows (the whole split's, or a breakdown condition's), found by their cell: a
    claim looks up a few cells, and comparing every row's keys for each (a boolean mask per key)
    took most of checking the claims."""

    def __init__(self, cells: pd.DataFrame) -> None:
        self.cells = cells
        self._at: dict[tuple[str, ...], int] = {}
        columns = ["suite", "version", "model", "split", "metric", "breakdown", "level"]
        keys = zip(*(cells[column].astype(str).tolist() for column in columns), strict=True)
        for at, (suite, version, model, split, metric, breakdown, level) in enumerate(keys):
            whole = (suite, version, model, split, metric, breakdown)
            self._at.setdefault(whole, at)  # the first row, as a mask would give it
            self._at.setdefault((*whole, level), at)

    def find(self, claim: Claim, ref: CellRef) -> pd.Series | None:
        """The cell of `ref`, on the installed version of its suite (the claim's, unless the cell names
        one), if measured."""
        suite = ref.suite or claim.suite
        version = registry.suite(suite).spec.version
        key = (suite, version, ref.model, ref.split, ref.metric or claim.metric, ref.breakdown)
        at = self._at.get((*key, ref.level) if ref.breakdown else key)
        return None if at is None else self.cells.iloc[at]


def _sample(row: pd.Series) -> Sample:
    """A cell as the sample of its seeds (the order of seeds does not matter here), a training
    statistic's censored seeds at their bounds."""
    censored = row.get("censored")
    bounds = censored if isinstance(censored, list) else []
    return Sample(dict(enumerate(row["per_seed"])), dict(enumerate(bounds)))


def _where(claim: Claim, ref: CellRef) -> str:
    """A cell's name in evidence: model, suite and split (and the metric where the cell names its own),
    e.g. `ngram on agreement-attractors/attractors-4`, so that a split is never read without its suite."""
    metric = f" {ref.metric}" if ref.metric else ""
    condition = f"[{ref.breakdown}={ref.level}]" if ref.breakdown else ""
    return f"{ref.model} on {ref.suite or claim.suite}/{ref.split}{condition}{metric}"


def _kind(rows: Sequence[pd.Series]) -> Kind:
    """Over items where every cell is a fraction of items whose seeds agree (its interval is Wilson's);
    over seeds otherwise."""
    return "items" if all(wilson_items(str(row["interval"])) is not None for row in rows) else "seeds"


def _shown(claim: Claim, ref: CellRef, row: pd.Series, kind: Kind) -> str:
    """A cell as evidence: scores in %, a training statistic as it is (with its censored seeds), with the
    interval of the kind its claim is tested over: Wilson's over items, or the t-interval over seeds (none
    where the cell's seeds agree, or it has one)."""
    scale, digits = (1, 2) if ref.split == TRAINING else (100, 1)
    where = _where(claim, ref)
    censored = row.get("censored")
    if isinstance(censored, list) and censored:
        reached = len(row["per_seed"])
        return (
            f"{where}: ≥{row['mean']:.{digits}f} ({reached} of "
            f"{reached + len(censored)} seeds reached it, the others counted at their bound)"
        )
    mean = f"{where}: {scale * row['mean']:.{digits}f}"
    seeds = len(row["per_seed"])
    interval = str(row["interval"])
    if kind == "items" or interval.startswith("t over"):
        agree = f"; its {seeds} seeds agree" if kind == "items" and seeds > 1 else ""
        return f"{mean} [{scale * row['ci_low']:.{digits}f}, {scale * row['ci_high']:.{digits}f}] ({interval}{agree})"
    return f"{mean} ({f'its {seeds} seeds agree' if seeds > 1 else 'one seed'}: no interval over seeds)"


def _finite(number: float) -> float | None:
    """`number`, or None where it is infinite or NaN (a bound of 0 or 1, an undefined test): JSON has neither."""
    return number if math.isfinite(number) else None


def _sd(values: Sequence[float]) -> float:
    return statistics.stdev(values) if len(values) > 1 else math.nan


def _needed(needed: int | None, difference: float, unit: Kind, *, why_none: str = "") -> str:
    """What deciding an undecided comparison would take, in words."""
    more = "; more seeds would not change it: they agree" if unit == "items" else ""
    if difference == 0:
        return f"the cells are equal: no number of {unit} decides it"
    if needed is None:
        return why_none or f"more than {significance.MOST:,} {unit} per cell would be needed{more}"
    return f"about {needed:,} {unit} per cell would decide a difference this large (80% power){more}"


def _decided(found: bool | None, claimed: bool) -> Outcome:
    """The outcome of a test that found the claim's cell above (True), below (False) or neither (None)."""
    return "neither" if found is None else "claimed" if found == claimed else "opposite"


def _direction(tested: significance.Tested) -> bool | None:
    """Whether a test found its first sample above (True) or below (False) the other, at the 5% level."""
    return None if not tested.p_value < significance.ALPHA else tested.statistic > 0


def _untested(against: str, why: str) -> Comparison:
    """A comparison no test over seeds applies to, saying why."""
    return Comparison(against=against, test="none", outcome="neither", shown=f"no test: {why}")


def _against_cell(claim: Claim, top: pd.Series, ref: CellRef, other: pd.Series, kind: Kind) -> Comparison:
    """The claim's cell `top` against `other` (the cell `ref`), over `kind`."""
    against = _where(claim, ref)
    higher = claim.lower is None  # the claimed direction: `greater` and `not_below` above, `lower` below
    if kind == "items":
        items_a, items_b = wilson_items(str(top["interval"])), wilson_items(str(other["interval"]))
        assert items_a is not None and items_b is not None  # `_kind` says so
        p_a, p_b = float(top["mean"]), float(other["mean"])
        tested = significance.two_proportions(round(p_a * items_a), items_a, round(p_b * items_b), items_b)
        outcome = _decided(_direction(tested), higher)
        needed = significance.items_for_two_proportions(p_a, p_b) if outcome == "neither" else None
        shown = tested.shown() + ("" if outcome != "neither" else "; " + _needed(needed, p_a - p_b, "items"))
        return Comparison(
            against=against, test=tested.name, statistic=_finite(tested.statistic), p_value=_finite(tested.p_value),
            outcome=outcome, needed=needed, unit="items", shown=shown,
        )  # fmt: skip
    a, b = _sample(top), _sample(other)
    if a.n < 2 or b.n < 2:
        return _untested(against, "a test over seeds needs two or more seeds of each cell")
    a_values, b_values = list(a.values.values()), list(b.values.values())
    if not (a.censored or b.censored) and _sd(a_values) == 0 and _sd(b_values) == 0:
        return _untested(
            against, "the seeds of both cells agree, and the metric is not a fraction of items to test over"
        )
    with warnings.catch_warnings():  # one cell's seeds may agree exactly: scipy then warns of lost precision
        warnings.filterwarnings("ignore", "Precision loss occurred", RuntimeWarning)
        result = two_sample_test(a, b)
    lower = result.a_lower
    outcome = _decided(None if lower is None else not lower, higher)
    p = None if math.isnan(result.p_value) else result.p_value
    needed, why_none = None, ""
    if result.test == "welch":
        name = "Welch's t-test over seeds"
        shown = f"{name}: t {result.statistic:.3g}, df {result.df:.3g}, p {significance.p_shown(result.p_value)}"
        if outcome == "neither":
            needed = significance.seeds_for_two_samples(a.mean - b.mean, _sd(a_values), _sd(b_values))
    else:
        name = "logrank test over seeds (censored seeds)"
        shown = f"{name}: z {result.statistic:.3g}, p {significance.p_shown(result.p_value)}"
        if outcome == "neither":
            censored_a, censored_b = list(a.censored.values()), list(b.censored.values())
            needed = significance.seeds_for_logrank(a_values, censored_a, b_values, censored_b)
            why_none = "" if a_values and b_values else "no estimate: a cell has no seed that reached it"
    if outcome == "neither":
        shown += "; " + _needed(needed, a.mean - b.mean, "seeds", why_none=why_none)
    statistic = result.statistic if result.test == "welch" else -result.statistic  # logrank's z: A sooner
    return Comparison(
        against=against, test=name, statistic=_finite(statistic), p_value=p, outcome=outcome,
        needed=needed, unit="seeds", shown=shown,
    )  # fmt: skip


def _against_bound(row: pd.Series, bound: float, kind: Kind) -> Comparison:
    """The claim's cell against its bound (`at_most`): the claimed direction is below it."""
    against = f"bound {100 * bound:.1f}"
    mean = float(row["mean"])
    if kind == "items":
        items = wilson_items(str(row["interval"]))
        assert items is not None  # `_kind` says so
        tested = significance.one_proportion(round(mean * items), items, bound)
        needed = significance.items_for_one_proportion(mean, bound)
        unit: Kind = "items"
    else:
        values = [float(v) for v in row["per_seed"]]
        if len(values) < 2:
            return _untested(against, "a test over seeds needs two or more seeds")
        if _sd(values) == 0:
            return _untested(against, "the cell's seeds agree, and the metric is not a fraction of items to test over")
        tested = significance.one_sample_t(values, bound)
        needed = significance.seeds_for_one_sample(mean - bound, _sd(values))
        unit = "seeds"
    outcome = _decided(_direction(tested), False)
    shown = tested.shown() + ("" if outcome != "neither" else "; " + _needed(needed, mean - bound, unit))
    return Comparison(
        against=against, test=tested.name, statistic=_finite(tested.statistic),
        p_value=_finite(tested.p_value), outcome=outcome,
        needed=needed if outcome == "neither" else None, unit=unit, shown=shown,
    )  # fmt: skip


def check(claim: Claim, cells: pd.DataFrame) -> Verdict:
    """`claim` on `cells` (rows as the report's `results` frame holds them, with their `per_seed` values)."""
    return _check(claim, _Cells(cells))


def _check(claim: Claim, cells: _Cells) -> Verdict:
    found = [(ref, cells.find(claim, ref)) for ref in claim.refs]
    missing = [ref for ref, row in found if row is None]
    if missing:
        names = "; ".join(_where(claim, ref) for ref in missing)
        return Verdict(claim=claim, status="not measured", evidence=f"no finished run of {names}")
    rows = [(ref, row) for ref, row in found if row is not None]
    kind = _kind([row for _, row in rows])
    evidence = " vs ".join(_shown(claim, ref, row, kind) for ref, row in rows)
    under = {f"{ref.model}: {why}" for ref, row in rows if (why := row.get("under_trained"))}
    if under:
        return Verdict(claim=claim, status=UNDER_TRAINED, evidence=f"{evidence}; {'; '.join(sorted(under))}")
    (_, top), others = rows[0], rows[1:]
    if claim.at_most is not None:
        evidence += f"; bound {100 * claim.at_most:.1f}"
        comparisons = [_against_bound(top, claim.at_most, kind)]
    else:
        comparisons = [_against_cell(claim, top, ref, row, kind) for ref, row in others]
    if len(comparisons) == 1:
        evidence += f"; {comparisons[0].shown}"
    else:
        evidence += "".join(f"; against {c.against}: {c.shown}" for c in comparisons)
    outcomes = [c.outcome for c in comparisons]
    status: Status = (
        "contradicted" if "opposite" in outcomes
        else "reproduced" if all(o == "claimed" for o in outcomes)
        else "inconclusive"
    )  # fmt: skip
    return Verdict(claim=claim, status=status, evidence=evidence, comparisons=comparisons)


def _censoring(suite: str) -> dict[str, str]:
    """statistic -> the statistic that bounds it on a seed that never reached it, as `suite` declares."""
    if suite not in registry.suite_names():  # a suite not installed here: its statistics are read as reported
        return {}
    try:
        declared = registry.suite(suite).spec.statistics
    except UserError:  # a plugin that cannot be loaded any more: the same
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
    censorable = {suite: _censoring(str(suite)) for suite in set(done.suite)}
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
        for name, bound in censorable[suite].items():
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


def under_trained_configurations(runs: pd.DataFrame) -> dict[tuple[str, str, str, str], tuple[str, str]]:
    """(suite, version, suite_hash, model) -> (why the cell's finished runs, each cell's newest
    configuration, did not all reach their recipe's criterion; that configuration's stored model record),
    for the cells whose runs did not: what `under_trained_cells` tells, before asking the model for its
    `budget_shortfall`."""
    current = current_runs(runs)
    done = current[current.status == "done"].sort_values("seed")
    records: dict[tuple[str, str, str, str], list[Convergence]] = {}
    specs: dict[tuple[str, str, str, str], str] = {}
    for *cell, spec, environment in done[[*RUN_CELL, "model_spec", "environment"]].itertuples(index=False):
        if (judged := run_convergence(environment)) is not None:
            key = (str(cell[0]), str(cell[1]), str(cell[2]), str(cell[3]))
            records.setdefault(key, []).append(judged)
            specs.setdefault(key, str(spec))
    return {key: (why, specs[key]) for key, found in records.items() if (why := under_trained(found)) is not None}


def under_trained_cells(
    runs: pd.DataFrame, shortfalls: Mapping[tuple[str, str], str | None] | None = None
) -> dict[tuple[str, str, str, str], str]:
    """(suite, version, suite_hash, model) -> why the cell's finished runs (each cell's newest
    configuration) did not all reach their recipe's criterion, and what reaching it takes where the
    model states it (`budget_shortfall`); cells whose runs did are absent. `shortfalls` holds the
    models' answers ((suite, model record) -> shortfall) where the caller asked them already
    (`structbench.reports.builders.model_facts`); any other is asked here."""
    return with_shortfalls(under_trained_configurations(runs), shortfalls)


def with_shortfalls(
    configurations: Mapping[tuple[str, str, str, str], tuple[str, str]],
    shortfalls: Mapping[tuple[str, str], str | None] | None = None,
) -> dict[tuple[str, str, str, str], str]:
    """`under_trained_cells` of the cells `under_trained_configurations` gave (`configurations`)."""
    under: dict[tuple[str, str, str, str], str] = {}
    for key, (why, spec) in configurations.items():
        asked = (key[0], spec)
        shortfall = shortfalls[asked] if shortfalls is not None and asked in shortfalls else shortfall_of(*asked)
        under[key] = why if shortfall is None else f"{why}; {shortfall}"
    return under


def shortfall_of(suite: str, model_spec: str) -> str | None:
    """What the stored configuration (`model_spec`, the run's model record) lacks to reach its criterion
    on `suite`, as its model states it (`structbench.protocols.BuiltInRecipes.budget_shortfall`); None
    where it states nothing."""
    record = json.loads(model_spec)
    try:
        factory = registry.model_factory(str(record.get("name", "")))
    except UserError:  # a model no longer installed: nothing to ask
        return None
    shortfall = recipe_hook(factory, "budget_shortfall")
    try:
        found = None if shortfall is None else shortfall(suite, record.get("configuration") or {})
    except UserError:  # a suite this structbench does not have (a user's, given by module path): no recipe to ask
        return None
    return str(found) if found else None


def claim_cells(
    results: pd.DataFrame, runs: pd.DataFrame, shortfalls: Mapping[tuple[str, str], str | None] | None = None
) -> pd.DataFrame:
    """What claims are checked on: the report's cells (`results`) and the training statistics of `runs`,
    each with `under_trained`, why its runs count as under-trained ("" where they do not; `shortfalls`
    as `under_trained_cells` takes them).

    A censorable training statistic (trials to Monner's criterion) measures the criterion itself: a seed
    that never reached it is a censored observation of that statistic, counted at its bound, so such a
    cell is never undecided for being under-trained."""
    statistics = statistic_cells(runs)
    cells = results if statistics.empty else pd.concat([results, statistics], ignore_index=True)
    under = under_trained_cells(runs, shortfalls)
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
    claims = claims if claims is not None else load_claims()
    refs = [(claim, ref) for claim in claims for ref in claim.refs]
    # each claim looks up a few cells: among the rows of the suites and models some claim names, not every row
    named = cells["suite"].isin({ref.suite or claim.suite for claim, ref in refs}) & cells["model"].isin(
        {ref.model for _, ref in refs}
    )
    named_rows = _Cells(cells[named])
    return [_check(claim, named_rows) for claim in claims]
