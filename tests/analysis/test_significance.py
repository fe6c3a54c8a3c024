"""The tests a verdict rests on, and the sample sizes it says would decide an undecided claim."""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy import stats

from structbench.analysis import significance
from structbench.cells import wilson


@pytest.mark.parametrize(("a", "b"), [((420, 500), (46, 500)), ((480, 500), (470, 500)), ((3, 32), (9, 40))])
def test_the_two_proportion_test_is_pearsons_chi_square_without_correction(
    a: tuple[int, int], b: tuple[int, int]
) -> None:
    tested = significance.two_proportions(*a, *b)
    table = [[a[0], a[1] - a[0]], [b[0], b[1] - b[0]]]
    expected = stats.chi2_contingency(table, correction=False)
    assert tested.p_value == pytest.approx(expected.pvalue, rel=1e-9)
    assert tested.statistic**2 == pytest.approx(expected.statistic, rel=1e-9)
    assert (tested.statistic > 0) == (a[0] / a[1] > b[0] / b[1])


def test_two_proportions_that_agree_on_every_item_are_not_told_apart() -> None:
    tested = significance.two_proportions(500, 500, 500, 500)
    assert tested.statistic == 0 and tested.p_value == 1


@pytest.mark.parametrize("hits", [0, 3, 20, 24, 25, 26, 30, 45, 50])
@pytest.mark.parametrize("bound", [0.05, 0.208, 0.59])
def test_a_proportion_is_significantly_off_its_bound_exactly_where_its_wilson_interval_excludes_it(
    hits: int, bound: float
) -> None:
    low, high = wilson(np.array([hits / 50]), np.array([50.0]))
    outside = bool(high[0] < bound or low[0] > bound)
    assert (significance.one_proportion(hits, 50, bound).p_value < significance.ALPHA) == outside


def test_the_one_sample_test_is_scipys() -> None:
    values = [0.05, 0.06, 0.08]
    tested = significance.one_sample_t(values, 0.208)
    assert tested.p_value == pytest.approx(stats.ttest_1samp(values, 0.208).pvalue)
    assert tested.statistic < 0 and tested.df == 2


def simulated_power(sample: object, reps: int = 4000) -> float:
    """The share of `reps` simulated experiments (`sample(rng)` -> p) whose p is below the level."""
    rng = np.random.default_rng(7)
    return float(np.mean([sample(rng) < significance.ALPHA for _ in range(reps)]))  # type: ignore[operator]


@pytest.mark.parametrize(("difference", "sd_a", "sd_b"), [(0.062, 0.084, 0.0), (0.05, 0.05, 0.08), (0.3, 0.2, 0.2)])
def test_the_seeds_said_to_decide_a_difference_do_so_80_percent_of_the_time(
    difference: float, sd_a: float, sd_b: float
) -> None:
    """Welch's t-test at the estimated seeds per cell, on normal seeds of the observed spread, finds the
    difference about 80% of the time, and one seed fewer less often."""
    needed = significance.seeds_for_two_samples(difference, sd_a, sd_b)
    assert needed is not None

    def power(n: int) -> float:
        rng = np.random.default_rng(7)
        a = rng.normal(difference, sd_a, size=(4000, n))
        b = rng.normal(0.0, sd_b, size=(4000, n))
        p = stats.ttest_ind(a, b, axis=1, equal_var=False).pvalue
        return float(np.mean(p < significance.ALPHA))

    assert 0.77 <= power(needed) <= 0.9  # seeds come whole: the power steps past 80%
    if needed > 2:
        assert power(needed - 1) < 0.83


def test_the_items_said_to_decide_two_proportions_do_so_80_percent_of_the_time() -> None:
    needed = significance.items_for_two_proportions(0.9, 0.85)
    assert needed is not None and 600 < needed < 800

    def sample(rng: np.random.Generator) -> float:
        hits = rng.binomial(needed, [0.9, 0.85])
        return significance.two_proportions(int(hits[0]), needed, int(hits[1]), needed).p_value

    assert simulated_power(sample) == pytest.approx(0.8, abs=0.03)


def test_the_items_said_to_decide_a_bound_do_so_80_percent_of_the_time() -> None:
    needed = significance.items_for_one_proportion(0.55, 0.59)
    assert needed is not None

    def sample(rng: np.random.Generator) -> float:
        return significance.one_proportion(int(rng.binomial(needed, 0.55)), needed, 0.59).p_value

    assert simulated_power(sample) == pytest.approx(0.8, abs=0.03)


def test_the_seeds_said_to_decide_a_bound_do_so_80_percent_of_the_time() -> None:
    needed = significance.seeds_for_one_sample(-0.04, 0.05)
    assert needed is not None
    rng = np.random.default_rng(7)
    p = stats.ttest_1samp(rng.normal(0.55, 0.05, size=(4000, needed)), 0.59, axis=1).pvalue
    assert float(np.mean(p < significance.ALPHA)) == pytest.approx(0.8, abs=0.03)


def test_the_seeds_said_to_decide_a_logrank_test_do_so_about_80_percent_of_the_time() -> None:
    """Schoenfeld's formula on exponential times to criterion, each cell capped as DSR's budget caps
    training: the logrank test at the estimated seeds, on times drawn at the hazards the seeds
    show, finds the difference about 80% of the time."""
    cap = 100_000.0
    times = [[20_000.0, 35_000.0, 41_000.0, 52_000.0, 70_000.0], [48_000.0, 66_000.0, 90_000.0]]
    censored = [[cap], [cap, cap]]
    needed = significance.seeds_for_logrank(times[0], censored[0], times[1], censored[1])
    assert needed is not None
    hazards = [len(t) / (sum(t) + sum(c)) for t, c in zip(times, censored, strict=True)]

    def sample(rng: np.random.Generator) -> float:
        drawn = [rng.exponential(1 / rate, needed) for rate in hazards]
        data = [stats.CensoredData(uncensored=d[d < cap], right=np.full(int((d >= cap).sum()), cap)) for d in drawn]
        return float(stats.logrank(*data).pvalue)

    assert 0.7 <= simulated_power(sample, reps=600) <= 0.9


def test_no_number_decides_equal_cells_or_seeds_that_never_vary() -> None:
    assert significance.seeds_for_two_samples(0.0, 0.1, 0.1) is None
    assert significance.seeds_for_two_samples(0.1, 0.0, 0.0) is None
    assert significance.items_for_two_proportions(1.0, 1.0) is None
    assert significance.seeds_for_logrank([], [100.0, 100.0], [50.0, 60.0], []) is None
    assert significance.seeds_for_two_samples(1e-6, 0.3, 0.3) is None  # more than MOST


def test_p_is_shown_in_two_digits() -> None:
    assert significance.p_shown(0.1734) == "0.17" and significance.p_shown(3e-9) == "< 1e-6"
    assert significance.p_shown(math.nan) == "undefined"


def test_the_rule_names_every_verdict() -> None:
    for word in ("reproduced", "contradicted", "inconclusive", "undecided (under-trained)", "not measured"):
        assert word in significance.RULE
    assert "two-sided" in significance.RULE and "80% power" in significance.RULE
