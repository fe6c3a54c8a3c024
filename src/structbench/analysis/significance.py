"""The tests a claim's verdict rests on beyond the two-sample ones, how many seeds would decide it,
and the verdict rule as every page states it.

A claim is decided by a two-sided test at the 5% level in both directions (`RULE`): *reproduced*
when the claimed direction is significant, *contradicted* when the opposite one is, *inconclusive*
otherwise. Which test depends on what the cells' uncertainty is:

- **Over seeds**, where a cell's seeds differ: Welch's t-test between two cells, or the logrank test
  for a time to an event some seeds never reached (`structbench.analysis.statistics.two_sample_test`,
  the tests `structbench compare` and the papers use); against a bound, the one-sample t-test
  (`one_sample_t`). A cell whose seeds agree has no variance over seeds and counts as such.
- **Over items**, where every cell's seeds agree (a deterministic model, or one seed) and its metric is
  a fraction of items: the score test of two proportions (`two_proportions`: Pearson's chi-square
  without continuity correction, the test whose inversion is the Wilson interval the cells show), or
  of one proportion against a bound (`one_proportion`). More seeds change nothing there: the items
  are the sample.

Where neither direction is significant, the verdict says how large a sample would decide a
difference the size of the one observed, with 80% power (`POWER`) at the same level: seeds per cell
from the noncentral t distribution (scipy's `nct`) for the t-tests, with the cells' observed standard
deviations; seeds per cell from Schoenfeld's (1981) events formula for the logrank test, the hazard
ratio estimated from exponential hazards (events over total trials of each cell) and the events
expected from the share of seeds that reached the event; items per cell from the normal
approximation for the score tests. An estimate at the observed difference is optimistic where that
difference is itself noise; it says what would settle the question, not what the answer will be.

This module reads no store, so that the pages that state `RULE` may import it. `scipy.stats` is
imported by the functions that need it: it takes a second to import.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from scipy import special

from structbench.cells import CONFIDENCE

ALPHA = 1 - CONFIDENCE
"""Each direction of a claim is tested two-sided at this level."""
POWER = 0.8
"""The power a sample-size estimate asks for."""
MOST = 100_000
"""Sample sizes are searched up to this; a claim that needs more is said to."""

RULE = (
    "A claim is reproduced when a two-sided test at the 5% level finds the difference in the claimed "
    "direction, contradicted when it finds it in the opposite direction, and inconclusive when it finds "
    "neither; a claim of several comparisons is reproduced when each is, contradicted when any is. The test "
    "is over seeds where a cell's seeds differ (Welch's t-test between two cells, the logrank test for a "
    "time to criterion that some seeds never reached, the one-sample t-test against a bound) and over the "
    "test items where every cell's seeds agree and its metric is a fraction of items (the score test of two "
    "proportions, or of one against a bound). An inconclusive verdict gives p and how many seeds (or items) "
    "per cell would decide a difference the size of the one observed with 80% power. A claim is undecided "
    "(under-trained) when a cell it needs rests on runs whose training never reached their recipe's "
    "criterion, and not measured when a cell it needs has no finished run."
)
"""The verdict rule as `structbench claims`, the site's claims section and docs/reproductions.md print it."""


@dataclass(frozen=True)
class Tested:
    """One two-sided test: its statistic, degrees of freedom where it has them, and p."""

    name: str
    """e.g. `one-sample t-test over seeds`."""
    statistic: float
    """t or z: positive when the first sample lies above the second (or the bound)."""
    df: float
    """NaN for a z statistic."""
    p_value: float
    """Two-sided; NaN where the test is undefined (no variance)."""

    def shown(self) -> str:
        symbol = "z" if math.isnan(self.df) else "t"
        df = "" if math.isnan(self.df) else f", df {self.df:.3g}"
        return f"{self.name}: {symbol} {self.statistic:.3g}{df}, p {p_shown(self.p_value)}"


def p_shown(p: float) -> str:
    """A p-value in two significant digits, `< 1e-6` below that."""
    if math.isnan(p):
        return "undefined"
    return "< 1e-6" if p < 1e-6 else f"{p:.2g}"


def _z_quantile(probability: float) -> float:
    return float(special.ndtri(probability))


def _two_sided(z: float) -> float:
    return float(2 * special.ndtr(-abs(z)))


def one_sample_t(values: Sequence[float], bound: float) -> Tested:
    """The one-sample t-test of the seeds' mean against `bound`, two-sided."""
    from scipy import stats

    result = stats.ttest_1samp(list(values), bound)
    return Tested("one-sample t-test over seeds", float(result.statistic), float(result.df), float(result.pvalue))


def two_proportions(hits_a: int, items_a: int, hits_b: int, items_b: int) -> Tested:
    """The score test of two independent proportions (`hits` right of `items`), two-sided: z on the
    pooled proportion, which is Pearson's chi-square test of the 2x2 table without continuity correction."""
    pooled = (hits_a + hits_b) / (items_a + items_b)
    spread = math.sqrt(pooled * (1 - pooled) * (1 / items_a + 1 / items_b))
    difference = hits_a / items_a - hits_b / items_b
    z = 0.0 if spread == 0 else difference / spread  # both all right or all wrong: no difference to test
    return Tested("score test of two proportions over items", z, math.nan, _two_sided(z))


def one_proportion(hits: int, items: int, bound: float) -> Tested:
    """The score test of a proportion (`hits` right of `items`) against `bound`, two-sided: the test whose
    acceptance region is the Wilson interval, so p < 5% exactly where the bound lies outside the cell's
    Wilson interval."""
    difference = hits / items - bound
    spread = math.sqrt(bound * (1 - bound) / items)
    z = (math.copysign(math.inf, difference) if difference else 0.0) if spread == 0 else difference / spread
    return Tested("score test of one proportion over items", z, math.nan, _two_sided(z))


def _smallest(power: Callable[[int], float], start: int) -> int | None:
    """The smallest n >= start with power(n) >= POWER (power grows with n), or None above MOST."""
    if power(start) >= POWER:
        return start
    low, high = start, start
    while power(high) < POWER:
        if high >= MOST:
            return None
        low, high = high, min(2 * high, MOST)
    while high - low > 1:
        middle = (low + high) // 2
        low, high = (low, middle) if power(middle) >= POWER else (middle, high)
    return high


def _t_power(df: float, noncentrality: float) -> float:
    from scipy import stats

    critical = float(stats.t.ppf(1 - ALPHA / 2, df))
    return float(stats.nct.sf(critical, df, noncentrality) + stats.nct.cdf(-critical, df, noncentrality))


def seeds_for_two_samples(difference: float, sd_a: float, sd_b: float) -> int | None:
    """Seeds per cell at which Welch's t-test finds `difference` with 80% power, at the observed
    standard deviations (noncentral t, Welch-Satterthwaite degrees of freedom for equal seeds); None
    where no number does (no difference, or none of the seeds vary) or it is more than `MOST`."""
    variance = sd_a**2 + sd_b**2
    if difference == 0 or variance == 0 or not math.isfinite(difference + variance):
        return None

    def power(n: int) -> float:
        df = variance**2 * (n - 1) / (sd_a**4 + sd_b**4)
        return _t_power(df, abs(difference) / math.sqrt(variance / n))

    return _smallest(power, 2)


def seeds_for_one_sample(difference: float, sd: float) -> int | None:
    """Seeds at which the one-sample t-test finds a mean `difference` from its bound with 80% power, at
    the observed standard deviation (noncentral t); None where no number does or it is more than `MOST`."""
    if difference == 0 or sd == 0 or not math.isfinite(difference + sd):
        return None
    return _smallest(lambda n: _t_power(n - 1, abs(difference) * math.sqrt(n) / sd), 2)


def seeds_for_logrank(
    times_a: Sequence[float], censored_a: Sequence[float], times_b: Sequence[float], censored_b: Sequence[float]
) -> int | None:
    """Seeds per cell at which the logrank test finds the observed hazard ratio with 80% power:
    Schoenfeld's number of events, 4 (z_a + z_b)^2 / log(HR)^2 for equal cells, the hazard ratio from
    exponential hazards (events / total time of each cell), divided by the share of seeds that reached
    the event; None where a cell has no event, the hazards are equal, or it is more than `MOST`."""
    events_a, events_b = len(times_a), len(times_b)
    exposure_a, exposure_b = sum(times_a) + sum(censored_a), sum(times_b) + sum(censored_b)
    if not (events_a and events_b and exposure_a > 0 and exposure_b > 0):
        return None
    log_ratio = math.log((events_a / exposure_a) / (events_b / exposure_b))
    if log_ratio == 0:
        return None
    z = _z_quantile(1 - ALPHA / 2) + _z_quantile(POWER)
    events = 4 * z**2 / log_ratio**2
    reached = (events_a + events_b) / (events_a + events_b + len(censored_a) + len(censored_b))
    needed = math.ceil(events / (2 * reached))
    return max(needed, 2) if needed <= MOST else None


def items_for_two_proportions(p_a: float, p_b: float) -> int | None:
    """Items per cell at which the score test of two proportions finds `p_a` against `p_b` with 80%
    power (normal approximation); None where they are equal or it is more than `MOST`."""
    if p_a == p_b:
        return None
    pooled = (p_a + p_b) / 2
    z_a, z_b = _z_quantile(1 - ALPHA / 2), _z_quantile(POWER)
    root = z_a * math.sqrt(2 * pooled * (1 - pooled)) + z_b * math.sqrt(p_a * (1 - p_a) + p_b * (1 - p_b))
    needed = math.ceil((root / (p_a - p_b)) ** 2)
    return needed if needed <= MOST else None


def items_for_one_proportion(p: float, bound: float) -> int | None:
    """Items at which the score test finds a proportion `p` against `bound` with 80% power (normal
    approximation); None where they are equal or it is more than `MOST`."""
    if p == bound:
        return None
    z_a, z_b = _z_quantile(1 - ALPHA / 2), _z_quantile(POWER)
    root = z_a * math.sqrt(bound * (1 - bound)) + z_b * math.sqrt(p * (1 - p))
    needed = math.ceil((root / (p - bound)) ** 2)
    return needed if needed <= MOST else None
