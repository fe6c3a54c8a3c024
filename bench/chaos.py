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

3. Hostile models (`tests.support.sweep_models:Hostile`) under `run` and under a sweep on the local
   pool and on Ray (`--timeout 5`, seeds 0-1, misbehaving on seed 0): one that hangs, raises, exits
   with `os._exit`, dies of SIGSEGV, prints to stdout, or forks a child that would outlive it. Each
   command runs in a session of its own; per case: how seed 0 and seed 1 ended (seed 1 must be done,
   seed 0 failed but for the printing and forking ones), whether `--json` parsed, the processes of
   its session still alive 5 s after it returned (orphans: the forked child, a worker) and the
   command's wall time (a hang must fail within its time-out).
   Then a model that leaves a daemon on every fit (`tests.support.daemons:Daemonising`: it forks
   twice and calls `setsid`, so that its daemon is in no session of the command's) under `run`,
   `run --in-process` and a sweep on each executor: both seeds must be done and no daemon alive
   5 s after the command returned (orphans counts them, with the session's); and under
   `run --max-memory 300` with a 600 MB daemon: both seeds must fail on the limit (issue 45).

4. Hostile bundles of runs (issue 45). Two `structbench reference export GRID --store S --bundle B`
   at once into one bundle, from stores holding disjoint seeds of one grid, `--repetitions` times:
   runs expected in the bundle against runs found, and crashes. Then `structbench claims` on a bundle
   with one hostile entry each: a tampered field (status `weird`), a count of 1e400, a run file
   nested 200,000 deep, a FIFO and a link to /dev/zero named `*.json`, a gzip bomb of zeros
   (`bomb`: 10 GiB in 10 MB), a run whose `suite` points outside the bundle. Per case: the exit
   status (0: the rest of the bundle is read), whether stderr names the entry left out, a traceback,
   the seconds (a hang is killed at `BUNDLE_DEADLINE`) and the command's peak resident memory.

    STRUCTBENCH_SOURCE_DIR=/path/to/data python bench/chaos.py [--trials 10] [--kills 2] [--repetitions 10]
        [--executor local|ray] [--smoke] [--hostile-only] [--bundle-only]

`--smoke` runs each kind of trial once, smaller: two kills (the second also of a worker) of a 4-run
sweep (seeds 0-1), two `run` processes (seed 0) instead of four per concurrency trial, of the
hostile models only the segfaulting, the forking and the daemonising one, under `run`, and of the
hostile bundles one concurrent export of 8 runs and the FIFO, the tampered field and a 1 GiB bomb.
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import os
import random
import shutil
import signal
import sqlite3
import subprocess
import sys
import tempfile
import threading
import time
import zlib
from collections.abc import Callable
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
        (suite, int(seed), int(pid))
        for suite, _, seed, pid, _ in (line.split() for line in log.read_text().splitlines())
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
        time.sleep(rng.uniform(0.5, 1.0 + remaining * 0.15))  # start-up, then a moment in the rest of the work
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


HOSTILE = "tests.support.sweep_models:Hostile"
BEHAVIOURS = ("hang", "crash", "exit", "segfault", "print", "fork")
HOSTILE_TIMEOUT = 5
WELL_BEHAVED = ("print", "fork")
"""Behaviours whose seed 0 still finishes: their harm is to the harness's output and processes."""


def session_members(session: int) -> list[int]:
    """Live processes of a session (Linux `/proc`), but its leader."""
    members = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit() or int(entry.name) == session:
            continue
        try:
            fields = (entry / "stat").read_text().rsplit(")", 1)[-1].split()
        except OSError:
            continue
        if fields[0] != "Z" and fields[3] == str(session):
            members.append(int(entry.name))
    return members


def hostile_case(folder: Path, how: str, behaviour: str) -> list[object]:
    """One hostile model under `run`, or a sweep on the local pool or Ray: a row of part 3."""
    store = folder / "results.sqlite"
    environment = {**os.environ, "STRUCTBENCH_TEST_PID_FILE": str(folder / "child.pid"), "OMP_NUM_THREADS": "1"}
    base = [sys.executable, "-m", "structbench.cli"]
    common = ["--store", str(store), "--timeout", str(HOSTILE_TIMEOUT), "--json", "--no-progress"]
    if how == "run":
        model = [HOSTILE, "--set", f"behaviour={behaviour}"]
        command = [*base, "run", "--suite", "lookup-tables", "--model", *model, "--seeds", "0,1", *common]
    else:
        grid = folder / "grid.yaml"
        grid.write_text(f"suites: [lookup-tables]\nmodels: [{{name: {HOSTILE}, set: {{behaviour: {behaviour}}}}}]\n"
                        "seeds: [0, 1]\n")  # fmt: skip
        command = [*base, "sweep", str(grid), *common, "--workers", "1", "--executor", how.split()[-1]]
    started = time.monotonic()
    process = subprocess.Popen(
        command, cwd=REPOSITORY, env=environment, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
        start_new_session=True,
    )  # fmt: skip
    out, err = process.communicate(timeout=600)
    seconds = time.monotonic() - started
    time.sleep(5)
    orphans = session_members(process.pid)
    for pid in orphans:
        os.kill(pid, signal.SIGKILL)
    try:
        parsed = json.loads(out)
        record = parsed if how == "run" else parsed["records"][0]
        status = record["status"]
        seed0, seed1, parses = status.get("0", "?"), status.get("1", "?"), "yes"
    except (ValueError, KeyError, IndexError):
        seed0 = seed1 = "?"
        parses = "no"
    expected0 = "done" if behaviour in WELL_BEHAVED else "failed"
    crashed = process.returncode not in (0, 1) or "Traceback" in err
    if crashed:
        print(err[-2000:], file=sys.stderr)
    ok = seed0 == expected0 and seed1 == "done" and parses == "yes" and not orphans and not crashed
    return [how, behaviour, seed0, seed1, parses, len(orphans), "yes" if crashed else "no", f"{seconds:.1f}",
            "ok" if ok else "WRONG"]  # fmt: skip


DAEMONISING = "tests.support.daemons:Daemonising"
DAEMON_PIDS = "STRUCTBENCH_TEST_DAEMON_PIDS"
DAEMON_MEMORY = ("600", "300")
"""The daemon's megabytes, and the `--max-memory` of the run that must fail on it."""


def daemon_case(folder: Path, how: str) -> list[object]:
    """The daemonising model under `run`, `run --in-process`, `run --max-memory` or a sweep: a row of part 3."""
    store, pids = folder / "results.sqlite", folder / "daemons.pids"
    environment = {**os.environ, DAEMON_PIDS: str(pids), "OMP_NUM_THREADS": "1"}
    base = [sys.executable, "-m", "structbench.cli"]
    common = ["--store", str(store), "--json", "--no-progress"]
    megabytes, limit = DAEMON_MEMORY
    # the time-out only ends a supervision that failed (the model waits ten minutes on a held daemon)
    options = {"run": ["--timeout", "120"], "run --in-process": ["--in-process"]}.get(
        how, ["--timeout", "120", "--max-memory", limit]
    )
    if how.startswith("run"):
        memory = ["--set", f"megabytes={megabytes}", "--set", "settle=600"] if "--max-memory" in options else []
        command = [*base, "run", "--suite", "lookup-tables", "--model", DAEMONISING, *memory, "--seeds", "0,1",
                   *common, *options]  # fmt: skip
    else:
        grid = folder / "grid.yaml"
        grid.write_text(f"suites: [lookup-tables]\nmodels: [{DAEMONISING}]\nseeds: [0, 1]\n")
        command = [
            *base,
            "sweep",
            str(grid),
            *common,
            "--timeout",
            "120",
            "--workers",
            "2",
            "--executor",
            how.split()[-1],
        ]
    started = time.monotonic()
    # output into files, not pipes: a daemon that kept the command's stdout open would hold a pipe's reader
    # until the daemon's end, and the command's return is what is measured
    with (folder / "out").open("w+") as out_file, (folder / "err").open("w+") as err_file:
        process = subprocess.Popen(command, cwd=REPOSITORY, env=environment, stdout=out_file, stderr=err_file,
                                   text=True, start_new_session=True)  # fmt: skip
        try:
            process.wait(timeout=600)
        except subprocess.TimeoutExpired:
            os.killpg(process.pid, signal.SIGKILL)
            process.wait()
        out_file.seek(0)
        err_file.seek(0)
        out, err = out_file.read(), err_file.read()
    seconds = time.monotonic() - started
    time.sleep(5)
    daemons = [int(pid) for pid in pids.read_text().split()] if pids.is_file() else []
    orphans = [pid for pid in daemons if alive(pid)] + session_members(process.pid)
    for pid in orphans:
        os.kill(pid, signal.SIGKILL)
    try:
        parsed = json.loads(out)
        record = parsed if how.startswith("run") else parsed["records"][0]
        seed0, seed1, parses = record["status"].get("0", "?"), record["status"].get("1", "?"), "yes"
    except (ValueError, KeyError, IndexError):
        seed0 = seed1 = "?"
        parses = "no"
    expected = "failed" if "--max-memory" in how else "done"
    crashed = process.returncode not in (0, 1) or "Traceback" in err
    if crashed:
        print(err[-2000:], file=sys.stderr)
    ok = seed0 == seed1 == expected and parses == "yes" and not orphans and not crashed and len(daemons) == 2
    model = f"daemon {megabytes} MB" if "--max-memory" in how else "daemon"
    return [how, model, seed0, seed1, parses, len(orphans), "yes" if crashed else "no", f"{seconds:.1f}",
            "ok" if ok else "WRONG"]  # fmt: skip


def hostile_table(executors: list[str], behaviours: tuple[str, ...] = BEHAVIOURS, *, daemons: bool = True) -> str:
    """Part 3 (see the module docstring), as a table; `daemons`: with every daemonising case, else
    only the one under `run`."""
    rows = []
    for how in ["run", *(f"sweep {executor}" for executor in executors)]:
        for behaviour in behaviours:
            with tempfile.TemporaryDirectory(prefix="chaos-hostile-") as folder:
                rows.append(hostile_case(Path(folder), how, behaviour))
            print(f"hostile: {rows[-1]}", file=sys.stderr)
    daemon_hows = ["run", "run --in-process", f"run --max-memory {DAEMON_MEMORY[1]}"]
    for how in [*daemon_hows, *(f"sweep {executor}" for executor in executors)] if daemons else ["run"]:
        with tempfile.TemporaryDirectory(prefix="chaos-daemon-") as folder:
            rows.append(daemon_case(Path(folder), how))
        print(f"daemon: {rows[-1]}", file=sys.stderr)
    headers = ["command", "model", "seed 0", "seed 1", "--json parses", "orphans", "crashed", "s", "verdict"]
    return tabulate(rows, headers=headers, disable_numparse=True)


BUNDLE_GRID = "suites: [{suites}]\nmodels: [{models}]\nseeds: [{seeds}]\n"
BUNDLE_SUITES, BUNDLE_MODELS = ["lookup-tables", "miniscan"], ["random", "copy", "oracle"]
SMOKE_BUNDLE_SUITES, SMOKE_BUNDLE_MODELS = ["lookup-tables"], ["random", "copy"]
BUNDLE_DEADLINE = 120
"""Seconds after which a `claims` on a hostile bundle counts as hung, and is killed."""


def bomb(path: Path, gibibytes: int) -> None:
    """A gzip file of `gibibytes` GiB of zeros in about a thousandth of that, one member, made without
    compressing them all: 16 MiB of zeros deflate to the same bytes after each full flush."""
    chunk = 1 << 24
    deflate = zlib.compressobj(9, zlib.DEFLATED, -15)
    block = deflate.compress(bytes(chunk)) + deflate.flush(zlib.Z_FULL_FLUSH)
    assert deflate.compress(bytes(chunk)) + deflate.flush(zlib.Z_FULL_FLUSH) == block
    copies = gibibytes * (1 << 30) // chunk
    crc = 0
    zeros = bytes(chunk)
    for _ in range(copies):
        crc = zlib.crc32(zeros, crc)
    with path.open("wb") as file:
        file.write(b"\x1f\x8b\x08\x00\x00\x00\x00\x00\x00\x03")  # gzip, no name, no time stamp
        for _ in range(copies):
            file.write(block)
        file.write(deflate.flush())
        file.write(crc.to_bytes(4, "little") + (copies * chunk % (1 << 32)).to_bytes(4, "little"))


def structbench(argv: list[str], environment: dict[str, str], deadline: float = 600) -> tuple[str, str, float, float]:
    """Run `structbench ARGV` in a session of its own: (exit status, or `hung` where it was killed at
    `deadline` seconds; stderr; seconds; peak resident MB, from `wait4`)."""
    started = time.monotonic()
    process = subprocess.Popen([sys.executable, "-m", "structbench.cli", *argv], cwd=REPOSITORY, env=environment,
                               stdout=DEVNULL, stderr=subprocess.PIPE, text=True, start_new_session=True)  # fmt: skip
    killed = threading.Event()

    def kill() -> None:
        killed.set()
        os.killpg(process.pid, signal.SIGKILL)

    timer = threading.Timer(deadline, kill)
    timer.start()
    assert process.stderr is not None
    err = process.stderr.read()  # until the command ends (or is killed)
    _, wait_status, usage = os.wait4(process.pid, 0)
    timer.cancel()
    process.returncode = os.waitstatus_to_exitcode(wait_status)
    status = "hung" if killed.is_set() else str(process.returncode)
    return status, err, time.monotonic() - started, usage.ru_maxrss / 1024


def concurrent_export(folder: Path, suites: list[str], models: list[str], seeds: int) -> tuple[int, int, int]:
    """Two `reference export` at once into one bundle, from stores holding seeds [0, seeds/2) and
    [seeds/2, seeds) of one grid: (runs expected, runs found in the bundle, crashes)."""
    environment = {**os.environ, "STRUCTBENCH_HOME": str(folder / "home"), "OMP_NUM_THREADS": "1"}
    grid = folder / "grid.yaml"
    grid.write_text(BUNDLE_GRID.format(suites=", ".join(suites), models=", ".join(models),
                                       seeds=", ".join(map(str, range(seeds)))))  # fmt: skip
    half = seeds // 2
    stores = [folder / "first.sqlite", folder / "second.sqlite"]
    for store, part in zip(stores, (range(half), range(half, seeds)), strict=True):
        if not store.exists():
            own = folder / f"{store.stem}.yaml"
            own.write_text(BUNDLE_GRID.format(suites=", ".join(suites), models=", ".join(models),
                                              seeds=", ".join(map(str, part))))  # fmt: skip
            subprocess.run([sys.executable, "-m", "structbench.cli", "sweep", str(own), "--store", str(store),
                            "--no-progress", "--workers", "1"], cwd=REPOSITORY, env=environment, check=True,
                           stdout=DEVNULL, stderr=DEVNULL)  # fmt: skip
    bundle = folder / "bundle"
    shutil.rmtree(bundle, ignore_errors=True)
    command = [sys.executable, "-m", "structbench.cli", "reference", "export", str(grid), "--bundle", str(bundle)]
    processes = [subprocess.Popen([*command, "--store", str(store)], cwd=REPOSITORY, env=environment, stdout=DEVNULL,
                                  stderr=subprocess.PIPE, text=True) for store in stores]  # fmt: skip
    crashes = 0
    for process in processes:
        _, err = process.communicate(timeout=600)
        if process.returncode != 0 or "Traceback" in err:
            crashes += 1
            print(err[-2000:], file=sys.stderr)
    found = 0
    for path in (bundle / "runs").glob("*/*.json"):
        found += len(json.loads(path.read_text())["runs"])
    return len(suites) * len(models) * seeds, found, crashes


def _edit(bundle: Path, old: str, new: str) -> str:
    path = next((bundle / "runs").glob("*/random-*.json"))
    path.write_text(path.read_text().replace(old, new, 1))
    return str(path)


def _deep(bundle: Path) -> str:
    path = next((bundle / "runs").glob("*/random-*.json"))
    path.write_bytes(b"[" * 200_000 + b"]" * 200_000)
    return str(path)


def _fifo(bundle: Path) -> str:
    path = next((bundle / "runs").glob("*/")) / "x.json"
    os.mkfifo(path)
    return str(path)


def _zero_link(bundle: Path) -> str:
    path = next((bundle / "runs").glob("*/")) / "zero.json"
    path.symlink_to("/dev/zero")
    return str(path)


def _bomb(gibibytes: int) -> Callable[[Path], str]:
    def tamper(bundle: Path) -> str:
        path = next((bundle / "predictions").glob("*/random-*/seed0.json.gz"))
        bomb(path, gibibytes)
        return str(path)

    return tamper


HOSTILE_BUNDLES: dict[str, Callable[[Path], str]] = {
    "a tampered field (status weird)": lambda b: _edit(b, '"status": "done"', '"status": "weird"'),
    "a count of 1e400": lambda b: _edit(b, ", 64, true]", ", 1e400, true]"),
    "a run file nested 200,000 deep": _deep,
    "a FIFO named *.json": _fifo,
    "a link to /dev/zero named *.json": _zero_link,
    "a run's suite ../../outside": lambda b: _edit(b, '"suite": "lookup-tables"', '"suite": "../../outside"'),
    "a gzip bomb: 10 GiB of zeros in 10 MB": _bomb(10),
    "a gzip bomb: 1 GiB of zeros in 1 MB": _bomb(1),
}
SMOKE_BUNDLES = ("a tampered field (status weird)", "a FIFO named *.json", "a gzip bomb: 1 GiB of zeros in 1 MB")


def hostile_bundle(folder: Path, clean: Path, name: str) -> list[object]:
    """`claims` on a copy of the bundle `clean` with one hostile entry: a row of part 4's second table."""
    bundle = folder / "bundle"
    shutil.copytree(clean, bundle)
    entry = HOSTILE_BUNDLES[name](bundle)
    environment = {**os.environ, "STRUCTBENCH_HOME": str(folder / "home"), "STRUCTBENCH_REFERENCE": str(bundle)}
    status, err, seconds, peak = structbench(["claims", "--store", str(folder / "none.sqlite")], environment,
                                             BUNDLE_DEADLINE)  # fmt: skip
    named = entry in err and "left out" in err
    traceback = "Traceback" in err
    if traceback or status != "0":
        print(err[-2000:], file=sys.stderr)
    ok = status == "0" and named and not traceback
    return [name, status, "yes" if named else "no", "yes" if traceback else "no", f"{seconds:.1f}", f"{peak:.0f}",
            "ok" if ok else "WRONG"]  # fmt: skip


def bundle_tables(repetitions: int, smoke: bool) -> str:
    """Part 4 (see the module docstring), as two tables."""
    suites, models = (SMOKE_BUNDLE_SUITES, SMOKE_BUNDLE_MODELS) if smoke else (BUNDLE_SUITES, BUNDLE_MODELS)
    seeds = 4 if smoke else 10
    with tempfile.TemporaryDirectory(prefix="chaos-bundle-") as name:
        folder = Path(name)
        expected = found = crashes = 0
        started = time.monotonic()
        for repetition in range(repetitions):
            e, f, c = concurrent_export(folder, suites, models, seeds)
            expected, found, crashes = expected + e, found + f, crashes + c
            print(f"concurrent export {repetition + 1}/{repetitions}: {f} of {e} runs in the bundle", file=sys.stderr)
        export = [[f"two `reference export` at once ({len(suites) * len(models) * seeds} runs)", repetitions, expected,
                   found, expected - found, crashes, f"{time.monotonic() - started:.0f}"]]  # fmt: skip
        clean = folder / "bundle"
        rows = []
        for case in SMOKE_BUNDLES if smoke else HOSTILE_BUNDLES:
            with tempfile.TemporaryDirectory(prefix="chaos-hostile-bundle-") as inner:
                rows.append(hostile_bundle(Path(inner), clean, case))
            print(f"hostile bundle: {rows[-1]}", file=sys.stderr)
    first = tabulate(export, headers=["bundle trial", "trials", "expected", "found", "lost", "crashes", "s"],
                     disable_numparse=True)  # fmt: skip
    headers = ["`claims` on a bundle with", "exit", "entry named", "traceback", "s", "peak MB", "verdict"]
    return first + "\n\n" + tabulate(rows, headers=headers, disable_numparse=True)


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
    parser.add_argument("--hostile-only", action="store_true", help="only part 3, the hostile models")
    parser.add_argument("--bundle-only", action="store_true", help="only part 4, the hostile bundles")
    args = parser.parse_args()
    hostile_executors = ["local", "ray"] if importlib.util.find_spec("ray") else ["local"]
    if args.hostile_only:
        print(hostile_table(hostile_executors))
        return
    if args.bundle_only:
        print(bundle_tables(1 if args.smoke else args.repetitions, args.smoke))
        return
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
    print()
    print(hostile_table([], ("segfault", "fork"), daemons=False) if args.smoke else hostile_table(hostile_executors))
    print()
    print(bundle_tables(args.repetitions, args.smoke))


if __name__ == "__main__":
    main()
