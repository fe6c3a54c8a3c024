"""Does model A need fewer training trials than model B? A two-sample test on a statistic of training.

A statistic of training (`statistics()`, e.g. DSR's `trials_to_criterion`) is one number per
run, with no examples to pair, so two models are compared over their seeds as two independent
samples:

- When every seed reports it, Welch's two-sample t-test (scipy), unequal variances, the test
  Monner (2011, §2.7.1) reports for trials to criterion. Monner first removed the runs more than
  2 standard deviations from their sample's mean; this test removes none (with a few seeds, one
  seed is a large share of the evidence, and the claim that quotes him says so). The difference
  is mean(A) - mean(B) with its 95% Welch interval.
- A seed that stopped before the statistic was reached (training ran out before the criterion
  held) reports the suite's `censored_by` statistic instead (`trials_trained`): its value is only
  known to exceed that bound, it is right-censored. Leaving such seeds out flatters the slower
  model, and putting the bound in their place biases a t-test, so with any censored seed the
  comparison is the logrank test (`scipy.stats.logrank`), the standard two-sample test for
  censored times to an event. Means are then restricted means, each censored seed counted at its
  bound: a lower bound on the true mean, and exactly the restricted mean up to the cap when every
  censored seed stopped at the same cap.

Only the finished runs of each model's newest configuration count; seeds that report neither the
statistic nor its bound are listed as without it, never imputed.

`scipy.stats` is imported by the test itself, not by this module: it takes about a second to import,
and a report imports this module (through the claims and the boards) whether or not a store holds
any statistic to test.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Literal

import pandas as pd

from structbench.analysis.compare import CONFIDENCE
from structbench.analysis.labels import stored_models, unknown_label
from structbench.cells import current_runs
from structbench.errors import UserError
from structbench.specs import SuiteSpec
from structbench.store import StoreReader, run_statistics
from structbench.suite import Suite


@dataclass(frozen=True)
class Sample:
    """One model's seeds on one statistic of training."""

    values: dict[int, float] = field(default_factory=dict)
    """seed -> the statistic, for the seeds that report it."""
    censored: dict[int, float] = field(default_factory=dict)
    """seed -> the bound its value is known to exceed (it stopped before the statistic was reached)."""
    without: list[int] = field(default_factory=list)
    """Finished seeds that report neither."""

    @property
    def n(self) -> int:
        """Seeds that count: reported or censored."""
        return len(self.values) + len(self.censored)

    @property
    def mean(self) -> float:
        """The mean over the seeds that count, a censored seed at its bound (a restricted mean, a
        lower bound on the true mean); NaN with none."""
        counted = [*self.values.values(), *self.censored.values()]
        return sum(counted) / len(counted) if counted else math.nan


def sample(seed_statistics: Mapping[int, Mapping[str, float]], name: str, censored_by: str | None = None) -> Sample:
    """The sample of statistic `name` over finished seeds (seed -> what the run reported); a seed
    without `name` but with `censored_by` is censored at that value."""
    values: dict[int, float] = {}
    censored: dict[int, float] = {}
    without: list[int] = []
    for seed, reported in sorted(seed_statistics.items()):
        if name in reported:
            values[seed] = reported[name]
        elif censored_by is not None and censored_by in reported:
            censored[seed] = reported[censored_by]
        else:
            without.append(seed)
    return Sample(values, censored, without)


@dataclass(frozen=True)
class TwoSampleTest:
    """A against B: Welch's t-test, or the logrank test when a seed is censored."""

    test: Literal["welch", "logrank"]
    difference: float
    """mean(A) - mean(B) (restricted means under censoring)."""
    ci_low: float
    """The 95% Welch interval of the difference; NaN under the logrank test, which gives none."""
    ci_high: float
    statistic: float
    """Welch's t, or the logrank z (positive when A reaches the event sooner)."""
    df: float
    """Welch's degrees of freedom; NaN under the logrank test."""
    p_value: float
    """Two-sided; NaN where the test is undefined (too few values, no variance, no event)."""

    @property
    def a_lower(self) -> bool | None:
        """Whether A is significantly lower (True), higher (False) or neither (None) at the 5% level."""
        if not self.p_value < 1 - CONFIDENCE:
            return None
        return self.statistic > 0 if self.test == "logrank" else self.statistic < 0

    def shown(self) -> str:
        if self.test == "welch":
            return f"Welch's t-test: t {self.statistic:.3g}, df {self.df:.3g}, p {self.p_value:.3g}"
        return f"logrank test (censored seeds): z {self.statistic:.3g}, p {self.p_value:.3g}"


def two_sample_test(a: Sample, b: Sample) -> TwoSampleTest:
    """Welch's t-test of A against B when no seed is censored, else the logrank test."""
    from scipy import stats

    difference = a.mean - b.mean
    x, y = list(a.values.values()), list(b.values.values())
    if not a.censored and not b.censored:
        result = stats.ttest_ind(x, y, equal_var=False)
        interval = result.confidence_interval(CONFIDENCE)
        return TwoSampleTest(
            "welch",
            difference,
            float(interval.low),
            float(interval.high),
            float(result.statistic),
            float(result.df),
            float(result.pvalue),
        )
    ranked = stats.logrank(
        stats.CensoredData(uncensored=x, right=list(a.censored.values())),
        stats.CensoredData(uncensored=y, right=list(b.censored.values())),
    )
    return TwoSampleTest(
        "logrank", difference, math.nan, math.nan, float(ranked.statistic), math.nan, float(ranked.pvalue)
    )


def statistic_samples(runs: pd.DataFrame, spec: SuiteSpec, statistic: str) -> dict[str, Sample]:
    """label -> its sample of `statistic` over the finished runs of its newest configuration on
    `spec`'s version (`runs` is `Store.runs()`)."""
    mine = runs[(runs.suite == spec.id) & (runs.version == spec.version)]
    mine = current_runs(mine)
    mine = mine[mine.status == "done"]
    by_label: dict[str, dict[int, dict[str, float]]] = {}
    for label, seed, environment in zip(*(mine[c].tolist() for c in ("model", "seed", "environment")), strict=True):
        by_label.setdefault(str(label), {})[int(seed)] = run_statistics(environment)
    declared = spec.statistic(statistic)
    bound = declared.censored_by if declared else None
    return {label: sample(seeds, statistic, bound) for label, seeds in by_label.items()}


@dataclass(frozen=True)
class StatisticComparison:
    """Model A against model B on one statistic of training."""

    suite: str
    statistic: str
    higher_is_better: bool | None
    """The statistic's direction as the suite declares it; None for a statistic it does not declare."""
    model_a: str
    model_b: str
    a: Sample
    b: Sample
    result: TwoSampleTest

    @property
    def verdict(self) -> str:
        lower = self.result.a_lower
        if lower is None:
            return "not distinguishable"
        if self.higher_is_better is None:
            return f"{self.model_a} {'lower' if lower else 'higher'}"
        return f"{self.model_b if lower == self.higher_is_better else self.model_a} better"

    def as_json(self) -> dict[str, object]:
        return {
            "suite": self.suite,
            "statistic": self.statistic,
            "higher_is_better": self.higher_is_better,
            "model_a": self.model_a,
            "model_b": self.model_b,
            **{f"{key}_{side}": value for side, s in (("a", self.a), ("b", self.b)) for key, value in _fields(s)},
            **{
                key: None if isinstance(value, float) and math.isnan(value) else value
                for key, value in vars(self.result).items()
            },
            "verdict": self.verdict,
        }


def _fields(s: Sample) -> list[tuple[str, object]]:
    mean = None if math.isnan(s.mean) else s.mean
    return [("values", s.values), ("censored", s.censored), ("without", s.without), ("mean", mean), ("n", s.n)]


def compare_statistic(
    store: StoreReader, suite: Suite, model_a: str, model_b: str, statistic: str
) -> StatisticComparison:
    """A two-sample test of `statistic` between two labels' finished runs on `suite`."""
    if model_a == model_b:
        raise UserError(f"--models names {model_a!r} twice; give two different models.")
    spec = suite.spec
    samples = statistic_samples(store.runs(), spec, statistic)
    sides = []
    stored = {m.label for m in stored_models(store, spec.key)}
    for label in (model_a, model_b):  # a mistyped label first: it is not a matter of seeds
        if label not in stored:
            raise UserError(unknown_label(store, spec, label))
    for label in (model_a, model_b):
        found = samples.get(label, Sample())
        if found.n < 2:
            reported = f"{found.n} finished run(s) report it" + (
                f", seeds {found.without} do not" if found.without else ""
            )
            raise UserError(
                f"{label!r} has fewer than two finished runs on {spec.key} that report {statistic!r} ({reported}); "
                f"run more seeds of its configuration (`structbench runs --suite {spec.key} --model '{label}'` "
                "shows it as `run` takes it), e.g. with --seeds 0-9."
            )
        sides.append(found)
    a, b = sides
    declared = spec.statistic(statistic)
    return StatisticComparison(
        suite=spec.key,
        statistic=statistic,
        higher_is_better=declared.higher_is_better if declared else None,
        model_a=model_a,
        model_b=model_b,
        a=a,
        b=b,
        result=two_sample_test(a, b),
    )
