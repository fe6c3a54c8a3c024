"""Is model A better than model B on this suite? A paired two-level bootstrap.

Both models' runs are matched by seed (same seed, same data draw) and, within a seed, by
example id. Each example's verdict on the suite's primary metric is recomputed from the stored
predictions (`structbench.analysis.rescore`), so that runs stored before a change of primary metric are
compared on the current one. The difference is mean(A) - mean(B) over the shared seeds; its
95% interval and two-sided p-value come from a bootstrap that resamples seeds (training
variation) and then examples within each drawn seed (test-set sampling), always the same
examples for both models, so that their shared difficulty cancels.

Seeds on one data draw share their examples, so a resample draws those examples once for all
of them. With 0/1 verdicts an example's differences across those seeds take few distinct
patterns (at most 3^seeds), so resampling n examples is one multinomial draw over the
patterns: 10,000 resamples of a 10,000-example split cost milliseconds. The p-value is (1 + 2 min(#diff <= 0,
#diff >= 0)) / (resamples + 1), capped at 1. With few seeds the seed level of any bootstrap is
coarse (3 seeds give 10 distinct seed resamples): the seeds used are reported with the result.
"""

from __future__ import annotations

from collections.abc import Collection
from dataclasses import dataclass

import numpy as np
import pandas as pd

from structbench import cells
from structbench.analysis.labels import unknown_label
from structbench.analysis.rescore import rescore
from structbench.errors import UserError
from structbench.store import StoreReader
from structbench.suite import Suite

RESAMPLES = 10_000
CONFIDENCE = 0.95


@dataclass(frozen=True)
class Comparison:
    """Model A against model B on one split: A's mean minus B's, over the shared seeds."""

    suite: str
    split: str
    metric: str
    model_a: str
    model_b: str
    seeds: list[int]
    n_examples: int
    """Examples per seed (the split's size)."""
    mean_a: float
    mean_b: float
    difference: float
    ci_low: float
    ci_high: float
    p_value: float
    resamples: int
    test: str = "paired bootstrap over seeds and examples"
    """The test `p_value` comes from."""
    seeds_b: list[int] | None = None
    """B's seeds where they are not paired with A's (a published run's); None where `seeds` are both's."""
    discordant: tuple[int, int] | None = None
    """(items right for A alone, for B alone) where the test is McNemar's."""

    @property
    def verdict(self) -> str:
        if self.discordant is not None:  # McNemar's test decides; the interval is the bootstrap's
            if self.p_value >= 1 - CONFIDENCE or self.difference == 0:
                return "not distinguishable"
            return f"{self.model_a if self.difference > 0 else self.model_b} better"
        if self.ci_low > 0:
            return f"{self.model_a} better"
        if self.ci_high < 0:
            return f"{self.model_b} better"
        return "not distinguishable"


RunsBySeed = dict[int, tuple[int, str, int]]
"""seed -> (run id, suite hash, draw) of one model's finished runs on one suite."""


def current_runs(store: StoreReader, suite: Suite, label: str) -> RunsBySeed:
    """seed -> (run id, suite hash, draw) of the finished runs of `label`'s newest configuration on `suite`."""
    runs = store.runs()
    mine = runs[(runs.suite == suite.spec.id) & (runs.version == suite.spec.version) & (runs.model == label)]
    if mine.empty:
        raise UserError(unknown_label(store, suite.spec, label))
    newest_hash = str(mine.sort_values("id").iloc[-1].suite_hash)  # the data of the newest run
    current = cells.current_runs(mine)
    return finished_runs(current, suite.spec.id, suite.spec.version, newest_hash).get(label, {})


def finished_runs(runs: pd.DataFrame, suite_id: str, version: str, suite_hash: str) -> dict[str, RunsBySeed]:
    """model -> its finished runs, by seed, among `runs` (a frame of `Store.runs()`) on one suite's data."""
    mine = runs[
        (runs.suite == suite_id) & (runs.version == version) & (runs.suite_hash == suite_hash) & (runs.status == "done")
    ]
    out: dict[str, RunsBySeed] = {}
    columns = (mine[k].tolist() for k in ("model", "seed", "id", "draw"))
    for model, seed, run_id, draw in zip(*columns, strict=True):
        out.setdefault(str(model), {})[int(seed)] = (int(run_id), suite_hash, int(draw))
    return out


class Verdicts:
    """Each example's verdict on `suite`'s primary metric, re-scored once per run from its stored predictions:
    of the splits compared (`splits`; a report compares the ranked ones), or of every split."""

    def __init__(self, store: StoreReader, suite: Suite, splits: Collection[str] | None = None) -> None:
        self.store, self.suite, self.splits = store, suite, splits
        self._by_run: dict[int, dict[str, list[bool | None]]] = {}

    def of(self, run_id: int, split: str) -> np.ndarray:
        if run_id not in self._by_run:
            self._by_run[run_id] = {
                name: scores.correct for name, scores in rescore(self.store, run_id, self.suite, self.splits).items()
            }
        correct = self._by_run[run_id].get(split, [])
        if not correct:
            raise UserError(f"run {run_id} has no predictions for split {split!r} of {self.suite.spec.key}.")
        if any(ok is None for ok in correct):
            raise UserError(
                f"{self.suite.spec.key}'s primary metric {self.suite.spec.primary_metric!r} is not a right/wrong verdict "
                "per example, so two models cannot be paired on it; compare their cells in the report instead."
            )
        return np.array(correct, dtype=bool)


def paired_bootstrap(
    differences: list[np.ndarray], draws: list[int], resamples: int = RESAMPLES, seed: int = 0
) -> tuple[float, float, float]:
    """(low, high, p-value) of the mean over seeds of each seed's mean paired difference.

    `differences[i]` holds seed i's per-example differences (A's verdict minus B's) and
    `draws[i]` its data draw. A resample draws seeds with replacement, and examples with
    replacement once per draw, shared by every seed on that draw: seeds on one draw were tested
    on the same examples, so resampling those independently per seed would understate the
    test set's sampling error."""
    rng = np.random.default_rng(seed)
    k = len(differences)
    per_seed = np.empty((resamples, k))  # each seed's resampled mean difference
    for draw in sorted(set(draws)):
        members = [i for i, d in enumerate(draws) if d == draw]
        matrix = np.stack([differences[i] for i in members])  # seeds of this draw x examples
        # an example only matters through its column of differences: resample those patterns
        patterns, frequency = np.unique(matrix.T, axis=0, return_counts=True)
        n = matrix.shape[1]
        counts = rng.multinomial(n, frequency / n, size=resamples)
        per_seed[:, members] = counts @ patterns / n
    drawn = rng.integers(0, k, size=(resamples, k))  # the seed level
    means = np.take_along_axis(per_seed, drawn, axis=1).mean(axis=1)
    alpha = (1 - CONFIDENCE) / 2
    low, high = np.quantile(means, [alpha, 1 - alpha])
    tail = min(int((means <= 0).sum()), int((means >= 0).sum()))
    return float(low), float(high), min(1.0, (1 + 2 * tail) / (resamples + 1))


def chosen_splits(suite: Suite, splits: list[str] | None) -> list[str]:
    """The test splits a comparison is over: `splits`, each checked to be a test split of `suite`, or
    the suite's ranked splits where none are named."""
    tests = {s.name for s in suite.spec.splits_with_role("test")}
    chosen = splits or [s.name for s in suite.spec.ranked_splits]
    for name in chosen:
        if name not in tests:
            raise UserError(
                f"{suite.spec.key} has no test split {name!r}; its test splits: {', '.join(sorted(tests))}."
            )
    return chosen


def compare(
    store: StoreReader, suite: Suite, model_a: str, model_b: str, splits: list[str] | None = None, *, seed: int = 0
) -> list[Comparison]:
    """One comparison per split (the suite's ranked splits unless `splits` names others)."""
    if model_a == model_b:
        raise UserError(f"--models names {model_a!r} twice; give two different models.")
    runs_a, runs_b = current_runs(store, suite, model_a), current_runs(store, suite, model_b)
    chosen = chosen_splits(suite, splits)
    verdicts = Verdicts(store, suite, chosen)
    return [paired(verdicts, split, (model_a, runs_a), (model_b, runs_b), seed=seed) for split in chosen]


def paired(
    verdicts: Verdicts, split: str, a: tuple[str, RunsBySeed], b: tuple[str, RunsBySeed], *, seed: int = 0
) -> Comparison:
    """Model a against model b on `split`, over the seeds both ran on the same data."""
    (model_a, runs_a), (model_b, runs_b) = a, b
    shared = sorted(s for s in set(runs_a) & set(runs_b) if runs_a[s][1] == runs_b[s][1])
    if not shared:
        raise UserError(
            f"{model_a!r} and {model_b!r} share no finished seed on the same {verdicts.suite.spec.key} data; "
            "run both with the same --seeds."
        )
    differences, sizes, means_a, means_b = [], [], [], []
    for s in shared:
        va, vb = verdicts.of(runs_a[s][0], split), verdicts.of(runs_b[s][0], split)
        differences.append(va.astype(np.int8) - vb.astype(np.int8))
        sizes.append(len(va))
        means_a.append(va.mean())
        means_b.append(vb.mean())
    low, high, p = paired_bootstrap(differences, [runs_a[s][2] for s in shared], seed=seed)
    return Comparison(
        suite=verdicts.suite.spec.key,
        split=split,
        metric=verdicts.suite.spec.primary_metric,
        model_a=model_a,
        model_b=model_b,
        seeds=shared,
        n_examples=int(min(sizes)),
        mean_a=float(np.mean(means_a)),
        mean_b=float(np.mean(means_b)),
        difference=float(np.mean(means_a) - np.mean(means_b)),
        ci_low=low,
        ci_high=high,
        p_value=p,
        resamples=RESAMPLES,
    )
