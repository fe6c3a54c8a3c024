"""Models that leave a daemon behind: each fit double-forks, and the grandchild calls `setsid`.

The classic daemon: fork, `setsid` in the child (a session and process group of its own, so that
neither a process group nor a session finds it), fork again and let the child exit, so that the
grandchild is an orphan whose parent is no longer the process that ran the model. It appends its
pid to `STRUCTBENCH_TEST_DAEMON_PIDS` (one line each), names itself `sb-test-daemon` (its
`/proc/PID/comm`, what `ps -o comm` shows), holds `megabytes` of written memory (then touches
`PIDS.PID.held`; the model waits for it, and `settle` seconds more) and sleeps `lifetime` seconds: long past any run, so that a daemon alive after its run is one nothing ended.

- `Daemonising` (`tests.support.daemons:Daemonising`): a Python model, whose daemon is forked
  without `exec` (it carries the environment its interpreter started with).
- `daemon_command.py` beside it: the same as a command model (`--set command='python
  tests/support/daemon_command.py'`), whose daemon `exec`s a fresh interpreter; it answers
  transduce with its input.
"""

from __future__ import annotations

import os
import time
from pathlib import Path

from pydantic import NonNegativeInt, PositiveFloat

from structbench.specs import Split

PIDS_VARIABLE = "STRUCTBENCH_TEST_DAEMON_PIDS"
"""The file each daemon appends its pid to."""
NAME = "sb-test-daemon"
"""The daemons' process name (`/proc/PID/comm`, at most 15 bytes)."""
COMMAND_SCRIPT = Path(__file__).with_name("daemon_command.py")


def become_daemon(megabytes: int, lifetime: float) -> None:
    """In a fresh process (the first fork's child): leave the session, fork the daemon, exit."""
    os.setsid()
    if os.fork():
        os._exit(0)  # the session leader exits: the daemon is an orphan, reparented away from the model
    Path("/proc/self/comm").write_text(NAME)
    path = os.environ[PIDS_VARIABLE]
    with open(path, "a", encoding="utf-8") as pids:
        pids.write(f"{os.getpid()}\n")
    held = b"\x01" * (megabytes * 2**20)  # written, so resident (zero pages are not)
    Path(f"{path}.{os.getpid()}.held").touch()
    time.sleep(lifetime)
    del held
    os._exit(0)


def daemonise(megabytes: int, lifetime: float) -> None:
    """Start the daemon and wait until its first fork has exited (as a daemonising program does)."""
    child = os.fork()
    if child == 0:
        try:
            become_daemon(megabytes, lifetime)
        finally:
            os._exit(1)
    os.waitpid(child, 0)


def daemon_pids() -> list[int]:
    """The pids the daemons have written so far."""
    path = Path(os.environ[PIDS_VARIABLE])
    return [int(pid) for pid in path.read_text().split()] if path.is_file() else []


def wait_for_daemon(count: int, settle: float) -> None:
    """Wait until the `count`th daemon holds its memory, then `settle` seconds more: a supervisor
    that samples memory sees the daemon's meanwhile (a run it kills ends here)."""
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        pids = daemon_pids()
        if len(pids) >= count and Path(f"{os.environ[PIDS_VARIABLE]}.{pids[count - 1]}.held").exists():
            break
        time.sleep(0.05)
    time.sleep(settle)


class Daemonising:
    """Copies its input; every fit leaves a daemon holding `megabytes` (see the module docstring)."""

    name = "daemonising"
    protocols = ("transduction",)

    def __init__(self, megabytes: NonNegativeInt = 0, lifetime: PositiveFloat = 600.0, settle: float = 0.0) -> None:
        self.megabytes = megabytes
        self.lifetime = lifetime
        self.settle = settle

    def fit(self, train: Split, dev: Split | None, *, seed: int) -> None:
        before = len(daemon_pids())
        daemonise(self.megabytes, self.lifetime)
        wait_for_daemon(before + 1, self.settle)

    def transduce(self, inputs: list[list[str]]) -> list[list[str]]:
        return [list(tokens) for tokens in inputs]
