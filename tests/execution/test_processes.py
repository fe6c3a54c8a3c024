"""Every process a run started, however it left (`structbench.execution.processes`): a worker's session,
its descendants, a daemon that double-forked and called `setsid`, found by adoption (a subreaper),
by the run's marker or by a cgroup; counted in the memory `--max-memory` limits, and ended while
the root (a worker, or this process under `run --in-process`) lives on."""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import sys
import textwrap
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from structbench.execution import processes
from structbench.execution.processes import (
    Cgroup,
    Tracked,
    carriers,
    contained,
    descendants,
    end_marked,
    group_members,
    new_marker,
    statuses,
    subreaper,
)

pytestmark = pytest.mark.skipif(not Path("/proc/self/stat").is_file(), reason="reads Linux's /proc")

DEADLINE = 30.0
"""Seconds a started process has to show up in /proc, or a killed one to go (well under a second)."""
LEADER = "import subprocess, time; children = [subprocess.Popen(['sleep', '60']) for _ in range(2)]; time.sleep(60)"
"""A worker whose model started two processes and runs on."""
DAEMONISER = textwrap.dedent(
    """
    import ctypes, os, sys, time
    if sys.argv[2] == "subreaper":
        ctypes.CDLL(None).prctl(36, 1, 0, 0, 0)  # PR_SET_CHILD_SUBREAPER, as a local worker is
    child = os.fork()
    if child == 0:
        os.setsid()
        if os.fork():
            os._exit(0)
        with open(sys.argv[1] + ".tmp", "w") as out:
            out.write(str(os.getpid()))
        os.rename(sys.argv[1] + ".tmp", sys.argv[1])
        time.sleep(120)
        os._exit(0)
    os.waitpid(child, 0)
    time.sleep(120)
    """
)
"""`python -c DAEMONISER PIDFILE MODE`: leaves a daemon (its pid in PIDFILE) and runs on, as a
worker whose model daemonised; with MODE `subreaper` it adopts the daemon, as a worker does."""


def wait_for(found: Callable[[], bool], what: str = "/proc did not show the processes as expected") -> None:
    ends = time.monotonic() + DEADLINE
    while not found():
        assert time.monotonic() < ends, what
        time.sleep(0.05)


def running(pid: int) -> bool:
    return pid in statuses()


def pid_in(path: Path) -> int:
    wait_for(lambda: path.is_file(), "the daemon never wrote its pid")
    return int(path.read_text())


@pytest.fixture
def started() -> Iterator[list[int]]:
    """Pids a test started (or found its processes start), killed afterwards whatever the outcome."""
    pids: list[int] = []
    yield pids
    for pid in pids:
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.kill(pid, signal.SIGKILL)


def start(
    started: list[int], code: str, *args: str, marker: str | None = None, session: bool = True
) -> subprocess.Popen[bytes]:
    environment = {**os.environ, **({marker: "1"} if marker else {})}
    process = subprocess.Popen([sys.executable, "-c", code, *args], env=environment, start_new_session=session)
    started.append(process.pid)
    return process


def test_the_session_holds_the_leader_and_what_it_started(started: list[int]) -> None:
    leader = start(started, LEADER)
    wait_for(lambda: len(group_members(leader.pid)) == 3)
    tracked = Tracked(leader.pid, session=True)
    members = tracked.members()
    assert members == set(group_members(leader.pid)) - {leader.pid} == set(descendants(leader.pid))
    assert len(members) == 2
    assert tracked.memory() > 0


def test_ending_the_members_leaves_the_root_running(started: list[int]) -> None:
    leader = start(started, LEADER)
    wait_for(lambda: len(group_members(leader.pid)) == 3)
    tracked = Tracked(leader.pid, session=True)
    assert tracked.end() == 2
    wait_for(lambda: not tracked.members())  # the killed ones are gone (or zombies)
    assert leader.poll() is None
    assert tracked.end() == 0


@pytest.mark.parametrize("root", ["subreaper", "plain"])
def test_a_daemon_that_left_the_session_is_found_and_ended(started: list[int], tmp_path: Path, root: str) -> None:
    marker = new_marker()
    leader = start(started, DAEMONISER, str(tmp_path / "daemon"), root, marker=marker)
    daemon = pid_in(tmp_path / "daemon")
    started.append(daemon)
    status = statuses()[daemon]
    assert leader.pid not in (status.session, status.group)  # neither the root's session nor its group
    tracked = Tracked(leader.pid, marker, session=True, adopts=root == "subreaper")
    assert tracked.members() == {daemon}  # adopted by a subreaper, or carrying the marker
    assert tracked.members(thorough=False) == {daemon}  # an adopted one without reading environments
    assert (daemon in descendants(leader.pid)) == (root == "subreaper")
    assert set(carriers(marker)) == {leader.pid, daemon}
    assert tracked.end() == 1
    wait_for(lambda: not running(daemon), "the daemon outlived its end")
    assert leader.poll() is None


def test_what_outlived_a_killed_root_is_found_by_its_marker(started: list[int], tmp_path: Path) -> None:
    marker = new_marker()
    leader = start(started, DAEMONISER, str(tmp_path / "daemon"), "subreaper", marker=marker)
    daemon = pid_in(tmp_path / "daemon")
    started.append(daemon)
    leader.kill()
    leader.wait()
    tracked = Tracked(leader.pid, marker, session=True)
    tracked.root_alive = False  # reaped: its pid may be another process's now
    assert tracked.members() == {daemon}
    assert end_marked(marker) == 1
    wait_for(lambda: not running(daemon), "the daemon outlived its end")


def test_ending_with_the_root_stops_what_keeps_forking(started: list[int], tmp_path: Path) -> None:
    # a model that forks again whatever is killed: stopped before killed, none of it is left
    code = "import os, time\nwhile True:\n    if os.fork() == 0:\n        time.sleep(120)\n        os._exit(0)\n    time.sleep(0.01)"
    marker = new_marker()
    leader = start(started, code, marker=marker)
    wait_for(lambda: len(descendants(leader.pid)) >= 5)
    tracked = Tracked(leader.pid, marker, session=True)
    tracked.end(root=True)
    leader.wait(timeout=DEADLINE)
    tracked.root_alive = False
    wait_for(lambda: not carriers(marker), "a forked process outlived its root's end")


def test_a_run_contained_in_this_process_leaves_nothing_and_spares_what_ran_before(tmp_path: Path) -> None:
    before = subprocess.Popen(["sleep", "60"])
    try:
        was = processes._prctl(processes.PR_GET_CHILD_SUBREAPER)
        with contained() as tracked:
            assert processes._prctl(processes.PR_GET_CHILD_SUBREAPER) == 1  # this process adopts orphans now
            child = os.fork()
            if child == 0:  # a Python model's daemon, forked without exec: no marker in its environment
                os.setsid()
                if os.fork():
                    os._exit(0)
                (tmp_path / "daemon").write_text(str(os.getpid()))
                time.sleep(120)
                os._exit(0)
            os.waitpid(child, 0)
            daemon = pid_in(tmp_path / "daemon")
            assert statuses()[daemon].parent == os.getpid()  # adopted
            assert tracked.members() == {daemon}
        assert daemon not in statuses(ended=True)  # ended and reaped: not even a zombie is left
        assert processes._prctl(processes.PR_GET_CHILD_SUBREAPER) == was
        assert before.poll() is None  # it ran before the run: not the run's
    finally:
        before.kill()
        before.wait()


def test_a_subprocess_started_in_a_contained_run_carries_its_marker() -> None:
    with contained() as tracked:
        assert tracked.marker is not None
        child = subprocess.Popen(["sleep", "60"])
        try:
            wait_for(lambda: carriers(tracked.marker or "") == [child.pid])
        finally:
            child.kill()
            child.wait()
    assert tracked.marker not in os.environ


def test_subreaper_says_what_it_was() -> None:
    was = subreaper(True)
    try:
        assert subreaper(True) is True
    finally:
        subreaper(was)


def cgroups() -> bool:
    """Whether this process may make a cgroup (v2) here (the one made to find out is removed)."""
    cgroup = Cgroup.make()
    if cgroup is not None:
        cgroup.remove()
    return cgroup is not None


@pytest.mark.skipif(not cgroups(), reason="no cgroup v2 this process may make one in")
def test_a_cgroup_holds_a_daemon_and_is_killed_whole(started: list[int], tmp_path: Path) -> None:
    # no subreaper, no marker: the cgroup alone finds the daemon
    cgroup = Cgroup.make()
    assert cgroup is not None
    try:
        gate = tmp_path / "go"  # the root waits for it: moved into the cgroup before it forks, as a worker is
        code = f"import os, time\nwhile not os.path.exists({str(gate)!r}): time.sleep(0.01)\n" + DAEMONISER
        leader = start(started, code, str(tmp_path / "daemon"), "plain")
        assert cgroup.add(leader.pid)
        gate.touch()
        daemon = pid_in(tmp_path / "daemon")
        started.append(daemon)
        tracked = Tracked(leader.pid, None, cgroup, session=True)
        assert tracked.members() == {daemon} and cgroup.members() == {leader.pid, daemon}
        assert tracked.end() == 1
        wait_for(lambda: cgroup.members() == {leader.pid})
        tracked.end(root=True)
        leader.wait(timeout=DEADLINE)
        wait_for(lambda: not cgroup.members())
    finally:
        cgroup.remove()
    assert not cgroup.path.exists()


def test_without_proc_nothing_is_found(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    # what a platform without /proc gets: no members, nothing ended, no error
    monkeypatch.setattr(processes, "PROC", tmp_path / "no-proc")
    tracked = Tracked(os.getpid(), new_marker(), session=True)
    assert tracked.members() == set() and tracked.end() == 0 and carriers(new_marker()) == []
