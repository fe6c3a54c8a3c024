"""The leaderboard's one cell function: per-seed values -> mean, sd, interval, n.

A cell is one (suite@version+hash, model configuration, split, metric[, breakdown condition])
over every finished seed the store holds. `run --json`, the report and comparisons all read
their numbers from `cells`, so they cannot disagree on a mean or on n.

The interval is the percentile bootstrap of the mean over seeds, as `scipy.stats.bootstrap`
computes it (9,999 resamples drawn from a fixed generator); here it is computed for every
cell with the same number of seeds at once, from the same resample indices, so the numbers
equal scipy's up to summation order (relative 1e-12, tested) at a fraction of the cost of a
bootstrap call per cell (bench/report_scale.py).
"""

from __future__ import annotations

from collections.abc import Hashable, Mapping, Sequence
from typing import TYPE_CHECKING, Any

import numpy as np

from structbench.specs import SeedStats

if TYPE_CHECKING:
    import pandas as pd

CELL_KEYS = ["suite", "version", "suite_hash", "model", "model_hash", "split", "metric", "breakdown", "level"]
"""What identifies a cell in `Store.scores()` rows."""
STAT_COLUMNS = ["mean", "std", "min", "max", "ci_low", "ci_high", "n_seeds", "per_seed"]
RESAMPLES = 9999
CONFIDENCE = 0.95


def _resample_weights(n: int) -> tuple[np.ndarray, np.ndarray]:
    """The distinct resamples of n seeds among the 9,999 drawn (each as the weight of every seed
    in its mean, n x R) and how many of the 9,999 each stands for."""
    indices = np.random.default_rng(0).integers(0, n, (RESAMPLES, n))
    counts = np.zeros((RESAMPLES, n), dtype=np.int64)
    np.add.at(counts, (np.arange(RESAMPLES)[:, None], indices), 1)
    distinct, multiplicity = np.unique(counts, axis=0, return_counts=True)
    return distinct.T / n, multiplicity


def _intervals(values: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Percentile-bootstrap interval of the row means of `values` (cells x seeds), all rows at once.

    A resample's mean is a weighted sum of the seeds, so the means of every distinct resample
    (at most 126 of them for 5 seeds) are one matrix product; sorting those, with how often each
    was drawn, gives the order statistics `np.percentile` interpolates between. Rows with one
    value repeated need no resampling."""
    n = values.shape[1]
    low, high = values.mean(axis=1), values.mean(axis=1)
    varied = ~np.all(values == values[:, :1], axis=1)
    if n < 2 or not varied.any():
        return low, high
    weights, multiplicity = _resample_weights(n)
    alpha = (1 - CONFIDENCE) / 2
    positions = np.array([alpha, 1 - alpha]) * (RESAMPLES - 1)
    below = np.floor(positions).astype(int)
    fraction = positions - below
    rows = np.flatnonzero(varied)
    for start in range(0, len(rows), 1024):  # bounded memory: 1,024 cells at a time
        block = rows[start : start + 1024]
        means = values[block] @ weights
        order = np.argsort(means, axis=1, kind="stable")
        ranked = np.take_along_axis(means, order, axis=1)
        drawn = np.cumsum(multiplicity[order], axis=1)  # resamples at or below each ranked mean

        def statistic(k: np.ndarray, ranked: np.ndarray = ranked, drawn: np.ndarray = drawn) -> np.ndarray:
            """The k-th smallest of the 9,999 resample means (0-based), per row."""
            return np.take_along_axis(ranked, (drawn <= k[:, None, None]).sum(axis=2).T, axis=1)

        lower, upper = statistic(below), statistic(below + 1)
        bounds = lower + fraction * (upper - lower)
        low[block], high[block] = bounds[:, 0], bounds[:, 1]
    return low, high


def cells(scores: pd.DataFrame) -> pd.DataFrame:
    """One row per cell of `scores` (rows as `Store.scores()` returns them): the cell keys and
    mean, std (ddof 1; NaN with one seed), min, max, ci_low, ci_high, n_seeds and per_seed
    (values in seed order). Seeds whose value is undefined (NULL) do not count."""
    import pandas as pd

    defined = scores.dropna(subset=["value"])
    if defined.empty:
        return pd.DataFrame(columns=[*CELL_KEYS, *STAT_COLUMNS])
    # sort by one integer cell code (cells in key order) and the seed: far cheaper than sorting nine strings
    codes = defined.groupby(CELL_KEYS, sort=True, dropna=False).ngroup().to_numpy()
    order = np.lexsort((defined["seed"].to_numpy(), codes))
    defined, codes = defined.iloc[order], codes[order]
    starts = np.flatnonzero(np.r_[True, codes[1:] != codes[:-1]])
    lengths = np.diff(np.r_[starts, len(codes)])
    all_values = defined["value"].to_numpy(dtype=float)
    frame = defined.iloc[starts][CELL_KEYS].reset_index(drop=True)
    stats = {name: np.full(len(starts), np.nan) for name in ("mean", "std", "min", "max", "ci_low", "ci_high")}
    per_seed: list[list[float]] = [[] for _ in starts]
    for n in np.unique(lengths):
        rows = np.flatnonzero(lengths == n)
        values = all_values[starts[rows][:, None] + np.arange(n)]
        stats["mean"][rows] = values.mean(axis=1)
        if n > 1:
            stats["std"][rows] = values.std(axis=1, ddof=1)
        stats["min"][rows], stats["max"][rows] = values.min(axis=1), values.max(axis=1)
        stats["ci_low"][rows], stats["ci_high"][rows] = _intervals(values)
        for row, row_values in zip(rows, values.tolist(), strict=True):
            per_seed[row] = row_values
    for name, column in stats.items():
        frame[name] = column
    frame["n_seeds"] = lengths
    frame["per_seed"] = per_seed
    return frame[[*CELL_KEYS, *STAT_COLUMNS]]


def cell(values: Sequence[float]) -> SeedStats:
    """The cell of one list of per-seed values (in seed order)."""
    import pandas as pd

    frame = pd.DataFrame({key: "" for key in CELL_KEYS} | {"seed": range(len(values)), "value": list(values)})
    return as_stats(cells(frame).iloc[0].to_dict())


def as_stats(row: Mapping[Hashable, Any]) -> SeedStats:
    """One `cells` row (a Series or a record dict) as the record `run --json` prints."""
    std = float(row["std"])
    return SeedStats.model_construct(  # the fields are computed above, not user input: no validation pass
        mean=float(row["mean"]),
        std=None if std != std else std,
        min=float(row["min"]),
        max=float(row["max"]),
        ci_low=float(row["ci_low"]),
        ci_high=float(row["ci_high"]),
        n_seeds=int(row["n_seeds"]),
        per_seed=[float(v) for v in row["per_seed"]],
    )
