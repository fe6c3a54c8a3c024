"""Whether a trained network learned its training distribution before it was asked to generalise.

A reference row says something about an architecture only if the network first learned the
in-distribution task: the papers train to near-perfect dev accuracy before they report
generalisation. So every neural recipe states a `Criterion` (a statistic of training, e.g. dev
sequence accuracy, and the value or plateau that counts as learned), training stops as soon as it
holds, and each run reports a `Convergence`: whether it was reached, the statistic's value, and the
epochs, updates and seconds it took. The store keeps it with the run; the leaderboard flags runs
that did not reach it as under-trained (and gives them no best marks), and a claim resting on them
is undecided rather than "contradicted" or "inconclusive".
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import Annotated

from pydantic import Field, NonNegativeFloat, NonNegativeInt, PositiveFloat, ValidationError, model_validator

from structbench.specs import Frozen

StatisticName = Annotated[str, Field(pattern=r"^[a-z][a-z0-9_]{0,39}$")]


class Criterion(Frozen):
    """What counts as "learned the training distribution": one statistic of training and one rule.

    `at_least` / `at_most`: the statistic reaches the bound (a dev accuracy, a dev perplexity).
    `plateau`: the best value of the statistic, which training lowers (a loss, a perplexity, a
    negative log-likelihood), improved by less than this fraction over the last two evaluations:
    two, so that one noisy evaluation (a dev perplexity that rises once) does not end training."""

    statistic: StatisticName
    """The figure of an evaluation the rule reads, e.g. `dev_accuracy`, `dev_perplexity`."""
    at_least: float | None = None
    at_most: float | None = None
    plateau: PositiveFloat | None = None
    source: str = Field("", exclude=True)
    """Where the rule comes from: the paper's own criterion, or why this value was chosen (documentation:
    neither part of a run's key nor of its stored record)."""

    @model_validator(mode="after")
    def _one_rule(self) -> Criterion:
        if sum(rule is not None for rule in (self.at_least, self.at_most, self.plateau)) != 1:
            raise ValueError("give exactly one of at_least, at_most or plateau")
        return self

    def holds(self, values: Sequence[float]) -> bool:
        """Whether the statistic's values so far (one per evaluation, the latest last) meet the rule."""
        if not values or not math.isfinite(values[-1]):
            return False
        if self.at_least is not None:
            return values[-1] >= self.at_least
        if self.at_most is not None:
            return values[-1] <= self.at_most
        assert self.plateau is not None
        change = recent_improvement(values)
        return change is not None and change < self.plateau

    def shown(self) -> str:
        """The rule in a few words, e.g. `dev_accuracy ≥ 0.95`."""
        if self.at_least is not None:
            return f"{self.statistic} ≥ {self.at_least:g}"
        if self.at_most is not None:
            return f"{self.statistic} ≤ {self.at_most:g}"
        return f"{self.statistic} improving by < {100 * (self.plateau or 0):g}% over {PLATEAU_WINDOW} evaluations"


PLATEAU_WINDOW = 2
"""Evaluations over which a plateau's improvement is measured."""


def recent_improvement(values: Sequence[float]) -> float | None:
    """How much the best (lowest) value improved over the last `PLATEAU_WINDOW` evaluations, as a fraction
    of the best before them (0: no better); None before there are that many evaluations after the first."""
    if len(values) <= PLATEAU_WINDOW:
        return None
    before, now = min(values[:-PLATEAU_WINDOW]), min(values)
    return (before - now) / abs(before) if before else (0.0 if now == before else math.inf)


class Convergence(Frozen):
    """What a run's training did against its recipe's criterion."""

    criterion: Criterion
    reached: bool
    value: float | None = None
    """The statistic where the criterion was reached; if it never was, its best value (highest for
    `at_least`, lowest otherwise). None when training never measured it."""
    change: float | None = None
    """For a `plateau`: the best value's last improvement over two evaluations (a fraction)."""
    epochs: NonNegativeInt | None = None
    """Epochs (for online learners, training sequences) when it was reached, else all those trained."""
    updates: NonNegativeInt | None = None
    """Optimiser updates when it was reached, else all those made."""
    seconds: NonNegativeFloat | None = None
    """Training seconds when it was reached, else the whole training time."""

    def shown(self) -> str:
        """One phrase for the leaderboard: `converged: dev_accuracy 0.97 ≥ 0.95 in 6 epochs` or
        `under-trained: dev_accuracy 0.39 < 0.95`."""
        state = _against(self.criterion, [self], self.reached)
        if not self.reached:
            return f"under-trained: {state}"
        took = [] if self.epochs is None else [f"{self.epochs} epochs"]
        took += [] if self.seconds is None else [f"{self.seconds:.0f} s"]
        return f"converged: {state}" + (f" in {', '.join(took)}" if took else "")


def _against(rule: Criterion, records: Sequence[Convergence], reached: bool) -> str:
    """The records' values against `rule`, e.g. `dev_accuracy 0.39, 0.49 < 0.95`."""
    values = ", ".join("not measured" if r.value is None else f"{r.value:.3g}" for r in records)
    if rule.plateau is not None:
        changes = ", ".join("?" if r.change is None else f"{100 * r.change:.2g}%" for r in records)
        still = "" if reached else "still "
        return (
            f"{rule.statistic} {values}, {still}improving {changes} over {PLATEAU_WINDOW} evaluations; "
            f"plateau < {100 * rule.plateau:g}%"
        )
    upper = rule.at_least is None
    bound = rule.at_most if upper else rule.at_least
    relation = ("≤" if upper else "≥") if reached else (">" if upper else "<")
    return f"{rule.statistic} {values} {relation} {bound:g}"


def checked_convergence(reported: object) -> tuple[Convergence | None, list[str]]:
    """A model's `convergence()` answer as a record, or None and the one problem that made it invalid
    (an empty mapping is no report: a model that was not trained, or has no criterion)."""
    if isinstance(reported, Convergence):
        return reported, []
    if not isinstance(reported, Mapping):
        return None, [f"convergence() returned a {type(reported).__name__}, not a mapping"]
    if not reported:
        return None, []
    try:
        return Convergence.model_validate(dict(reported)), []
    except ValidationError as error:
        problem = "; ".join(f"{'.'.join(map(str, e['loc'])) or 'convergence'}: {e['msg']}" for e in error.errors())
        return None, [problem[:200]]


def under_trained(records: Sequence[Convergence]) -> str | None:
    """One phrase for a cell whose seeds did not all reach their criterion, e.g. `under-trained: 2 of 3
    seeds (dev_accuracy 0.39, 0.49 < 0.95)`; None when every reported seed reached it (or none reported)."""
    missed = [record for record in records if not record.reached]
    if not missed:
        return None
    detail = _against(missed[0].criterion, missed, reached=False)
    return f"under-trained: {len(missed)} of {len(records)} seeds ({detail})"
