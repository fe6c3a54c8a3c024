"""The determinism contract (docs/architecture.md, "Determinism"): a run's stored scores and predictions
are a function of its key alone.

One tiny cell per model family (`tests.support.determinism.CELLS`) is run in two fresh processes,
each with a home of its own (so each builds the suites and trains from scratch), that differ in all
three things a run must not depend on: `PYTHONHASHSEED` (0 and 1), the CPUs the process may use (one
and two) and the executor (serial `run`, and `sweep --executor local --workers 2`). Both stores must
hold the same bits: statuses, model keys, every score and every predictions block. A dependence on
any of the three, or on any combination of them, moves some bit of a trained network's predictions
(one epoch of the seq2seq cell on one thread and on two stores different predictions when threads
are not pinned), and no two such effects cancel bit for bit; so flipping all three at once finds
what the half fraction of the 2 x 2 x 2 design this test ran before found, at half its cost. When it
fails, `python -m tests.support.determinism serial|sweep STORE` under each factor alone says which.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.conftest import REPO
from tests.support.determinism import CELLS, differences, stored

CONFIGURATIONS = (
    ("0", 1, "serial"),
    ("1", 2, "sweep"),
)
"""(PYTHONHASHSEED, available CPUs, executor)."""


def _cpus(count: int) -> set[int]:
    available = sorted(os.sched_getaffinity(0))
    return set(available[:count])


def run_configuration(folder: Path, hash_seed: str, cpus: int, mode: str) -> Path:
    """Run every cell in a fresh process and home; the store it wrote."""
    name = f"hash{hash_seed}-cpus{cpus}-{mode}"
    home, store = folder / name, folder / f"{name}.sqlite"
    home.mkdir()
    environment = {
        **{k: v for k, v in os.environ.items() if k not in ("OMP_NUM_THREADS", "PYTEST_XDIST_WORKER")},
        "STRUCTBENCH_HOME": str(home),
        "PYTHONHASHSEED": hash_seed,
    }
    chosen = _cpus(cpus)
    done = subprocess.run(
        [sys.executable, "-m", "tests.support.determinism", mode, str(store)],
        cwd=REPO,
        env=environment,
        capture_output=True,
        text=True,
        timeout=900,
        preexec_fn=lambda: os.sched_setaffinity(0, chosen),
        check=False,
    )
    assert done.returncode == 0, f"{name} exited {done.returncode}:\n{done.stderr[-3000:]}"
    return store


@pytest.mark.skipif(len(os.sched_getaffinity(0)) < 2, reason="needs two CPUs to compare one against two")
@pytest.mark.long_running(seconds=150)
def test_every_family_stores_the_same_bits_under_any_hash_seed_cpu_count_and_executor(tmp_path: Path) -> None:
    stores = {configuration: run_configuration(tmp_path, *configuration) for configuration in CONFIGURATIONS}
    reference = stored(stores[CONFIGURATIONS[0]])
    assert len(reference) == len(CELLS)
    assert all(run["status"] == "done" for run in reference.values()), reference
    moved = {
        configuration: differences(reference, stored(path))
        for configuration, path in stores.items()
        if configuration != CONFIGURATIONS[0]
    }
    assert not any(moved.values()), "stored bits differ from (hash seed 0, 1 CPU, serial):\n" + "\n".join(
        f"{configuration}: {line}" for configuration, lines in moved.items() for line in lines
    )
