"""A worker's process group read from Linux's `/proc` (`structbench.execution.processes`): what a model
started is found, counted in the group's memory and ended, while the worker itself lives on."""

from __future__ import annotations

import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from structbench.execution.processes import descendants, end_descendants, end_others, group_members, group_memory

pytestmark = pytest.mark.skipif(not Path("/proc/self/stat").is_file(), reason="reads Linux's /proc")

DEADLINE = 30.0
"""Seconds a started process has to show up in /proc (a Python start-up: well under a second)."""
LEADER = "import subprocess, time; children = [subprocess.Popen(['sleep', '60']) for _ in range(2)]; time.sleep(60)"
"""A worker whose model started two processes and runs on."""


def wait_for(found: Callable[[], bool]) -> None:
    ends = time.monotonic() + DEADLINE
    while not found():
        assert time.monotonic() < ends, "/proc did not show the processes as expected"
        time.sleep(0.05)


@pytest.fixture
def leader() -> Iterator[subprocess.Popen[bytes]]:
    """A process leading a group of its own, as a local worker does, that started two `sleep`s."""
    process = subprocess.Popen([sys.executable, "-c", LEADER], start_new_session=True)
    wait_for(lambda: len(group_members(process.pid)) == 3)
    yield process
    process.kill()
    process.wait()


def test_the_group_holds_the_leader_and_what_it_started(leader: subprocess.Popen[bytes]) -> None:
    members = group_members(leader.pid)
    assert leader.pid in members and len(members) == 3
    assert sorted(descendants(leader.pid)) == sorted(pid for pid in members if pid != leader.pid)
    assert group_memory(leader.pid) > 0


def test_ending_the_others_leaves_the_leader_running(leader: subprocess.Popen[bytes]) -> None:
    assert end_others(leader.pid, keep=leader.pid) == 2
    wait_for(lambda: group_members(leader.pid) == [leader.pid])  # the killed ones are gone (or zombies)
    assert leader.poll() is None
    assert end_others(leader.pid, keep=leader.pid) == 0


def test_ending_the_descendants_finds_them_without_a_group_of_their_own() -> None:
    # as a Ray task's worker: the model's children share the worker's group, so they are found by descent
    process = subprocess.Popen([sys.executable, "-c", "import subprocess; subprocess.run(['sleep', '60'])"])
    try:
        wait_for(lambda: len(descendants(process.pid)) == 1)
        assert end_descendants(process.pid) == 1
        assert process.wait(timeout=DEADLINE) == 0  # its child was killed, so `run` returned
    finally:
        process.kill()
        process.wait()
