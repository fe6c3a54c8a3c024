"""`structbench run` executes each seed of a named model in a supervised worker process.

What a user relies on: a model that hangs, exits, dies of a signal or grows past its memory limit
is a `failed` seed with one sentence and the next seed still runs; what it prints never reaches
`run --json`; what it forks is gone when the command returns; its progress bars still show.
"""

from __future__ import annotations

import io
import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from structbench.cli import main
from structbench.data import freeze
from structbench.execution.supervised import SupervisedWorker
from structbench.registry import suite
from structbench.runs.attempt import ERROR_TAIL, Evaluated
from structbench.runs.context import ModelOnSuite
from structbench.runs.request import ModelRequest
from structbench.specs import ModelSpec
from structbench.store import Store
from tests.support.sweep_models import PID_FILE

HOSTILE = "tests.support.sweep_models:Hostile"
REPO = Path(__file__).resolve().parents[2]


def run_json(capsys: pytest.CaptureFixture[str], store: Path, *args: str, code: int) -> dict[str, Any]:
    """`run --json` in this process: its parsed record (stdout must hold nothing else)."""
    command = ["run", "--suite", "lookup-tables", "--model", HOSTILE, "--seeds", "0,1", "--store", str(store)]
    assert main([*command, "--json", "--no-progress", *args]) == code
    captured = capsys.readouterr()
    record: dict[str, Any] = json.loads(captured.out)
    return {**record, "stderr": captured.err}


def alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    return Path(f"/proc/{pid}/stat").is_file() and " Z " not in Path(f"/proc/{pid}/stat").read_text()


@pytest.mark.parametrize(
    ("behaviour", "options", "error"),
    [
        ("hang", ["--timeout", "3"], "timed out after 3 s (run --timeout 3); its worker was killed"),
        ("exit", [], "worker died: it exited with status 3"),
        ("segfault", [], "worker died: killed by SIGSEGV"),
        (
            "memory",
            ["--set", "megabytes=600", "--max-memory", "300"],
            "used more than 300 MB of memory (run --max-memory 300); its worker was killed",
        ),
    ],
)
def test_a_seed_that_hangs_exits_or_dies_fails_with_one_sentence_and_the_next_seed_runs(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, behaviour: str, options: list[str], error: str
) -> None:
    record = run_json(capsys, tmp_path / "r.sqlite", "--set", f"behaviour={behaviour}", *options, code=1)
    assert record["status"] == {"0": "failed", "1": "done"}
    assert record["errors"]["0"] == error
    assert record["scores"]["heldout_inputs"]["sequence_accuracy"]["n_seeds"] == 1


def test_what_a_model_prints_never_reaches_run_json(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    record = run_json(capsys, tmp_path / "r.sqlite", "--set", "behaviour=print", code=0)
    assert record["status"] == {"0": "done", "1": "done"}
    assert "HELLO" not in record["stderr"]  # kept in the worker's log, shown only in a failed seed's tail


def test_a_child_the_model_forked_is_ended_with_its_run(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    pid_file = tmp_path / "child.pid"
    monkeypatch.setenv(PID_FILE, str(pid_file))
    record = run_json(capsys, tmp_path / "r.sqlite", "--set", "behaviour=fork", code=0)
    assert record["status"] == {"0": "done", "1": "done"}
    assert not alive(int(pid_file.read_text()))


def test_a_model_module_that_fails_on_import_is_one_sentence(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    command = ["run", "--suite", "lookup-tables", "--model", "tests.support.broken_import:Model"]
    assert main([*command, "--store", str(tmp_path / "r.sqlite")]) == 2
    err = capsys.readouterr().err.strip()
    assert err.splitlines() == [
        "structbench: error: importing module 'tests.support.broken_import' for model 'tests.support.broken_import:Model' "
        "failed in the module's own code (RuntimeError: the module's configuration file is missing); fix the "
        "module (`python -c 'import tests.support.broken_import'` shows the traceback)."
    ]


def test_the_workers_progress_bars_are_redrawn_by_the_command_and_cleared(tmp_path: Path) -> None:
    lookup = suite("lookup-tables")
    manifest = freeze.ensure_built(lookup, None)
    context = ModelOnSuite.of(lookup, ModelRequest.of(ModelSpec(name="oracle"))).seed_run(manifest, 0)
    shown = io.StringIO()
    with SupervisedWorker(command="run", progress=True, stream=shown) as supervisor:
        outcome = supervisor("lookup-tables", context)
    assert isinstance(outcome, Evaluated)
    redraws = shown.getvalue().split("\r")
    assert any("lookup-tables oracle seed 0" in redraw for redraw in redraws)  # the worker's ask bar, relayed
    assert all(redraw.strip() == "" for redraw in redraws[-2:])  # cleared once the run ended


def test_a_failed_seeds_stored_error_ends_with_its_reason_however_long_its_output(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    store = tmp_path / "r.sqlite"
    record = run_json(capsys, store, "--set", "behaviour=crash-with-output", code=1)
    assert record["errors"] == {"0": "RuntimeError: the model's process ended"}
    with Store(store) as opened:
        runs = opened.runs()
    (error,) = runs[runs.status == "failed"].error
    assert error.splitlines()[-1] == "RuntimeError: the model's process ended" and "noise line" in error
    assert len(error) <= ERROR_TAIL


def _interruptible() -> None:
    """Ctrl-C's default action, even where pytest runs in the background (`nohup tox &`), whose children
    inherit SIGINT ignored, as a shell leaves its background jobs."""
    signal.signal(signal.SIGINT, signal.SIG_DFL)


def test_ctrl_c_ends_the_worker_and_leaves_the_seed_to_be_redone(tmp_path: Path) -> None:
    pid_file, store = tmp_path / "model.pid", tmp_path / "r.sqlite"
    command = [sys.executable, "-m", "structbench.cli", "run", "--suite", "lookup-tables", "--model", HOSTILE,
               "--set", "behaviour=wait-for-kill", "--seeds", "0", "--store", str(store), "--no-progress"]  # fmt: skip
    environment = {**os.environ, PID_FILE: str(pid_file)}
    process = subprocess.Popen(
        command, cwd=REPO, env=environment, stderr=subprocess.PIPE, text=True, preexec_fn=_interruptible
    )
    deadline = time.monotonic() + 120
    while not (pid_file.is_file() and pid_file.read_text().strip()) and time.monotonic() < deadline:
        time.sleep(0.1)
    process.send_signal(signal.SIGINT)  # a terminal's Ctrl-C reaches structbench's process group, not the worker's
    _, err = process.communicate(timeout=60)
    assert process.returncode == 130 and "interrupted; finished runs are stored" in err
    assert not alive(int(pid_file.read_text()))
    with Store(store) as opened:
        runs = opened.runs()
    assert list(runs.status) == ["interrupted"] and list(runs.owner.isna()) == [True]  # released: redone next
