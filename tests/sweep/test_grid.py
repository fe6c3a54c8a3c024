"""Sweep grids and plans without workers: reading a grid, refusing a bad one in one sentence,
keying runs as `run` does, and leaving out finished runs and ordering the rest longest first (the
worker's side is tests/execution/test_worker.py)."""

from __future__ import annotations

from pathlib import Path

import pytest

from structbench import registry
from structbench.cli import main
from structbench.data import freeze
from structbench.errors import UserError
from structbench.runs.runner import Runner
from structbench.specs import ModelSpec
from structbench.store import Store
from structbench.sweep.grid import expand, load_grid
from structbench.sweep.plan import ASSUMED_SECONDS_PER_EXAMPLE_EPOCH, plan


def grid_file(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "grid.yaml"
    path.write_text(text)
    return path


def test_a_grid_expands_its_axes_suites_and_seeds_in_the_files_order(tmp_path: Path) -> None:
    grid = load_grid(
        grid_file(
            tmp_path,
            """
suites: [lookup-tables, miniscan]
models:
  - copy
  - name: seq2seq
    set: {hidden: [8, 16], lr: "1e-3", amp: false}
  - name: lla-lstm
    suites: [miniscan]
    seeds: "3-4"
seeds: 0
""",
        )
    )
    runs = [(run.suite, run.model.label, run.seed) for run in expand(grid)]
    assert runs == [
        ("lookup-tables", "copy", 0),
        ("miniscan", "copy", 0),
        ("lookup-tables", "seq2seq[amp=false,hidden=8,lr=0.001]", 0),
        ("lookup-tables", "seq2seq[amp=false,hidden=16,lr=0.001]", 0),
        ("miniscan", "seq2seq[amp=false,hidden=8,lr=0.001]", 0),
        ("miniscan", "seq2seq[amp=false,hidden=16,lr=0.001]", 0),
        ("miniscan", "lla-lstm", 3),
        ("miniscan", "lla-lstm", 4),
    ]
    # a string reads as `--set lr=1e-3` reads it: the number, so that a sweep and `run` share the run
    assert expand(grid)[2].model.params["lr"] == 0.001


@pytest.mark.parametrize(
    ("text", "problem"),
    [
        ("suites: [miniscan]\nmodels: [copy]\n", "models.0: model 'copy' has no seeds"),
        ("models: [copy]\nseeds: [0]\n", "model 'copy' has no suites"),
        ("suites: [miniscan]\nmodels: [copy]\nseeds: [0]\nworkers: 2\n", "workers: Extra inputs are not permitted"),
        (
            "suites: [miniscan]\nmodels: [{name: seq2seq, set: {hidden: []}}]\nseeds: [0]\n",
            "the axis 'hidden' is an empty list",
        ),
        (
            "suites: [miniscan]\nmodels: [{name: seq2seq, label: mine, set: {hidden: [8, 16]}}]\nseeds: [0]\n",
            "label 'mine' would name every configuration",
        ),
        ("suites: [miniscan]\nmodels: [{name: copy, set: {x: {a: 1}}}]\nseeds: [0]\n", "models.0.set.x"),
        ("suites: [miniscan]\nmodels: [copy]\nseeds: [0, 0]\n", "seeds [0, 0] must list at least one seed, each once"),
        ("suites: [miniscan]\nmodels: [copy]\nseeds: 0-x\n", "is not a comma-separated list"),
        ("suites: [miniscan\n", "is not valid YAML at line 2"),
        ("- miniscan\n", "must be a mapping with suites, models and seeds"),
    ],
)
def test_a_bad_grid_is_refused_in_one_sentence_naming_the_file_and_the_place(
    tmp_path: Path, text: str, problem: str
) -> None:
    path = grid_file(tmp_path, text)
    with pytest.raises(UserError) as refused:
        load_grid(path)
    message = str(refused.value)
    assert problem.removeprefix("models.0: ") in message and str(path) in message
    assert "Traceback" not in message


def test_a_typo_anywhere_in_the_grid_is_refused_before_any_data_is_built(
    tmp_path: Path, store: Store, monkeypatch: pytest.MonkeyPatch
) -> None:
    def no_build(*args: object) -> None:
        raise AssertionError("a suite was built before the grid was checked")

    monkeypatch.setattr(freeze, "ensure_built", no_build)
    path = grid_file(tmp_path, "suites: [miniscan]\nmodels: [copy, {name: seq2seq, set: {hiden: 8}}]\nseeds: [0]\n")
    with pytest.raises(UserError, match="has no setting 'hiden'"):
        plan(load_grid(path), store)
    assert store.runs().empty
    path = grid_file(tmp_path, "suites: [miniscan, scan-simpel]\nmodels: [copy]\nseeds: [0]\n")
    with pytest.raises(UserError, match="unknown suite 'scan-simpel'; did you mean scan-simple"):
        plan(load_grid(path), store)


def test_a_plan_keys_runs_as_run_does_and_leaves_out_the_finished_ones(
    tmp_path: Path, runner: Runner, store: Store
) -> None:
    runner.evaluate("lookup-tables", ModelSpec(name="copy"), [0, 1])  # made by `run` before the sweep
    runner.evaluate("lookup-tables", ModelSpec(name="tests.support.helpers:ClassifierOnly"), [0])  # n/a: finished too
    path = grid_file(
        tmp_path,
        "suites: [lookup-tables]\nmodels: [copy, copy, tests.support.helpers:ClassifierOnly]\nseeds: [0, 1, 2]\n",
    )
    planned = plan(load_grid(path), store)
    assert planned.duplicates == 3  # copy twice: each run once
    assert sorted((run.cell.label, run.seed, run.stored) for run in planned.finished) == [
        ("classifier-only", 0, "n/a"),
        ("copy", 0, "done"),
        ("copy", 1, "done"),
    ]
    assert sorted((run.cell.label, run.seed) for run in planned.todo) == [
        ("classifier-only", 1),
        ("classifier-only", 2),
        ("copy", 2),
    ]
    # the claim fields are `run`'s own: claiming a finished one answers it from the store
    assert all(store.claim_run(run.claim_fields).state == "cached" for run in planned.finished)


def test_runs_are_ordered_longest_first_by_past_timings_else_by_recipe_work(tmp_path: Path, store: Store) -> None:
    path = grid_file(
        tmp_path,
        """
suites: [lookup-tables]
models:
  - copy
  - {name: seq2seq, set: {epochs: [1, 3]}}
  - {name: tests.support.sweep_models:SlowCopy, set: {seconds: 0.2}}
seeds: [0, 1]
""",
    )
    first = plan(load_grid(path), store)
    train = registry.suite("lookup-tables").spec.split("train").size or 0
    expected = {run.cell.label: run.seconds for run in first.todo}
    assert expected["seq2seq[epochs=3]"] == 3 * train * ASSUMED_SECONDS_PER_EXAMPLE_EPOCH
    assert expected["seq2seq[epochs=1]"] == train * ASSUMED_SECONDS_PER_EXAMPLE_EPOCH
    assert expected["copy"] == expected["slow-copy[seconds=0.2]"] == 0.0
    assert [run.cell.label for run in first.todo[:4]] == ["seq2seq[epochs=3]"] * 2 + ["seq2seq[epochs=1]"] * 2
    # once a configuration has finished runs, its other seeds are expected to take what those took
    runner = Runner(store, progress=False)
    runner.log = lambda message: None
    runner.evaluate(
        "lookup-tables", ModelSpec(name="tests.support.sweep_models:SlowCopy", params={"seconds": 0.2}), [0]
    )
    second = plan(load_grid(path), store)
    (slow,) = [run for run in second.todo if run.cell.label.startswith("slow-copy")]
    assert slow.measured and slow.seconds >= 0.2 and slow.seed == 1
    assert second.todo[-1].cell.label == "copy"


@pytest.mark.parametrize(
    ("options", "message"),
    [
        (["--timeout", "0"], "structbench sweep: error: argument --timeout: '0' is not a finite number above 0"),
        (["--workers", "0"], "structbench sweep: error: argument --workers: '0' is not a whole number at least 1"),
        (
            ["--address", "ray://head:10001"],
            "structbench: error: --address ray://head:10001 names a Ray cluster; add --executor ray.",
        ),
    ],
)
def test_sweep_options_are_checked_in_one_sentence(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, options: list[str], message: str
) -> None:
    grid = grid_file(tmp_path, "suites: [lookup-tables]\nmodels: [copy]\nseeds: [0]\n")
    try:  # argparse refuses a value of the wrong kind itself (SystemExit 2); the sweep, the rest (status 2)
        status = main(["sweep", str(grid), "--store", str(tmp_path / "results.sqlite"), *options])
    except SystemExit as refused:
        status = int(str(refused.code))
    assert status == 2
    assert message in capsys.readouterr().err
    assert main(["sweep", str(tmp_path / "missing.yaml"), "--store", str(tmp_path / "results.sqlite")]) == 2
    assert "cannot read the grid file" in capsys.readouterr().err
