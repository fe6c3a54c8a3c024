"""Every run computes on its own fixed number of CPU threads (torch and BLAS), whatever the process
had before, and gives the process its count back; a count other than 1 keys and labels the run."""

from __future__ import annotations

import json
from collections.abc import Iterator

import pytest
import torch
from threadpoolctl import threadpool_info

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
