"""Work a report hands its worker processes in parts: after a failure, what a worker has started is
waited for and what it has not is dropped, so that nothing is written after the report cleans up."""

from __future__ import annotations

import threading
import time
from pathlib import Path

from structbench.reports.worker import Tasks
from structbench.reports.writers.plots import Drawing


def _write_once_released(started: Path, released: Path, marker: Path) -> None:
    """A part that says it has started, waits until `released` exists (at most a minute), then writes `marker`."""
    started.touch()
    deadline = time.monotonic() + 60
    while not released.exists() and time.monotonic() < deadline:
        time.sleep(0.01)
    marker.touch()


def test_abandoned_parts_are_waited_for_once_started_and_never_run_otherwise(tmp_path: Path) -> None:
    drawing = Drawing(workers=1)
    worker = drawing.worker()
    assert worker is not None
    try:
        tasks: Tasks[None] = Tasks()
        released = tmp_path / "released"
        markers = [tmp_path / f"part-{i}" for i in range(6)]
        for i, marker in enumerate(markers):
            tasks.hand(worker, _write_once_released, tmp_path / f"started-{i}", released, marker)
        deadline = time.monotonic() + 60
        while not (tmp_path / "started-0").exists() and time.monotonic() < deadline:
            time.sleep(0.01)
        assert (tmp_path / "started-0").exists()
        threading.Timer(0.3, released.touch).start()
        tasks.abandon()
        assert markers[0].exists()  # started: abandon returned only once it was written
        time.sleep(0.5)
        # the pool's queue holds two parts beyond the one its worker runs: those may have run, the rest never do
        assert not any(marker.exists() for marker in markers[3:])
        assert tasks.finish() == []  # nothing is left to do
    finally:
        drawing.close()
