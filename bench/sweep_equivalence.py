"""A sweep on each executor against serial `structbench run` calls: wall time, and every run compared.

For a grid (default docs/examples/sweep-tiny-neural.yaml: 4 suites x 2 tiny neural baselines x
5 seeds = 40 runs), after building its suites once:

1. serial: one `structbench run --suite S --model M --set ... --seeds ...` per suite x model
   configuration, one after another (how the sweep was made before `structbench sweep`);
2. `structbench sweep GRID --executor E --workers N` for each executor asked for (local, ray).

Each mode has a store and a STRUCTBENCH_HOME of its own (the built suites linked in), so that no
mode reloads another's checkpoints: every run is trained. Every process runs torch on one thread
(OMP_NUM_THREADS=1). Then every run (suite, version, data hash, model hash, seed) is compared
with its serial twin: status, every score (whole splits and conditions) and the stored prediction
blocks, byte for byte. Prints one row per mode: wall seconds, speed-up over serial, the highest
1-minute load average seen at the end of its commands (on a shared machine other jobs slow some
modes more than others), runs done, runs that differ from serial, the largest score difference, and the store's bytes per
run (its file, schema and suite specs included, over its runs).

    STRUCTBENCH_SOURCE_DIR=/path/to/data python bench/sweep_equivalence.py [--grid G] [--workers 2]
        [--executors local,ray] [--smoke]

`--smoke` runs the same comparison on bench/sweep-smoke.yaml (4 runs of 0.1 s) with the local
executor only (unless `--executors` is given), in seconds.
"""

from __future__ import annotations

import argparse
import json
import os
import sqlite3
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from tabulate import tabulate

from structbench.sweep.grid import expand, load_grid

REPOSITORY = Path(__file__).resolve().parents[1]
SMOKE_GRID = REPOSITORY / "bench" / "sweep-smoke.yaml"
Runs = dict[tuple[str, str, str, str, int], tuple[str, dict[tuple[str, str, str, str], float | None], dict[str, bytes]]]


def stored(path: Path) -> Runs:
    """Every run of a store by its key: status, scores and prediction blocks."""
    db = sqlite3.connect(path)
    runs: Runs = {}
    try:
        for run_id, suite, version, suite_hash, model_hash, seed, status in db.execute(
            "SELECT id, suite, version, suite_hash, model_hash, seed, status FROM runs"
        ):
            scores = {
                (split, metric, breakdown, level): value
                for split, metric, breakdown, level, value in db.execute(
                    "SELECT split, metric, breakdown, level, value FROM scores WHERE run_id=?", (run_id,)
                )
            }
            blocks = dict(db.execute("SELECT split, block FROM predictions WHERE run_id=?", (run_id,)).fetchall())
            runs[(suite, version, suite_hash, model_hash, int(seed))] = (status, scores, blocks)
    finally:
        db.close()
    return runs


def compare(serial: Runs, other: Runs) -> tuple[int, float]:
    """(runs that differ from their serial twin or are missing, largest absolute score difference)."""
    differing, largest = 0, 0.0
    for key, (status, scores, blocks) in serial.items():
        if key not in other:
            differing += 1
            continue
        their_status, their_scores, their_blocks = other[key]
        if (their_status, their_blocks) != (status, blocks) or their_scores.keys() != scores.keys():
            differing += 1
            continue
        gaps = [abs((a or 0.0) - (their_scores[name] or 0.0)) for name, a in scores.items()]
        largest = max([largest, *gaps])
        differing += any(their_scores[name] != value for name, value in scores.items())
    return differing + len(set(other) - set(serial)), largest


def home(base: Path, name: str, built: Path) -> dict[str, str]:
    """An environment with a STRUCTBENCH_HOME of its own that links the built suites."""
    folder = base / name
    folder.mkdir()
    (folder / "suites").symlink_to(built / "suites", target_is_directory=True)
    return {**os.environ, "STRUCTBENCH_HOME": str(folder), "OMP_NUM_THREADS": "1"}


LOADS: dict[str, list[float]] = {}
"""mode -> the 1-minute load averages seen at the end of each of its commands (the machine is shared)."""


def structbench(*args: str, environment: dict[str, str], mode: str = "") -> float:
    """Run one `structbench` command to its end; its wall seconds."""
    try:
        return _timed(args, environment)
    finally:
        LOADS.setdefault(mode, []).append(os.getloadavg()[0])


def _timed(args: tuple[str, ...], environment: dict[str, str]) -> float:
    started = time.perf_counter()
    done = subprocess.run(
        [sys.executable, "-m", "structbench.cli", *args],
        cwd=REPOSITORY,
        env=environment,
        capture_output=True,
        text=True,
    )
    if done.returncode not in (0, 1):
        sys.exit(f"structbench {' '.join(args)} failed:\n{done.stderr[-3000:]}")
    return time.perf_counter() - started


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--grid", type=Path, default=REPOSITORY / "docs" / "examples" / "sweep-tiny-neural.yaml")
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--executors", help="comma list of local, ray (default: local,ray; --smoke: local)")
    parser.add_argument("--smoke", action="store_true", help=f"the grid {SMOKE_GRID.name}: seconds")
    args = parser.parse_args()
    if args.smoke:
        args.grid = SMOKE_GRID
    if args.executors is None:
        args.executors = "local" if args.smoke else "local,ray"
    grid = load_grid(args.grid)
    cells: dict[tuple[str, str], tuple[str, dict[str, Any], list[int]]] = {}
    for run in expand(grid):
        key = (run.suite, run.model.model_dump_json())
        cells.setdefault(key, (run.suite, {"name": run.model.name, **run.model.params}, []))[2].append(run.seed)
    with tempfile.TemporaryDirectory(prefix="sweep-equivalence-") as folder:
        base = Path(folder)
        built = base / "built"
        built.mkdir()
        suites = sorted({suite for suite, _, _ in cells.values()})
        structbench("build", *suites, environment={**os.environ, "STRUCTBENCH_HOME": str(built)})
        timings: dict[str, float] = {}
        environment = home(base, "serial", built)
        started = time.perf_counter()
        for suite, settings, seeds in cells.values():
            name = settings.pop("name")
            sets = [
                f"{key}={value if isinstance(value, str) else json.dumps(value)}" for key, value in settings.items()
            ]
            options = [item for pair in (("--set", s) for s in sets) for item in pair]
            seed_list = ",".join(map(str, seeds))
            store = str(base / "serial.sqlite")
            structbench(
                "run", "--suite", suite, "--model", name, *options, "--seeds", seed_list, "--store", store,
                "--no-progress", environment=environment, mode="serial",
            )  # fmt: skip
        timings["serial"] = time.perf_counter() - started
        for executor in [e.strip() for e in args.executors.split(",") if e.strip()]:
            store = str(base / f"{executor}.sqlite")
            timings[executor] = structbench(
                "sweep", str(args.grid), "--executor", executor, "--workers", str(args.workers), "--store", store,
                "--no-progress", environment=home(base, executor, built), mode=executor,
            )  # fmt: skip
        serial = stored(base / "serial.sqlite")
        rows = []
        for mode, seconds in timings.items():
            runs = stored(base / f"{mode}.sqlite")
            differing, largest = compare(serial, runs)
            finished = sum(status == "done" for status, _, _ in runs.values())
            workers = "1" if mode == "serial" else str(args.workers)
            speedup = f"{timings['serial'] / seconds:.2f}x"
            load = f"{max(LOADS.get(mode, [0.0])):.1f}"
            size = f"{(base / f'{mode}.sqlite').stat().st_size / max(1, len(runs)):,.0f}"
            row = [mode, workers, f"{seconds:.1f}", speedup, load, f"{finished}/{len(runs)}", differing]
            rows.append([*row, f"{largest:g}", size])
    print(f"{args.grid}: {len(serial)} runs ({len(cells)} suite x model cells), OMP_NUM_THREADS=1")
    headers = ["mode", "workers", "wall s", "speed-up", "load", "done", "differing from serial", "largest diff"]
    headers.append("store bytes/run")
    print(tabulate(rows, headers=headers, disable_numparse=True))


if __name__ == "__main__":
    main()
