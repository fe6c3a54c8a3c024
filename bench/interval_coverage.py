"""How often a cell's 95% interval covers the true mean, by simulation: the intervals of
`structbench.cells` beside the percentile bootstrap over seeds it replaced.

Per-seed values are drawn from a normal distribution (mean 0.6, sd 0.05, as seed-to-seed
variation of an accuracy); each simulated cell's interval is computed by `cells` (Student-t
over seeds) and by scipy's percentile bootstrap (9,999 resamples, what structbench reported
before), and the fraction of cells whose interval contains 0.6 is printed per seed count.
The one-seed Wilson interval is simulated the same way with binomial test sets.

    python bench/interval_coverage.py [--cells 4000] [--smoke]

`--smoke` simulates 100 cells per row: the same code in seconds (coverage figures then vary by
a few points around the full run's).
"""

from __future__ import annotations

import argparse

import numpy as np
import numpy.typing as npt
import pandas as pd
from scipy import stats

from structbench.cells import CELL_KEYS, cells

TRUE_MEAN, SEED_SD = 0.6, 0.05
SMOKE_CELLS = 100


def frame(values: np.ndarray, items: int = 0, proportion: bool = False) -> pd.DataFrame:
    """`Store.scores()`-shaped rows: one cell per row of `values` (cells x seeds)."""
    n_cells, n_seeds = values.shape
    keys = {key: "x" for key in CELL_KEYS}
    return pd.DataFrame(
        keys
        | {
            "model": np.repeat([f"m{i:06d}" for i in range(n_cells)], n_seeds),
            "seed": np.tile(np.arange(n_seeds), n_cells),
            "value": values.ravel(),
            "n": items,
            "proportion": proportion,
        }
    )


def coverage(low: npt.ArrayLike, high: npt.ArrayLike, truth: float) -> float:
    """The fraction of intervals [low, high] that contain `truth`."""
    return float(np.mean((np.asarray(low) <= truth) & (truth <= np.asarray(high))))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--cells", type=int, default=4000, help="simulated cells per row")
    parser.add_argument("--smoke", action="store_true", help=f"{SMOKE_CELLS} cells per row: seconds")
    args = parser.parse_args()
    if args.smoke:
        args.cells = SMOKE_CELLS
    rng = np.random.default_rng(0)
    print(f"{'per-seed values':<28} {'seeds':>5} {'t (now)':>9} {'bootstrap (before)':>19}")
    for seeds in (3, 5, 10):
        values = rng.normal(TRUE_MEAN, SEED_SD, size=(args.cells, seeds))
        now = cells(frame(values))
        before = stats.bootstrap(
            (values,), np.mean, axis=-1, n_resamples=9999, method="percentile", rng=np.random.default_rng(0)
        ).confidence_interval
        print(
            f"{'normal(0.6, 0.05)':<28} {seeds:>5} {coverage(now.ci_low, now.ci_high, TRUE_MEAN):>9.3f}"
            f" {coverage(before.low, before.high, TRUE_MEAN):>19.3f}"
        )
    print()
    print(f"{'one seed, binomial test set':<28} {'items':>5} {'Wilson':>9}")
    for items, p in ((10, 0.5), (100, 0.3), (500, 0.8), (2000, 0.05)):
        values = rng.binomial(items, p, size=(args.cells, 1)) / items
        now = cells(frame(values, items, proportion=True))
        print(f"{f'p = {p}':<28} {items:>5} {coverage(now.ci_low, now.ci_high, p):>9.3f}")


if __name__ == "__main__":
    main()
