"""The command adapter's processes: time-outs on writes, whole process groups ended on failure and
close, and no model left behind by a harness that exits or is killed with SIGKILL (Linux)."""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import sys
import textwrap
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from structbench.adapters.command import KILL_GRACE, CommandModel, CommandModelError
from structbench.runs.runner import Runner
from structbench.specs import Example, ModelSpec, Split
from tests.support.daemons import COMMAND_SCRIPT, PIDS_VARIABLE

pytestmark = pytest.mark.skipif(not Path("/proc/self/stat").exists(), reason="reads processes from Linux's /proc")

MODEL = textwrap.dedent(
    '''
    """`python model.py MODE PIDFILE`: starts a child of its own (which ignores SIGTERM in mode
    `stubborn-child`), writes "pid pgid child-pid" to PIDFILE, says hello, then: `stall` never
    reads stdin; `hang-on-fit` never answers fit; `crash-on-fit` exits with status 3; `serve`
    answers fit and echoes transduce until close."""
    import json, os, subprocess, sys, time

    mode, pidfile = sys.argv[1], sys.argv[2]
    ready = pidfile + ".ready"
    child = subprocess.Popen([sys.executable, "-c", (
        "import signal, sys, time\\n"
        "if sys.argv[1] == 'stubborn-child': signal.signal(signal.SIGTERM, signal.SIG_IGN)\\n"
        "open(sys.argv[2], 'w').close()\\n"
        "time.sleep(600)\\n"
    ), mode, ready])
    while not os.path.exists(ready):
        time.sleep(0.005)
    with open(pidfile + ".tmp", "w") as out:
        out.write(f"{os.getpid()} {os.getpgid(0)} {child.pid}")
    os.replace(pidfile + ".tmp", pidfile)
    print(json.dumps({"type": "hello", "name": mode, "protocols": ["transduction"]}), flush=True)
    if mode == "stall":
        time.sleep(600)
    for line in sys.stdin:
        request = json.loads(line)
        if request["type"] == "close":
            break
        if request["type"] == "fit":
            if mode == "hang-on-fit":
                time.sleep(600)
            if mode == "crash-on-fit":
                print("CUDA error: out of memory", file=sys.stderr, flush=True)
                sys.exit(3)
            print(json.dumps({"type": "ok"}), flush=True)
        else:
            print(json.dumps({"type": "predictions", "outputs": request["inputs"]}), flush=True)
    '''
)


def live_members(pgid: int) -> list[int]:
    """Processes of group `pgid` that are running: a zombie has ended (an init that never reaps
    orphans, as in some containers, keeps them)."""
    members = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            state, _, group = (entry / "stat").read_text().rsplit(")", 1)[1].split()[:3]
        except (OSError, ValueError):
            continue
        if int(group) == pgid and state != "Z":
            members.append(int(entry.name))
    return members


def running(pid: int) -> bool:
    try:
        return (Path("/proc") / str(pid) / "stat").read_text().rsplit(")", 1)[1].split()[0] != "Z"
    except OSError:
        return False


def gone_within(pgid: int, seconds: float) -> float:
    """Seconds until no process of group `pgid` runs; fails after `seconds`."""
    started = time.monotonic()
    while live_members(pgid):
        assert time.monotonic() - started < seconds, f"group {pgid} still runs {live_members(pgid)}"
        time.sleep(0.02)
    return time.monotonic() - started


class Pids:
    """The model, its process group and its child, as the model wrote them."""

    def __init__(self, path: Path) -> None:
        deadline = time.monotonic() + 10
        while not path.exists():
            assert time.monotonic() < deadline, "the model never wrote its pids"
            time.sleep(0.01)
        self.model, self.group, self.child = map(int, path.read_text().split())


@pytest.fixture
def model_script(tmp_path: Path) -> Path:
    script = tmp_path / "model.py"
    script.write_text(MODEL)
    return script


@pytest.fixture
def leftovers() -> Iterator[list[Pids]]:
    """The models a test started: killed afterwards with their children, whatever the test's outcome."""
    started: list[Pids] = []
    yield started
    for pids in started:
        separate_group = pids.group != os.getpgid(0)  # never this process's group, whatever the adapter did
        for pid in live_members(pids.group) if separate_group else [pids.model, pids.child]:
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGKILL)


def command(script: Path, mode: str, pidfile: Path) -> str:
    return f"{sys.executable} {script} {mode} {pidfile}"


def big_train(megabytes: float) -> Split:
    examples = [
        Example(id=f"train-{i}", input=["walk", "twice"] * 20, target=["I_WALK"] * 40)
        for i in range(int(megabytes * 1e6 / 600))
    ]
    return Split(suite="test@1.0.0", name="train", role="train", draw=0, examples=examples)


def timed(call: Callable[[], object], limit: float) -> tuple[float, BaseException | None]:
    """Seconds `call` took and what it raised; fails when it runs past `limit` (the old adapter
    blocked forever writing to a model that had stopped reading)."""
    outcome: list[BaseException | None] = []

    def run() -> None:
        try:
            call()
            outcome.append(None)
        except BaseException as error:
            outcome.append(error)

    started = time.monotonic()
    worker = threading.Thread(target=run, daemon=True)
    worker.start()
    worker.join(limit)
    assert not worker.is_alive(), f"still blocked after {limit} s"
    return time.monotonic() - started, outcome[0]


def test_a_model_that_stops_reading_fails_the_fit_within_fit_timeout(
    model_script: Path, tmp_path: Path, leftovers: list[Pids]
) -> None:
    model = CommandModel(command(model_script, "stall", tmp_path / "pids"), fit_timeout=2)
    pids = Pids(tmp_path / "pids")
    leftovers.append(pids)
    train = big_train(5)
    elapsed, error = timed(lambda: model.fit(train, None, seed=0), limit=60)
    assert isinstance(error, CommandModelError)
    assert elapsed >= 2  # it waited the whole fit_timeout; `timed` catches a hang
    assert "it did not read the fit request" in str(error) and "bytes went through within 2 s" in str(error)
    assert "--set fit_timeout=SECONDS" in str(error) and "--set timeout=" not in str(error)
    gone_within(pids.group, 60.0)


def test_a_predict_request_the_model_does_not_read_names_timeout(
    model_script: Path, tmp_path: Path, leftovers: list[Pids]
) -> None:
    model = CommandModel(command(model_script, "stall", tmp_path / "pids"), timeout=1, fit_timeout=100)
    leftovers.append(Pids(tmp_path / "pids"))
    inputs = [["jump", "around", "left"] * 10] * 20000
    elapsed, error = timed(lambda: model.transduce(inputs), limit=60)
    assert isinstance(error, CommandModelError) and elapsed >= 1
    assert "it did not read the predict request" in str(error) and "went through within 1 s" in str(error)
    assert "--set timeout=SECONDS" in str(error)


def test_a_fit_without_answer_names_fit_timeout(model_script: Path, tmp_path: Path, leftovers: list[Pids]) -> None:
    model = CommandModel(command(model_script, "hang-on-fit", tmp_path / "pids"), timeout=100, fit_timeout=1)
    leftovers.append(Pids(tmp_path / "pids"))
    with pytest.raises(CommandModelError, match=r"no answer within 1 s \(raise it with --set fit_timeout=SECONDS\)"):
        model.fit(big_train(0.01), None, seed=0)


@pytest.mark.parametrize(
    ("mode", "expected"),
    [("hang-on-fit", "no answer within 1 s"), ("crash-on-fit", "exited with status 3 before answering")],
)
def test_a_failed_model_leaves_no_process_of_its_group(
    runner: Runner, model_script: Path, tmp_path: Path, leftovers: list[Pids], mode: str, expected: str
) -> None:
    pidfile = tmp_path / "pids"
    spec = ModelSpec(name="command", params={"command": command(model_script, mode, pidfile), "fit_timeout": 1})
    started = time.monotonic()
    record = runner.evaluate("lookup-tables", spec, [0])
    elapsed = time.monotonic() - started
    pids = Pids(pidfile)
    leftovers.append(pids)
    assert record.status == {"0": "failed"}
    assert expected in record.errors["0"]
    # the crashed model's child still holds its stdout: its exit is noticed all the same
    assert elapsed < 300  # the model's timeout is 1 s; a hang would wait for ever (generous: a busy laptop)
    assert pids.group != os.getpgid(0)
    gone_within(pids.group, 60.0)
    assert not running(pids.model) and not running(pids.child)
    if mode == "crash-on-fit":
        stored = runner.store.runs()["error"].iloc[-1]
        assert "CUDA error: out of memory" in stored


HARNESS = textwrap.dedent(
    """
    import sys, time
    from structbench.adapters.command import CommandModel
    model = CommandModel(sys.argv[1])
    print("started", flush=True)
    if sys.argv[2] == "wait":
        time.sleep(600)
    if sys.argv[2] == "raise":
        raise RuntimeError("the harness crashed")
    """
)


def start_harness(script: Path, mode: str, pidfile: Path, how: str) -> subprocess.Popen[str]:
    """A harness process holding one command model, once the model has said hello."""
    harness = subprocess.Popen(
        [sys.executable, "-c", HARNESS, command(script, mode, pidfile), how],
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        text=True,
    )
    assert harness.stdout is not None and harness.stdout.readline() == "started\n"
    return harness


def test_a_harness_killed_with_sigkill_takes_its_model_and_the_models_children(
    model_script: Path, tmp_path: Path, leftovers: list[Pids]
) -> None:
    harness = start_harness(model_script, "serve", tmp_path / "pids", "wait")
    pids = Pids(tmp_path / "pids")
    leftovers.append(pids)
    assert running(pids.model) and running(pids.child)
    harness.kill()
    harness.wait()
    started = time.monotonic()
    while running(pids.model) or running(pids.child):
        assert time.monotonic() - started < 20, "the model or its child outlived the harness by 20 s"
        time.sleep(0.02)
    # the watchdog itself stays for its grace, to SIGKILL whatever ignored its SIGTERM
    gone_within(pids.group, KILL_GRACE + 20)


@pytest.mark.parametrize("how", ["exit", "raise"])
def test_a_harness_that_exits_without_closing_its_model_leaves_no_process(
    model_script: Path, tmp_path: Path, leftovers: list[Pids], how: str
) -> None:
    # the child ignores SIGTERM: only the harness's own exit handler kills it at once, the watchdog
    # would take its grace period
    harness = start_harness(model_script, "stubborn-child", tmp_path / "pids", how)
    pids = Pids(tmp_path / "pids")
    leftovers.append(pids)
    assert harness.wait(timeout=60) == (0 if how == "exit" else 1)
    assert not running(pids.model) and not running(pids.child)


def test_many_models_in_sequence_leak_no_process_thread_or_descriptor(
    model_script: Path, tmp_path: Path, leftovers: list[Pids]
) -> None:
    def children() -> set[int]:
        mine = str(os.getpid())
        found = set()
        for entry in Path("/proc").iterdir():
            try:
                state, parent = (entry / "stat").read_text().rsplit(")", 1)[1].split()[:2]
            except (OSError, ValueError):
                continue
            if parent == mine and state != "Z":
                found.add(int(entry.name))
        return found

    descriptors, threads, before = len(os.listdir("/proc/self/fd")), threading.active_count(), children()
    kept = CommandModel(command(model_script, "serve", tmp_path / "kept"))
    leftovers.append(Pids(tmp_path / "kept"))
    for i in range(12):
        model = CommandModel(command(model_script, "serve", tmp_path / f"pids{i}"))
        leftovers.append(Pids(tmp_path / f"pids{i}"))
        assert model.transduce([["walk"]]) == [["walk"]]
        model.close()
        # close() has SIGKILLed the group; the kernel ends the members a moment later (a loaded CI
        # machine once showed one still exiting)
        gone_within(Pids(tmp_path / f"pids{i}").group, 60.0)
    # the models closed before it did not take the one still open with them
    assert kept.transduce([["jump"]]) == [["jump"]]
    assert children() - before == {kept.pid, kept.pgid}
    kept.close()
    assert children() == before
    assert len(os.listdir("/proc/self/fd")) == descriptors
    assert threading.active_count() == threads


def test_a_model_is_asked_to_close_and_its_children_are_ended(
    model_script: Path, tmp_path: Path, leftovers: list[Pids]
) -> None:
    model = CommandModel(command(model_script, "serve", tmp_path / "pids"))
    pids = Pids(tmp_path / "pids")
    leftovers.append(pids)
    model.close()
    assert model._processes.process.returncode == 0  # it read the close message and exited by itself
    gone_within(pids.group, 60.0)  # its child was SIGKILLed with the group
    with pytest.raises(CommandModelError, match="already ended"):
        model.transduce([["walk"]])


def test_a_model_interrupted_in_the_middle_of_a_request_is_ended_at_once(
    model_script: Path, tmp_path: Path, leftovers: list[Pids]
) -> None:
    model = CommandModel(command(model_script, "hang-on-fit", tmp_path / "pids"))
    pids = Pids(tmp_path / "pids")
    leftovers.append(pids)

    def interrupt(signum: int, frame: object) -> None:
        raise KeyboardInterrupt

    previous = signal.signal(signal.SIGALRM, interrupt)
    try:
        signal.setitimer(signal.ITIMER_REAL, 0.3)
        with pytest.raises(KeyboardInterrupt):
            model.fit(big_train(0.01), None, seed=0)
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)
    started = time.monotonic()
    model.close()  # what the runner does on Ctrl-C: no close message to a model still at work
    assert time.monotonic() - started < 10  # a close message to a model at work would wait for its timeout (100 s)
    gone_within(pids.group, 60.0)


DAEMON_HARNESS = textwrap.dedent(
    """
    import sys, time
    from structbench.adapters.command import CommandModel
    from structbench.specs import Example, Split
    model = CommandModel(sys.argv[1])
    train = Split(suite="test@1.0.0", name="train", role="train", draw=0,
                  examples=[Example(id="t", input=["walk"], target=["I_WALK"])])
    model.fit(train, None, seed=0)
    print("fitted", flush=True)
    if sys.argv[2] == "close":
        model.close()
        print("closed", flush=True)
    time.sleep(600)
    """
)


@pytest.mark.parametrize("how", ["close", "kill"])
def test_a_daemon_that_left_the_group_ends_with_the_command(tmp_path: Path, how: str) -> None:
    # the command double-forks and calls setsid: its daemon is in no group of the adapter's, and is
    # found by the marker the command was started with, on close and by the watchdog of a killed harness
    pids = tmp_path / "daemons.pids"
    harness = subprocess.Popen(
        [sys.executable, "-c", DAEMON_HARNESS, f"{sys.executable} {COMMAND_SCRIPT}", how],
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        text=True,
        env={**os.environ, PIDS_VARIABLE: str(pids)},
    )
    try:
        assert harness.stdout is not None and harness.stdout.readline() == "fitted\n"
        (daemon,) = map(int, pids.read_text().split())
        assert running(daemon) and os.getsid(daemon) not in (os.getsid(harness.pid), harness.pid)
        if how == "close":
            assert harness.stdout.readline() == "closed\n"
        else:
            harness.kill()
            harness.wait()
        started = time.monotonic()
        while running(daemon):
            assert time.monotonic() - started < KILL_GRACE + 30, "the daemon outlived its command"
            time.sleep(0.05)
    finally:
        harness.kill()
        harness.wait()
        for pid in map(int, pids.read_text().split()) if pids.is_file() else []:
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGKILL)
