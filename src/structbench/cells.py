"""The leaderboard's one cell function: per-seed values -> mean, sd, interval, n.

A cell is one (suite@version+hash, model configuration, split, metric[, breakdown condition])
over every finished seed the store holds. `run --json`, the report and comparisons all read
their numbers from `cells`, so they cannot disagree on a mean or on n.

The 95% interval of a cell's mean says which method made it (`interval`):

- `t over N seeds`: two or more seeds that differ. The Student-t interval over the seeds,
  mean ± t(0.975, N-1) sd / sqrt(N): how much another set of training runs could move the
  mean on this test data (the test set's own sampling error is not in it). A simulation test
  checks its coverage at 3, 5 and 10 seeds.
- `Wilson over N items`: one seed, or seeds that agree exactly (a deterministic model), of a
  metric that is the fraction of N items scored 0 or 1 (`Score.proportion`). The Wilson score
  interval over the items: how much another test set of that size could move the value. N is
  the smallest item count among the seeds.
- `none`: one seed (or agreeing seeds) of any other metric, where no interval is claimed.

Every interval is clipped to its metric's declared range (`structbench.metrics`: [0, 1] for a
fraction, [0, ∞) for variation of information, [1, ∞) for a perplexity), and to [0, 1] for a metric
no entry declares whose values are fractions of items: a t-interval knows nothing of the values a
metric can take, and the part beyond the range is no value the mean could have.

The percentile bootstrap over seeds used before covered the mean about 77% of the time at 3
seeds: its interval is never wider than [min, max] of the seeds.
"""

from __future__ import annotations

import math
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np

from structbench.metrics import metric_range
from structbench.specs import SeedStats

if TYPE_CHECKING:
    import pandas as pd

RUN_CELL = ["suite", "version", "suite_hash", "model"]
"""What a leaderboard row of one suite's data is: a model label on one suite version and hash."""
CELL_KEYS = ["suite", "version", "suite_hash", "model", "model_hash", "split", "metric", "breakdown", "level"]
"""What identifies a cell in `Store.scores()` rows."""
STAT_COLUMNS = ["mean", "std", "min", "max", "ci_low", "ci_high", "interval", "n_seeds", "per_seed"]
CONFIDENCE = 0.95


def _not_interrupted(runs: pd.DataFrame) -> pd.DataFrame:
    """`runs` without the interrupted ones (a `running` row whose holder is gone, as `Store.runs()` shows it)."""
    return runs[runs["status"] != "interrupted"] if "status" in runs.columns else runs


def _of_current(frame: pd.DataFrame, runs: pd.DataFrame) -> pd.DataFrame:
    """The rows of `frame` whose model hash is that of the newest run (in `runs`, interrupted ones left
    out) of their (suite, version, hash, label)."""
    newest = _not_interrupted(runs).sort_values("id").groupby(RUN_CELL, as_index=False)["model_hash"].last()
    return frame.merge(newest, on=[*RUN_CELL, "model_hash"], how="inner")


def current_runs(runs: pd.DataFrame) -> pd.DataFrame:
    """The current runs of `runs` (rows of `Store.runs()`): those of the newest configuration of each
    label on each suite version and data hash, i.e. the configuration of the label's newest run there.
    A label names one configuration at a time; runs made before its recipe changed stay in the store
    without joining the seeds of the current one. An interrupted run (Ctrl-C, a killed process: nothing
    of it is stored and the next ask redoes it) is no current run, so that no page shows a row for it.
    Every reader of results (report, compare, statistics, claims) reads runs through this one query."""
    return _of_current(_not_interrupted(runs), runs)


def current_scores(scores: pd.DataFrame, runs: pd.DataFrame) -> pd.DataFrame:
    """The rows of `scores` (`Store.scores()`) that belong to the current runs of `runs` (`current_runs`)."""
    return _of_current(scores, runs)


def wilson(proportion: np.ndarray, n: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The Wilson score interval of proportions observed over `n` items, elementwise.

    scipy has it only one integer count at a time (`binomtest(k, n).proportion_ci(method=
    "wilson")`, which the tests compare with); here it runs over every cell at once."""
    from scipy import special  # where intervals are made: a quarter of a second that most commands never need

    z = special.ndtri(1 - (1 - CONFIDENCE) / 2)
    shrink = 1 + z**2 / n
    centre = (proportion + z**2 / (2 * n)) / shrink
    half = z / shrink * np.sqrt(proportion * (1 - proportion) / n + z**2 / (4 * n**2))
    low, high = np.maximum(centre - half, 0.0), np.minimum(centre + half, 1.0)
    return np.where(proportion == 0, 0.0, low), np.where(proportion == 1, 1.0, high)  # exact where rounding is not


WILSON = re.compile(r"Wilson over (\d+) items")
"""The `interval` of a cell whose interval is Wilson's over its items, with their count."""


def wilson_items(method: str) -> int | None:
    """The item count of a cell whose `interval` is Wilson's over its items (`Wilson over 500 items`):
    a proportion whose seeds agree (or that has one seed); None for any other interval."""
    found = WILSON.fullmatch(method)
    return None if found is None else int(found.group(1))


def ranges(metrics: Sequence[str], proportion: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(low, high) bounds of each cell's values: its metric's declared range (`structbench.metrics`);
    [0, 1] for an undeclared metric whose values are fractions of items; else unbounded."""
    declared = [metric_range(metric) for metric in metrics]
    low = np.array([-np.inf if r is None else r.low for r in declared], dtype=float)
    high = np.array([np.inf if r is None else r.high for r in declared], dtype=float)
    fraction = np.array([r is None for r in declared], dtype=bool) & proportion
    low[fraction], high[fraction] = 0.0, 1.0
    return low, high


def _intervals(
    mean: np.ndarray,
    std: np.ndarray,
    seeds: np.ndarray,
    varied: np.ndarray,
    items: np.ndarray,
    proportion: np.ndarray,
    bounds: tuple[np.ndarray, np.ndarray],
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(low, high, method) of every cell, as the module docstring says, clipped to `bounds` (`ranges`)."""
    from scipy import special  # the quantile functions alone (scipy.stats takes a second to import)

    low, high = np.full(len(mean), np.nan), np.full(len(mean), np.nan)
    method = np.full(len(mean), "none", dtype=object)
    if varied.any():
        n = seeds[varied]
        half = special.stdtrit(n - 1, 1 - (1 - CONFIDENCE) / 2) * std[varied] / np.sqrt(n)
        low[varied], high[varied] = mean[varied] - half, mean[varied] + half
        method[varied] = [f"t over {k} seeds" for k in n.tolist()]
    binomial = ~varied & proportion & (items > 0)
    if binomial.any():
        low[binomial], high[binomial] = wilson(mean[binomial], items[binomial].astype(float))
        method[binomial] = [f"Wilson over {k} items" for k in items[binomial].tolist()]
    with np.errstate(invalid="ignore"):  # NaN (no interval) stays NaN
        return np.clip(low, *bounds), np.clip(high, *bounds), method


def cells(scores: pd.DataFrame) -> pd.DataFrame:
    """One row per cell of `scores` (rows as `Store.scores()` returns them): the cell keys and
    mean, std (ddof 1; NaN with one seed), min, max, ci_low, ci_high (NaN without an
    interval), interval (its method), n_seeds and per_seed (values in seed order). Seeds whose
    value is undefined (NULL) do not count; a value that is infinite or outside its metric's range,
    or a negative item count, raises ValueError (`first_impossible`)."""
    import pandas as pd

    defined = scores.dropna(subset=["value"])
    if defined.empty:
        return pd.DataFrame(columns=[*CELL_KEYS, *STAT_COLUMNS])
    if (impossible := first_impossible(defined)) is not None:  # the store's readers refuse these first
        raise ValueError(f"a cell cannot hold {impossible[1]}")
    # one integer cell code per row (cells in key order): far cheaper to sort by than nine strings
    codes = defined.groupby(CELL_KEYS, sort=True, dropna=False).ngroup().to_numpy()
    first, stats = cell_stats(
        codes,
        defined["seed"].to_numpy(),
        defined["value"].to_numpy(dtype=float),
        defined["n"].to_numpy(dtype=np.int64),
        defined["proportion"].to_numpy(dtype=bool),
        defined["metric"].to_numpy(),
    )
    frame = defined.iloc[first][CELL_KEYS].reset_index(drop=True)
    for column in STAT_COLUMNS:
        frame[column] = stats[column]
    return frame


def cell_stats(
    codes: np.ndarray,
    seeds: np.ndarray,
    values: np.ndarray,
    items: np.ndarray,
    proportion: np.ndarray,
    metrics: np.ndarray,
) -> tuple[np.ndarray, dict[str, Any]]:
    """The `STAT_COLUMNS` of every cell of defined, possible score rows given as columns, whose cell
    `codes` number the cells in the order they are wanted: (the position of each cell's first row,
    the columns by name). `cells` and a runner's record of one configuration
    (`structbench.runs.runner`) both come through here, so that they cannot disagree."""
    order = np.lexsort((seeds, codes))
    codes = codes[order]
    starts = np.flatnonzero(np.r_[True, codes[1:] != codes[:-1]])
    n_seeds = np.diff(np.r_[starts, len(codes)])
    values = values[order]
    mean = np.add.reduceat(values, starts) / n_seeds
    squares = np.add.reduceat((values - np.repeat(mean, n_seeds)) ** 2, starts)
    with np.errstate(invalid="ignore", divide="ignore"):
        std = np.where(n_seeds > 1, np.sqrt(squares / (n_seeds - 1)), np.nan)
    lowest, highest = np.minimum.reduceat(values, starts), np.maximum.reduceat(values, starts)
    fewest = np.minimum.reduceat(items[order], starts)
    fractions = np.logical_and.reduceat(proportion[order], starts)
    first = order[starts]
    bounds = ranges([str(metric) for metric in metrics[first].tolist()], fractions)
    low, high, method = _intervals(mean, std, n_seeds, highest > lowest, fewest, fractions, bounds)
    flat = values.tolist()
    per_seed = [flat[start : start + n] for start, n in zip(starts.tolist(), n_seeds.tolist(), strict=True)]
    columns = {"mean": mean, "std": std, "min": lowest, "max": highest, "ci_low": low, "ci_high": high}
    return first, columns | {"interval": method, "n_seeds": n_seeds, "per_seed": per_seed}


@dataclass(frozen=True)
class ScoreColumns:
    """Score rows of one model configuration's finished runs, as columns (`StoreReader.configuration_scores`):
    what `run` aggregates into the cells of the record it prints, without building a data frame."""

    keys: list[tuple[str, str, str, str, str]]
    """(model label, split, metric, breakdown, level) of each row: its cell, within the configuration."""
    seeds: np.ndarray
    values: np.ndarray
    """Floats; NaN where undefined."""
    items: np.ndarray
    proportion: np.ndarray
    metrics: np.ndarray

    def defined(self) -> ScoreColumns:
        """The rows whose value is defined: those a cell counts."""
        keep = ~np.isnan(self.values)
        if keep.all():
            return self
        kept = [key for key, ok in zip(self.keys, keep.tolist(), strict=True) if ok]
        return ScoreColumns(
            kept, self.seeds[keep], self.values[keep], self.items[keep], self.proportion[keep], self.metrics[keep]
        )

    def cells(self) -> list[tuple[tuple[str, str, str, str, str], SeedStats]]:
        """Each cell's key and stats, in key order: the cells `cells` makes of the same rows."""
        if not self.keys:
            return []
        ordered = sorted(set(self.keys))
        code = {key: index for index, key in enumerate(ordered)}
        codes = np.array([code[key] for key in self.keys], dtype=np.int64)
        first, stats = cell_stats(codes, self.seeds, self.values, self.items, self.proportion, self.metrics)
        rows = ({column: stats[column][i] for column in STAT_COLUMNS} for i in range(len(first)))
        return [(self.keys[at], as_stats(row)) for at, row in zip(first.tolist(), rows, strict=True)]


def cell(values: Sequence[float], items: int = 0, proportion: bool = False) -> SeedStats:
    """The cell of one list of per-seed values (in seed order), each over `items` items."""
    import pandas as pd

    columns = {"seed": range(len(values)), "value": list(values), "n": items, "proportion": proportion}
    return as_stats(cells(pd.DataFrame({key: "" for key in CELL_KEYS} | columns)).iloc[0].to_dict())


def as_stats(row: Mapping[Any, Any]) -> SeedStats:
    """One `cells` row (a Series or a record dict) as the record `run --json` prints."""
    std, low, high = float(row["std"]), float(row["ci_low"]), float(row["ci_high"])
    return SeedStats.model_construct(  # the fields are computed above, not user input: no validation pass
        mean=float(row["mean"]),
        std=None if std != std else std,
        min=float(row["min"]),
        max=float(row["max"]),
        ci_low=None if low != low else low,
        ci_high=None if high != high else high,
        interval=str(row["interval"]),
        n_seeds=int(row["n_seeds"]),
        per_seed=[float(v) for v in row["per_seed"]],
    )


def score_range(metric: str, proportion: bool) -> tuple[float, float]:
    """The closed interval a score of `metric` may take: its declared range (`structbench.metrics`);
    for a metric none declares, [0, 1] where it is a fraction of items scored 0 or 1 (`proportion`),
    any finite number otherwise. The one place a range is read when values are checked (`value_problem`)."""
    declared = metric_range(metric)
    if declared is not None:
        return declared.low, declared.high
    return (0.0, 1.0) if proportion else (-math.inf, math.inf)


def value_problem(metric: str, value: float | None, n: int, proportion: bool) -> str | None:
    """Why one score (its value over `n` items) cannot enter a cell, as a phrase; None where it can: a
    value is undefined (None, or NaN as a frame holds it) or a finite number inside its metric's
    range (`score_range`), over a count of items that is not negative."""
    if n < 0:
        return f"an item count of {n}, below 0"
    if value is None or value != value:
        return None
    if not math.isfinite(value):
        return f"the value {value!r}, not a finite number"
    low, high = score_range(metric, proportion)
    if not low <= value <= high:
        return f"the value {value!r}, outside the range [{low:g}, {high:g}] {metric} takes"
    return None


def first_impossible(scores: pd.DataFrame) -> tuple[int, str] | None:
    """(position, `value_problem` phrase) of the first row of `scores` (rows as `Store.scores()` returns
    them) whose value or item count no cell takes; None where every row is possible."""
    if scores.empty:
        return None
    return first_impossible_of(
        scores["metric"].to_numpy(dtype=object),
        scores["value"].to_numpy(dtype=float),
        scores["n"].to_numpy(dtype=float),
        scores["proportion"].to_numpy(dtype=bool),
    )


def first_impossible_of(
    metrics: np.ndarray, values: np.ndarray, items: np.ndarray, proportion: np.ndarray
) -> tuple[int, str] | None:
    """`first_impossible` of score rows given as columns (NaN for an undefined value). Vectorised over
    the metrics' ranges, so that checking a store's scores costs little beside reading them."""
    # each metric numbered in one pass over the names (not one comparison of every name per distinct metric),
    # each (metric, fraction) pair's range looked up once, then taken for every row
    numbers: dict[object, int] = {}
    codes = np.array([numbers.setdefault(metric, len(numbers)) for metric in metrics.tolist()], dtype=np.int64)
    bounds = [score_range(str(metric), fraction) for metric in numbers for fraction in (False, True)]
    low, high = np.array(bounds, dtype=float).reshape(-1, 2)[codes * 2 + proportion.astype(np.int64)].T
    with np.errstate(invalid="ignore"):
        bad = (items < 0) | np.isinf(values) | (values < low) | (values > high)
    if not bad.any():
        return None
    at = int(np.flatnonzero(bad)[0])
    value = None if values[at] != values[at] else float(values[at])
    return at, value_problem(str(metrics[at]), value, int(items[at]), bool(proportion[at])) or "a value no cell takes"
