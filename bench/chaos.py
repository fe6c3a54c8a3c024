"""Failure trials of sweeps and concurrent runs, the long versions of tests/sweep/test_sweep.py and
tests/runs/test_concurrent_runs.py. Prints one table: per trial kind, how often it was done and what
was lost, duplicated or recomputed (the goal is 0 everywhere), the store's integrity and crashes.

1. `kill -9` of a sweep's driver at random moments: each trial starts a 30-run sweep
   (`tests.support.sweep_models:SlowCopy`, 0.3 s per fit, on lookup-tables and miniscan, 2 workers),
   kills the driver with SIGKILL `--kills` times at a random moment (uniform over the time the
   sweep still needs), each time also killing one of its workers mid-run first on odd kills (a
   worker that dies is a failed run, redone by the next sweep), restarts it, and lets the last
   one finish. Then:
   - lost: runs of the grid not `done` at the end;
   - duplicated: rows of one run key beyond the first, and runs with other than one predictions
     block per test split;
   - recomputed: runs `done` in the store right after a kill that were fitted again later
     (every fit is logged by the model);
   - orphans: worker processes still alive 5 s after their driver was killed;
   - integrity: `PRAGMA integrity_check` of the store after each trial;
   - crashes: a restarted sweep that ends with a traceback or an exit status other than 0 or 1.
2. Four `structbench run` processes at once on the same cells (random on lookup-tables and
   miniscan, seeds 0-2), in a home where nothing is built (so they also race to build both
   suites first), then four on different cells of one store (random, copy, oracle, majority),
   `--repetitions` times: crashes (non-zero exit or a traceback), lost, duplicated, integrity.

    STRUCTBENCH_SOURCE_DIR=/path/to/data python bench/chaos.py [--trials 10] [--kills 2] [--repetitions 10]
        [--executor local|ray] [--smoke]

`--smoke` runs each kind of trial once, smaller: two kills (the second also of a worker) of a 4-run
sweep (seeds 0-1), and two `run` processes (seed 0) instead of four per concurrency trial.
"""

from __future__ import annotations

import argparse
import os
import random
import signal
import sqlite3
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path
from subprocess import DEVNULL

from tabulate import tabulate

REPOSITORY = Path(__file__).resolve().parents[1]
GRID = """
suites: [lookup-tables, miniscan]
models:
  - name: tests.support.sweep_models:SlowCopy
    set: {{seconds: 0.3}}
seeds: "0-{last}"
"""
TEST_SPLITS = {"lookup-tables": 7, "miniscan": 1}
SEEDS, SMOKE_SEEDS = 15, 2
"""Seeds of the swept grid: it has len(TEST_SPLITS) x seeds runs."""
SMOKE_PROCESSES = 2
"""`run` processes per concurrency trial in smoke mode (4 otherwise)."""
DIFFERENT = ["random", "copy", "oracle", "majority"]
"""The models of the concurrency trial on different cells, one per process."""


@dataclass
class Tally:
    """What one kind of trial came to."""

    trials: int = 0
    kills: int = 0
    worker_kills: int = 0
    missed: int = 0
    """Kills that came after the sweep had finished."""
    lost: int = 0
    duplicated: int = 0
    recomputed: int = 0
    orphans: int = 0
    integrity: list[str] = field(default_factory=list)
    crashes: int = 0
    seconds: float = 0.0


def fits(log: Path) -> list[tuple[str, int, int]]:
    """(suite, seed, pid) of every fit logged so far."""
    if not log.is_file():
        return []
    return [
        (suite, int(seed), int(pid)) for suite, _, seed, pid in (line.split() for line in log.read_text().splitlines())
    ]


def query(store: Path, sql: str) -> list[tuple[object, ...]]:
    db = sqlite3.connect(store, timeout=60)
    try:
        return db.execute(sql).fetchall()
    except sqlite3.OperationalError:  # no schema yet
        return []
    finally:
        db.close()


def done(store: Path) -> dict[tuple[str, int], float]:
    """(suite, seed) -> finished_at of the done runs."""
    rows = query(store, "SELECT suite, seed, finished_at FROM runs WHERE status='done'")
    return {(str(suite), int(str(seed))): float(str(at)) for suite, seed, at in rows}


def children(pid: int) -> list[int]:
    """The child processes of `pid` (Linux), i.e. a local sweep's workers."""
    try:
        return [int(child) for child in Path(f"/proc/{pid}/task/{pid}/children").read_text().split()]
    except OSError:
        return []


def alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    # a zombie is dead for our purpose
    try:
        return Path(f"/proc/{pid}/stat").read_text().split()[2] != "Z"
    except OSError:
        return False


def kill_trial(folder: Path, rng: random.Random, kills: int, executor: str, seeds: int, tally: Tally) -> None:
    """One trial of part 1 (see the module docstring) on a grid of `seeds` seeds per suite."""
    grid, store, log = folder / "grid.yaml", folder / "results.sqlite", folder / "fits.log"
    grid.write_text(GRID.format(last=seeds - 1))
    runs = len(TEST_SPLITS) * seeds
    environment = {**os.environ, "STRUCTBENCH_TEST_FIT_LOG": str(log), "OMP_NUM_THREADS": "1"}
    command = [sys.executable, "-m", "structbench.cli", "sweep", str(grid), "--store", str(store)]
    command += ["--workers", "2", "--executor", executor, "--no-progress"]
    tally.trials += 1
    snapshots: list[tuple[dict[tuple[str, int], float], int]] = []
    for kill in range(kills):
        driver = subprocess.Popen(command, cwd=REPOSITORY, env=environment, stdout=DEVNULL, stderr=DEVNULL)
        remaining = runs - len(done(store))
        time.sleep(rng.uniform(0.5, 2.0 + remaining * 0.25))  # start-up, then a moment in the rest of the work
        if kill % 2 == 1 and (workers := children(driver.pid)) and driver.poll() is None:
            os.kill(rng.choice(workers), signal.SIGKILL)  # a worker dies mid-run: its run fails, to be redone
            tally.worker_kills += 1
            time.sleep(rng.uniform(0.1, 0.6))
        workers = children(driver.pid)
        if driver.poll() is not None:  # it finished before the moment came: no kill to count
            tally.missed += 1
        driver.kill()
        driver.wait()
        tally.kills += 1
        snapshots.append((done(store), len(fits(log))))
        deadline = time.monotonic() + 5
        while any(alive(pid) for pid in workers) and time.monotonic() < deadline:
            time.sleep(0.1)
        for pid in workers:
            if alive(pid):
                tally.orphans += 1
                os.kill(pid, signal.SIGKILL)
    final = subprocess.run(command, cwd=REPOSITORY, env=environment, capture_output=True, text=True, check=False)
    if final.returncode != 0 or "Traceback" in final.stderr:
        tally.crashes += 1
        print(final.stderr[-2000:], file=sys.stderr)
    logged = fits(log)
    recomputed = {
        (suite.split("@")[0], seed)
        for snapshot, fitted in snapshots
        for suite, seed, _ in logged[fitted:]
        if (suite.split("@")[0], seed) in snapshot
    }  # a run done at a kill must never be fitted again, by any later sweep
    tally.recomputed += len(recomputed)
    keys = query(store, "SELECT COUNT(*) FROM runs GROUP BY suite, version, suite_hash, model_hash, seed")
    tally.duplicated += sum(int(str(count)) - 1 for (count,) in keys)
    blocks = query(
        store,
        "SELECT r.suite, COUNT(p.split) FROM runs r LEFT JOIN predictions p ON p.run_id = r.id "
        "WHERE r.status='done' GROUP BY r.id",
    )
    tally.duplicated += sum(int(str(count)) != TEST_SPLITS[str(suite)] for suite, count in blocks)
    tally.lost += runs - len(done(store))
    tally.integrity.append(str(query(store, "PRAGMA integrity_check")[0][0]))


def concurrent_runs(folder: Path, models: list[str], seeds: str) -> tuple[int, int, int, str]:
    """`structbench run` processes at once (one per model in `models`) in an unbuilt home:
    (crashes, lost, duplicated, integrity)."""
    store = folder / "results.sqlite"
    environment = {**os.environ, "STRUCTBENCH_HOME": str(folder / "home"), "OMP_NUM_THREADS": "1"}
    run = [sys.executable, "-m", "structbench.cli", "run", "--suite", "lookup-tables,miniscan"]
    processes = [
        subprocess.Popen(
            [*run, "--model", model, "--seeds", seeds, "--store", str(store), "--no-progress"],
            cwd=REPOSITORY,
            env=environment,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
            text=True,
        )
        for model in models
    ]
    crashes = 0
    for process in processes:
        _, err = process.communicate(timeout=600)
        if process.returncode != 0 or "Traceback" in err:
            crashes += 1
            print(err[-2000:], file=sys.stderr)
    expected = {
        (model, suite, int(seed)) for model in set(models) for suite in TEST_SPLITS for seed in seeds.split(",")
    }
    rows = query(store, "SELECT model, suite, seed, status FROM runs")
    present = {(str(m), str(s), int(str(d))) for m, s, d, status in rows if status in ("done", "n/a")}
    return (
        crashes,
        len(expected - present),
        len(rows) - len({(m, s, d) for m, s, d, _ in rows}),
        str(query(store, "PRAGMA integrity_check")[0][0]),
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--trials", type=int, default=10, help="kill -9 trials (default 10)")
    parser.add_argument(
        "--kills", type=int, default=2, help="driver kills per trial before the last restart (default 2)"
    )
    parser.add_argument("--repetitions", type=int, default=10, help="concurrency repetitions (default 10)")
    parser.add_argument("--executor", choices=("local", "ray"), default="local")
    parser.add_argument("--seed", type=int, default=17, help="of the random kill moments")
    parser.add_argument("--smoke", action="store_true", help="each kind of trial once, small: seconds")
    args = parser.parse_args()
    seeds, processes = (SMOKE_SEEDS, SMOKE_PROCESSES) if args.smoke else (SEEDS, 4)
    same_seeds, different_seeds = ("0", "0") if args.smoke else ("0,1,2", "0,1")
    if args.smoke:  # two kills: the second also kills a worker
        args.trials, args.kills, args.repetitions = 1, 2, 1
    rng = random.Random(args.seed)
    rows = []
    killed = Tally()
    started = time.monotonic()
    for trial in range(args.trials):
        with tempfile.TemporaryDirectory(prefix=f"chaos-kill-{trial}-") as folder:
            kill_trial(Path(folder), rng, args.kills, args.executor, seeds, killed)
        print(f"trial {trial + 1}/{args.trials}: {killed}", file=sys.stderr)
    killed.seconds = time.monotonic() - started
    rows.append(
        [f"kill -9 of a {args.executor} sweep's driver ({len(TEST_SPLITS) * seeds} runs)", killed.trials,
         f"{killed.kills - killed.missed} drivers, {killed.worker_kills} workers", killed.lost, killed.duplicated, killed.recomputed,
         killed.orphans, "ok" if set(killed.integrity) == {"ok"} else ",".join(sorted(set(killed.integrity))),
         killed.crashes, f"{killed.seconds:.0f}"]
    )  # fmt: skip
    for kind, models, run_seeds in (
        (f"{processes} `run` processes, same cells, unbuilt home", ["random"] * processes, same_seeds),
        (f"{processes} `run` processes, different cells, unbuilt home", DIFFERENT[:processes], different_seeds),
    ):
        tally = Tally()
        started = time.monotonic()
        for repetition in range(args.repetitions):
            with tempfile.TemporaryDirectory(prefix=f"chaos-runs-{repetition}-") as folder:
                crashes, lost, duplicated, integrity = concurrent_runs(Path(folder), models, run_seeds)
            tally.trials += 1
            tally.crashes += crashes
            tally.lost += lost
            tally.duplicated += duplicated
            tally.integrity.append(integrity)
            print(f"{kind} {repetition + 1}/{args.repetitions}: {tally}", file=sys.stderr)
        tally.seconds = time.monotonic() - started
        rows.append(
            [kind, tally.trials, "-", tally.lost, tally.duplicated, "-", "-",
             "ok" if set(tally.integrity) == {"ok"} else ",".join(sorted(set(tally.integrity))), tally.crashes,
             f"{tally.seconds:.0f}"]
        )  # fmt: skip
    headers = ["trial", "trials", "kills", "lost", "duplicated", "recomputed", "orphans", "integrity", "crashes", "s"]
    print(tabulate(rows, headers=headers, disable_numparse=True))


if __name__ == "__main__":
    main()
