"""A structbench command, and the worker its runs fit in, collect garbage at `THRESHOLDS`; a program
that imports structbench keeps its own collector (`structbench.execution.collector`)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from structbench.cli import main
from structbench.execution.collector import THRESHOLDS
from tests.conftest import REPO
from tests.support.collector_model import THRESHOLDS_FILE


def thresholds_after(code: str) -> tuple[int, ...]:
    """The collector's thresholds a fresh interpreter prints after running `code`."""
    code += "\nimport gc, json; print(json.dumps(gc.get_threshold()))"
    done = subprocess.run(
        [sys.executable, "-c", code], cwd=REPO, capture_output=True, text=True, timeout=600, check=True
    )
    return tuple(json.loads(done.stdout.splitlines()[-1]))


def test_importing_structbench_leaves_the_programs_collector_alone() -> None:
    python_default = thresholds_after("")
    assert python_default != THRESHOLDS
    imported = "import structbench, structbench.api, structbench.cli, structbench.execution.worker"
    assert thresholds_after(imported) == python_default
    command = "import contextlib, io\nfrom structbench.cli import main\nwith contextlib.redirect_stdout(io.StringIO()):\n    main(['suites'])"
    assert thresholds_after(command) == THRESHOLDS


def test_a_runs_worker_process_collects_at_the_commands_thresholds(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    written = tmp_path / "thresholds.json"
    monkeypatch.setenv(THRESHOLDS_FILE, str(written))
    model = "tests.support.collector_model:Thresholds"
    store = tmp_path / "results.sqlite"
    assert (
        main(
            [
                "run",
                "--suite",
                "lookup-tables",
                "--model",
                model,
                "--seeds",
                "0",
                "--store",
                str(store),
                "--no-progress",
            ]
        )
        == 0
    )
    assert tuple(json.loads(written.read_text())) == THRESHOLDS  # fitted in the supervised worker, a fresh process
