"""Store and report at scale: `structbench report` over a 10,000-run store, and store bytes per run, v2 vs v1.

Part 1 writes a synthetic store through the Store API (`claim_run`, `finish_run`): 30
suites (copies of the lookup-tables spec under other ids, each keeping 3 to 6 of its test
splits) x enough model labels x 5 seeds to make `--runs` runs (10,000: 67 labels, as a large
shared leaderboard would hold), each split scored like a transduction suite (sequence and
token accuracy, final-target accuracy, four length conditions) with a predictions block of
200 to 500 examples (drawn from a pool of 25 per split, as generating them costs more than
storing them). It then times `structbench report --store S --out DIR` as a subprocess
(wall time, best of `--repeats`, each into a new folder): the whole site, overview, suite pages,
plots and error browsers, and prints the site's size. Several `--runs` give the curve (one block
each); `--stores DIR` keeps the synthetic stores there and reuses them (a 100,000-run store takes
about 9 minutes to write); `--before TREE/src` times another source tree's report too, the two
taking turns in each round, and prints the ratio.

Part 2 measures what one real run costs the store: the `random` model on lookup-tables via
the Runner, seeds 0 to `--seeds`-1, into a fresh v2 store, and the very same results (captured
from `finish_run`) written in the v1 layout (`structbench.store.migration.write_v1_run`) into
a fresh v1 store, side by side. Bytes per run are marginal: (file size after all seeds -
file size after seed 0) / (seeds - 1), so that the empty schema does not count.

    STRUCTBENCH_SOURCE_DIR=/path/to/data python bench/report_scale.py [--runs 10000 ...] [--seeds 11] [--repeats 1]
        [--stores DIR] [--before OTHER/src] [--smoke]

`--smoke` (30 runs on 6 suites from a pool of 2 results per split, 2 real seeds) runs the same
code in seconds.
"""

from __future__ import annotations

import argparse
import hashlib
import math
import os
import random
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from structbench import __version__, registry
from structbench.runs.runner import Runner
from structbench.scoring import Score, SplitScores
from structbench.specs import ModelSpec, SuiteSpec
from structbench.store import RunClaim, SplitResult, Store
from structbench.store.migration import create_v1_store, write_v1_run

REPOSITORY = Path(__file__).resolve().parents[1]
SUITES, SEEDS = 30, 5
POOL = 25
"""Distinct synthetic results per split name, drawn from at random for each run."""
SMOKE_RUNS, SMOKE_SEEDS, SMOKE_POOL = 30, 2, 2
VOCABULARY = [f"{bits:03b}" for bits in range(8)] + ["I_WALK", "I_RUN", "I_JUMP", "I_LOOK", "I_TURN_LEFT"]
ENVIRONMENT = '{"cpus": 2, "numpy": "2.4.6", "platform": "Linux-x86_64", "python": "3.11.7", "torch": "2.13.0+cpu"}'


def synthetic_specs() -> list[SuiteSpec]:
    """30 suite specs with 3 to 6 test splits each, derived from lookup-tables (a transduction suite)."""
    base = registry.suite("lookup-tables").spec
    tests = base.splits_with_role("test")
    others = [s for s in base.splits if s.role != "test"]
    return [base.variant(id=f"synthetic-{i:02d}", splits=others + tests[: 3 + i % 4]) for i in range(SUITES)]


def synthetic_split(rng: random.Random, split: str, size: int) -> SplitResult:
    """Scores and predictions of one split, shaped like a transduction suite's."""
    ids = [f"{split}-{i:05d}" for i in range(size)]
    targets = [[rng.choice(VOCABULARY) for _ in range(rng.randint(2, 8))] for _ in range(size)]
    skill = rng.random()
    predictions = [[t if rng.random() < skill else rng.choice(VOCABULARY) for t in target] for target in targets]
    correct: list[bool | None] = [p == t for p, t in zip(predictions, targets, strict=True)]
    tokens = sum(len(t) for t in targets)
    hits = sum(
        p == g for pred, target in zip(predictions, targets, strict=True) for p, g in zip(pred, target, strict=False)
    )
    lengths: dict[int, list[bool]] = {}
    for target, ok in zip(targets, correct, strict=True):
        lengths.setdefault(min(len(target), 5), []).append(bool(ok))
    scores = [
        Score("sequence_accuracy", sum(map(bool, correct)) / size, size, proportion=True),
        Score("final_target_accuracy", rng.random(), size),
        Score("token_accuracy", hits / tokens, tokens, proportion=True),
        *(
            Score("sequence_accuracy", sum(v) / len(v), len(v), "length", str(k), proportion=True)
            for k, v in sorted(lengths.items())
        ),
    ]
    return SplitScores(scores=scores, correct=correct), ids, predictions


def write_synthetic_store(path: Path, runs: int, pool_size: int = POOL) -> tuple[int, float]:
    """Write `runs` finished runs, each split drawn from `pool_size` results; return (runs written, seconds)."""
    specs = synthetic_specs()
    models = math.ceil(runs / (SUITES * SEEDS))
    rng = random.Random(0)
    names = [split.name for split in registry.suite("lookup-tables").spec.splits_with_role("test")]
    # generating examples would take longer than storing them: each run draws its splits from a pool
    pool = {name: [synthetic_split(rng, name, rng.randint(200, 500)) for _ in range(pool_size)] for name in names}
    started = time.perf_counter()
    written = 0
    with Store(path) as store:
        for spec in specs:
            suite_hash = hashlib.sha256(spec.id.encode()).hexdigest()
            store.record_suite(spec, suite_hash)
            for model in range(models):
                for seed in range(SEEDS):
                    if written == runs:
                        break
                    claim = store.claim_run(
                        {
                            "suite": spec.id, "version": spec.version, "suite_hash": suite_hash,
                            "model": f"model-{model:02d}", "model_spec": f'{{"name": "model-{model:02d}", "params": {{}}}}',
                            "model_hash": f"{model:064x}", "config_hash": None, "comparable": model != 0, "seed": seed,
                            "draw": seed % spec.n_draws, "harness_version": __version__, "git_commit": None,
                            "environment": ENVIRONMENT,
                        }
                    )  # fmt: skip
                    results = {split.name: rng.choice(pool[split.name]) for split in spec.splits_with_role("test")}
                    store.finish_run(claim, results, fit_seconds=1.0, predict_seconds=0.1)
                    written += 1
    return written, time.perf_counter() - started


def time_reports(store: Path, out: Path, repeats: int, trees: list[Path | None]) -> list[float]:
    """Best wall time of `structbench report` over `repeats` rounds (a fresh process each), for each
    source tree of `trees` (its `src` folder put first on PYTHONPATH; None: the installed structbench),
    each tree once per round, so that a change in the machine's speed reaches every tree alike. The
    site of the last report (the last tree's) is left in `out`."""
    times: list[list[float]] = [[] for _ in trees]
    for _ in range(repeats):
        for tree, measured in zip(trees, times, strict=True):
            environment = dict(os.environ)
            if tree is not None:
                environment["PYTHONPATH"] = os.pathsep.join(filter(None, [str(tree), os.environ.get("PYTHONPATH")]))
            shutil.rmtree(out, ignore_errors=True)  # a new folder each time: nothing linked from a site before
            started = time.perf_counter()
            subprocess.run(
                [sys.executable, "-m", "structbench.cli", "report", "--store", str(store), "--out", str(out)],
                check=True,
                stdout=subprocess.DEVNULL,
                env=environment,
            )
            measured.append(time.perf_counter() - started)
    return [min(measured) for measured in times]


class Capturing(Store):
    """A v2 store that also keeps what the runner hands `finish_run`, to write the same run in v1.

    It forwards every other argument untouched, so that it follows `Store`'s signatures as they grow."""

    def __init__(self, path: Path) -> None:
        super().__init__(path)
        self.captured: list[tuple[dict[str, Any], Mapping[str, SplitResult]]] = []
        self._fields: dict[int, dict[str, Any]] = {}

    def claim_run(self, fields: Mapping[str, Any], **options: Any) -> RunClaim:
        claim = super().claim_run(fields, **options)
        self._fields[claim.run_id] = dict(fields)
        return claim

    def finish_run(self, claim: RunClaim, results: Mapping[str, SplitResult], *args: Any, **options: Any) -> None:
        super().finish_run(claim, results, *args, **options)
        self.captured.append((self._fields[claim.run_id], results))


def bytes_per_run(folder: Path, seeds: int) -> tuple[float, float]:
    """Marginal store bytes per lookup-tables `random` run: (v2, v1), the same runs in both layouts."""
    v2_path, v1_path = folder / "v2.sqlite", folder / "v1.sqlite"
    sizes_v2, sizes_v1 = [], []
    store = Capturing(v2_path)  # not `with Capturing(...) as store`: Store.__enter__ is typed as a Store
    with store:
        runner = Runner(store, progress=False)
        runner.log = lambda message: None
        v1 = create_v1_store(v1_path)
        try:
            for seed in range(seeds):
                runner.evaluate("lookup-tables", ModelSpec(name="random"), [seed])
                fields, results = store.captured[-1]
                write_v1_run(v1, fields, results)
                # checkpoint, so that the file (not the write-ahead log) holds every committed page
                store._db.execute("PRAGMA wal_checkpoint(TRUNCATE)")
                v1.execute("PRAGMA wal_checkpoint(TRUNCATE)")
                sizes_v2.append(v2_path.stat().st_size)
                sizes_v1.append(v1_path.stat().st_size)
        finally:
            v1.close()
    return (sizes_v2[-1] - sizes_v2[0]) / (seeds - 1), (sizes_v1[-1] - sizes_v1[0]) / (seeds - 1)


def synthetic_store(folder: Path, runs: int, pool_size: int) -> tuple[Path, float | None]:
    """The synthetic store of `runs` runs in `folder` (written now, or kept from an earlier call with
    `--stores`) and the seconds writing it took (None where it was kept)."""
    path = folder / f"synthetic-{runs}-pool{pool_size}.sqlite"
    if path.is_file():
        return path, None
    partial = path.with_suffix(".partial")
    partial.unlink(missing_ok=True)
    written, seconds = write_synthetic_store(partial, runs, pool_size)
    assert written == runs
    partial.rename(path)
    return path, seconds


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument(
        "--runs", type=int, nargs="+", default=[10_000], help="runs in the synthetic store (several: a curve)"
    )
    parser.add_argument("--seeds", type=int, default=11, help="real lookup-tables runs per layout (at least 2)")
    parser.add_argument("--repeats", type=int, default=1, help="report timings (best is printed)")
    parser.add_argument("--stores", type=Path, help="keep the synthetic stores in this folder and reuse them")
    parser.add_argument(
        "--before", type=Path, help="also time the report of this source tree (its src folder), in rounds"
    )
    parser.add_argument("--smoke", action="store_true", help="tiny sizes, the same code: a few seconds")
    args = parser.parse_args()
    if args.smoke:
        args.runs, args.seeds, args.repeats = [SMOKE_RUNS], SMOKE_SEEDS, 1
    trees: list[Path | None] = [None] if args.before is None else [args.before.resolve(), None]
    with tempfile.TemporaryDirectory() as folder_name:
        folder = Path(folder_name)
        for runs in args.runs:
            store, write_s = synthetic_store(args.stores or folder, runs, SMOKE_POOL if args.smoke else POOL)
            size = store.stat().st_size
            *before, report_s = time_reports(store, folder / "site", args.repeats, trees)
            print(f"{'store runs':<24} {runs:>10}")
            print(f"{'store MB':<24} {size / 1e6:>10.1f}  ({size / runs:,.0f} bytes/run)")
            if write_s is not None:
                print(f"{'write s':<24} {write_s:>10.1f}  ({1e3 * write_s / runs:.2f} ms/run)")
            for seconds in before:
                print(f"{'report wall s, before':<24} {seconds:>10.1f}  ({1e3 * seconds / runs:.2f} ms/run)")
            print(f"{'report wall s':<24} {report_s:>10.1f}  ({1e3 * report_s / runs:.2f} ms/run)")
            for seconds in before:
                print(f"{'before / now':<24} {seconds / report_s:>10.2f}")
            site = [path for path in (folder / "site").rglob("*") if path.is_file()]
            print(f"{'site MB':<24} {sum(p.stat().st_size for p in site) / 1e6:>10.1f}  ({len(site)} files)")
            print()
        v2, v1 = bytes_per_run(folder, max(2, args.seeds))
        print(f"{'lookup-tables random run':<24} {'v1 bytes':>10} {'v2 bytes':>10} {'v2 / v1':>8}")
        print(f"{'(marginal, per seed)':<24} {v1:>10,.0f} {v2:>10,.0f} {v2 / v1:>8.3f}")


if __name__ == "__main__":
    main()
