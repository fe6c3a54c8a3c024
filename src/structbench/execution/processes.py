"""The processes of a worker's process group, as Linux's `/proc` lists them: what a model started.

A local worker is the leader of a process group of its own (`structbench.execution.executors`), and
every process a model forks stays in that group unless it leaves it on purpose. Reading the group
from `/proc` lets the driver end what a run left behind without ending the worker itself (which
lives on for the next run), and add up the group's memory for `--max-memory`. No maintained
library reads a process group (psutil lists processes, and is not a dependency for this one loop).
Elsewhere than Linux both come back empty: leftover children are then ended only with the worker.
"""

from __future__ import annotations

import contextlib
import os
import signal
from pathlib import Path

PROC = Path("/proc")
PAGE_BYTES = os.sysconf("SC_PAGE_SIZE") if hasattr(os, "sysconf") else 4096


def _stat_fields(pid: int) -> list[str] | None:
    """The fields of `/proc/PID/stat` after the command name (which may hold spaces), or None."""
    try:
        text = (PROC / str(pid) / "stat").read_text()
    except OSError:
        return None
    return text.rsplit(")", 1)[-1].split()


def group_members(group: int) -> list[int]:
    """The live processes whose process group is `group` (its leader included, if alive)."""
    if not PROC.is_dir():
        return []
    members = []
    for entry in PROC.iterdir():
        if not entry.name.isdigit():
            continue
        fields = _stat_fields(int(entry.name))
        # fields[0] is the state (Z: a zombie, already dead), fields[2] the process group
        if fields is not None and len(fields) > 2 and fields[0] != "Z" and fields[2] == str(group):
            members.append(int(entry.name))
    return members


def group_memory(group: int) -> int:
    """The resident memory of every process of `group`, in bytes."""
    total = 0
    for pid in group_members(group):
        try:
            pages = int((PROC / str(pid) / "statm").read_text().split()[1])
        except (OSError, ValueError, IndexError):
            continue
        total += pages * PAGE_BYTES
    return total


def end_others(group: int, keep: int) -> int:
    """Kill every process of `group` but `keep` (the worker); how many there were."""
    others = [pid for pid in group_members(group) if pid != keep]
    for pid in others:
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.kill(pid, signal.SIGKILL)
    return len(others)


def descendants(pid: int) -> list[int]:
    """The live processes started by `pid`, and by those, as `/proc/PID/task/*/children` lists them."""
    found: list[int] = []
    parents = [pid]
    while parents:
        parent = parents.pop()
        for task in (PROC / str(parent) / "task").glob("*"):
            try:
                children = [int(child) for child in (task / "children").read_text().split()]
            except (OSError, ValueError):
                continue
            found += children
            parents += children
    return found


def end_descendants(pid: int) -> int:
    """Kill every process `pid` started (and they started); how many there were. A Ray task's worker
    is not the leader of a group of its own, so a model's children are found by descent instead."""
    found = descendants(pid)
    for child in found:
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.kill(child, signal.SIGKILL)
    return len(found)
