"""Every process a run started, however it left: found, counted and ended (Linux's `/proc`, cgroups).

A model may start processes (a server, data-loader workers), and a daemon leaves on purpose: it
forks twice and calls `setsid`, so that neither its parent, its process group nor its session
leads back to the run (issue 45: such daemons outlived `run`, `run --in-process` and `sweep`, and
`--max-memory` did not see them). Three things find them all the same:

- a *subreaper* (`prctl(PR_SET_CHILD_SUBREAPER)`): the process that runs models (a local worker;
  structbench's own under `run --in-process`; a Ray task's worker while it runs one) adopts the
  orphans below it instead of init, so that a daemon stays its descendant;
- a *marker*: an environment variable named for the run (`STRUCTBENCH_RUN_<token>=1`) that every
  process started under it inherits and `/proc/PID/environ` shows: it finds what outlived the
  subreaper itself (a worker killed at its time-out), and markers nest (a command model's own
  inside its worker's);
- a *cgroup* (v2) per local worker, where this process may make one (root, or a cgroup delegated
  to the user): no process leaves it unless moved, and the kernel ends it whole (`cgroup.kill`).
  `STRUCTBENCH_NO_CGROUP=1` does without.

`Tracked` puts them together for one root process: its members, their resident memory (what
`--max-memory` counts: the sum of their RSS) and `end`, which stops every member (SIGSTOP) until a
look finds no new one, so that none forks past it, then kills them. `contained` does so for a run
in this process. psutil would list processes but knows no markers or cgroups, and is not a
dependency for these loops.

Elsewhere than Linux there is no `/proc`, subreaper or cgroup: members come back empty, and what
a model started ends only with the worker's process group (POSIX), as before issue 45.
"""

from __future__ import annotations

import contextlib
import ctypes
import os
import secrets
import signal
import sys
import time
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path

PROC = Path("/proc")
LINUX = sys.platform.startswith("linux")
PAGE_BYTES = os.sysconf("SC_PAGE_SIZE") if hasattr(os, "sysconf") else 4096
MARKER_PREFIX = "STRUCTBENCH_RUN_"
"""A marker is an environment variable `STRUCTBENCH_RUN_<16 hex digits>`, set to 1."""
NO_CGROUP_VARIABLE = "STRUCTBENCH_NO_CGROUP"
"""Set (to anything but 0 or empty) to track a worker's processes without a cgroup of its own."""
CGROUP_PREFIX = "structbench-"
"""A worker's cgroup: `structbench-<driver pid>-<token>`, beside the driver's own cgroup's other children."""
ROUNDS = 100
"""At most this many looks for members not yet stopped: each finds only what forked since the last."""
PR_SET_CHILD_SUBREAPER, PR_GET_CHILD_SUBREAPER = 36, 37
GONE = ("Z", "X")
"""`/proc/PID/stat` states of a process that has ended (a zombie waits only to be reaped)."""


@dataclass(frozen=True)
class Status:
    """One process's line of `/proc/PID/stat`: what tells whose it is."""

    pid: int
    state: str
    parent: int
    group: int
    session: int


def _status(pid: int) -> Status | None:
    try:
        text = (PROC / str(pid) / "stat").read_text()
    except OSError:
        return None
    fields = text.rsplit(")", 1)[-1].split()  # after the command name, which may hold spaces and ")"
    try:
        return Status(pid, fields[0], int(fields[1]), int(fields[2]), int(fields[3]))
    except (IndexError, ValueError):
        return None


def statuses(*, ended: bool = False) -> dict[int, Status]:
    """Every process `/proc` lists, by pid: those still running, or with `ended` zombies too."""
    if not PROC.is_dir():
        return {}
    found = {}
    for entry in PROC.iterdir():
        status = _status(int(entry.name)) if entry.name.isdigit() else None
        if status is not None and (ended or status.state not in GONE):
            found[status.pid] = status
    return found


def group_members(group: int) -> list[int]:
    """The live processes whose process group is `group` (its leader included, if alive)."""
    return [status.pid for status in statuses().values() if status.group == group]


def descendants(pid: int, table: dict[int, Status] | None = None) -> list[int]:
    """The live processes started by `pid`, and by those, as their parent pids link them."""
    table = statuses() if table is None else table
    children: dict[int, list[int]] = {}
    for status in table.values():
        children.setdefault(status.parent, []).append(status.pid)
    found: list[int] = []
    parents = [pid]
    while parents:
        for child in children.get(parents.pop(), []):
            if child != pid and child not in found:
                found.append(child)
                parents.append(child)
    return found


def new_marker() -> str:
    """A fresh marker's variable name (see the module docstring)."""
    return MARKER_PREFIX + secrets.token_hex(8).upper()


def carriers(marker: str, among: Iterable[int] | None = None) -> list[int]:
    """The processes (of `among`, else every live one) whose environment holds `marker=1`: the one
    they started with, which a process forked without `exec` shares with its parent."""
    entry = f"{marker}=1".encode()
    found = []
    for pid in statuses() if among is None else among:
        try:
            environment = (PROC / str(pid) / "environ").read_bytes()
        except OSError:  # ended, or another user's
            continue
        if entry in environment and entry in environment.split(b"\0"):
            found.append(pid)
    return found


def resident(pids: Iterable[int]) -> int:
    """The resident memory of the processes `pids`, in bytes (their RSS, summed)."""
    total = 0
    for pid in set(pids):
        try:
            pages = int((PROC / str(pid) / "statm").read_text().split()[1])
        except (OSError, ValueError, IndexError):
            continue
        total += pages * PAGE_BYTES
    return total


def _signal(pids: Iterable[int], number: signal.Signals) -> None:
    for pid in pids:
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.kill(pid, number)


def _prctl(option: int, value: int = 0) -> int | None:
    """`prctl(option, value)` through libc; None where there is none (not Linux) or it failed."""
    if not LINUX:
        return None
    try:
        libc = ctypes.CDLL(None, use_errno=True)
        if option == PR_GET_CHILD_SUBREAPER:
            answer = ctypes.c_int(0)
            failed = libc.prctl(option, ctypes.byref(answer), 0, 0, 0)
            return None if failed else answer.value
        return None if libc.prctl(option, value, 0, 0, 0) else 0
    except (OSError, AttributeError):
        return None


def subreaper(on: bool) -> bool:
    """Make this process adopt the orphans below it (or stop); whether it did before."""
    before = _prctl(PR_GET_CHILD_SUBREAPER)
    _prctl(PR_SET_CHILD_SUBREAPER, 1 if on else 0)
    return bool(before)


def reap(pids: Iterable[int] | None = None) -> None:
    """Collect the exit status of this process's ended children (of `pids`, else all zombies among
    them), so that no zombie is left: a subreaper's adopted orphans are its children to reap."""
    me = os.getpid()
    candidates = (
        [s.pid for s in statuses(ended=True).values() if s.parent == me and s.state in GONE] if pids is None else pids
    )
    for pid in candidates:
        with contextlib.suppress(ChildProcessError, OSError):
            os.waitpid(pid, os.WNOHANG)


def _own_cgroup() -> Path | None:
    """This process's cgroup (v2) folder, where the unified hierarchy is mounted; None without one."""
    try:
        lines = (PROC / "self" / "cgroup").read_text().splitlines()
        mounts = (PROC / "self" / "mountinfo").read_text().splitlines()
    except OSError:
        return None
    own = next((line[3:] for line in lines if line.startswith("0::")), None)
    if own is None:
        return None
    for mount in mounts:
        fields = mount.split()
        if "-" not in fields:
            continue
        system = fields[fields.index("-") + 1]
        root, point = fields[3], fields[4]
        if system == "cgroup2" and (own == root or own.startswith(root.rstrip("/") + "/")):
            return Path(point) / own[len(root) :].lstrip("/")
    return None


class Cgroup:
    """A cgroup (v2) of a worker's own, made beside this process's cgroup (see the module docstring)."""

    def __init__(self, path: Path) -> None:
        self.path = path

    @classmethod
    def make(cls) -> Cgroup | None:
        """A fresh cgroup, or None where there can be none here (not Linux, no cgroup v2 mounted,
        no right to make one, `STRUCTBENCH_NO_CGROUP` set)."""
        if not LINUX or os.environ.get(NO_CGROUP_VARIABLE, "0") not in ("", "0"):
            return None
        base = _own_cgroup()
        if base is None or not os.access(base, os.W_OK):
            return None
        _remove_stale(base)
        path = base / f"{CGROUP_PREFIX}{os.getpid()}-{secrets.token_hex(4)}"
        try:
            path.mkdir()
        except OSError:
            return None
        return cls(path)

    def add(self, pid: int) -> bool:
        """Move process `pid` into the cgroup; whether it could be."""
        try:
            (self.path / "cgroup.procs").write_text(f"{pid}\n")
        except OSError:
            return False
        return True

    def members(self) -> set[int]:
        """The processes in the cgroup and in any cgroup below it."""
        found: set[int] = set()
        for procs in [self.path / "cgroup.procs", *self.path.glob("**/cgroup.procs")]:
            with contextlib.suppress(OSError, ValueError):
                found.update(int(line) for line in procs.read_text().split())
        return found

    def kill(self) -> bool:
        """Kill every process in the cgroup at once (Linux 5.14's `cgroup.kill`); whether it could."""
        try:
            (self.path / "cgroup.kill").write_text("1\n")
        except OSError:
            return False
        return True

    def remove(self) -> None:
        """Remove the cgroup once nothing runs in it (waiting a little for the kernel to empty it)."""
        deadline = time.monotonic() + 5.0
        while True:
            try:
                self.path.rmdir()
                return
            except FileNotFoundError:
                return
            except OSError:
                if time.monotonic() > deadline:
                    return  # something still runs there: left for the next start to remove (`_remove_stale`)
                time.sleep(0.05)


def _remove_stale(base: Path) -> None:
    """Remove the empty cgroups of earlier drivers that are no longer running (killed outright)."""
    for path in base.glob(f"{CGROUP_PREFIX}*"):
        owner = path.name[len(CGROUP_PREFIX) :].split("-", 1)[0]
        if owner.isdigit() and not (PROC / owner).exists():
            with contextlib.suppress(OSError):
                path.rmdir()  # refused while a process runs there


class Tracked:
    """The processes started under one root process (a worker, or this one for a run): see the
    module docstring. `spared` are processes that ran before (not the run's)."""

    def __init__(
        self,
        root: int,
        marker: str | None = None,
        cgroup: Cgroup | None = None,
        *,
        session: bool = False,
        adopts: bool = False,
        spared: Iterable[int] = (),
    ) -> None:
        """`session`: the root leads a session made for it (a local worker's), so that every process
        of the session is the root's; not so for this process, whose group may hold a shell's pipe.
        `adopts`: the root is a subreaper (a local worker; this process `contained`), so that its
        orphans are its descendants while it lives."""
        self.root, self.marker, self.cgroup, self.session = root, marker, cgroup, session
        self.adopts = adopts
        self.spared = frozenset(spared)
        self.root_alive = True
        """False once the root has ended and been reaped: its pid may be another process's by then."""

    def members(self, *, thorough: bool = True) -> set[int]:
        """Every live process the root started (itself excluded): its descendants, its session's
        members, the cgroup's members and the marker's carriers. Not `thorough`, the carriers are
        left out while a root that adopts lives (its orphans are its descendants): `carriers` took
        49 ms a call over 112 processes on a loaded 2-core machine."""
        table = statuses()
        found: set[int] = set()
        if self.root_alive:
            found.update(descendants(self.root, table))
        if self.session:  # the session's id stays the root's pid while any member lives: never reused
            found.update(s.pid for s in table.values() if s.session == self.root)
        if self.cgroup is not None:
            found.update(pid for pid in self.cgroup.members() if pid in table)
        elif self.marker is not None and (thorough or not (self.adopts and self.root_alive)):  # a cgroup holds them
            found.update(carriers(self.marker, table))
        return found - self.spared - {self.root, os.getpid()}

    def memory(self) -> int:
        """The resident memory of the root and its members, in bytes (looked at often: not thorough)."""
        return resident([*self.members(thorough=False), *([self.root] if self.root_alive else [])])

    def end(self, *, root: bool = False) -> int:
        """Kill every member (and with `root` the root too); how many there were. Each is first
        stopped, so that what a member forks meanwhile is found by the next look, not missed. While
        a root that adopts lives its descendants hold its orphans, so the marker's carriers are
        looked for once it has ended (or where it does not adopt)."""
        stopped: set[int] = set()
        if root and self.root_alive:
            _signal([self.root], signal.SIGSTOP)
        for _ in range(ROUNDS):
            found = self.members(thorough=False) - stopped
            if not found:
                break
            _signal(found, signal.SIGSTOP)
            stopped |= found
        if root and self.cgroup is not None:
            self.cgroup.kill()
        _signal(stopped, signal.SIGKILL)
        if root and self.root_alive:
            _signal([self.root], signal.SIGKILL)
        return len(stopped)


def end_marked(marker: str) -> int:
    """Kill every process that carries `marker` (stopping each first, as `Tracked.end` does); how many."""
    tracked = Tracked(os.getpid(), marker)
    tracked.root_alive = False  # not the root's descendants: only the marker's carriers
    return tracked.end()


@contextlib.contextmanager
def contained() -> Iterator[Tracked]:
    """Run something in this process whose processes end with it (`run --in-process`, a Ray task):
    this process adopts their orphans meanwhile, and they carry a marker of their own; on the way
    out every process they left is ended and reaped, and this process is as before."""
    marker = new_marker()
    me = os.getpid()
    was_subreaper = subreaper(True)
    tracked = Tracked(me, marker, adopts=True, spared=descendants(me) if LINUX else ())
    os.environ[marker] = "1"
    try:
        yield tracked
    finally:
        os.environ.pop(marker, None)
        ended = tracked.members()
        tracked.end()
        if not was_subreaper:
            subreaper(False)
        _reap_soon(ended)
        # and the orphans adopted meanwhile that had ended already (a command model's daemon, ended with it)
        reap(
            s.pid
            for s in statuses(ended=True).values()
            if s.parent == me and s.state in GONE and s.pid not in tracked.spared
        )


def _reap_soon(pids: Iterable[int], seconds: float = 5.0) -> None:
    """Reap the killed processes that are this process's children, as soon as each has ended."""
    me = os.getpid()
    waiting = {pid for pid in pids if (status := _status(pid)) is not None and status.parent == me}
    deadline = time.monotonic() + seconds
    while waiting and time.monotonic() < deadline:
        for pid in list(waiting):
            try:
                done, _ = os.waitpid(pid, os.WNOHANG)
            except ChildProcessError:
                done = pid
            if done:
                waiting.discard(pid)
        if waiting:
            time.sleep(0.01)
