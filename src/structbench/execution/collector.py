"""The cyclic garbage collector's thresholds in the processes structbench starts: the command line,
its run workers (local and Ray) and, through `tests/conftest.py`, the test session.

A command holds millions of small objects for its whole length: every split it has read (each
example a model with its lists), the store's rows, the models' code. None of them is garbage, yet
CPython 3.11's default thresholds, (700, 10, 10), have the collector walk them all again after
every hundred collections of young objects: evaluating every baseline on every offline suite in one
process (the golden table, built suites) made 26 such full passes, 15-16 s of its 87-98 s.
Collections are made rarer, not switched off: garbage with cycles (a traceback's frames, a model's
modules) is still freed, after 50,000 allocations rather than 700, and full passes come ten times
less often. With `THRESHOLDS` the same evaluation made 5 passes of the middle generation and none
of the oldest, took 71-74 s, and its peak memory was the same (1.94 against 1.93 GB).

Set where a process of structbench's own starts, never on import: a program that imports
structbench keeps its own collector.
"""

from __future__ import annotations

import gc

THRESHOLDS = (50_000, 20, 100)
"""(allocations before a young collection, young collections before a middle one, middle before a full one)."""


def set_thresholds() -> None:
    """Make this process's collections rarer (`THRESHOLDS`); idempotent."""
    gc.set_threshold(*THRESHOLDS)
