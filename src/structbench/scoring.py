"""Per-split scoring for each protocol, suite extras and per-`meta` breakdowns.

Scoring only reads examples and stored predictions, so any split can be re-scored from the
store without the model. Ties in minimal-pair and forced-choice comparisons count as wrong.
"""

from __future__ import annotations

import math
import operator
from collections import defaultdict
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from structbench.specs import Example


@dataclass(frozen=True)
class Score:
    """One aggregated metric of one split of one run: over the whole split, or over the examples
    of one breakdown condition (`breakdown` is an `Example.meta` key, `level` its value)."""

    metric: str
    value: float
    """NaN where undefined (no items)."""
    n: int
    """Number of items the value is computed over (examples, or tokens for token accuracy)."""
    breakdown: str = ""
    level: str = ""
    proportion: bool = False
    """True when the value is the fraction of `n` items that are right, each item 0 or 1, so that
    a binomial (Wilson) interval over the items applies; False for means of graded values and
    for corpus metrics such as many-to-one, whose mapping is fitted on the items it scores.
    It is read off the values: a graded metric that is 0 or 1 on every item of a split counts
    as a proportion there, which keeps the Wilson interval conservative (an item valued in
    [0, 1] with mean p has variance at most p(1 - p), the binomial one)."""

    @property
    def name(self) -> str:
        """Display name: `metric`, or `metric[key=level]` for a breakdown condition."""
        return f"{self.metric}[{self.breakdown}={self.level}]" if self.breakdown else self.metric


@dataclass(frozen=True)
class SplitScores:
    """The metrics of one split of one run, and which examples were right."""

    scores: list[Score]
    """Whole-split scores first (primary metric first), then breakdowns."""
    correct: list[bool | None] = field(default_factory=list)
    """Per example in split order: the primary metric's verdict; None where it is not per example."""

    @property
    def metrics(self) -> dict[str, tuple[float, int]]:
        """Display name -> (value, n)."""
        return {score.name: (score.value, score.n) for score in self.scores}


@dataclass(frozen=True)
class Counts:
    """A per-example metric whose items are not the examples: `hits[i]` right out of `items[i]`
    (e.g. tokens of example i). The value is sum(hits) / sum(items), n is sum(items)."""

    hits: Sequence[float]
    items: Sequence[int]

    def __post_init__(self) -> None:
        if len(self.hits) != len(self.items):
            raise ValueError(f"{len(self.hits)} hits for {len(self.items)} item counts")


PerExample = Sequence[float | None] | Counts
"""One metric's values per example, in split order; None where undefined for that example."""


def aggregate_values(values: PerExample, selected: Sequence[int] | None = None) -> tuple[float, int, bool]:
    """(mean, n, proportion) of per-example values, over the examples at `selected` positions
    (all by default); `proportion` says whether every item is 0 or 1 (see `Score.proportion`).

    Sums run in example order with Python floats, so counts of 0/1 values are exact."""
    if isinstance(values, Counts):
        if selected is None:
            hits, items = values.hits, values.items
        else:
            hits, items = [values.hits[i] for i in selected], [values.items[i] for i in selected]
        total = sum(items)
        whole = _whole_counts(hits, items)
        return (sum(hits) / total if total else math.nan), total, whole
    chosen = values if selected is None else [values[i] for i in selected]
    defined = [float(v) for v in chosen if v is not None]
    binary = set(defined) <= {0.0, 1.0}
    return (sum(defined) / len(defined) if defined else math.nan), len(defined), binary


def _whole_counts(hits: Sequence[float], items: Sequence[int]) -> bool:
    """Whether every hit is a whole number from 0 to its item count. Hits of Python ints (the usual
    case: matches counted) are checked at C speed; any other hit goes through `float.is_integer`."""
    if not all(map(operator.le, hits, items)) or min(hits, default=0) < 0:
        return False
    return set(map(type, hits)) <= {int, bool} or all(float(h).is_integer() for h in hits)


def breakdown_scores(examples: Sequence[Example], values: PerExample, keys: Sequence[str], metric: str) -> list[Score]:
    """`metric` per condition: one score for each value of each `Example.meta` key, in sorted order."""
    out: list[Score] = []
    metas = [example.meta for example in examples]
    for key in keys:
        groups: dict[str, list[int]] = defaultdict(list)
        for i, meta in enumerate(metas):
            if key in meta:
                groups[str(meta[key])].append(i)
        for level, positions in sorted(groups.items()):
            value, n, proportion = aggregate_values(values, positions)
            if n:
                out.append(Score(metric, value, n, key, level, proportion))
    return out


def strictly_best(logprobs: Sequence[float], answer: int) -> bool:
    """True when the answer's log-probability beats every other candidate's (ties are wrong)."""
    best = logprobs[answer]
    return all(best > value for i, value in enumerate(logprobs) if i != answer)


def contingency(gold: Sequence[str], induced: Sequence[int]) -> np.ndarray:
    """clusters x gold tags token counts (vectorised; 1M tokens in tens of milliseconds)."""
    import pandas as pd  # hash-based factorising: far faster than sorting a million strings

    gold_ids = pd.factorize(np.asarray(gold))[0]
    cluster_ids = pd.factorize(np.asarray(induced))[0]
    n_gold = int(gold_ids.max()) + 1
    flat = np.bincount(cluster_ids * n_gold + gold_ids, minlength=(int(cluster_ids.max()) + 1) * n_gold)
    return flat.reshape(-1, n_gold)


def _entropy(counts: np.ndarray) -> float:
    p = counts[counts > 0] / counts.sum()
    return float(-(p * np.log(p)).sum())


def induction_metrics(gold: Sequence[str], induced: Sequence[int]) -> dict[str, float]:
    """Many-to-one, one-to-one (optimal and Tran's greedy), V-measure with homogeneity and
    completeness (Rosenberg & Hirschberg 2007), and variation of information (nats).

    One-to-one assigns each cluster at most one tag: `one_to_one` by optimal assignment
    (scipy's linear_sum_assignment), `one_to_one_greedy` as Tran's scorer does it (the
    authors' eval.py in ketranm/neuralHMM; the thesis, §6.8, does not say how 1-1 matches),
    taking cells by descending count (ties: first cluster, then tag, in order of first
    appearance; Tran's scorer breaks them by the tag and cluster names). Degenerate entropies follow
    scikit-learn: with a single gold tag (or cluster) homogeneity (or completeness) is 1.
    """
    from scipy.optimize import linear_sum_assignment

    counts = contingency(gold, induced)
    n = counts.sum()
    rows, cols = linear_sum_assignment(counts, maximize=True)
    greedy = 0
    used_clusters: set[int] = set()
    used_tags: set[int] = set()
    for index in np.argsort(-counts.ravel(), kind="stable"):
        cluster, tag = divmod(int(index), counts.shape[1])
        if counts[cluster, tag] == 0:
            break
        if cluster not in used_clusters and tag not in used_tags:
            greedy += int(counts[cluster, tag])
            used_clusters.add(cluster)
            used_tags.add(tag)
    h_gold, h_cluster = _entropy(counts.sum(axis=0)), _entropy(counts.sum(axis=1))
    h_joint = _entropy(counts.ravel())
    h_gold_given_cluster, h_cluster_given_gold = h_joint - h_cluster, h_joint - h_gold
    homogeneity = 1.0 if h_gold == 0 else 1 - h_gold_given_cluster / h_gold
    completeness = 1.0 if h_cluster == 0 else 1 - h_cluster_given_gold / h_cluster
    v_measure = (
        0.0 if homogeneity + completeness == 0 else 2 * homogeneity * completeness / (homogeneity + completeness)
    )
    return {
        "many_to_one": float(counts.max(axis=1).sum() / n),
        "one_to_one": float(counts[rows, cols].sum() / n),
        "one_to_one_greedy": float(greedy / n),
        "v_measure": v_measure,
        "homogeneity": homogeneity,
        "completeness": completeness,
        "variation_of_information": h_gold_given_cluster + h_cluster_given_gold,
    }


PROTOCOL_METRIC = {
    "transduction": "sequence_accuracy",
    "minimal-pair": "accuracy",
    "forced-choice": "accuracy",
    "classification": "accuracy",
    "tag-induction": "many_to_one",
    "region-surprisal": "accuracy",
}
"""The protocol's own headline metric; a suite's spec may rank another one."""


def protocol_values(protocol: str, examples: Sequence[Example], predictions: Sequence[Any]) -> dict[str, PerExample]:
    """The per-example metrics every suite of a protocol gets (tag induction has none: see `corpus_metrics`;
    nor do region surprisals, whose right answer is the suite's predictions over them)."""
    if protocol == "transduction":
        targets = [example.target or [] for example in examples]
        return {
            "sequence_accuracy": [float(list(p) == t) for t, p in zip(targets, predictions, strict=True)],
            "token_accuracy": Counts(
                hits=[sum(map(operator.eq, t, p)) for t, p in zip(targets, predictions, strict=True)],
                items=[len(t) for t in targets],
            ),
        }
    if protocol in ("minimal-pair", "forced-choice"):
        return {
            "accuracy": [float(strictly_best(p, e.answer or 0)) for e, p in zip(examples, predictions, strict=True)]
        }
    if protocol == "classification":
        return {"accuracy": [float(p == e.label) for e, p in zip(examples, predictions, strict=True)]}
    if protocol in ("tag-induction", "region-surprisal"):
        return {}  # tag induction: corpus metrics; region surprisals: the suite's own predictions (`extra_metrics`)
    raise ValueError(f"unknown protocol {protocol!r}")


def corpus_metrics(protocol: str, examples: Sequence[Example], predictions: Sequence[Any]) -> dict[str, Score]:
    """Metrics of the whole split that are not means over examples (tag induction's cluster metrics)."""
    if protocol != "tag-induction":
        return {}
    gold = [tag for e in examples for tag in (e.tags or [])]
    induced = [int(c) for p in predictions for c in p]
    if len(gold) != len(induced):
        raise ValueError(f"the model returned {len(induced)} cluster ids for {len(gold)} tokens")
    if not gold:
        return {"many_to_one": Score("many_to_one", math.nan, 0)}
    return {metric: Score(metric, value, len(gold)) for metric, value in induction_metrics(gold, induced).items()}


def score_split(
    protocol: str,
    primary: str,
    examples: Sequence[Example],
    predictions: Sequence[Any],
    extra: Mapping[str, PerExample] | None = None,
    breakdown_keys: Sequence[str] = (),
) -> SplitScores:
    """Every metric of one split: the protocol's, the suite's extras, and the primary metric per condition.

    The primary metric's per-example values (where it has them) are what `correct` records
    and what the breakdowns by `breakdown_keys` report."""
    per_example = {**protocol_values(protocol, examples, predictions), **(extra or {})}
    for metric, values in per_example.items():
        length = len(values.hits) if isinstance(values, Counts) else len(values)
        if length != len(examples):
            raise ValueError(f"metric {metric!r} has {length} values for {len(examples)} examples")
    whole = corpus_metrics(protocol, examples, predictions)
    for metric, values in per_example.items():
        value, n, proportion = aggregate_values(values)
        whole[metric] = Score(metric, value, n, proportion=proportion)
    ordered = [whole.pop(primary)] if primary in whole else []
    ordered += [whole[metric] for metric in sorted(whole)]
    correct: list[bool | None] = [None] * len(examples)
    primary_values = per_example.get(primary)
    if primary_values is not None:
        ordered += breakdown_scores(examples, primary_values, breakdown_keys, primary)
        if not isinstance(primary_values, Counts):
            correct = [None if v is None else bool(v) for v in primary_values]
    return SplitScores(scores=ordered, correct=correct)
