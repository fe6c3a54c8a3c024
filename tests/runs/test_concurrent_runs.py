"""Four `structbench run` processes at once, as four terminals or four array jobs would start them,
in a home where nothing is built yet: they race to build the suites first, then to claim the same
cells (or different cells of one store). None may crash, no run may be stored twice or lost.

bench/chaos.py repeats both ten times; these are the single repetitions every test run makes.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

from structbench.store import Store
from tests.support.helpers import integrity

REPO = Path(__file__).resolve().parents[2]
PROCESSES = 4


def run_at_once(home: Path, commands: list[list[str]]) -> list[tuple[int, dict[str, Any] | list[Any] | None, str]]:
    """Start every `structbench run` command at the same moment; (exit status, JSON printed, stderr) of each."""
    environment = {**os.environ, "STRUCTBENCH_HOME": str(home), "OMP_NUM_THREADS": "1"}
    processes = [
        subprocess.Popen(
            [sys.executable, "-m", "structbench.cli", "run", *command, "--json", "--no-progress"],
            cwd=REPO,
            env=environment,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        for command in commands
    ]
    outcomes = []
    for process in processes:
        out, err = process.communicate(timeout=300)
        outcomes.append((process.returncode, json.loads(out) if out.strip() else None, err))
    return outcomes


def test_four_processes_on_the_same_cells_in_an_unbuilt_home(tmp_path: Path) -> None:
    store = tmp_path / "results.sqlite"
    command = ["--suite", "lookup-tables,miniscan", "--model", "random", "--seeds", "0,1,2", "--store", str(store)]
    outcomes = run_at_once(tmp_path / "home", [command] * PROCESSES)
    for code, _, err in outcomes:
        assert code == 0 and "Traceback" not in err, err
    records = [record for _, record, _ in outcomes]
    assert all(record == records[0] for record in records)  # every process reads the same numbers
    with Store(store) as opened:
        runs = opened.runs()
    assert len(runs) == 6 and runs.id.is_unique and set(runs.status) == {"done"}
    assert sorted(zip(runs.suite, runs.seed, strict=True)) == sorted(
        (suite, seed) for suite in ("lookup-tables", "miniscan") for seed in (0, 1, 2)
    )
    assert integrity(store) == "ok"


def test_four_processes_on_different_cells_of_one_store_in_an_unbuilt_home(tmp_path: Path) -> None:
    store = tmp_path / "results.sqlite"
    models = ["random", "copy", "oracle", "majority"]
    commands = [
        ["--suite", "lookup-tables,miniscan", "--model", model, "--seeds", "0,1", "--store", str(store)]
        for model in models
    ]
    outcomes = run_at_once(tmp_path / "home", commands)
    for code, _, err in outcomes:
        assert code == 0 and "Traceback" not in err, err
    with Store(store) as opened:
        runs = opened.runs()
    assert sorted(zip(runs.model, runs.suite, runs.seed, strict=True)) == sorted(
        (model, suite, seed) for model in models for suite in ("lookup-tables", "miniscan") for seed in (0, 1)
    )
    assert runs.id.is_unique and set(runs.status) <= {"done", "n/a"}
    assert integrity(store) == "ok"
