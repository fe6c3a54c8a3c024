"""A results store that cannot be used ends a command in one sentence naming the store and the fix,
and loses no finished run (issue 34): a folder or `''` given as the store, a path under a file, a
read-only store, a full disk, a write lock held past the busy timeout, a damaged page, a damaged
predictions block and a score that is not a number."""

from __future__ import annotations

import sqlite3
import zlib
from pathlib import Path

import pytest

from structbench.cli import main
from structbench.errors import UserError
from structbench.runs.runner import Runner
from structbench.specs import ModelSpec
from structbench.store import Store, codec, connection, failures


@pytest.fixture
def two_runs(store_path: Path) -> Path:
    """A store holding copy's seeds 0 and 1 on lookup-tables, closed (so checkpointed into its file)."""
    with Store(store_path) as store:
        Runner(store, progress=False).evaluate("lookup-tables", ModelSpec(name="copy"), [0, 1])
    return store_path


def one_error_line(capsys: pytest.CaptureFixture[str]) -> str:
    """The one error sentence the command ended with (after its progress lines, into a log), and no traceback."""
    err = capsys.readouterr().err.strip()
    errors = [line for line in err.splitlines() if line.startswith("structbench: error: ")]
    assert len(errors) == 1 and err.endswith(errors[0]) and "Traceback" not in err, err
    return errors[0]


def done_seeds(path: Path) -> list[int]:
    with Store(path) as store:
        runs = store.runs()
    return sorted(runs[runs.status == "done"].seed.tolist())


@pytest.mark.parametrize("given", ["", "."])
def test_a_folder_given_as_the_store_is_refused(given: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    with pytest.raises(UserError, match=r"the results store \. is a folder; pass --store a file path"):
        Store(Path(given))


def test_a_store_under_a_file_is_refused(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (tmp_path / "notes").write_text("a file, not a folder")
    code = main(["run", "--suite", "lookup-tables", "--model", "copy", "--store", str(tmp_path / "notes" / "r.sqlite")])
    assert code == 2 and "cannot create the folder of the results store" in one_error_line(capsys)


def test_a_read_only_store_is_read_and_a_write_to_it_refused(two_runs: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    connect = sqlite3.connect  # a read-only mount or file, as SQLite sees it (root ignores file modes)
    monkeypatch.setattr(
        sqlite3, "connect", lambda path, **options: connect(f"file:{path}?mode=ro", uri=True, **options)
    )
    with Store(two_runs) as store:
        assert len(store.runs()) == 2
        with pytest.raises(UserError, match=r"is read-only here .*copy it to a folder you can write to"):
            Runner(store, progress=False).evaluate("lookup-tables", ModelSpec(name="oracle"), [0])


def test_a_full_disk_fails_the_run_in_one_sentence_and_keeps_the_finished_ones(two_runs: Path) -> None:
    with Store(two_runs) as store:
        (pages,) = store._db.execute("PRAGMA page_count").fetchone()
        store._db.execute(f"PRAGMA max_page_count = {pages}")  # the file may not grow: a full disk
        with pytest.raises(UserError, match=r"the disk holding the results store .* is full .*; free some space"):
            Runner(store, progress=False).evaluate("lookup-tables", ModelSpec(name="oracle"), [0])
    assert done_seeds(two_runs) == [0, 1]


def test_a_write_lock_held_past_the_busy_timeout_is_one_sentence(
    two_runs: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(connection, "BUSY_TIMEOUT", 0.2)
    monkeypatch.setattr(failures, "BUSY_TIMEOUT", 0.2)
    holder = sqlite3.connect(two_runs, isolation_level=None)
    holder.execute("BEGIN IMMEDIATE")  # another process in the middle of a long write
    try:
        with Store(two_runs) as store, pytest.raises(UserError, match=r"has held the write lock .* for over 0.2 s"):
            Runner(store, progress=False).evaluate("lookup-tables", ModelSpec(name="oracle"), [0])
    finally:
        holder.execute("ROLLBACK")
        holder.close()
    assert done_seeds(two_runs) == [0, 1]


def test_a_damaged_page_ends_report_in_one_sentence(
    two_runs: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    data = bytearray(two_runs.read_bytes())
    page = 4096
    assert len(data) > 2 * page
    data[page:] = bytes(byte ^ 0x5A for byte in data[page:])  # every page but the schema's
    two_runs.write_bytes(bytes(data))
    code = main(["report", "--store", str(two_runs), "--out", str(tmp_path / "site")])
    assert code == 2 and "is damaged (database disk image is malformed)" in one_error_line(capsys)
    assert not (tmp_path / "site").exists()


@pytest.mark.parametrize(
    ("block", "problem"),
    [
        (b"\xde\xad\xbe\xef", "not a compressed JSON block"),
        (zlib.compress(b"[[1, 2"), "not a compressed JSON block"),
        (zlib.compress(b'{"ids": []}'), "not three columns"),
        (zlib.compress(b'[["a", "b"], [1], [1, 0]]'), "2 ids, 1 predictions and 2 verdicts"),
        (zlib.compress(b'[["a"], [1], [7]]'), "a verdict that is not 1, 0 or null"),
        (zlib.compress(b"[" * 200_000 + b"]" * 200_000), "not a compressed JSON block: its JSON nests 200,000 deep"),
    ],
)
def test_a_damaged_predictions_block_ends_samples_in_one_sentence(
    two_runs: Path, block: bytes, problem: str, capsys: pytest.CaptureFixture[str]
) -> None:
    with sqlite3.connect(two_runs) as db:
        db.execute("UPDATE predictions SET block=? WHERE run_id=(SELECT MAX(id) FROM runs)", (block,))
    db.close()
    code = main(["samples", "--store", str(two_runs), "--suite", "lookup-tables", "--model", "copy"])
    assert code == 2
    assert f"the stored predictions of run 2 (heldout_inputs) in {two_runs} are damaged ({problem}" in one_error_line(
        capsys
    )


def test_a_predictions_block_that_inflates_past_its_cap_is_damaged_not_read(
    two_runs: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """A zlib bomb in a shared store stops at the cap, inflated in chunks: never in memory whole."""
    monkeypatch.setattr(codec, "BLOCK_LIMIT", 10_000)
    with sqlite3.connect(two_runs) as db:
        db.execute("UPDATE predictions SET block=? WHERE run_id=2", (zlib.compress(b" " * 100_000),))
    db.close()
    assert main(["samples", "--store", str(two_runs), "--suite", "lookup-tables", "--model", "copy"]) == 2
    assert "it inflates to more than the 10,000 bytes such a file may hold" in one_error_line(capsys)


@pytest.mark.parametrize(
    ("update", "problem"),
    [
        ("value=9e999", "the value inf, not a finite number"),
        ("value=-9e999", "the value -inf, not a finite number"),
        ("value=7.5", "the value 7.5, outside the range [0, 1]"),
        ("value=-0.5", "the value -0.5, outside the range [0, 1]"),
        ("n=-5", "an item count of -5, below 0"),
    ],
)
def test_a_score_no_metric_takes_ends_report_and_claims_in_one_sentence_naming_the_run(
    two_runs: Path, tmp_path: Path, update: str, problem: str, capsys: pytest.CaptureFixture[str]
) -> None:
    """No infinite, out-of-range or negatively counted value reaches a cell, a claim, a page or the
    record `run` prints (a hand-edited or shared store; a bundle's are refused as it is read)."""
    with sqlite3.connect(two_runs) as db:
        db.execute(f"UPDATE scores SET {update} WHERE run_id=2 AND metric='sequence_accuracy' AND breakdown=''")
    db.close()
    answered = ["run", "--suite", "lookup-tables", "--model", "copy", "--seeds", "0", "--no-progress"]
    for command in (["report", "--out", str(tmp_path / "site")], ["claims", "--no-reference"], answered):
        assert main([*command, "--store", str(two_runs)]) == 2
        line = one_error_line(capsys)
        assert f"the results store {two_runs} holds a score no metric takes: copy seed 1 on lookup-tables@1.0.0" in line
        assert f"sequence_accuracy, has {problem}" in line and "--force" in line
    assert not (tmp_path / "site").exists()


@pytest.mark.parametrize(("column", "value"), [("value", "abc"), ("value", b"\x00\xff"), ("n", "many")])
def test_a_score_that_is_not_a_number_ends_report_in_one_sentence_naming_the_run(
    two_runs: Path, tmp_path: Path, column: str, value: object, capsys: pytest.CaptureFixture[str]
) -> None:
    with sqlite3.connect(two_runs) as db:
        db.execute(f"UPDATE scores SET {column}=? WHERE run_id=2", (value,))
    db.close()
    code = main(["report", "--store", str(two_runs), "--out", str(tmp_path / "site")])
    assert code == 2 and "is damaged: run 2's " in one_error_line(capsys)
    # the runs of other models read as before, and `run --force` mends the damaged one
    with Store(two_runs) as store:
        runner = Runner(store, progress=False)
        runner.evaluate("lookup-tables", ModelSpec(name="oracle"), [0])
        runner.evaluate("lookup-tables", ModelSpec(name="copy"), [1], force=True)
    assert main(["report", "--store", str(two_runs), "--out", str(tmp_path / "site")]) == 0


@pytest.mark.parametrize(
    ("column", "value"),
    [("seed", "x"), ("draw", 1.5), ("fit_seconds", "slow"), ("model_spec", "{not json"), ("model_spec", "[1, 2]")],
)
def test_a_damaged_run_row_ends_the_readers_in_one_sentence_and_runs_go_on(
    two_runs: Path, tmp_path: Path, column: str, value: object, capsys: pytest.CaptureFixture[str]
) -> None:
    with sqlite3.connect(two_runs) as db:
        db.execute(f"UPDATE runs SET {column}=? WHERE id=2", (value,))
    db.close()
    for command in (["report", "--out", str(tmp_path / "site")], ["runs"]):
        assert main([*command, "--store", str(two_runs)]) == 2
        assert f"is damaged: run 2's {column} is not what a run stores; delete that run" in one_error_line(capsys)
    with Store(two_runs) as store:  # another model's runs are made and read as before
        record = Runner(store, progress=False).evaluate("lookup-tables", ModelSpec(name="oracle"), [0])
    assert record.status == {"0": "done"}
