"""`StoreReader`, the reading face of a results database: what reports, analyses and the commands that
only read take. A `Store` is one, with the writes of running models added."""

from __future__ import annotations

import inspect
from pathlib import Path

from structbench.runs.runner import Runner
from structbench.specs import ModelSpec
from structbench.store import Store, StoreReader

WRITES = {
    "record_suite",
    "claim_run",
    "relabel",
    "rekey",
    "finish_run",
    "end_run",
    "discard",
    "release",
    "add_runs",
    "add_published",
}


def test_a_reader_answers_what_a_store_wrote(runner: Runner, store_path: Path) -> None:
    record = runner.evaluate("lookup-tables", ModelSpec(name="copy"), [0, 1])
    runner.store.close()
    with StoreReader(store_path) as reader:
        runs = reader.runs()
        assert (list(runs.seed), set(runs.status)) == ([0, 1], {"done"})
        assert list(reader.suite_specs()) == [("lookup-tables", "1.0.0", record.suite_hash)]
        scores = reader.scores(suite="lookup-tables")
        assert set(scores.seed) == {0, 1} and "sequence_accuracy" in set(scores.metric)
        run_id = int(runs.id.iloc[0])
        assert reader.run_status(run_id) == ("done", None) and reader.label(run_id) == "copy"
        assert set(reader.stored_predictions(run_id)) == {
            s.name
            for s in reader.suite_specs()[("lookup-tables", "1.0.0", record.suite_hash)].splits
            if s.role == "test"
        }


def test_the_writes_are_the_stores_alone() -> None:
    public = {name for name, _ in inspect.getmembers(Store, inspect.isfunction) if not name.startswith("_")}
    read = {name for name, _ in inspect.getmembers(StoreReader, inspect.isfunction) if not name.startswith("_")}
    assert issubclass(Store, StoreReader)
    assert public - read == WRITES and not read & WRITES
