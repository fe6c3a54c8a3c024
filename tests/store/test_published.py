"""Published runs live in tables of their own: read back as stored, replaced on a second import, and never
among the runs a store answers, reports or verifies."""

from __future__ import annotations

from pathlib import Path

import pytest

from structbench.store import Store, StoreReader
from structbench.store.published import PublishedRun


def run(seed: int, items: dict[str, tuple[bool, float | None]], model: str = "published:gpt-2") -> PublishedRun:
    return PublishedRun(
        suite="miniscan",
        version="1.0.0",
        suite_hash="abc",
        model=model,
        seed=seed,
        source={"paper": "A 2020", "file": "r.csv", "sha256": "00"},
        items={"test": items},
    )


def test_published_runs_read_back_as_stored_and_stay_out_of_the_runs_table(store_path: Path) -> None:
    with Store(store_path) as store:
        assert store.published_labels() == [] and store.published_runs("miniscan", "1.0.0", "published:gpt-2") == []
        store.add_published(
            [run(0, {"test-00": (True, 1.5), "test-01": (False, None)}), run(1, {"test-00": (False, None)})]
        )
    with StoreReader(store_path) as reader:
        assert reader.runs().empty  # never answered, counted, ranked or verified as a run made here
        assert reader.published_labels("miniscan") == [("miniscan", "1.0.0", "published:gpt-2", 2)]
        first, second = reader.published_runs("miniscan", "1.0.0", "published:gpt-2")
    assert (first.seed, dict(first.items["test"])) == (0, {"test-00": (True, 1.5), "test-01": (False, None)})
    assert second.seed == 1 and first.source == {"paper": "A 2020", "file": "r.csv", "sha256": "00"}


def test_importing_a_seed_again_replaces_its_items(store_path: Path) -> None:
    with Store(store_path) as store:
        store.add_published([run(0, {"test-00": (True, None), "test-01": (True, None)})])
        store.add_published([run(0, {"test-00": (False, None)})])
        (stored,) = store.published_runs("miniscan", "1.0.0", "published:gpt-2")
    assert dict(stored.items["test"]) == {"test-00": (False, None)}


def test_a_published_run_must_carry_the_published_label(store_path: Path) -> None:
    with Store(store_path) as store, pytest.raises(ValueError, match="must start with 'published:'"):
        store.add_published([run(0, {"test-00": (True, None)}, model="gpt-2")])
