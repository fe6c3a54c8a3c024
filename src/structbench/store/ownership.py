"""Who holds a run: the claim a process takes on a run key, and whether a holder may still finish it.

A `RunClaim` is `claim_run`'s answer (claimed, cached or busy). A claim is signed `host:pid:token`;
a `running` row's holder counts as alive when it runs on another host (which cannot be checked)
or its pid exists on this one, and, for this very process, while one of its Stores still holds
the claim (`HELD`): a claim left behind by an exception here is stale. `ClaimLost` tells a
process that its row was taken over, so that it never overwrites another's.
"""

from __future__ import annotations

import os
import socket
import sys
from dataclasses import dataclass, field
from typing import Any, Literal

HOST = socket.gethostname()
"""This machine, as owners name it."""
HELD: set[tuple[str, int]] = set()
"""(owner, run id) of every claim a Store of this process holds right now (for rows owned by this pid)."""


class ClaimLost(RuntimeError):
    """The row this process claimed is no longer its own (someone took it over); nothing was written."""


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
    """`host:pid:token` of the holder: this process when claimed, the other one when busy."""
    previous: tuple[Any, ...] | None = field(default=None, repr=False)
    """The row as an earlier attempt left it (a taken-over claim), restored by `discard`."""

    @property
    def holder(self) -> str:
        """The holding process for a log line: `pid 123 on host`."""
        host, pid, _ = (self.owner or "?:?:?").rsplit(":", 2)
        return f"pid {pid} on {host}"


def owner_alive(owner: str | None, run_id: int) -> bool:
    """Whether the process that holds a `running` row may still finish it.

    A released row (NULL owner) is not held. On this host: alive if its pid exists, or, for
    this very process, if one of its Stores still holds the claim (a claim left behind by an
    exception here is stale). Another host cannot be checked and counts as alive."""
    if not owner:
        return False
    try:
        host, pid_text, _ = owner.rsplit(":", 2)
        pid = int(pid_text)
    except ValueError:
        return False
    if host != HOST:
        return True
    if pid == os.getpid():
        return (owner, run_id) in HELD
    if pid <= 0:
        return False
    if sys.platform == "win32":  # os.kill(pid, 0) would send CTRL_C_EVENT there
        return True
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:  # exists, under another user
        return True
    except OSError:
        return False
    return True
