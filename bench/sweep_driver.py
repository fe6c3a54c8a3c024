"""How fast a sweep's driver stores results, and what a run costs the store: the numbers behind
docs/scaling.md.

A sweep has one writer, its driver: for every result a worker sends, it parses the JSON, claims
nothing new (the claim was made at submission) and writes the run in one transaction
(`Runner.record` -> `Store.finish_run`). This bench makes one real worker result per suite
(`structbench.execution.worker.execute`, the `random` model, seed 0) and then drives `--runs` runs
(seeds 0 .. runs-1) through exactly the driver's path: `claim_run` at submission, then
`WorkResult.model_validate_json`, `outcome_of`, `Runner.record`, `release`, into a fresh store.
Prints per suite: test examples per run, result JSON bytes, driver runs per second (claim and
record, the whole driver's work per run), store bytes per run (file size after a WAL checkpoint,
marginal over the runs after the first) and the seconds a sweep's plan then takes to read the
store's runs (`Store.runs`, to leave out the finished ones).

    STRUCTBENCH_SOURCE_DIR=/path/to/data python bench/sweep_driver.py [--runs 1000]
        [--suites lookup-tables,scan-simple,symbol-rewriting-mt] [--smoke]

`--smoke` drives 5 runs on lookup-tables only: the same code in seconds.
"""

from __future__ import annotations

import argparse
import sqlite3
import tempfile
import time
from pathlib import Path

from tabulate import tabulate

from structbench import __version__, registry
from structbench.data import freeze
from structbench.execution.worker import WorkOrder, WorkResult, execute, outcome_of
from structbench.runs.context import ModelOnSuite
from structbench.runs.request import ModelRequest
from structbench.runs.runner import Runner
from structbench.specs import ModelSpec
from structbench.store import Store

SMOKE_RUNS, SMOKE_SUITES = 5, "lookup-tables"


def file_bytes(path: Path) -> int:
    """The store's size with its write-ahead log folded in."""
    db = sqlite3.connect(path)
    try:
        db.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    finally:
        db.close()
    return path.stat().st_size


def drive(suite_id: str, runs: int, folder: Path) -> list[str]:
    """One row of the table: drive `runs` results of one real run of `random` on the suite."""
    suite = registry.suite(suite_id)
    manifest = freeze.ensure_built(suite)
    spec = ModelSpec(name="random")
    keyed = ModelOnSuite.of(suite, ModelRequest.of(spec))
    order = WorkOrder(
        key=0,
        suite=suite_id,
        suite_hash=manifest.suite_hash,
        model=spec,
        model_hash=keyed.key.model_hash,
        seed=0,
        harness_version=__version__,
    )
    text = execute(order).model_dump_json()
    examples = sum(len(split.ids) for split in WorkResult.model_validate_json(text).splits)
    path = folder / f"{suite_id}.sqlite"
    with Store(path) as store:
        store.record_suite(suite.spec, manifest.suite_hash)
        runner = Runner(store, progress=False)
        runner.log = lambda message: None
        first_size, seconds = 0, 0.0
        for seed in range(runs):
            started = time.perf_counter()
            context = keyed.seed_run(manifest, seed)
            claim = store.claim_run(context.claim_fields)
            result = WorkResult.model_validate_json(text)
            try:
                runner.record(claim, context, outcome_of(result))
            finally:
                store.release(claim)
            seconds += time.perf_counter() - started
            if seed == 0:
                first_size = file_bytes(path)  # the empty schema and the suite's spec do not count
    per_run = (file_bytes(path) - first_size) / max(1, runs - 1)
    with Store(path) as store:
        store.runs()  # once to import pandas, which a sweep's driver has imported already
        started = time.perf_counter()
        store.runs()  # what a sweep's plan reads to leave out finished runs and to estimate times
        reading = time.perf_counter() - started
    row = [suite_id, str(examples), f"{len(text):,}", f"{runs / seconds:.1f}", f"{per_run:,.0f}"]
    return [*row, f"{reading:.2f}"]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--runs", type=int, default=1000)
    parser.add_argument("--suites", default="lookup-tables,scan-simple,symbol-rewriting-mt")
    parser.add_argument("--smoke", action="store_true", help="5 runs on lookup-tables: seconds")
    args = parser.parse_args()
    if args.smoke:
        args.runs, args.suites = SMOKE_RUNS, SMOKE_SUITES
    with tempfile.TemporaryDirectory(prefix="sweep-driver-") as folder:
        rows = [drive(suite.strip(), args.runs, Path(folder)) for suite in args.suites.split(",") if suite.strip()]
    headers = ["suite", "test examples/run", "result JSON bytes", "driver runs/s", "store bytes/run", "plan read s"]
    print(f"{args.runs} runs per suite through the driver's path (claim, parse, record in one transaction)")
    print(tabulate(rows, headers=headers, disable_numparse=True))


if __name__ == "__main__":
    main()
