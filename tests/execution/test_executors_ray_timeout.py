"""`sweep --executor ray --timeout N` counts a run's N seconds from when its task starts on a worker,
so that a worker still importing torch on a loaded machine does not time the run out. Runs
against a stand-in for Ray with a hand-driven clock, so it needs no Ray and no waiting."""

from __future__ import annotations

import sys
import types
from collections.abc import Iterator
from typing import Any

import pytest

from structbench.execution import executors
from structbench.execution.executors import STARTUP_SECONDS, RayExecutor, Resources
from structbench.execution.worker import WorkOrder
from structbench.specs import ModelSpec

TIMEOUT = 8.0


class StartedQueue:
    """`ray.util.queue.Queue` as the executor uses it: the keys of the tasks that have begun."""

    def __init__(self) -> None:
        self.keys: list[int] = []

    def qsize(self) -> int:
        return len(self.keys)

    def get_nowait_batch(self, count: int) -> list[int]:
        taken, self.keys = self.keys[:count], self.keys[count:]
        return taken


class Task:
    """A remote function: each call is a task that never finishes by itself."""

    def options(self, **options: Any) -> Task:
        return self

    def remote(self, order: str, started: StartedQueue | None = None) -> object:
        return object()


class FakeRay(types.SimpleNamespace):
    """The calls of `ray` the executor makes; `cancelled` holds the tasks it ended."""

    def __init__(self) -> None:
        super().__init__(cancelled=[])

    def init(self, **options: Any) -> None:
        pass

    def cluster_resources(self) -> dict[str, float]:
        return {"CPU": 2.0}

    def remote(self, **options: Any) -> Any:
        return lambda function: Task()

    def wait(self, references: list[object], num_returns: int, timeout: float) -> tuple[list[object], list[object]]:
        return [], references

    def cancel(self, reference: object, force: bool) -> None:
        self.cancelled.append(reference)

    def shutdown(self) -> None:
        pass


class Clock:
    now = 1000.0

    def monotonic(self) -> float:
        return self.now


def order(key: int) -> WorkOrder:
    return WorkOrder(
        key=key, suite="lookup-tables", suite_hash="0" * 64, model=ModelSpec(name="copy"), model_hash="0" * 16,
        seed=0, harness_version="test",
    )  # fmt: skip


@pytest.fixture
def executor(monkeypatch: pytest.MonkeyPatch) -> Iterator[tuple[RayExecutor, StartedQueue, Clock]]:
    monkeypatch.setitem(sys.modules, "ray", FakeRay())
    started = StartedQueue()
    queues = types.ModuleType("ray.util.queue")
    queues.Queue = lambda **options: started  # type: ignore[attr-defined]
    monkeypatch.setitem(sys.modules, "ray.util.queue", queues)
    clock = Clock()
    monkeypatch.setattr(executors.time, "monotonic", clock.monotonic)
    made = RayExecutor(2, timeout=TIMEOUT)
    yield made, started, clock
    made.stop()


def test_the_time_out_counts_from_the_start_of_the_run_not_its_submission(
    executor: tuple[RayExecutor, StartedQueue, Clock],
) -> None:
    ray_executor, started, clock = executor
    ray_executor.submit(order(1), Resources())
    ray_executor.submit(order(2), Resources())
    clock.now += 30  # both workers spend 30 s starting (importing torch) ...
    started.keys += [1, 2]  # ... then both runs begin
    assert ray_executor.collect(0) == []
    clock.now += TIMEOUT - 1
    assert ray_executor.collect(0) == []  # 37 s since submission, 7 s since the start
    clock.now += 2
    ended = [(result.key, result.status, result.error) for result in ray_executor.collect(0)]
    message = "timed out after 8 s (sweep --timeout 8); its worker was killed"
    assert ended == [(1, "failed", message), (2, "failed", message)]
    assert len(sys.modules["ray"].cancelled) == 2


def test_a_run_that_never_starts_times_out_after_the_start_up_allowance(
    executor: tuple[RayExecutor, StartedQueue, Clock],
) -> None:
    ray_executor, _, clock = executor
    ray_executor.submit(order(1), Resources())
    clock.now += TIMEOUT + STARTUP_SECONDS - 1
    assert ray_executor.collect(0) == []
    clock.now += 2
    assert [result.key for result in ray_executor.collect(0)] == [1]
