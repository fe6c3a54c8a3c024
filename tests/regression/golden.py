"""Golden results: the fast baselines on every lookup suite with fixed seeds.

`python -m tests.regression.golden` rewrites `golden.json` from the code under test; do it
only for an intended change, review the diff, and commit it with the reason.
"""

from __future__ import annotations

import json
import sys
import tempfile
from pathlib import Path
from typing import Any

from structbench.runner import Runner
from structbench.specs import ModelSpec, ResultRecord
from structbench.store import Store

GOLDEN = Path(__file__).with_name("golden.json")
SUITES = ("lookup-tables", "lookup-tables-mt")
MODELS = ("oracle", "copy", "random", "majority")
SEEDS = (0, 1, 2)


def _per_seed(record: ResultRecord, split: str) -> dict[str, list[float]]:
    """metric (breakdowns as `metric[key=level]`) -> per-seed values of one split."""
    values = {metric: stats.per_seed for metric, stats in record.scores[split].items()}
    for metric, by_key in record.breakdowns.get(split, {}).items():
        for key, by_level in by_key.items():
            values.update({f"{metric}[{key}={level}]": stats.per_seed for level, stats in by_level.items()})
    return values


def compute() -> dict[str, Any]:
    """suite -> {suite_hash, model -> split -> metric -> per-seed values}."""
    table: dict[str, Any] = {}
    with tempfile.TemporaryDirectory() as folder, Store(Path(folder) / "golden.sqlite") as store:
        runner = Runner(store, progress=False)
        runner.log = lambda message: None
        for suite in SUITES:
            entry: dict[str, Any] = {}
            for model in MODELS:
                record = runner.evaluate(suite, ModelSpec(name=model), SEEDS)
                entry["suite_hash"] = record.suite_hash
                entry[model] = {split: _per_seed(record, split) for split in record.scores}
            table[suite] = entry
    return table


if __name__ == "__main__":
    GOLDEN.write_text(json.dumps(compute(), indent=1, sort_keys=True) + "\n")
    print(f"wrote {GOLDEN}", file=sys.stderr)
