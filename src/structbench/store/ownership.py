"""Who holds a run: the claim a process takes on a run key, and whether a holder may still finish it.

A `RunClaim` is `claim_run`'s answer (claimed, cached or busy). A claim is signed
`host:pid:start:token` (`start`: the process's start time, in clock ticks since boot, from
`/proc/PID/stat`; empty where there is no `/proc`), or `host:pid:token` in stores written before
start times were recorded. A `running` row's holder counts as alive when it runs on another host
(which cannot be checked) or its pid exists on this one with the recorded start time (a pid reused by
a later process is not the holder), and, for this very process, while one of its Stores still holds
the claim (`HELD`): a claim left behind by an exception here is stale. A `running` row whose holder
is not alive, or which was released (no owner), is an interrupted run: readers show it as
`interrupted` (`shown_status`) and the next ask redoes it. `ClaimLost` tells a process that its row
was taken over, so that it never overwrites another's.
"""

from __future__ import annotations

import os
import socket
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

HOST = socket.gethostname()
"""This machine, as owners name it."""
HELD: set[tuple[str, int]] = set()
"""(owner, run id) of every claim a Store of this process holds right now (for rows owned by this pid)."""
INTERRUPTED = "interrupted"
"""How readers show a `running` row whose holder is gone (the store keeps it `running`, to be redone)."""


class ClaimLost(RuntimeError):
    """The row this process claimed is no longer its own (someone took it over); nothing was written."""


def process_start(pid: int) -> str:
    """When process `pid` started, in clock ticks since boot (field 22 of `/proc/PID/stat`), as text;
    empty where it cannot be read (no such process, no `/proc`)."""
    try:
        text = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return ""
    fields = text.rsplit(")", 1)[-1].split()  # after the command name, which may hold spaces and ")"
    return fields[19] if len(fields) > 19 and fields[19].isdigit() else ""  # field 22 is the 20th after it


def owner_of(token: str) -> str:
    """How a Store of this process signs its claims: `host:pid:start:token`."""
    pid = os.getpid()
    return f"{HOST}:{pid}:{process_start(pid)}:{token}"


def parse_owner(owner: str) -> tuple[str, int, str | None] | None:
    """(host, pid, start time or None where not recorded) of a claim's signature; None if it is not one."""
    parts = owner.split(":")
    if len(parts) not in (3, 4):
        return None
    try:
        pid = int(parts[1])
    except ValueError:
        return None
    return parts[0], pid, (parts[2] if len(parts) == 4 else None)


@dataclass(frozen=True)
class RunClaim:
    """What `claim_run` found for a run key, and whether this process now holds the run.

    `state` is `claimed` (this process must run it and then call `finish_run`, `end_run` or
    `discard`), `cached` (finished: `status` is `done`, `n/a` or `failed`, with `error`) or
    `busy` (a live process, `owner`, is running it: wait and claim again)."""

    run_id: int
    state: Literal["claimed", "cached", "busy"]
    status: str
    """The row's status: `running` when claimed or busy."""
    error: str | None
    owner: str | None
    """`host:pid:start:token` of the holder: this process when claimed, the other one when busy."""
    previous: tuple[Any, ...] | None = field(default=None, repr=False)
    """The row as an earlier attempt left it (a taken-over claim), restored by `discard`."""

    @property
    def holder(self) -> str:
        """The holding process for a log line: `pid 123 on host`."""
        parsed = parse_owner(self.owner or "")
        return "an unknown process" if parsed is None else f"pid {parsed[1]} on {parsed[0]}"


def owner_alive(owner: str | None, run_id: int) -> bool:
    """Whether the process that holds a `running` row may still finish it.

    A released row (NULL owner) is not held. On this host: alive if its pid exists and, where the
    claim recorded it and `/proc` shows it, started when the claim says (a reused pid is another
    process); or, for this very process, if one of its Stores still holds the claim (a claim left
    behind by an exception here is stale). Another host cannot be checked and counts as alive."""
    parsed = parse_owner(owner or "")
    if parsed is None:
        return False
    host, pid, start = parsed
    if host != HOST:
        return True
    if pid == os.getpid():
        return (owner or "", run_id) in HELD
    if pid <= 0:
        return False
    if sys.platform == "win32":  # os.kill(pid, 0) would send CTRL_C_EVENT there
        return True
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:  # exists, under another user
        pass
    except OSError:
        return False
    if start:
        now = process_start(pid)
        return not now or now == start  # unreadable: cannot tell, so alive
    return True


def shown_status(status: str, owner: str | None, run_id: int) -> str:
    """A run's status as readers show it: `interrupted` for a `running` row whose holder is gone."""
    return INTERRUPTED if status == "running" and not owner_alive(owner, run_id) else status
