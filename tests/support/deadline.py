"""A deadline for a block that could block forever (a FIFO opened for reading waits for a writer):
the test fails, instead of hanging the run."""

from __future__ import annotations

import signal
from collections.abc import Iterator
from contextlib import contextmanager
from types import FrameType


class Hung(BaseException):
    """The block outlived its deadline (a BaseException: no `except Exception` of the code under test catches it)."""


@contextmanager
def deadline(seconds: float = 60.0) -> Iterator[None]:
    """Raise `Hung` in the block once it has taken `seconds` (SIGALRM: the main thread, on Unix); a
    blocked `open` or `read` is interrupted by it."""

    def expired(signum: int, frame: FrameType | None) -> None:
        raise Hung(f"still running after {seconds:g} s: it blocked")

    previous = signal.signal(signal.SIGALRM, expired)
    signal.setitimer(signal.ITIMER_REAL, seconds)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)
