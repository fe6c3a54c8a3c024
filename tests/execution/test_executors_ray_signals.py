"""A sweep interrupted while Ray starts ends as an interrupt (exit 130, "interrupted"), never in a
traceback or SIGABRT (issue 34). `ray.init` installs a SIGTERM handler of its own that exits the
process from wherever it is; the executor shuts down what Ray started, says how to end what may be
left (`ray stop`), and gives SIGTERM back to the sweep once Ray is up. Runs against a stand-in for Ray
that does what Ray's handler does, so it needs no Ray and no timing."""

from __future__ import annotations

import signal
import sys
import types
from collections.abc import Iterator
from typing import Any

import pytest

from structbench.execution.executors import RayExecutor


class StartingRay(types.SimpleNamespace):
    """`ray` whose `init` installs Ray's exiting SIGTERM handler and, with `signal_during_init`, gets
    that signal while it starts; `shutdowns` counts `ray.shutdown()` calls."""

    def __init__(self, signal_during_init: signal.Signals | None) -> None:
        super().__init__(shutdowns=0, signal_during_init=signal_during_init)

    def init(self, **options: Any) -> None:
        signal.signal(signal.SIGTERM, lambda number, frame: sys.exit(number))  # ray._private.worker's handler
        if self.signal_during_init is not None:
            signal.raise_signal(self.signal_during_init)

    def cluster_resources(self) -> dict[str, float]:
        return {"CPU": 2.0}

    def remote(self, **options: Any) -> Any:
        return lambda function: function

    def shutdown(self) -> None:
        self.shutdowns += 1


def sweep_handler(number: int, frame: object) -> None:
    """What `structbench.sweep` installs: SIGTERM ends the sweep as Ctrl-C does."""
    raise KeyboardInterrupt


@pytest.fixture(autouse=True)
def sweeps_sigterm() -> Iterator[None]:
    """SIGTERM as the sweep handles it, and Ctrl-C as in a terminal, even where the tests run in the
    background (`nohup tox &`), whose processes inherit SIGINT ignored."""
    previous = signal.signal(signal.SIGTERM, sweep_handler)
    interrupt = signal.signal(signal.SIGINT, signal.default_int_handler)
    yield
    signal.signal(signal.SIGTERM, previous)
    signal.signal(signal.SIGINT, interrupt)


@pytest.mark.parametrize("number", [signal.SIGTERM, signal.SIGINT])
def test_a_signal_while_ray_starts_is_an_interrupt_after_ray_is_shut_down(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], number: signal.Signals
) -> None:
    ray = StartingRay(number)
    monkeypatch.setitem(sys.modules, "ray", ray)
    stdout = sys.stdout
    with pytest.raises(KeyboardInterrupt):
        RayExecutor(2)
    assert ray.shutdowns == 1
    assert signal.getsignal(signal.SIGTERM) is sweep_handler and sys.stdout is stdout
    assert "`ray stop` ends them" in capsys.readouterr().err


def test_once_ray_is_up_sigterm_is_the_sweeps_again(monkeypatch: pytest.MonkeyPatch) -> None:
    ray = StartingRay(None)
    monkeypatch.setitem(sys.modules, "ray", ray)
    executor = RayExecutor(2)
    try:
        assert signal.getsignal(signal.SIGTERM) is sweep_handler  # not Ray's, which would exit with claims held
        with pytest.raises(KeyboardInterrupt):
            signal.raise_signal(signal.SIGTERM)
    finally:
        executor.stop()
