"""How many CPU threads a run computes on, and holding the process to that count while it runs.

torch's CPU kernels and the BLAS under numpy and scipy split their work by thread, and some of them
(matrix products of some shapes in oneDNN/MKL) round differently when they do, so a number trained
on two threads need not equal one trained on one. Every run therefore computes on a fixed count:
1 unless the model's settings say `threads=N` (a neural baseline's recipe or `--set threads=N`),
and a count other than 1 is part of the run's key. A sweep gets its parallelism from workers.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from typing import Any

from threadpoolctl import ThreadpoolController

DEFAULT_THREADS = 1
"""The CPU threads of a run whose settings do not say otherwise."""


def run_threads(params: Mapping[str, Any], configuration: Mapping[str, Any] | None = None) -> int:
    """The threads a run computes on: its resolved configuration's `threads` (a neural baseline's
    recipe), else its `threads` setting, else `DEFAULT_THREADS`."""
    for source in (configuration or {}, params):
        value = source.get("threads")
        if isinstance(value, int) and not isinstance(value, bool) and value > 0:
            return value
    return DEFAULT_THREADS


_controller: tuple[int, ThreadpoolController] | None = None
"""The thread-pool libraries found when `sys.modules` last had the count it holds: finding them
(threadpoolctl's scan of every loaded shared library) costs 2 ms, most of an `oracle` seed's own time."""


def _libraries() -> ThreadpoolController:
    """The BLAS and OpenMP libraries loaded in this process, found again after any import (which is
    how a native library gets loaded: an extension module), else remembered."""
    global _controller
    if _controller is None or _controller[0] != len(sys.modules):
        _controller = (len(sys.modules), ThreadpoolController())
    return _controller[1]


@contextmanager
def pinned(threads: int) -> Iterator[None]:
    """Hold torch and every BLAS and OpenMP library loaded in this process to `threads` threads, and
    those loaded meanwhile too (`OMP_NUM_THREADS`, which torch reads when it is first imported); give
    back the counts they had on leaving."""
    torch = sys.modules.get("torch")
    before = torch.get_num_threads() if torch is not None else None
    variable = os.environ.get("OMP_NUM_THREADS")
    os.environ["OMP_NUM_THREADS"] = str(threads)
    try:
        with _libraries().limit(limits=threads):
            if torch is not None:
                torch.set_num_threads(threads)
            yield
    finally:
        if variable is None:
            os.environ.pop("OMP_NUM_THREADS", None)
        else:
            os.environ["OMP_NUM_THREADS"] = variable
        if torch is not None and before is not None:
            torch.set_num_threads(before)
