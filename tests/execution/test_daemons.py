"""No process a run started outlives it, a daemon neither (issue 45), under `run`, `run --in-process`
and `sweep`, and `--max-memory` counts the daemon's memory.

The models (`tests/support/daemons.py`, `tests/support/daemon_command.py`) double-fork and call
`setsid` on every fit, as a daemon does: before, each `run`, `run --in-process` and `sweep` left
one daemon per seed running, and a 1.5 GB daemon passed `--max-memory 500`. A worker's daemon is
found with a cgroup of the worker's own where one can be made here, and without
(`STRUCTBENCH_NO_CGROUP=1`) by adoption and the run's marker; both are tested where both exist.
"""

from __future__ import annotations

import contextlib
import json
import os
import signal
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from structbench.cli import main
from structbench.data import freeze
from structbench.execution.processes import NO_CGROUP_VARIABLE, Cgroup, statuses
from structbench.execution.worker import WorkResult, order_for, run_order_text
from structbench.registry import suite
from structbench.runs.context import ModelOnSuite
from structbench.runs.request import ModelRequest
from structbench.specs import ModelSpec
from tests.support.daemons import COMMAND_SCRIPT, NAME, PIDS_VARIABLE

pytestmark = pytest.mark.skipif(not Path("/proc/self/stat").is_file(), reason="reads Linux's /proc")

MODEL = "tests.support.daemons:Daemonising"
DEADLINE = 30.0
"""Seconds a killed daemon has to be gone from /proc (the kernel frees its memory first: well under one)."""


def cgroups() -> bool:
    """Whether this process may make a cgroup (v2) here (the one made to find out is removed)."""
    cgroup = Cgroup.make()
    if cgroup is not None:
        cgroup.remove()
    return cgroup is not None


CGROUPS = ["cgroup", "no-cgroup"] if cgroups() else ["no-cgroup"]


@pytest.fixture
def daemons(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    """The file the daemons write their pids to; any daemon still running afterwards is killed."""
    path = tmp_path / "daemons.pids"
    monkeypatch.setenv(PIDS_VARIABLE, str(path))
    yield path
    for pid in pids(path):
        with contextlib.suppress(ProcessLookupError, PermissionError):
            if statuses().get(pid) is not None and Path(f"/proc/{pid}/comm").read_text().strip() == NAME:
                os.kill(pid, signal.SIGKILL)


def pids(path: Path) -> list[int]:
    return [int(pid) for pid in path.read_text().split()] if path.is_file() else []


def still_running(path: Path) -> list[int]:
    """The daemons of `path` that are alive, after giving killed ones `DEADLINE` seconds to go."""
    ends = time.monotonic() + DEADLINE
    while (alive := [pid for pid in pids(path) if pid in statuses()]) and time.monotonic() < ends:
        time.sleep(0.1)
    return alive


def tracking(monkeypatch: pytest.MonkeyPatch, how: str) -> None:
    if how == "no-cgroup":
        monkeypatch.setenv(NO_CGROUP_VARIABLE, "1")


def run(capsys: pytest.CaptureFixture[str], store: Path, *options: str, code: int = 0) -> dict[str, Any]:
    command = ["run", "--suite", "lookup-tables", "--seeds", "0,1", "--store", str(store), "--json", "--no-progress"]
    assert main([*command, *options]) == code, capsys.readouterr().err
    record: dict[str, Any] = json.loads(capsys.readouterr().out)
    return record


@pytest.mark.parametrize("how", CGROUPS)
def test_run_leaves_no_daemon(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch, daemons: Path, how: str
) -> None:
    tracking(monkeypatch, how)
    record = run(capsys, tmp_path / "r.sqlite", "--model", MODEL)
    assert record["status"] == {"0": "done", "1": "done"}
    assert len(pids(daemons)) == 2  # one daemon per seed was started
    assert still_running(daemons) == []


def test_run_in_process_leaves_no_daemon_and_this_process_as_it_was(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, daemons: Path
) -> None:
    # the daemon is forked from this very process, without exec: it is found by adoption
    record = run(capsys, tmp_path / "r.sqlite", "--model", MODEL, "--in-process")
    assert record["status"] == {"0": "done", "1": "done"}
    assert len(pids(daemons)) == 2
    assert still_running(daemons) == []
    assert all(pid not in statuses(ended=True) for pid in pids(daemons))  # reaped: not even zombies
    assert not [key for key in os.environ if key.startswith("STRUCTBENCH_RUN_")]


@pytest.mark.parametrize("in_process", [False, True], ids=["run", "in-process"])
def test_a_command_models_daemon_ends_with_its_run(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, daemons: Path, in_process: bool
) -> None:
    command = f"--set=command={sys.executable} {COMMAND_SCRIPT}"
    options = ["--model", "command", command, *(["--in-process"] if in_process else [])]
    record = run(capsys, tmp_path / "r.sqlite", *options)
    assert record["status"] == {"0": "done", "1": "done"}
    assert len(pids(daemons)) == 2
    assert still_running(daemons) == []


@pytest.mark.parametrize("how", CGROUPS)
def test_sweep_leaves_no_daemon(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch, daemons: Path, how: str
) -> None:
    tracking(monkeypatch, how)
    grid = tmp_path / "grid.yaml"
    grid.write_text(f"suites: [lookup-tables]\nmodels: [{MODEL}]\nseeds: '0-1'\n")
    assert main(["sweep", str(grid), "--store", str(tmp_path / "r.sqlite"), "--workers", "2", "--no-progress"]) == 0
    assert "2 done, 0 failed" in capsys.readouterr().err
    assert len(pids(daemons)) == 2
    assert still_running(daemons) == []


@pytest.mark.parametrize("how", CGROUPS)
def test_max_memory_counts_what_a_daemon_holds(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch, daemons: Path, how: str
) -> None:
    tracking(monkeypatch, how)
    # the worker with an idle daemon is well within the limit: what fails the seed is the daemon's 600 MB
    idle = run(capsys, tmp_path / "idle.sqlite", "--model", MODEL, "--max-memory", "300")
    assert idle["status"] == {"0": "done", "1": "done"}
    # the model waits (ten minutes) once its daemon holds its memory: only the limit ends the seed (the
    # time-out only catches a limit that never acts)
    options = [
        *("--model", MODEL, "--set", "megabytes=600", "--set", "settle=600"),
        "--max-memory",
        "300",
        "--timeout",
        "300",
    ]
    record = run(capsys, tmp_path / "r.sqlite", *options, code=1)
    assert record["status"] == {"0": "failed", "1": "failed"}
    error = "used more than 300 MB of memory (run --max-memory 300); its worker was killed"
    assert record["errors"] == {"0": error, "1": error}
    assert len(pids(daemons)) == 4
    assert still_running(daemons) == []


def test_a_ray_tasks_daemon_ends_with_its_task(daemons: Path) -> None:
    # a Ray task runs its order in a long-lived Ray worker process: here, this one, without Ray
    lookup = suite("lookup-tables")
    context = ModelOnSuite.of(lookup, ModelRequest.of(ModelSpec(name=MODEL))).seed_run(
        freeze.ensure_built(lookup, None), 0
    )
    result = WorkResult.model_validate_json(
        run_order_text(order_for(1, "lookup-tables", context, None, name=None).model_dump_json())
    )
    assert result.status == "done"
    assert len(pids(daemons)) == 1
    assert still_running(daemons) == []
