"""What a metric's number can be: the range every metric and statistic of training declares.

An interval over seeds is mean ± t · sd / sqrt(n): nothing keeps it inside the values a metric can
take, and a reader who sees V-measure [64.5, 109.8] has been shown an impossible number. So every
metric a built-in suite's scorer can emit, and every statistic of training a built-in model reports,
declares its range here (`RANGES`), and every interval a cell, a claim or a page shows is clipped to
it (`structbench.cells`). The tests hold the table complete: every metric name the scorers of the
registered suites emit has an entry.

A fraction of items (accuracy, V-measure, many-to-one, a share of first words) lies in [0, 1];
variation of information (nats), a count of training trials and a negative log-likelihood in
[0, ∞); a perplexity in [1, ∞). Names are matched whole; a breakdown cell (`accuracy[attractors=2]`)
has its metric's range. A name no entry declares (a plugin suite's own metric) has no range: its
intervals are clipped only where its values are fractions of items (`Score.proportion`), and
`in_range` accepts any finite value of it. No value is infinite or NaN (an undefined score is
stored as no value at all).
"""

from __future__ import annotations

import math
import numbers
from collections.abc import Mapping
from dataclasses import dataclass


@dataclass(frozen=True)
class Range:
    """The closed interval [low, high] a metric's values lie in; `high` may be infinite."""

    low: float
    high: float

    def __contains__(self, value: object) -> bool:
        """Whether `value` is a finite number inside the range (no metric's value is infinite or NaN)."""
        if not isinstance(value, numbers.Real) or isinstance(value, bool):
            return False
        number = float(value)
        return math.isfinite(number) and self.low <= number <= self.high

    def shown(self) -> str:
        """`[0, 1]`, `[0, ∞)`."""
        high = "∞)" if math.isinf(self.high) else f"{self.high:g}]"
        return f"[{self.low:g}, {high}"


UNIT = Range(0.0, 1.0)
"""A fraction: of items right, of tokens, of a partition's mass."""
NON_NEGATIVE = Range(0.0, math.inf)
"""A count, a distance or a negative log-likelihood."""
PERPLEXITY = Range(1.0, math.inf)
"""exp of a cross-entropy, which is never negative."""

METRICS: Mapping[str, Range] = {
    # every protocol's own (structbench.scoring.protocol_values, corpus_metrics)
    "sequence_accuracy": UNIT,
    "token_accuracy": UNIT,
    "accuracy": UNIT,
    "many_to_one": UNIT,
    "one_to_one": UNIT,
    "one_to_one_greedy": UNIT,
    "v_measure": UNIT,
    "homogeneity": UNIT,
    "completeness": UNIT,
    "variation_of_information": NON_NEGATIVE,
    # the built-in suites' own (their `extra_metrics`)
    "first_word_accuracy": UNIT,
    "first_word_main_aux": UNIT,
    "first_word_first_aux": UNIT,
    "first_word_other_aux": UNIT,
    "first_word_not_aux": UNIT,
    "token_precision": UNIT,
    "token_recall": UNIT,
    "valid_accuracy": UNIT,
    "final_target_accuracy": UNIT,
    "linguistic_accuracy": UNIT,
    "referent_accuracy": UNIT,
    "accuracy_lm_eval": UNIT,
    "exact_match": UNIT,
}
"""Test-split metric -> its range."""

STATISTICS: Mapping[str, Range] = {
    "dev_perplexity": PERPLEXITY,
    "dev_accuracy": UNIT,
    "dev_strict_accuracy": UNIT,
    "criterion_reached": UNIT,
    "nll_per_word": NON_NEGATIVE,
    "trials_to_criterion": NON_NEGATIVE,
    "trials_trained": NON_NEGATIVE,
    "updates": NON_NEGATIVE,
}
"""Statistic of training (a built-in model's `statistics()`) -> its range."""

RANGES: Mapping[str, Range] = {**METRICS, **STATISTICS}
"""Every declared name -> its range. No statistic shares a metric's name."""


def metric_range(name: str) -> Range | None:
    """The declared range of metric or statistic `name` (a breakdown cell's `metric[key=level]` has its
    metric's); None where none is declared."""
    return RANGES.get(name.partition("[")[0])


def in_range(name: str, value: float) -> bool:
    """Whether `value` is one metric or statistic `name` can take: a finite number inside its declared
    range, or any finite number for a name no entry declares."""
    declared = metric_range(name)
    return math.isfinite(value) if declared is None else value in declared
