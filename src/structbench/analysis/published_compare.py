"""A model run here against a published run, paired over the items, without running the published model.

A published run (`structbench.store.published`) holds its authors' right/wrong verdict on each item;
a run made here holds its own (re-scored from its stored predictions, as `compare` does). Both are
paired by example id, on the items both report. Their seeds are unrelated (the published seeds are
another model's training seeds), so seeds are not paired:

- one seed on each side: **McNemar's exact test**, the two-sided binomial test (p = 1/2) on the
  items the two decide differently (`scipy.stats.binomtest`), which alone decides the verdict (p < 5%);
  the 95% interval shown beside it is the paired bootstrap over items
  (`structbench.analysis.compare.paired_bootstrap`), which near the 5% line may exclude 0 where the exact
  test does not;
- several seeds on either side: a **paired bootstrap over items with each model's seeds resampled
  apart**: each resample draws the items once for both models (so that their shared difficulty
  cancels) and each model's seeds with replacement, independently; the p-value is as `compare`'s.

`reported_rows` adds, beside any comparison, the suite's published numbers (`analysis/references.yaml`, e.g.
BLiMP's per-paradigm accuracies of its authors' models): each row's mean over the compared splits, marked
published and never paired (a number per split has no items to pair).

Where no split is named, a last row pools the items of every ranked split (the item-level
accuracy, not the suite score, which averages splits). Each `Comparison` names its test.
"""

from __future__ import annotations

import numpy as np

from structbench.analysis.compare import (
    CONFIDENCE,
    RESAMPLES,
    Comparison,
    RunsBySeed,
    Verdicts,
    chosen_splits,
    current_runs,
    paired_bootstrap,
)
from structbench.analysis.references import Reference, load_references
from structbench.errors import UserError
from structbench.store import StoreReader
from structbench.store.published import PublishedRun, is_published
from structbench.suite import Suite

MCNEMAR = "McNemar's exact test (two-sided binomial test on the items the models decide differently)"
APART = "paired bootstrap over items, each model's seeds resampled apart"
POOLED = "ranked splits pooled"
"""The name of the row that pools the items of every ranked split."""

Items = list[dict[str, bool]]
"""One model's verdicts on one split: per seed, example id -> right."""


def mcnemar(a_only: int, b_only: int) -> float:
    """Two-sided exact p of McNemar's test: `a_only` items right for A alone, `b_only` for B alone."""
    from scipy import stats

    discordant = a_only + b_only
    return 1.0 if discordant == 0 else float(stats.binomtest(a_only, discordant, 0.5).pvalue)


def bootstrap_apart(
    a: np.ndarray, b: np.ndarray, resamples: int = RESAMPLES, seed: int = 0
) -> tuple[float, float, float]:
    """(low, high, p) of mean(A) - mean(B) over seeds of each seed's accuracy: `a` (seeds x items) and `b`
    (seeds x items) are 0/1 on the same items; items are drawn once per resample for both, seeds apart."""
    rng = np.random.default_rng(seed)
    both = np.concatenate([a, b]).astype(np.int8)
    patterns, frequency = np.unique(both.T, axis=0, return_counts=True)  # an item matters by its column only
    n = both.shape[1]
    counts = rng.multinomial(n, frequency / n, size=resamples)
    per_seed = counts @ patterns / n  # resamples x (seeds of a + seeds of b)
    m, k = len(a), len(b)
    mean_a = np.take_along_axis(per_seed[:, :m], rng.integers(0, m, size=(resamples, m)), axis=1).mean(axis=1)
    mean_b = np.take_along_axis(per_seed[:, m:], rng.integers(0, k, size=(resamples, k)), axis=1).mean(axis=1)
    means = mean_a - mean_b
    alpha = (1 - CONFIDENCE) / 2
    low, high = np.quantile(means, [alpha, 1 - alpha])
    tail = min(int((means <= 0).sum()), int((means >= 0).sum()))
    return float(low), float(high), min(1.0, (1 + 2 * tail) / (resamples + 1))


def paired_items(
    suite: str,
    split: str,
    metric: str,
    a: tuple[str, dict[int, dict[str, bool]]],
    b: tuple[str, dict[int, dict[str, bool]]],
) -> Comparison:
    """Model a against model b on one split (or pooled splits): seed -> example id -> right, for each."""
    (label_a, seeds_a), (label_b, seeds_b) = a, b
    shared = set.intersection(*(set(items) for items in (*seeds_a.values(), *seeds_b.values())))
    if not shared:
        raise UserError(f"{label_a!r} and {label_b!r} report no common item of {suite}'s split {split!r}.")
    ids = sorted(shared)
    matrix_a = np.array([[seeds_a[s][i] for i in ids] for s in sorted(seeds_a)], dtype=bool)
    matrix_b = np.array([[seeds_b[s][i] for i in ids] for s in sorted(seeds_b)], dtype=bool)
    if len(matrix_a) == 1 and len(matrix_b) == 1:
        va, vb = matrix_a[0], matrix_b[0]
        a_only, b_only = int((va & ~vb).sum()), int((vb & ~va).sum())
        low, high, _ = paired_bootstrap([va.astype(np.int8) - vb.astype(np.int8)], [0])
        p, test, discordant = mcnemar(a_only, b_only), MCNEMAR, (a_only, b_only)
    else:
        low, high, p = bootstrap_apart(matrix_a, matrix_b)
        test, discordant = APART, None
    mean_a, mean_b = float(matrix_a.mean(axis=1).mean()), float(matrix_b.mean(axis=1).mean())
    return Comparison(
        suite=suite,
        split=split,
        metric=metric,
        model_a=label_a,
        model_b=label_b,
        seeds=sorted(seeds_a),
        n_examples=len(ids),
        mean_a=mean_a,
        mean_b=mean_b,
        difference=mean_a - mean_b,
        ci_low=low,
        ci_high=high,
        p_value=p,
        resamples=RESAMPLES,
        test=test,
        seeds_b=sorted(seeds_b),
        discordant=discordant,
    )


def _published(store: StoreReader, suite: Suite, label: str) -> list[PublishedRun]:
    runs = store.published_runs(suite.spec.id, suite.spec.version, label)
    if not runs:
        stored = [m for s, v, m, _ in store.published_labels(suite.spec.id) if v == suite.spec.version]
        listed = f"; stored: {', '.join(stored)}" if stored else ""
        raise UserError(
            f"no published run {label!r} of {suite.spec.key} in {store.path}{listed}; import it with "
            "`structbench import`."
        )
    return runs


def _side(
    store: StoreReader, suite: Suite, label: str, verdicts: Verdicts
) -> tuple[str, dict[str, dict[int, dict[str, bool]]]]:
    """(suite hash, split -> seed -> example id -> right) of one model, published or run here."""
    if is_published(label):
        runs = _published(store, suite, label)
        out: dict[str, dict[int, dict[str, bool]]] = {}
        for run in runs:
            for split, items in run.items.items():
                out.setdefault(split, {})[run.seed] = {i: ok for i, (ok, _) in items.items()}
        return runs[0].suite_hash, out
    mine: RunsBySeed = current_runs(store, suite, label)
    if not mine:
        raise UserError(f"{label!r} has no finished run on {suite.spec.key}; run it first.")
    found: dict[str, dict[int, dict[str, bool]]] = {}
    for seed, (run_id, _, _) in sorted(mine.items()):
        stored = store.stored_predictions(run_id)
        for split, (ids, _, _) in stored.items():
            if split in {s.name for s in suite.spec.splits_with_role("test")}:
                right = verdicts.of(run_id, split)
                found.setdefault(split, {})[seed] = dict(zip(ids, right.tolist(), strict=True))
    return next(iter(mine.values()))[1], found


def compare_published(
    store: StoreReader, suite: Suite, model_a: str, model_b: str, splits: list[str] | None = None
) -> list[Comparison]:
    """One comparison per split (the suite's ranked splits unless `splits` names others), and without
    `splits` a last row over the ranked splits' items pooled; either model may be published."""
    if model_a == model_b:
        raise UserError(f"--models names {model_a!r} twice; give two different models.")
    verdicts = Verdicts(store, suite)
    hash_a, items_a = _side(store, suite, model_a, verdicts)
    hash_b, items_b = _side(store, suite, model_b, verdicts)
    if hash_a != hash_b:
        raise UserError(
            f"{model_a!r} and {model_b!r} were checked against different {suite.spec.key} data "
            f"({hash_a[:12]}, {hash_b[:12]}); import the published file again against the data built here."
        )
    chosen = chosen_splits(suite, splits)
    for name in chosen:
        for label, items in ((model_a, items_a), (model_b, items_b)):
            if name not in items:
                raise UserError(f"{label!r} reports no item of {suite.spec.key}'s split {name!r}.")
    spec = suite.spec
    out = [
        paired_items(spec.key, name, spec.primary_metric, (model_a, items_a[name]), (model_b, items_b[name]))
        for name in chosen
    ]
    if splits is None and len(chosen) > 1:
        pooled_a = _pooled(items_a, chosen)
        pooled_b = _pooled(items_b, chosen)
        out.append(paired_items(spec.key, POOLED, spec.primary_metric, (model_a, pooled_a), (model_b, pooled_b)))
    return out


def _pooled(items: dict[str, dict[int, dict[str, bool]]], splits: list[str]) -> dict[int, dict[str, bool]]:
    """seed -> (split, id) -> right over `splits`, for the seeds that report every one of them."""
    seeds = set.intersection(*(set(items[s]) for s in splits))
    return {seed: {f"{s}/{i}": ok for s in splits for i, ok in items[s][seed].items()} for seed in sorted(seeds)}


def reported_rows(suite: Suite, splits: list[str]) -> list[tuple[Reference, float]]:
    """(published row, its mean over `splits`) of every published row of `suite` with a value of the primary
    metric on each of them; the rows of suites published on other data (another suite id) are left out."""
    metric, out = suite.spec.primary_metric, []
    for reference in load_references():
        if reference.suite != suite.spec.id or not splits:
            continue
        values = [reference.value(metric, split) for split in splits]
        if all(value is not None for value in values):
            out.append((reference, sum(v for v in values if v is not None) / len(values)))
    return out
