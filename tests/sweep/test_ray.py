"""`structbench sweep --executor ray` on a local Ray with 2 workers: the same runs as `run`, a hung
model ended at its time-out, a worker that dies mid-run failed with the reason. Skipped where Ray
is not installed (`pip install 'structbench[ray]'`; the `dev` extra has it, so CI runs it)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from structbench.runs.runner import Runner
from structbench.specs import ModelSpec
from structbench.store import Store
from tests.support.sweep_models import FIT_LOG
from tests.sweep.test_sweep import REPO, stored_runs, write_grid

pytest.importorskip("ray")

GRID = """
suites: [lookup-tables]
models:
  - random
  - copy
  - name: tests.support.sweep_models:Hostile
    set: {behaviour: [hang, kill]}
seeds: [0, 1]
"""


@pytest.mark.long_running
def test_a_ray_sweep_stores_what_serial_runs_store_and_survives_hangs_and_dying_workers(tmp_path: Path) -> None:
    grid, store = write_grid(tmp_path, GRID), tmp_path / "ray.sqlite"
    command = [sys.executable, "-m", "structbench.cli", "sweep", str(grid), "--store", str(store)]
    # a timeout that the hanging run reaches and no other run comes near on a busy machine, where a Ray
    # worker's start alone (Python, torch) took 10 s
    options = ["--executor", "ray", "--workers", "2", "--timeout", "30", "--json", "--no-progress"]
    log = tmp_path / "fits.log"
    environment = {**os.environ, "OMP_NUM_THREADS": "1", FIT_LOG: str(log)}
    done = subprocess.run(
        [*command, *options], cwd=REPO, env=environment, capture_output=True, text=True, timeout=900, check=False
    )
    assert done.returncode == 1, done.stderr  # two runs failed: exit status 1
    summary = json.loads(done.stdout)  # stdout holds the summary only, whatever Ray prints
    errors = {record["model"]: record["errors"] for record in summary["records"]}
    counts = (summary["executor"], summary["workers"], summary["done"], summary["failed"])
    assert counts == ("ray", 2, 6, 2), errors
    assert errors['hostile[behaviour="hang"]'] == {
        "0": "timed out after 30 s (sweep --timeout 30); its worker was killed"
    }
    assert errors['hostile[behaviour="kill"]']["0"].startswith("worker died: WorkerCrashedError")
    # the runs ran at this process's priority, not at Ray's default of nice 15: there, on a machine busy
    # with other work, a lookup-tables run in a fresh worker got so little CPU that it outlived the 30 s
    niceness = {int(line.split()[4]) for line in log.read_text().splitlines()}
    assert niceness == {os.nice(0)}
    with Store(tmp_path / "serial.sqlite") as serial_store:
        runner = Runner(serial_store, progress=False)
        runner.log = lambda message: None
        for model in ("random", "copy"):
            runner.evaluate("lookup-tables", ModelSpec(name=model), [0, 1])
    swept, serial = stored_runs(store), stored_runs(tmp_path / "serial.sqlite")
    assert len(serial) == 4
    for key, stored in serial.items():
        assert swept[key] == stored, key  # every score and every answer, to the digit
