"""Does model A need fewer training trials than model B? Welch's t-test on a statistic of training.

A statistic of training (`statistics()`, e.g. DSR's `trials_to_criterion`) is one number per
run, with no examples to pair, so two models are compared over their seeds as two independent
samples: Welch's two-sample t-test (scipy), unequal variances, which is the test Monner (2011,
§2.7.1) reports for trials to criterion. The difference is mean(A) - mean(B) with its 95%
Welch interval. Only the finished runs of each model's newest configuration that report the
statistic count; seeds that finished without it (a criterion never reached) are counted and
shown, never imputed, since any value put in their place would bias the means.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import pandas as pd
from scipy import stats

from structbench.cells import current_configuration
from structbench.compare import CONFIDENCE
from structbench.errors import UserError
from structbench.specs import SuiteSpec
from structbench.store import Store, run_statistics
from structbench.suite import Suite


@dataclass(frozen=True)
class StatisticComparison:
    """Model A against model B on one statistic of training: A's mean minus B's, Welch's test."""

    suite: str
    statistic: str
    higher_is_better: bool | None
    """The statistic's direction as the suite declares it; None for a statistic it does not declare."""
    model_a: str
    model_b: str
    values_a: dict[int, float]
    """seed -> the statistic, for A's finished runs that report it."""
    values_b: dict[int, float]
    without_a: list[int]
    """A's finished seeds that did not report it."""
    without_b: list[int]
    mean_a: float
    mean_b: float
    difference: float
    ci_low: float
    ci_high: float
    t: float
    df: float
    p_value: float

    @property
    def verdict(self) -> str:
        if math.isnan(self.ci_low) or self.ci_low <= 0 <= self.ci_high:
            return "not distinguishable"
        a_higher = self.ci_low > 0
        if self.higher_is_better is None:
            return f"{self.model_a} {'higher' if a_higher else 'lower'}"
        return f"{self.model_a if a_higher == self.higher_is_better else self.model_b} better"


def welch(a: list[float], b: list[float]) -> tuple[float, float, float, float, float, float]:
    """(mean(a) - mean(b), 95% interval low, high, t, Welch degrees of freedom, two-sided p); NaN
    where the test is undefined (fewer than two values a side, or no variance in either)."""
    result = stats.ttest_ind(a, b, equal_var=False)
    interval = result.confidence_interval(CONFIDENCE)
    difference = sum(a) / len(a) - sum(b) / len(b)
    return (
        difference,
        float(interval.low),
        float(interval.high),
        float(result.statistic),
        float(result.df),
        float(result.pvalue),
    )


def statistic_values(
    runs: pd.DataFrame, spec: SuiteSpec, statistic: str
) -> dict[str, tuple[dict[int, float], list[int]]]:
    """label -> (seed -> value, seeds without it) over the finished runs of each label's newest
    configuration on `spec`'s version (`runs` is `Store.runs()`)."""
    mine = runs[(runs.suite == spec.id) & (runs.version == spec.version)]
    mine = current_configuration(mine, mine)
    mine = mine[mine.status == "done"]
    out: dict[str, tuple[dict[int, float], list[int]]] = {}
    for label, seed, environment in zip(*(mine[c].tolist() for c in ("model", "seed", "environment")), strict=True):
        values, without = out.setdefault(str(label), ({}, []))
        value = run_statistics(environment).get(statistic)
        if value is None:
            without.append(int(seed))
        else:
            values[int(seed)] = value
    return out


def compare_statistic(store: Store, suite: Suite, model_a: str, model_b: str, statistic: str) -> StatisticComparison:
    """Welch's test of `statistic` between two labels' finished runs on `suite`."""
    if model_a == model_b:
        raise UserError(f"--models names {model_a!r} twice; give two different models.")
    spec = suite.spec
    by_label = statistic_values(store.runs(), spec, statistic)
    sides = []
    for label in (model_a, model_b):
        values, without = by_label.get(label, ({}, []))
        if len(values) < 2:
            reported = f"{len(values)} finished run(s) report it" + (f", seeds {without} do not" if without else "")
            raise UserError(
                f"{label!r} has fewer than two finished runs on {spec.key} that report {statistic!r} ({reported}); "
                f"run more seeds, e.g. `structbench run --suite {spec.id} --model {label} --seeds 0-9`."
            )
        sides.append((values, sorted(without)))
    (values_a, without_a), (values_b, without_b) = sides
    difference, low, high, t, df, p = welch(list(values_a.values()), list(values_b.values()))
    declared = {s.name: s.higher_is_better for s in spec.statistics}
    return StatisticComparison(
        suite=spec.key,
        statistic=statistic,
        higher_is_better=declared.get(statistic),
        model_a=model_a,
        model_b=model_b,
        values_a=dict(sorted(values_a.items())),
        values_b=dict(sorted(values_b.items())),
        without_a=without_a,
        without_b=without_b,
        mean_a=sum(values_a.values()) / len(values_a),
        mean_b=sum(values_b.values()) / len(values_b),
        difference=difference,
        ci_low=low,
        ci_high=high,
        t=t,
        df=df,
        p_value=p,
    )
