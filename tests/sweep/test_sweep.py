"""`structbench sweep` on the local process pool: the same runs as `run`, hostile models and dying
workers inside a sweep, and a driver interrupted or killed with SIGKILL, then resumed.

The longer versions (ten random kills, ten repetitions of concurrent processes) are in
bench/chaos.py; these are the fast ones that keep the claims true in every test run.
"""

from __future__ import annotations

import json
import os
import signal
import sqlite3
import subprocess
import sys
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from structbench.cli import main
from structbench.runs.runner import Runner
from structbench.specs import ModelSpec
from structbench.store import Store
from tests.support.helpers import integrity
from tests.support.sweep_models import FIT_LOG, PID_FILE

REPO = Path(__file__).resolve().parents[2]
StoredRuns = dict[tuple[str, str, str, str, int], tuple[str, list[tuple[Any, ...]], dict[str, Any]]]


def sweep(capsys: pytest.CaptureFixture[str], grid: Path, store: Path, *args: str, code: int = 0) -> dict[str, Any]:
    """Run `structbench sweep` in this process and return its --json summary (and its stderr, as `stderr`)."""
    assert main(["sweep", str(grid), "--store", str(store), "--json", "--no-progress", *args]) == code
    captured = capsys.readouterr()
    summary: dict[str, Any] = json.loads(captured.out)
    return {**summary, "stderr": captured.err}


def sweep_process(grid: Path, store: Path, *args: str) -> subprocess.Popen[str]:
    """`structbench sweep` as its own process (a driver to interrupt or kill), from the repository.

    It starts with Ctrl-C's default action even where pytest itself runs in the background (`nohup
    tox &`), whose children inherit SIGINT ignored, as a shell leaves its background jobs."""
    command = [sys.executable, "-m", "structbench.cli", "sweep", str(grid), "--store", str(store), "--no-progress"]
    return subprocess.Popen([*command, *args], cwd=REPO, stderr=subprocess.PIPE, text=True, preexec_fn=_interruptible)


def _interruptible() -> None:
    signal.signal(signal.SIGINT, signal.SIG_DFL)


def write_grid(folder: Path, text: str, name: str = "grid.yaml") -> Path:
    path = folder / name
    path.write_text(text)
    return path


def stored_runs(path: Path) -> StoredRuns:
    """Every run of a store by its key: status, scores (split, metric, breakdown, level, value, n) and predictions."""
    with Store(path) as store:
        runs = store.runs()
        scores = store.scores()
        out: StoredRuns = {}
        for run in runs.itertuples():
            key = (str(run.suite), str(run.version), str(run.suite_hash), str(run.model_hash), int(run.seed))
            mine = scores[
                (scores.model_hash == run.model_hash) & (scores.seed == run.seed) & (scores.suite == run.suite)
            ]
            rows = sorted(
                (r.split, r.metric, r.breakdown, r.level, None if r.value != r.value else r.value, r.n)
                for r in mine.itertuples()
            )
            out[key] = (str(run.status), rows, store.stored_predictions(int(run.id)))
    return out


def fits(log: Path) -> list[tuple[str, str, int, int]]:
    """(suite, tag, seed, pid) of every fit the test models logged."""
    if not log.is_file():
        return []
    return [
        (s, tag, int(seed), int(pid))
        for s, tag, seed, pid, _ in (line.split() for line in log.read_text().splitlines())
    ]


def wait_for(condition: Callable[[], bool], seconds: float = 60.0) -> None:
    deadline = time.monotonic() + seconds
    while not condition():
        if time.monotonic() > deadline:
            pytest.fail(f"waited {seconds} s in vain")
        time.sleep(0.05)


def done_runs(path: Path) -> dict[int, tuple[int, float]]:
    """seed -> (run id, finished_at) of the store's done runs (read with plain SQLite, as another reader would)."""
    if not path.is_file():
        return {}
    db = sqlite3.connect(path, timeout=30)
    try:
        rows = db.execute("SELECT seed, id, finished_at FROM runs WHERE status='done'").fetchall()
    except sqlite3.OperationalError:  # the driver has not created the schema yet
        rows = []
    finally:
        db.close()
    return {int(seed): (int(run_id), float(finished)) for seed, run_id, finished in rows}


def alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    return True


def home_of_its_own(folder: Path, shared: Path) -> Path:
    """A STRUCTBENCH_HOME with the session's built suites but no checkpoints: a neural run trains afresh."""
    folder.mkdir()
    (shared / "suites").mkdir(exist_ok=True)
    (folder / "suites").symlink_to(shared / "suites", target_is_directory=True)
    return folder


EQUIVALENCE_GRID = """
suites: [lookup-tables, miniscan]
models:
  - random
  - copy
  - name: seq2seq
    suites: [miniscan]
    set: {epochs: 1, batch_size: 16, max_length: 12, hidden: 16, embedding: 8}
seeds: [0, 1]
"""


def test_a_local_sweep_stores_exactly_what_serial_runs_store(
    capsys: pytest.CaptureFixture[str],
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    structbench_environment: Path,
    one_torch_thread: None,
) -> None:
    monkeypatch.setenv("OMP_NUM_THREADS", "1")  # the workers' torch as this process's: one thread
    grid = write_grid(tmp_path, EQUIVALENCE_GRID)
    monkeypatch.setenv("STRUCTBENCH_HOME", str(home_of_its_own(tmp_path / "sweep-home", structbench_environment)))
    summary = sweep(capsys, grid, tmp_path / "sweep.sqlite", "--workers", "2")
    assert (summary["runs"], summary["done"], summary["failed"], summary["skipped"]) == (10, 10, 0, 0)
    assert summary["executor"] == "local" and summary["workers"] == 2
    records = {(r["suite"], r["model"]): r for r in summary["records"]}
    assert records[("miniscan", "seq2seq[batch_size=16,embedding=8,epochs=1,hidden=16,max_length=12]")]["status"] == {
        "0": "done",
        "1": "done",
    }
    # the same runs, one after another in this process, as `structbench run` makes them
    monkeypatch.setenv("STRUCTBENCH_HOME", str(home_of_its_own(tmp_path / "serial-home", structbench_environment)))
    with Store(tmp_path / "serial.sqlite") as store:
        runner = Runner(store, progress=False)
        runner.log = lambda message: None
        for suite in ("lookup-tables", "miniscan"):
            for model in ("random", "copy"):
                runner.evaluate(suite, ModelSpec(name=model), [0, 1])
        params: dict[str, str | int | float | bool | None] = {
            "epochs": 1, "batch_size": 16, "max_length": 12, "hidden": 16, "embedding": 8,
        }  # fmt: skip
        runner.evaluate("miniscan", ModelSpec(name="seq2seq", params=params), [0, 1])
    swept, serial = stored_runs(tmp_path / "sweep.sqlite"), stored_runs(tmp_path / "serial.sqlite")
    assert sorted(swept) == sorted(serial) and len(swept) == 10
    for key, (status, scores, predictions) in serial.items():
        assert status == "done"
        assert swept[key] == (status, scores, predictions), key  # every score and every answer, to the digit
    # the same command again: everything is in the store, no worker is started
    again = sweep(capsys, grid, tmp_path / "sweep.sqlite", "--workers", "2")
    assert (again["skipped"], again["done"], again["executor"]) == (10, 0, "none")
    assert stored_runs(tmp_path / "sweep.sqlite") == swept


HOSTILE_GRID = """
suites: [lookup-tables]
models:
  - name: tests.support.sweep_models:Hostile
    set: {behaviour: [hang, crash, kill, exit, garbage]}
  - copy
seeds: [0, 1]
"""


def test_hostile_models_fail_their_own_runs_and_the_sweep_goes_on(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    log = tmp_path / "fits.log"
    monkeypatch.setenv(FIT_LOG, str(log))
    grid, store = write_grid(tmp_path, HOSTILE_GRID), tmp_path / "results.sqlite"
    summary = sweep(capsys, grid, store, "--workers", "2", "--timeout", "3", code=1)
    assert (summary["runs"], summary["done"], summary["failed"]) == (12, 7, 5)
    errors = {r["model"]: r["errors"] for r in summary["records"]}
    statuses = {r["model"]: r["status"] for r in summary["records"]}
    hostile = 'hostile[behaviour="{}"]'.format
    assert errors[hostile("hang")] == {"0": "timed out after 3 s (sweep --timeout 3); its worker was killed"}
    assert errors[hostile("crash")] == {"0": "RuntimeError: exploding gradient at seed 0"}
    assert errors[hostile("kill")] == {"0": "worker died: killed by SIGKILL"}
    assert errors[hostile("exit")] == {"0": "worker died: it exited with status 3"}
    assert errors[hostile("garbage")]["0"].startswith("InvalidAnswer: transduce returned 39 answers for 40 inputs")
    assert all(status["1"] == "done" for status in statuses.values()) and statuses["copy"] == {"0": "done", "1": "done"}
    with Store(store) as opened:
        runs = opened.runs()
    failed = runs[runs.status == "failed"]
    assert sorted(failed.seed) == [0] * 5 and failed.error.str.len().gt(0).all()
    assert set(runs.status) == {"done", "failed"} and len(runs) == 12 and runs.id.is_unique
    # the same command again redoes the failed runs only: no finished run is fitted a second time
    log.unlink()
    again = sweep(capsys, grid, store, "--workers", "2", "--timeout", "1", code=1)
    assert (again["skipped"], again["failed"], again["done"]) == (7, 5, 0)
    assert sorted(seed for _, _, seed, _ in fits(log)) == [0] * 5
    assert integrity(store) == "ok"


def test_a_worker_killed_from_outside_fails_its_run_only(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    pid_file = tmp_path / "model.pid"
    monkeypatch.setenv(PID_FILE, str(pid_file))
    grid = write_grid(
        tmp_path,
        "suites: [lookup-tables]\nmodels: [{name: tests.support.sweep_models:Hostile, set: {behaviour: wait-for-kill}}]\n"
        "seeds: [0, 1, 2]\n",
    )
    killed: list[int] = []

    def killer() -> None:
        wait_for(lambda: pid_file.is_file() and pid_file.read_text().strip() != "")
        killed.append(int(pid_file.read_text()))
        os.kill(killed[0], signal.SIGKILL)  # the OOM killer, or an operator, ends the worker mid-fit

    thread = threading.Thread(target=killer)
    thread.start()
    summary = sweep(capsys, grid, tmp_path / "results.sqlite", "--workers", "2", code=1)
    thread.join()
    (record,) = summary["records"]
    assert record["status"] == {"0": "failed", "1": "done", "2": "done"}
    assert record["errors"] == {"0": "worker died: killed by SIGKILL"}
    assert killed and not alive(killed[0])


SLOW_GRID = """
suites: [lookup-tables]
models:
  - name: tests.support.sweep_models:SlowCopy
    set: {seconds: 0.4}
seeds: "0-9"
"""


def test_a_sweep_killed_with_sigkill_resumes_without_losing_duplicating_or_recomputing(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    log = tmp_path / "fits.log"
    monkeypatch.setenv(FIT_LOG, str(log))
    grid, store = write_grid(tmp_path, SLOW_GRID), tmp_path / "results.sqlite"
    driver = sweep_process(grid, store, "--workers", "2")
    try:
        wait_for(lambda: len(done_runs(store)) >= 3)
    finally:
        driver.kill()  # SIGKILL: no handler runs, claims stay `running` under a dead owner
        driver.communicate()
    before = done_runs(store)
    workers = {pid for _, _, _, pid in fits(log)}
    wait_for(lambda: not any(alive(pid) for pid in workers), seconds=10)  # the workers died with their driver
    fitted_before = len(fits(log))
    summary = sweep(capsys, grid, store, "--workers", "2")
    after = done_runs(store)
    assert sorted(after) == list(range(10))  # nothing lost
    assert {seed: after[seed] for seed in before} == before  # the finished runs untouched: same row, same finish
    refitted = [seed for _, _, seed, _ in fits(log)[fitted_before:] if seed in before]
    assert refitted == []  # ... and not recomputed
    assert summary["skipped"] == len(before) and summary["done"] == 10 - len(before)
    with Store(store) as opened:
        runs = opened.runs()
        assert len(runs) == 10 and runs.id.is_unique and set(runs.status) == {"done"}  # nothing duplicated
        blocks = {int(run_id): list(opened.stored_predictions(int(run_id))) for run_id in runs.id}
    assert len(set(map(tuple, blocks.values()))) == 1 and len(next(iter(blocks.values()))) == 7  # one per test split
    assert integrity(store) == "ok"


def test_an_interrupted_sweep_releases_its_claims_and_the_same_command_resumes(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    log = tmp_path / "fits.log"
    monkeypatch.setenv(FIT_LOG, str(log))
    grid, store = write_grid(tmp_path, SLOW_GRID), tmp_path / "results.sqlite"
    for signal_number in (signal.SIGINT, signal.SIGTERM):  # Ctrl-C, then a batch scheduler's cancel
        finished = len(done_runs(store))
        driver = sweep_process(grid, store, "--workers", "2")
        wait_for(lambda: len(done_runs(store)) > finished)  # noqa: B023  (read while this driver runs)
        driver.send_signal(signal_number)
        _, err = driver.communicate(timeout=60)
        assert driver.returncode == 130, err
        assert "interrupted; finished runs are stored and the rest will be redone" in err
        with Store(store) as opened:
            runs = opened.runs()
        assert "running" not in set(runs.status)  # released (interrupted): nobody waits for them
        assert not any(alive(pid) for _, _, _, pid in fits(log))  # and no worker trains on
    before = done_runs(store)
    assert 2 <= len(before) < 10
    summary = sweep(capsys, grid, store, "--workers", "2")
    assert sorted(done_runs(store)) == list(range(10)) and summary["skipped"] == len(before)
    assert {seed: done_runs(store)[seed] for seed in before} == before
    assert integrity(store) == "ok"


def test_a_run_another_process_is_making_is_skipped_and_reported_not_waited_for(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    store = tmp_path / "results.sqlite"
    run = ["run", "--suite", "lookup-tables", "--model", "tests.support.sweep_models:SlowCopy", "--set", "seconds=5"]
    holder = subprocess.Popen(
        [sys.executable, "-m", "structbench.cli", *run, "--seeds", "0", "--store", str(store), "--no-progress"],
        cwd=REPO,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:

        def held() -> bool:
            with Store(store) as opened:
                return list(opened.runs().status) == ["running"]

        wait_for(lambda: store.is_file() and held())
        grid = write_grid(
            tmp_path,
            "suites: [lookup-tables]\nmodels: [{name: tests.support.sweep_models:SlowCopy, set: {seconds: 5}}]\nseeds: [0]\n",
        )
        summary = sweep(capsys, grid, store, "--workers", "2")
        assert holder.poll() is None  # the sweep is over while the other process is still at it
        assert (summary["busy"], summary["done"], summary["failed"]) == (1, 0, 0)
        assert summary["records"][0]["status"] == {"0": "busy"}
        assert (
            f"lookup-tables@1.0.0 x slow-copy[seconds=5] seed 0 is being run by pid {holder.pid}" in summary["stderr"]
        )
    finally:
        assert holder.wait(timeout=60) == 0
    with Store(store) as opened:
        runs = opened.runs()
    assert list(runs.status) == ["done"]  # the other process finished its run; the sweep left it alone
