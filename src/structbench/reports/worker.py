"""Work a report hands to its worker process, so that the second core has some of it.

The worker processes are those that draw the plots (`structbench.reports.writers.plots.Drawing.worker`):
forked at the report's start, they import scipy.stats (`preload`) and ask the model classes while the
report reads the store, check the claims while it builds the boards, then import matplotlib, draw the
plots and write the error browser's scripts while the report writes its pages. Work that comes in many
parts (plots, scripts) is handed over as `Tasks`: once the report has nothing else to do, it does the
parts no worker has started itself, so that both cores finish together. Every such task is a
module-level function of plain values, so that its result is the same wherever it runs: where there is
no worker (one core, no `fork`) or it died (a process killed for memory), it is computed in the
report's own process instead.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable
from concurrent.futures import BrokenExecutor, Executor, Future
from contextlib import suppress
from typing import Any, Generic, TypeVar

T = TypeVar("T")


def submit(worker: Executor | None, function: Callable[..., T], *arguments: object) -> Future[T] | None:
    """`function(*arguments)` handed to `worker`; None where there is none, or it died."""
    if worker is None:
        return None
    try:
        return worker.submit(function, *arguments)
    except BrokenExecutor:
        return None


def preload(module: str) -> None:
    """Import `module` in the worker ahead of the task that needs it, while the worker has nothing else
    to do (`report` has it import scipy.stats, the claims' tests, while it reads the stores)."""
    importlib.import_module(module)


def outcome(started: Future[T] | None, function: Callable[..., T], *arguments: object) -> T:
    """The result of `started` (`function(*arguments)` as `submit` handed it), or of `function(*arguments)`
    here where it was not handed over or its worker died."""
    if started is not None:
        try:
            return started.result()
        except BrokenExecutor:
            pass
    return function(*arguments)


class Tasks(Generic[T]):
    """Parts of one piece of work handed to the workers in order (`hand`), each a call of a module-level
    function; `finish` returns every part's result, in order."""

    def __init__(self) -> None:
        self._handed: list[tuple[Future[T] | None, Callable[..., T], tuple[object, ...]]] = []

    def hand(self, worker: Executor | None, function: Callable[..., T], *arguments: object) -> None:
        """`function(*arguments)` handed to `worker` (done by `finish` where there is none, or it died)."""
        self._handed.append((submit(worker, function, *arguments), function, arguments))

    def hand_parts(
        self, worker: Executor | None, function: Callable[[list[Any]], T], items: list[Any], parts: int
    ) -> None:
        """`function` over `items` in `parts` parts, each taking every `parts`-th item (so that parts of
        items of uneven cost cost about the same), handed as `hand` does; no part is empty."""
        for start in range(min(parts, len(items))):
            self.hand(worker, function, items[start::parts])

    def finish(self) -> list[T]:
        """Every part's result. The caller has nothing else left to do, so it does the parts no worker has
        started, from the last, while the workers go on from the first; then it waits for theirs (doing
        here those of a worker that died)."""
        done: dict[int, T] = {}
        started = len(self._handed)
        while started and ((future := self._handed[started - 1][0]) is None or future.cancel()):
            started -= 1
            _, function, arguments = self._handed[started]
            done[started] = function(*arguments)
        for index, (future, function, arguments) in enumerate(self._handed[:started]):
            done[index] = outcome(future, function, *arguments)
        self._handed = []
        return [done[index] for index in range(len(done))]

    def abandon(self) -> None:
        """Drop the parts no worker has started and wait for those one has (their errors ignored): after a
        failure, so that nothing a worker writes outlives the caller's clean-up of what it wrote."""
        # all dropped first, from the last: a worker done with one part would otherwise start the next meanwhile
        started = [future for future, _, _ in reversed(self._handed) if future is not None and not future.cancel()]
        for future in started:
            with suppress(Exception):
                future.result()
        self._handed = []
