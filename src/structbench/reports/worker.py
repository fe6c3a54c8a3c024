"""Work a report hands to its worker process, so that the second core has some of it.

The worker processes are those that draw the plots (`structbench.reports.writers.plots.Drawing.worker`):
forked at the report's start, they import and ask the model classes (importing PyTorch) and check the
claims (importing scipy.stats) while the report reads the store and builds the boards, then import
matplotlib and draw the plots.
Every such task is a module-level function of plain values, so that its result is the same wherever it
runs: where there is no worker (one core, no `fork`) or it died (a process killed for memory), it is
computed in the report's own process instead.
"""

from __future__ import annotations

from collections.abc import Callable
from concurrent.futures import BrokenExecutor, Executor, Future
from typing import TypeVar

T = TypeVar("T")


def submit(worker: Executor | None, function: Callable[..., T], *arguments: object) -> Future[T] | None:
    """`function(*arguments)` handed to `worker`; None where there is none, or it died."""
    if worker is None:
        return None
    try:
        return worker.submit(function, *arguments)
    except BrokenExecutor:
        return None


def outcome(started: Future[T] | None, function: Callable[..., T], *arguments: object) -> T:
    """The result of `started` (`function(*arguments)` as `submit` handed it), or of `function(*arguments)`
    here where it was not handed over or its worker died."""
    if started is not None:
        try:
            return started.result()
        except BrokenExecutor:
            pass
    return function(*arguments)
