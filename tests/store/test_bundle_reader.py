"""A bundle is untrusted input: every file and field is checked as it is read, a bad entry is left out
and named in one sentence (the file and the field), and the rest of the bundle is read."""

from __future__ import annotations

import gzip
import json
import os
import re
from pathlib import Path

import pytest

from structbench.paths import reference_bundle_dir
from structbench.runs.runner import Runner
from structbench.specs import ModelSpec
from structbench.store import Store
from structbench.store.bundle import write_runs
from structbench.store.bundle_layout import predictions_files, run_files, suite_files
from structbench.store.bundle_reader import BundleContents, read_bundle
from tests.support.deadline import deadline

SUITE = "lookup-tables"


@pytest.fixture
def bundle(runner: Runner, store: Store, tmp_path: Path) -> Path:
    """A bundle of `random` on seeds 0 and 1 and `copy` on seed 0."""
    runner.evaluate(SUITE, ModelSpec(name="random"), [0, 1])
    runner.evaluate(SUITE, ModelSpec(name="copy"), [0])
    folder = tmp_path / "bundle"
    write_runs(store, store.runs()["id"].tolist(), folder)
    return folder


def random_file(folder: Path) -> Path:
    return next(path for path in run_files(folder) if path.name.startswith("random-"))


def seeds(contents: BundleContents) -> list[tuple[str, int]]:
    return sorted((run.row["model"], run.row["seed"]) for run in contents.runs)


def edit(path: Path, old: str, new: str) -> None:
    """Replace the first `old` in the text of `path` (raw text: NaN and 1e400 are written as such)."""
    text = path.read_text()
    assert old in text, old
    path.write_text(text.replace(old, new, 1))


def test_the_installed_bundle_passes_every_check(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("STRUCTBENCH_REFERENCE")
    contents = read_bundle(reference_bundle_dir())
    assert contents.left_out == []
    in_files = sum(len(json.loads(path.read_text())["runs"]) for path in run_files(reference_bundle_dir()))
    assert len(contents.runs) == in_files > 0
    assert len(contents.suites) == len(suite_files(reference_bundle_dir()))
    assert sum(bool(run.predictions) for run in contents.runs) == len(predictions_files(reference_bundle_dir()))


@pytest.mark.parametrize(
    ("old", "new", "problem"),
    [
        ('"", "", 0.0, 64, true]', '"", "", NaN, 64, true]', r"scores\[\d+\]\.value: Input should be a finite number"),
        ('"", "", 0.0, 64, true]', '"", "", Infinity, 64, true]', r"scores\[\d+\]\.value: Input should be a finite"),
        ('"", "", 0.0, 64, true]', '"", "", 1e400, 64, true]', r"scores\[\d+\]\.value: Input should be a finite"),
        ('"", "", 0.0, 64, true]', '"", "", 7.5, 64, true]', r"the value 7\.5, outside the range \[0, 1\]"),
        ('"", "", 0.0, 64, true]', '"", "", 0.0, -5, true]', r"scores\[\d+\]\.n: Input should be greater than or"),
        ('"", "", 0.0, 64, true]', '"", "", 0.0, 1e400, true]', r"scores\[\d+\]\.n: Input should be a valid integer"),
        ('"", "", 0.0, 64, true]', '"", "", "0.0", 64, true]', r"scores\[\d+\]\.value: Input should be a valid number"),
        ('"", "", 0.0, 64, true]', '"", "", 0.0, 64]', r"scores\[\d+\]: a score is a list of 7 entries"),
        ('"seed": 0,', '"seed": 1000000000000000000000000000000,', r"runs\[0\]\.seed: Input should be less than or"),
        ('"seed": 0,', '"seed": -1,', r"runs\[0\]\.seed: Input should be greater than or equal to 0"),
        ('"status": "done"', '"status": "weird"', r"runs\[0\]\.status: Input should be 'done' \(it holds 'weird'\)"),
        ('"started_at": ', '"started_at": NaN, "x": ', r"runs\[0\]\.started_at: Input should be a finite number"),
        ('"environment": {', '"environment": 7, "e": {', r"runs\[0\]\.environment: Input should be a valid dict"),
    ],
)
def test_a_bad_field_of_a_run_leaves_out_that_run_alone_and_is_named(
    bundle: Path, old: str, new: str, problem: str
) -> None:
    path = random_file(bundle)
    edit(path, old, new)
    contents = read_bundle(bundle)
    assert seeds(contents) == [("copy", 0), ("random", 1)]  # seed 0 of random alone is left out
    (sentence,) = contents.left_out
    assert sentence.startswith(f"the bundle's {path} had its runs[0] ")
    assert re.search(problem, sentence), sentence
    assert sentence.endswith("restore it from git, or from whoever gave you the bundle.")


@pytest.mark.parametrize(
    ("old", "new", "problem"),
    [
        ('"model_spec": {"name": "random", "params": {}}', '"model_spec": ["random"]', "model_spec: Input should be"),
        ('"suite": "lookup-tables"', '"suite": "../../outside"', "suite: String should match pattern"),
        ('"suite": "lookup-tables"', '"suite": "miniscan"', "its runs are of miniscan@1.0.0 and model hash"),
        ('"comparable": true', '"comparable": "yes"', "comparable: Input should be a valid boolean"),
        ('"model_hash": "', '"model_hash": "../', "model_hash: String should match pattern"),
    ],
)
def test_a_bad_key_field_leaves_out_the_file_and_never_points_outside_the_bundle(
    bundle: Path, old: str, new: str, problem: str
) -> None:
    path = random_file(bundle)
    edit(path, old, new)
    contents = read_bundle(bundle)
    assert seeds(contents) == [("copy", 0)]
    (sentence,) = contents.left_out
    assert sentence.startswith(f"the bundle's {path} was left out: ") and problem in sentence, sentence


def test_json_nested_200000_deep_is_left_out_wherever_it_is(bundle: Path) -> None:
    deep = b"[" * 200_000 + b"]" * 200_000
    random_file(bundle).write_bytes(deep)
    suite = suite_files(bundle)[0]
    suite.write_bytes(b'{"suite_hash": "x", "spec": ' + deep + b"}")
    predictions = next(path for path in predictions_files(bundle) if "copy-" in str(path))
    predictions.write_bytes(gzip.compress(deep))
    contents = read_bundle(bundle)
    assert seeds(contents) == [("copy", 0)] and contents.suites == []
    assert [run.predictions for run in contents.runs] == [[]]  # copy's run is read without its predictions
    assert len(contents.left_out) == 3
    assert all("its JSON nests 200,0" in sentence for sentence in contents.left_out), contents.left_out
    assert {str(path) for path in (random_file(bundle), suite, predictions)} == {
        sentence.split()[2] for sentence in contents.left_out
    }


def test_a_fifo_in_the_bundle_is_left_out_without_blocking(bundle: Path) -> None:
    fifo = random_file(bundle).with_name("x.json")
    os.mkfifo(fifo)
    with deadline():
        contents = read_bundle(bundle)
    assert seeds(contents) == [("copy", 0), ("random", 0), ("random", 1)]
    assert contents.left_out == [
        f"the bundle's {fifo} was left out: it is a FIFO, not a regular file; restore it from git, or from whoever "
        "gave you the bundle."
    ]


def test_a_predictions_file_that_is_a_link_to_dev_zero_or_a_bomb_leaves_the_run_without_predictions(
    bundle: Path,
) -> None:
    link, bomb = [path for path in predictions_files(bundle) if "random-" in str(path)]
    link.unlink()
    link.symlink_to("/dev/zero")
    bomb.write_bytes(gzip.compress(b"\0" * (40 << 20), 1))  # 40 MiB inflated, past the 32 MiB cap
    contents = read_bundle(bundle)
    assert seeds(contents) == [("copy", 0), ("random", 0), ("random", 1)]
    assert [bool(run.predictions) for run in sorted(contents.runs, key=lambda r: (r.row["model"], r.row["seed"]))] == [
        True,
        False,
        False,
    ]
    assert contents.left_out[0].startswith(f"the bundle's {link} was left out (seed 0 is read without its predictions)")
    assert "it is a symbolic link, and a link is never followed here" in contents.left_out[0]
    assert "it inflates to more than the 33,554,432 bytes such a file may hold" in contents.left_out[1]


def test_a_run_file_larger_than_its_limit_is_left_out_unread(bundle: Path) -> None:
    huge = random_file(bundle).with_name("huge-0123456789ab.json")
    with huge.open("wb") as file:
        file.truncate(1 << 40)  # a sparse terabyte
    contents = read_bundle(bundle)
    assert len(contents.runs) == 3
    assert "it holds 1,099,511,627,776 bytes, more than the 16,777,216 such a file may hold" in contents.left_out[0]


def test_a_suite_spec_under_another_suites_name_is_left_out(bundle: Path) -> None:
    (spec,) = suite_files(bundle)
    moved = spec.with_name(spec.name.replace("lookup-tables", "miniscan"))
    spec.rename(moved)
    contents = read_bundle(bundle)
    assert contents.suites == [] and len(contents.runs) == 3
    (sentence,) = contents.left_out
    assert f"the bundle's {moved} was left out: its spec is of lookup-tables@1.0.0 data" in sentence


def test_a_writer_never_merges_into_a_run_file_that_fails_its_checks(bundle: Path, store: Store) -> None:
    from structbench.errors import UserError

    path = random_file(bundle)
    edit(path, '"status": "done"', '"status": "weird"')
    before = path.read_bytes()
    with pytest.raises(UserError, match=rf"cannot add runs to {re.escape(str(path))} of the reference bundle"):
        write_runs(store, store.runs()["id"].tolist(), bundle)
    assert path.read_bytes() == before
