"""Models for the sweep's failure tests, loaded by workers as `tests.support.sweep_models:Class`.

`Hostile` copies its input on every seed but one, where it misbehaves as its `behaviour` says:
hangs, raises, kills its own process (a worker that dies mid-run), dies of a segmentation fault,
exits the interpreter outright, answers garbage, writes its pid to a file and waits to be killed
from outside, prints to standard output (from Python and to file descriptor 1), forks a child
that outlives the run (its pid in the pid file), or holds `megabytes` of memory.
Every fit is logged to `STRUCTBENCH_TEST_FIT_LOG` (when set), one line per fit, so that a test
can tell which runs were computed, and how often.
"""

from __future__ import annotations

import os
import signal
import time
from pathlib import Path
from typing import Literal

from pydantic import NonNegativeFloat

from structbench.specs import Split

FIT_LOG = "STRUCTBENCH_TEST_FIT_LOG"
PID_FILE = "STRUCTBENCH_TEST_PID_FILE"

Behaviour = Literal[
    "copy",
    "hang",
    "crash",
    "crash-with-output",
    "kill",
    "segfault",
    "exit",
    "garbage",
    "wait-for-kill",
    "print",
    "fork",
    "memory",
]


def log_fit(suite: str, tag: str, seed: int) -> None:
    """Append `suite tag seed pid niceness` to the fit log, if the test asked for one."""
    path = os.environ.get(FIT_LOG)
    if path:
        with open(path, "a", encoding="utf-8") as log:
            log.write(f"{suite} {tag} {seed} {os.getpid()} {os.nice(0)}\n")


class Hostile:
    """Copies its input; on seed `on_seed` it does what `behaviour` says instead."""

    name = "hostile"
    protocols = ("transduction",)

    def __init__(
        self, behaviour: Behaviour = "copy", on_seed: int = 0, sleep: NonNegativeFloat = 0.0, megabytes: int = 0
    ) -> None:
        self.behaviour = behaviour
        self.on_seed = on_seed
        self.sleep = sleep
        self.megabytes = megabytes
        self.misbehave = False
        self.held = b""

    def fit(self, train: Split, dev: Split | None, *, seed: int) -> None:
        log_fit(train.suite, self.behaviour, seed)
        time.sleep(self.sleep)
        self.misbehave = seed == self.on_seed
        if not self.misbehave:
            return
        if self.behaviour == "hang":
            time.sleep(3600)
        elif self.behaviour == "crash":
            raise RuntimeError(f"exploding gradient at seed {seed}")
        elif self.behaviour == "crash-with-output":  # a message that goes on, as a command model's stderr tail
            raise RuntimeError("the model's process ended\n--- stderr tail ---\n" + "noise line\n" * 400)
        elif self.behaviour == "kill":
            os.kill(os.getpid(), signal.SIGKILL)
        elif self.behaviour == "segfault":
            os.kill(os.getpid(), signal.SIGSEGV)
        elif self.behaviour == "exit":
            os._exit(3)  # no exception, no cleanup: the interpreter is gone
        elif self.behaviour == "print":
            print("HELLO FROM MODEL STDOUT")
            os.write(1, b"HELLO FROM MODEL FD 1\n")
        elif self.behaviour == "fork":
            child = os.fork()
            if child == 0:  # the child: lives on, holding every descriptor its parent had
                time.sleep(3600)
                os._exit(0)
            Path(os.environ[PID_FILE]).write_text(str(child))
        elif self.behaviour == "memory":
            self.held = b"\x01" * (self.megabytes * 2**20)  # written, so resident (zero pages are not)
            time.sleep(3600)
        elif self.behaviour == "wait-for-kill":
            Path(os.environ[PID_FILE]).write_text(str(os.getpid()))
            time.sleep(3600)

    def transduce(self, inputs: list[list[str]]) -> list[list[str]]:
        if self.misbehave and self.behaviour == "garbage":
            return [" ".join(tokens) for tokens in inputs[:-1]]  # type: ignore[misc]  # strings, one too few
        return [list(tokens) for tokens in inputs]


class SlowCopy:
    """Copies its input after `seconds` of fitting, logging each fit: a run worth killing a sweep in."""

    name = "slow-copy"
    protocols = ("transduction",)

    def __init__(self, seconds: NonNegativeFloat = 0.3) -> None:
        self.seconds = seconds

    def fit(self, train: Split, dev: Split | None, *, seed: int) -> None:
        time.sleep(self.seconds)
        log_fit(train.suite, f"slow{self.seconds:g}", seed)

    def transduce(self, inputs: list[list[str]]) -> list[list[str]]:
        return [list(tokens) for tokens in inputs]
