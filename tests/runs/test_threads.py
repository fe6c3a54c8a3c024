"""Every run computes on its own fixed number of CPU threads (torch and BLAS), whatever the process
had before, and gives the process its count back; a count other than 1 keys and labels the run."""

from __future__ import annotations

import json
import sys
import types
from collections.abc import Iterator

import pytest
import torch
from threadpoolctl import ThreadpoolController, threadpool_info

from structbench.runs import threads
from structbench.runs.runner import Runner
from structbench.specs import ModelSpec, Split

observed: list[tuple[int, set[int]]] = []


class ThreadWatcher:
    """Copies its input and records, during fit, torch's thread count and every BLAS/OpenMP pool's."""

    name = "thread-watcher"
    protocols = ("transduction",)

    def __init__(self, threads: int = 1) -> None:
        self.threads = threads

    def fit(self, train: Split, dev: Split | None, *, seed: int) -> None:
        observed.append((torch.get_num_threads(), {pool["num_threads"] for pool in threadpool_info()}))

    def transduce(self, inputs: list[list[str]]) -> list[list[str]]:
        return [list(tokens) for tokens in inputs]


@pytest.fixture
def two_torch_threads() -> Iterator[None]:
    before = torch.get_num_threads()
    torch.set_num_threads(2)
    observed.clear()
    yield
    torch.set_num_threads(before)


def test_a_run_computes_on_one_thread_unless_its_settings_say_otherwise(
    runner: Runner, two_torch_threads: None
) -> None:
    watcher = "tests.runs.test_threads:ThreadWatcher"
    one = runner.evaluate("lookup-tables", ModelSpec(name=watcher), [0])
    assert observed == [(1, {1})] and one.threads == 1 and one.model == "thread-watcher"
    assert torch.get_num_threads() == 2  # the process has its count back
    two = runner.evaluate("lookup-tables", ModelSpec(name=watcher, params={"threads": 2}), [0])
    assert observed[1][0] == 2 and two.threads == 2 and two.model == "thread-watcher[threads=2]"
    runs = runner.store.runs()
    assert runs.model_hash.nunique() == 2  # another thread count, another run
    assert sorted(json.loads(e)["threads"] for e in runs.environment) == [1, 2]


def test_the_thread_pools_are_looked_up_again_after_an_import_and_remembered_otherwise(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Finding the loaded BLAS and OpenMP libraries costs milliseconds a run: it is remembered, and made
    again once anything is imported (how a library that brings its own pool gets loaded)."""
    made: list[ThreadpoolController] = []

    class Counted(ThreadpoolController):
        def __init__(self) -> None:
            super().__init__()
            made.append(self)

    monkeypatch.setattr(threads, "ThreadpoolController", Counted)
    monkeypatch.setattr(threads, "_controller", None)
    for _ in range(3):
        with threads.pinned(1):
            assert {pool["num_threads"] for pool in threadpool_info()} == {1}
    assert len(made) == 1
    monkeypatch.setitem(sys.modules, "a_module_imported_between_runs", types.ModuleType("a_module"))
    with threads.pinned(1):
        pass
    assert len(made) == 2
