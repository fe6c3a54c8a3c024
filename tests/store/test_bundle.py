"""The reference bundle: runs written as text read back bit for bit, grown seed by seed, shown apart."""

from __future__ import annotations

import json
import multiprocessing
import sqlite3
import tempfile
from pathlib import Path
from typing import Any

import pytest

from structbench.errors import UserError
from structbench.runs.runner import Runner
from structbench.specs import ModelSpec
from structbench.store import Store
from structbench.store import bundle as bundle_module
from structbench.store.bundle import (
    REFERENCE_SUFFIX,
    cell_files,
    read_into,
    read_runs,
    reference_store,
    with_reference,
    write_runs,
)
from structbench.store.bundle_reader import read_bundle
from structbench.store.codec import unpack_predictions
from structbench.store.database import StoredRun

SUITE = "lookup-tables"


def _key(run: StoredRun) -> tuple[object, ...]:
    return tuple(run.row[name] for name in ("suite", "version", "suite_hash", "model_hash", "seed"))


@pytest.fixture
def made(runner: Runner, store: Store) -> Store:
    """A store with two models' runs: `random` over seeds 0 and 1 (its predictions differ by seed), `copy` on seed 0."""
    runner.evaluate(SUITE, ModelSpec(name="random"), [0, 1])
    runner.evaluate(SUITE, ModelSpec(name="copy"), [0])
    return store


def test_a_bundled_run_reads_back_as_it_was_stored(made: Store, tmp_path: Path) -> None:
    folder = tmp_path / "bundle"
    ids = made.runs()["id"].tolist()
    assert write_runs(made, ids, folder) == 3
    assert [path.relative_to(folder).parts[:2] for path in cell_files(folder)] == [("runs", f"{SUITE}@1.0.0")] * 2
    stored = {_key(run): run for run in (made.stored_run(i) for i in ids)}
    read = {_key(run): run for run in read_runs(folder)}
    assert read.keys() == stored.keys()
    for key, run in read.items():
        original = stored[key]
        assert run.scores == original.scores  # every value the same double
        assert json.loads(run.row["environment"]) == json.loads(original.row["environment"])
        kept = [name for name in run.row if name not in ("environment", "model_spec", "owner")]
        assert {k: run.row[k] for k in kept} == {k: original.row[k] for k in kept}
        assert [unpack_predictions(b) for _, _, b in run.predictions] == [
            unpack_predictions(b) for _, _, b in original.predictions
        ]


def test_writing_the_same_runs_again_gives_the_same_bytes(made: Store, tmp_path: Path) -> None:
    ids = made.runs()["id"].tolist()
    first, second = tmp_path / "a", tmp_path / "b"
    write_runs(made, ids, first)
    write_runs(made, list(reversed(ids)), second)
    assert bundle_module.digest(first) == bundle_module.digest(second)
    cell = next(path for path in cell_files(first) if "random" in path.name).read_text()
    assert cell.count('"seed": ') == 2 and cell.index('"seed": 0') < cell.index('"seed": 1')


def test_a_bundle_grows_by_cell_and_seed(made: Store, tmp_path: Path) -> None:
    folder = tmp_path / "bundle"
    runs = made.runs()
    by_seed = dict(zip(zip(runs["model"], runs["seed"], strict=True), runs["id"], strict=True))
    write_runs(made, [by_seed[("random", 0)]], folder)
    write_runs(made, [by_seed[("random", 1)], by_seed[("copy", 0)]], folder)
    assert sorted((run.row["model"], run.row["seed"]) for run in read_runs(folder)) == [
        ("copy", 0),
        ("random", 0),
        ("random", 1),
    ]


def test_reading_a_bundle_into_a_store_keeps_what_the_store_holds(made: Store, tmp_path: Path) -> None:
    folder = tmp_path / "bundle"
    write_runs(made, made.runs()["id"].tolist(), folder)
    with Store(tmp_path / "other.sqlite") as other:
        assert read_into(folder, other) == 3
        assert read_into(folder, other) == 0  # the same keys: nothing added twice
        assert sorted(other.runs()["status"]) == ["done"] * 3
        assert other.suite_specs().keys() == made.suite_specs().keys()


def test_with_reference_shows_the_users_run_of_a_bundled_configuration_apart(
    made: Store, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    folder = tmp_path / "bundle"
    write_runs(made, made.runs()["id"].tolist(), folder)
    monkeypatch.setenv("STRUCTBENCH_REFERENCE", str(folder))
    reference = reference_store()
    assert reference is not None and reference_store() == reference  # made once per bundle content
    with with_reference(made.path, reference) as merged:
        labels = sorted(merged.runs()["model"])
    assert labels == sorted(
        ["random", "random", "copy"] + [f"{m}{REFERENCE_SUFFIX}" for m in ("random", "random", "copy")]
    )
    assert sorted(made.runs()["model"]) == ["copy", "random", "random"]  # the user's store is only read


def test_a_bundle_of_a_newer_layout_is_refused_in_one_sentence(made: Store, tmp_path: Path) -> None:
    folder = tmp_path / "bundle"
    write_runs(made, made.runs()["id"].tolist(), folder)
    (folder / "bundle.json").write_text('{"format": 2}')
    with pytest.raises(UserError, match=r"has layout 2, and this structbench reads layout 1; upgrade structbench"):
        list(read_runs(folder))


def test_a_damaged_bundle_file_is_named_and_the_rest_is_read(made: Store, tmp_path: Path) -> None:
    folder = tmp_path / "bundle"
    write_runs(made, made.runs()["id"].tolist(), folder)
    damaged = cell_files(folder)[0]
    damaged.write_text(damaged.read_text()[:200])
    contents = read_bundle(folder)
    (sentence,) = contents.left_out
    assert sentence.startswith(f"the bundle's {damaged} was left out: it is not JSON")
    assert sentence.endswith("restore it from git, or from whoever gave you the bundle.")
    assert damaged.name.startswith("copy-")
    assert sorted(run.row["model"] for run in contents.runs) == ["random", "random"]  # the other file is read


def test_large_predictions_are_left_out_of_the_bundle(
    made: Store, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(bundle_module, "PREDICTIONS_LIMIT", 10)
    folder = tmp_path / "bundle"
    write_runs(made, made.runs()["id"].tolist(), folder)
    assert not list((folder / "predictions").rglob("*.json.gz"))
    assert all(run.predictions == [] and run.scores for run in read_runs(folder))


def _write_one_by_one(store_path: Path, folder: Path, ready: Any) -> None:
    """A writer process: each run of the store into the bundle by itself (a read, merge and write of its
    run file each time), once both writers are ready."""
    with Store(store_path) as store:
        ids = store.runs()["id"].tolist()
        ready.wait()
        for run_id in ids:
            write_runs(store, [run_id], folder)


def test_two_writers_at_once_lose_no_run(tmp_path: Path) -> None:
    """`reference export` and `sweep --reference` into one bundle at the same time: the bundle's lock
    serialises each read-merge-write of a run file, so every run of both ends in it."""
    stores = [tmp_path / "first.sqlite", tmp_path / "second.sqlite"]
    for path, seeds in zip(stores, ([0, 1, 2], [3, 4, 5]), strict=True):
        with Store(path) as store:
            runner = Runner(store, progress=False)
            for model in ("random", "copy"):
                runner.evaluate(SUITE, ModelSpec(name=model), seeds)
    folder = tmp_path / "bundle"
    context = multiprocessing.get_context("spawn")
    ready = context.Barrier(2)
    writers = [context.Process(target=_write_one_by_one, args=(path, folder, ready)) for path in stores]
    for writer in writers:
        writer.start()
    for writer in writers:
        writer.join(timeout=600)
        assert writer.exitcode == 0
    found = sorted((run.row["model"], run.row["seed"]) for run in read_runs(folder))
    assert found == sorted((model, seed) for model in ("random", "copy") for seed in range(6))
    assert not [path for path in folder.rglob("*") if path.name.endswith(".partial")]  # no temporary file left


def test_with_reference_reads_both_files_as_they_were_when_it_began_and_copies_neither(
    made: Store, runner: Runner, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The reference runs are read beside the user's store, not copied into a copy of it (a 10,000-run
    store took a second to copy, and as much room in the temporary folder), yet what a report reads is
    one snapshot, as it was from a copy: a run finished meanwhile is in none of the tables it reads."""
    folder = tmp_path / "bundle"
    write_runs(made, made.runs()["id"].tolist(), folder)
    reference = reference_store(folder)
    assert reference is not None
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path / "no-such-folder"))  # no temporary file is made
    with with_reference(made.path, reference) as merged:
        runs, scores = merged.runs(), merged.scores()
        runner.evaluate(SUITE, ModelSpec(name="copy"), [1])  # finished while the report reads
        assert len(made.runs()) == 4
        assert merged.runs().equals(runs) and merged.scores().equals(scores)
        ids = runs["id"].tolist()
        assert len(set(ids)) == 6 and ids[:3] == made.runs()["id"].tolist()[:3]  # the user's runs first, as stored
        key = {(label, seed): run_id for run_id, label, seed in zip(ids, runs["model"], runs["seed"], strict=True)}
        for (label, seed), run_id in key.items():
            if label.endswith(REFERENCE_SUFFIX):  # read through the views: the user's run of that key, relabelled
                twin = key[(label.removesuffix(REFERENCE_SUFFIX), seed)]
                assert merged.stored_predictions(run_id) == made.stored_predictions(twin)
                assert merged.stored_run(run_id).scores == made.stored_run(twin).scores
        blocks = merged.prediction_blocks(ids)  # every block, each run's in its split order
        for run_id, label in zip(ids, runs["model"], strict=True):
            assert list(blocks[run_id]) == list(merged.stored_predictions(run_id)), label
            assert [unpack_predictions(block) for block in blocks[run_id].values()] == list(
                merged.stored_predictions(run_id).values()
            )


def test_with_reference_names_the_file_at_fault(made: Store, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A damaged copy of the reference runs, a damaged user's store and a temporary folder that cannot
    be written are each named, with their own fix."""
    folder = tmp_path / "bundle"
    write_runs(made, made.runs()["id"].tolist(), folder)
    reference = reference_store(folder)
    assert reference is not None
    garbage = b"not a database, " * 1024

    damaged = tmp_path / "damaged-copy.sqlite"
    damaged.write_bytes(garbage)
    with pytest.raises(UserError) as refused, with_reference(made.path, damaged):
        pass
    assert str(refused.value).startswith(f"the copy of the reference runs {damaged} cannot be read (")
    assert str(refused.value).endswith("delete it, and the next command makes it again from the bundle.")

    with Store(tmp_path / "user.sqlite") as user:
        pass
    user.path.write_bytes(garbage)
    with pytest.raises(UserError) as refused, with_reference(user.path, reference):
        pass
    assert str(refused.value).startswith(f"{user.path} is not a structbench results database (")

    def full(*_: object, **__: object) -> None:
        error = sqlite3.OperationalError("database or disk is full")
        error.sqlite_errorname = "SQLITE_FULL"
        raise error

    monkeypatch.setattr(bundle_module.Store, "__init__", full)
    with pytest.raises(UserError) as refused, with_reference(None, reference, shown_as=tmp_path / "new.sqlite"):
        pass
    assert str(refused.value).startswith("cannot write the temporary store that shows the reference runs beside yours")
    assert "(database or disk is full)" in str(refused.value)
