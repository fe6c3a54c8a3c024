"""Per-split scoring for each protocol, per-`meta` breakdowns, and statistics over seeds.

Scoring only reads examples and stored predictions, so any split can be re-scored from the
store without the model. Ties in minimal-pair and forced-choice comparisons count as wrong.
"""

from __future__ import annotations

import math
from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from harness.specs import Example, SeedStats


@dataclass(frozen=True)
class SplitScores:
    """The metrics of one split of one run, and which examples were right."""

    metrics: dict[str, tuple[float, int]]
    """metric name -> (value, number of items it is computed over)."""
    correct: list[bool | None] = field(default_factory=list)
    """Per example in split order; None where correctness is not defined per example."""


def sequence_correct(examples: Sequence[Example], predictions: Sequence[Sequence[str]]) -> list[bool]:
    return [list(p) == e.target for e, p in zip(examples, predictions, strict=True)]


def token_accuracy(examples: Sequence[Example], predictions: Sequence[Sequence[str]]) -> tuple[float, int]:
    """Share of gold target tokens matched at the same position (missing positions count wrong)."""
    matched = total = 0
    for example, prediction in zip(examples, predictions, strict=True):
        target = example.target or []
        total += len(target)
        matched += sum(1 for gold, guess in zip(target, prediction, strict=False) if gold == guess)
    return (matched / total if total else math.nan), total


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


def many_to_one_accuracy(gold: Sequence[str], induced: Sequence[int]) -> float:
    """Tag accuracy after mapping each induced cluster to its most frequent gold tag."""
    if not gold:
        return math.nan
    counts = contingency(gold, induced)
    return float(counts.max(axis=1).sum() / len(gold))


def _entropy(counts: np.ndarray) -> float:
    p = counts[counts > 0] / counts.sum()
    return float(-(p * np.log(p)).sum())


def induction_metrics(gold: Sequence[str], induced: Sequence[int]) -> dict[str, float]:
    """Many-to-one, one-to-one (optimal and Tran's greedy), V-measure with homogeneity and
    completeness (Rosenberg & Hirschberg 2007), and variation of information (nats).

    One-to-one assigns each cluster at most one tag: `one_to_one` by optimal assignment
    (scipy's linear_sum_assignment), `one_to_one_greedy` as Tran's scorer does it, taking
    cells by descending count (ties: first cluster, then tag, in order of first appearance;
    Tran's scorer breaks them by the tag and cluster names). Degenerate entropies follow
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


def breakdown(
    examples: Sequence[Example], correct: Sequence[bool | None], keys: Sequence[str], metric: str
) -> dict[str, tuple[float, int]]:
    """`metric[key=value]` -> accuracy of the examples whose meta[key] equals value."""
    out: dict[str, tuple[float, int]] = {}
    for key in keys:
        groups: dict[str, list[bool]] = defaultdict(list)
        for example, ok in zip(examples, correct, strict=True):
            if ok is not None and key in example.meta:
                groups[str(example.meta[key])].append(ok)
        for value, oks in sorted(groups.items()):
            out[f"{metric}[{key}={value}]"] = (sum(oks) / len(oks), len(oks))
    return out


def score_protocol(
    protocol: str, examples: Sequence[Example], predictions: Sequence[Any], breakdown_keys: Sequence[str] = ()
) -> SplitScores:
    """Default metrics of a protocol; the first metric listed is the protocol's primary one."""
    n = len(examples)
    correct: list[bool | None]
    if protocol == "transduction":
        seq = sequence_correct(examples, predictions)
        metrics = {
            "sequence_accuracy": (sum(seq) / n if n else math.nan, n),
            "token_accuracy": token_accuracy(examples, predictions),
        }
        correct = list(seq)
        name = "sequence_accuracy"
    elif protocol in ("minimal-pair", "forced-choice"):
        correct = [strictly_best(p, e.answer or 0) for e, p in zip(examples, predictions, strict=True)]
        name = "accuracy"
        metrics = {name: (sum(map(bool, correct)) / n if n else math.nan, n)}
    elif protocol == "classification":
        correct = [p == e.label for e, p in zip(examples, predictions, strict=True)]
        name = "accuracy"
        metrics = {name: (sum(map(bool, correct)) / n if n else math.nan, n)}
    elif protocol == "tag-induction":
        gold = [tag for e in examples for tag in (e.tags or [])]
        induced = [int(c) for p in predictions for c in p]
        if len(gold) != len(induced):
            raise ValueError(f"the model returned {len(induced)} cluster ids for {len(gold)} tokens")
        name = "many_to_one"
        scores = induction_metrics(gold, induced) if gold else {name: math.nan}
        metrics = {metric: (value, len(gold)) for metric, value in scores.items()}
        correct = [None] * n
    else:
        raise ValueError(f"unknown protocol {protocol!r}")
    metrics.update(breakdown(examples, correct, breakdown_keys, name))
    return SplitScores(metrics=metrics, correct=correct)


def seed_stats(values: Sequence[float], *, confidence: float = 0.95, resamples: int = 9999) -> SeedStats:
    """Mean, sample std (ddof=1), min, max and a percentile-bootstrap CI of the mean over seeds.

    The bootstrap uses a fixed random state, so the same per-seed values always give the same
    interval. With one seed, or identical values, the interval collapses to the mean.
    """
    array = np.asarray(values, dtype=float)
    mean = float(array.mean())
    if len(array) < 2 or np.all(array == array[0]):
        low = high = mean
    else:
        from scipy import stats  # imported here: it costs half a second of CLI start-up

        result = stats.bootstrap(
            (array,),
            np.mean,
            confidence_level=confidence,
            n_resamples=resamples,
            method="percentile",
            rng=np.random.default_rng(0),
        )
        low, high = float(result.confidence_interval.low), float(result.confidence_interval.high)
    return SeedStats(
        mean=mean,
        std=float(array.std(ddof=1)) if len(array) > 1 else None,
        min=float(array.min()),
        max=float(array.max()),
        ci_low=low,
        ci_high=high,
        n_seeds=len(array),
        per_seed=[float(v) for v in array],
    )
