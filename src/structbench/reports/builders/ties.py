"""Which models the report marks as indistinguishable from the best on each ranked split.

On every ranked split of a board the best comparable cell (highest mean, or lowest where
lower is better) is marked, and so is every other comparable model whose paired comparison
with it (`structbench.analysis.compare.paired`: a two-level bootstrap over seeds and examples, 95%)
has an interval of the difference that holds 0. Cells whose 95% intervals do not overlap the
best's are distinguishable without a bootstrap (non-overlapping intervals imply a difference
at well below the 5% level), so only close models are re-scored from their stored
predictions, and each run at most once. A board whose suite is not installed or not built
here, whose runs kept no predictions, or whose primary metric is not a right/wrong verdict per
example (V-measure, say) gets no marks and says why.
"""

from __future__ import annotations

import pandas as pd

from structbench import registry
from structbench.analysis.compare import Verdicts, finished_runs, paired
from structbench.errors import UserError
from structbench.specs import SeedStats, SuiteSpec
from structbench.store import StoreReader


def _separated(a: SeedStats, b: SeedStats) -> bool:
    """Whether the two cells' 95% intervals do not overlap."""
    if None in (a.ci_low, a.ci_high, b.ci_low, b.ci_high):
        return False
    return bool(a.ci_high < b.ci_low or b.ci_high < a.ci_low)  # type: ignore[operator]


def best_and_ties(
    store: StoreReader, spec: SuiteSpec, suite_hash: str, runs: pd.DataFrame, columns: dict[str, dict[str, SeedStats]]
) -> tuple[dict[str, str], dict[str, set[str]], str]:
    """(split -> best model, split -> models indistinguishable from it, why nothing was compared or "").

    `columns` holds, per ranked split, the comparable models' cells."""
    best: dict[str, str] = {}
    for split, cells in columns.items():
        if cells:
            pick = max if spec.higher_is_better else min
            best[split] = pick(sorted(cells), key=lambda model: cells[model].mean)
    close = {
        split: [m for m in sorted(cells) if m != best[split] and not _separated(cells[m], cells[best[split]])]
        for split, cells in columns.items()
        if split in best
    }
    ties: dict[str, set[str]] = {split: set() for split in best}
    if not any(close.values()):
        return best, ties, ""
    try:
        suite = registry.suite(spec.key)
        by_model = finished_runs(runs, spec.id, spec.version, suite_hash)
        verdicts = Verdicts(store, suite, [split for split, models in close.items() if models])
        for split, models in close.items():
            leader = (best[split], by_model.get(best[split], {}))
            for model in models:
                comparison = paired(verdicts, split, leader, (model, by_model.get(model, {})))
                if comparison.ci_low <= 0 <= comparison.ci_high:
                    ties[split].add(model)
    except UserError as error:
        return best, {split: set() for split in best}, f"not compared: {error}"
    return best, ties, ""
