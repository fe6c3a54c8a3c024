"""Evaluating one's own model as a researcher iterates on it: labels and `--name`, `--force`,
`--limit`, the protocols hint, models found from the working folder, the Python API and
`structbench check`."""

from __future__ import annotations

import json
import os
from collections.abc import Iterator
from pathlib import Path

import pandas as pd
import pytest

import structbench
from structbench import registry
from structbench.cli import main
from structbench.data import freeze
from structbench.reports.builders.boards import aggregate, boards
from structbench.specs import Split
from structbench.store import Store
from tests.support import helpers
from tests.support.helpers import one_sentence_error

SUITE = "lookup-tables"
MODEL = '''
class Memo:
    """Memorises train; answers the last label for inputs it has not seen."""

    name = "memo"
    protocols = ("classification",)

    def fit(self, train, dev, *, seed):
        self.seen = {tuple(e.input): e.label for e in train.examples}

    def classify(self, inputs, labels):
        return [self.seen.get(tuple(x), labels[-1]) for x in inputs]
'''


def run_json(capsys: pytest.CaptureFixture[str], *args: str, code: int = 0) -> dict:  # type: ignore[type-arg]
    assert main(["run", *args, "--json", "--no-progress"]) == code
    return json.loads(capsys.readouterr().out)  # type: ignore[no-any-return]


@pytest.fixture
def in_model_folder(tmp_path: Path) -> Iterator[Path]:
    """The working folder of an author with `memo.py` in it, and no PYTHONPATH set for it."""
    folder = tmp_path / "mine"
    folder.mkdir()
    (folder / "memo.py").write_text(MODEL)
    before = os.getcwd()
    os.chdir(folder)
    yield folder
    os.chdir(before)
    import sys

    sys.modules.pop("memo", None)
    while str(folder) in sys.path:
        sys.path.remove(str(folder))


def test_a_model_is_labelled_by_its_own_name_or_name_and_a_new_name_relabels_without_rerunning(
    capsys: pytest.CaptureFixture[str], store_path: Path
) -> None:
    store = ["--store", str(store_path), "--in-process"]  # counted as built in this process
    helpers.CONSTRUCTED.clear()
    record = run_json(
        capsys, "--suite", SUITE, "--model", "tests.support.helpers:CountingCopy", "--set", "tag=a", *store
    )
    assert record["model"] == 'counting-copy[tag="a"]'  # the class's `name`, never its import path
    renamed = run_json(
        capsys,
        "--suite",
        SUITE,
        "--model",
        "tests.support.helpers:CountingCopy",
        "--set",
        "tag=a",
        "--name",
        "copy v2",
        *store,
    )
    assert len(helpers.CONSTRUCTED) == 1  # the label is not part of the run key: answered from the store
    assert renamed["model"] == "copy v2" and renamed["scores"] == record["scores"]
    with Store(store_path) as opened:
        assert opened.runs()["model"].tolist() == ["copy v2"]
        (board,) = boards(opened, aggregate(opened))
    assert board.status == {"copy v2": "1 done"}  # what the leaderboard shows
    assert main(["run", "--suite", SUITE, "--model", "copy,random", "--name", "x", *store]) == 2
    assert "names one model" in one_sentence_error(capsys.readouterr().err)
    assert main(["run", "--suite", SUITE, "--model", "copy", "--name", "two\nlines", *store]) == 2
    assert "must be one line" in one_sentence_error(capsys.readouterr().err)


def test_force_runs_stored_seeds_again(capsys: pytest.CaptureFixture[str], store_path: Path) -> None:
    args = [
        "--suite",
        SUITE,
        "--model",
        "tests.support.helpers:CountingCopy",
        "--seeds",
        "0,1",
        "--store",
        str(store_path),
        "--in-process",  # counted as built in this process
    ]
    helpers.CONSTRUCTED.clear()
    first = run_json(capsys, *args)
    run_json(capsys, *args)
    assert len(helpers.CONSTRUCTED) == 2  # the repeat came from the store
    forced = run_json(capsys, *args, "--force")
    assert len(helpers.CONSTRUCTED) == 4 and forced["scores"] == first["scores"]
    with Store(store_path) as opened:
        runs = opened.runs()
    assert len(runs) == 2 and set(runs["status"]) == {"done"}  # replaced in place, not duplicated


def test_a_limited_run_is_partial_stored_apart_and_never_ranked(
    capsys: pytest.CaptureFixture[str], store_path: Path
) -> None:
    store = ["--store", str(store_path)]
    partial = run_json(capsys, "--suite", SUITE, "--model", "oracle", "--limit", "3", *store)
    assert partial["partial"] == 3 and partial["model"] == "oracle (partial: first 3 per split)"
    for metrics in partial["scores"].values():
        assert metrics["sequence_accuracy"]["interval"] == "Wilson over 3 items"
    full = run_json(capsys, "--suite", SUITE, "--model", "oracle", *store)
    assert full["partial"] is None and "Wilson over 3 items" not in json.dumps(full["scores"])
    with Store(store_path) as opened:
        runs = opened.runs()
        (board,) = boards(opened, aggregate(opened))
    assert len(runs) == 2 and runs["model_hash"].nunique() == 2  # the full run was not answered by the partial one
    assert runs.set_index("model")["comparable"].to_dict()["oracle (partial: first 3 per split)"] == 0
    assert board.partial == {"oracle (partial: first 3 per split)"} and not board.not_comparable  # tagged "partial"
    with pytest.raises(SystemExit) as refused:
        main(["run", "--suite", SUITE, "--model", "oracle", "--limit", "0", *store])
    assert refused.value.code == 2
    assert "argument --limit: '0' is not a whole number at least 1" in capsys.readouterr().err


def test_a_class_with_the_method_but_no_protocols_is_told_what_to_add(
    capsys: pytest.CaptureFixture[str], store_path: Path, in_model_folder: Path
) -> None:
    (in_model_folder / "undeclared.py").write_text(
        "class Echo:\n    def transduce(self, inputs):\n        return [list(x) for x in inputs]\n"
    )
    assert main(["run", "--suite", SUITE, "--model", "undeclared:Echo", "--store", str(store_path)]) == 2
    error = one_sentence_error(capsys.readouterr().err)
    assert (
        error
        == "structbench: error: Echo has transduce() but no `protocols` attribute; add `protocols = ('transduction',)` to the class."
    )
    with Store(store_path) as opened:
        assert opened.runs().empty  # nothing was recorded for a configuration error


def test_a_module_class_model_is_found_in_the_working_folder_and_an_edit_is_a_new_run(
    capsys: pytest.CaptureFixture[str], store_path: Path, in_model_folder: Path
) -> None:
    import sys

    args = [
        "--suite",
        "agreement-attractors-number",
        "--model",
        "memo:Memo",
        "--seeds",
        "0,1",
        "--store",
        str(store_path),
    ]
    first = run_json(capsys, *args)  # no PYTHONPATH: the working folder is searched, as `python -m` does
    assert first["model"] == "memo" and first["status"] == {"0": "done", "1": "done"}
    (in_model_folder / "memo.py").write_text(MODEL.replace("labels[-1]", "labels[0]"))
    sys.modules.pop("memo")  # what a new `structbench run` process does
    edited = run_json(capsys, *args)
    means = {split: cells["accuracy"]["mean"] for split, cells in first["scores"].items()}
    now = {split: cells["accuracy"]["mean"] for split, cells in edited["scores"].items()}
    assert now != means  # the edited model's own numbers, not the cached ones
    assert "answered from the store" not in capsys.readouterr().err
    os.chdir(in_model_folder.parent)
    sys.modules.pop("memo")
    sys.path.remove(str(in_model_folder))
    assert main(["run", "--suite", SUITE, "--model", "memo:Memo", "--store", str(store_path)]) == 2
    assert "put that folder on PYTHONPATH" in one_sentence_error(capsys.readouterr().err)


class Majority:
    """A Python API user's model object: the majority label of train, with a setting of its own."""

    protocols = ("classification",)

    def __init__(self, prefer_first: bool = False) -> None:
        self.prefer_first = prefer_first
        self.fits = 0

    def fit(self, train: Split, dev: Split | None, *, seed: int) -> None:
        self.fits += 1
        labels = [e.label for e in train.examples]
        self.answer = max(sorted(set(labels), reverse=not self.prefer_first), key=labels.count)

    def classify(self, inputs: list[list[str]], labels: list[str]) -> list[str]:
        return [self.answer for _ in inputs]


def test_the_python_api_evaluates_an_object_reads_results_and_loads_suites(store_path: Path) -> None:
    suite = "agreement-attractors-number"
    model = Majority()
    result = structbench.evaluate(suite, model, seeds=[0, 1], store=store_path, progress=False)
    assert model.fits == 2 and result.model == "Majority" and result.status == {"0": "done", "1": "done"}
    frame = result.to_pandas()
    assert list(frame.columns) == [
        "split",
        "metric",
        "mean",
        "std",
        "ci_low",
        "ci_high",
        "interval",
        "n_seeds",
        "per_seed",
    ]
    tests = [s.name for s in registry.suite(suite).spec.splits_with_role("test")]
    assert frame["split"].tolist() == tests and set(frame["metric"]) == {"accuracy"}
    mixed = frame.set_index("split").loc["mixed"]
    assert mixed["per_seed"] == result.scores["mixed"]["accuracy"].per_seed and mixed["n_seeds"] == 2

    # the same object again: answered from the store, as `structbench run` would be
    again = structbench.evaluate(suite, model, seeds=[0, 1], store=store_path, progress=False)
    assert model.fits == 2 and again.scores == result.scores
    # another setting of the same class is another model
    structbench.evaluate(suite, Majority(prefer_first=True), seeds=[0], store=store_path, name="first", progress=False)
    structbench.evaluate(suite, "tests.support.helpers:CrashOnSeed", seeds=[0], store=store_path, progress=False)  # n/a
    results = structbench.load_results(store_path).to_pandas()
    assert list(results.columns) == [
        "suite",
        "version",
        "suite_hash",
        "model",
        "seed",
        "status",
        "split",
        "metric",
        "value",
        "n",
    ]
    assert results.groupby("model")["seed"].nunique().to_dict() == {"Majority": 2, "first": 1, "crash-on-seed": 1}
    # an object is keyed as `--model module:Class --set ...` with its non-default settings: the CLI shares its runs
    assert main(["run", "--suite", suite, "--model", "tests.test_own_model:Majority", "--set", "prefer_first=true",
                 "--store", str(store_path), "--json"]) == 0  # fmt: skip
    assert len(structbench.load_results(store_path).to_pandas().drop_duplicates(["model", "seed"])) == 4
    mine = results[(results.model == "Majority") & (results.split == "mixed")]
    assert mine["value"].tolist() == result.scores["mixed"]["accuracy"].per_seed
    crashed = results[results.model == "crash-on-seed"]
    assert crashed["status"].tolist() == ["n/a"] and crashed["split"].isna().all()  # kept, with no scores

    loaded = structbench.load_suite(suite)
    test = loaded.split("mixed", draw=0)
    built = registry.suite(suite)
    manifest = freeze.ensure_built(built)
    assert loaded.suite_hash == manifest.suite_hash
    assert test.examples == freeze.load_split(built, manifest, 0, "mixed").examples
    with pytest.raises(structbench.errors.UserError, match="has no split 'nope'"):
        loaded.split("nope")
    with pytest.raises(structbench.errors.UserError, match="no results store"):
        structbench.load_results(store_path.parent / "absent.sqlite")
    assert isinstance(results, pd.DataFrame)


def test_check_passes_on_unchanged_cells_and_names_the_cell_that_moved(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, in_model_folder: Path
) -> None:
    import sys

    golden, store = tmp_path / "golden.json", ["--store", str(tmp_path / "r.sqlite")]
    write = ["check", str(golden), "--write", "--suite", "agreement-attractors-number", "--model", "memo:Memo"]
    assert main([*write, "--seeds", "0,1", *store, "--no-progress"]) == 0
    written = json.loads(golden.read_text())
    (entry,) = written["entries"]
    assert entry["model"] == "memo:Memo" and entry["seeds"] == [0, 1]
    assert [c["metric"] for c in entry["cells"]] == ["accuracy"] * 6  # the primary metric of each test split
    capsys.readouterr()
    assert main(["check", str(golden), *store]) == 0
    assert capsys.readouterr().err.endswith("6 cells checked against " + str(golden) + ": 0 moved.\n")

    (in_model_folder / "memo.py").write_text(MODEL.replace("labels[-1]", "labels[0]"))  # a regression
    sys.modules.pop("memo")
    fresh = ["--store", str(tmp_path / "fresh.sqlite")]  # as in the author's CI: nothing stored, all re-run
    assert main(["check", str(golden), *fresh, "--no-progress"]) == 1
    err = capsys.readouterr().err
    mixed = next(c["mean"] for c in entry["cells"] if c["split"] == "mixed")
    assert f"agreement-attractors-number@2.0.0 x memo, mixed accuracy: moved from {mixed:.6f} to " in err
    assert err.endswith("6 cells checked against " + str(golden) + ": 6 moved.\n")
    assert main(["check", str(golden), *fresh, "--tolerance", "0.5"]) == 0  # within a generous tolerance
    capsys.readouterr()

    golden.write_text('{"entries": 3}')
    assert main(["check", str(golden), *fresh]) == 2
    assert "is not a structbench golden file" in one_sentence_error(capsys.readouterr().err)
    assert main(["check", str(tmp_path / "absent.json")]) == 2
    assert "write one with `structbench check" in one_sentence_error(capsys.readouterr().err)


def test_a_command_model_is_labelled_by_its_hello_and_a_time_out_is_not_part_of_its_key(
    capsys: pytest.CaptureFixture[str], store_path: Path
) -> None:
    import sys

    from tests.conftest import REPO

    command = f"command={sys.executable} {REPO / 'docs' / 'examples' / 'memorise.py'}"
    args = [
        "--suite",
        "agreement-attractors-number",
        "--model",
        "command",
        "--set",
        command,
        "--store",
        str(store_path),
    ]
    first = run_json(capsys, *args)
    assert first["model"] == "memorise"  # its hello name: the command line (a local path) is never shown
    again = run_json(capsys, *args, "--set", "fit_timeout=60", "--set", "timeout=30")
    assert again["scores"] == first["scores"]
    with Store(store_path) as opened:
        runs = opened.runs()
    assert len(runs) == 1 and runs["model"].tolist() == ["memorise"]  # a longer time-out is not a new run
    assert str(REPO) not in runs["model"].iloc[0]


def test_a_new_name_for_some_seeds_renames_the_whole_configuration(
    capsys: pytest.CaptureFixture[str], store_path: Path
) -> None:
    store = ["--store", str(store_path)]
    run_json(capsys, "--suite", SUITE, "--model", "copy", "--seeds", "0,1", *store)
    renamed = run_json(capsys, "--suite", SUITE, "--model", "copy", "--seeds", "1,2", "--name", "mine", *store)
    assert renamed["status"] == {"1": "done", "2": "done"}
    with Store(store_path) as opened:
        runs = opened.runs()
        (board,) = boards(opened, aggregate(opened))
    # seed 0, not asked for, takes the name too: one configuration is one row of the leaderboard
    assert sorted(zip(runs.seed, runs.model, strict=True)) == [(0, "mine"), (1, "mine"), (2, "mine")]
    assert board.status == {"mine": "3 done"}
