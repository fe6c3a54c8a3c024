"""`structbench samples`: each stored prediction beside its example, as JSON lines a researcher can grep."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from structbench import registry
from structbench.cli import main
from structbench.data import freeze
from structbench.runs.runner import Runner
from structbench.specs import ModelSpec


def lines_of(capsys: pytest.CaptureFixture[str], *args: str) -> list[dict]:  # type: ignore[type-arg]
    assert main(["samples", *args]) == 0
    return [json.loads(line) for line in capsys.readouterr().out.splitlines()]


def test_samples_join_predictions_with_inputs_gold_and_conditions(
    runner: Runner, store_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    runner.evaluate("lookup-tables", ModelSpec(name="random"), [0, 1])
    runner.store.close()
    store = ["--store", str(store_path)]
    rows = lines_of(
        capsys, "--suite", "lookup-tables", "--model", "random", "--seeds", "1", "--split", "heldout_tables", *store
    )
    suite = registry.suite("lookup-tables")
    examples = freeze.load_split(suite, freeze.ensure_built(suite), 1, "heldout_tables").examples
    assert [r["id"] for r in rows] == [e.id for e in examples]
    for row, example in zip(rows, examples, strict=True):
        assert (row["seed"], row["split"], row["model"]) == (1, "heldout_tables", "random")
        assert row["input"] == example.input and row["target"] == example.target and row["meta"] == example.meta
        assert row["correct"] == (row["prediction"] == example.target)  # the verdict the store kept
    every = lines_of(capsys, "--suite", "lookup-tables", "--model", "random", *store)
    assert {r["seed"] for r in every} == {0, 1}
    assert len(every) == 2 * sum(s.size or 0 for s in suite.spec.splits_with_role("test"))
    wrong = lines_of(capsys, "--suite", "lookup-tables", "--model", "random", "--wrong", *store)
    assert wrong and all(r["correct"] is False for r in wrong) and len(wrong) == sum(not r["correct"] for r in every)


def test_samples_refuse_a_seed_or_split_that_is_not_there(
    runner: Runner, store_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    runner.evaluate("miniscan", ModelSpec(name="copy"), [0])
    runner.store.close()
    store = ["--store", str(store_path)]
    assert main(["samples", "--suite", "miniscan", "--model", "copy", "--seeds", "3", *store]) == 2
    assert "no finished run on miniscan@1.0.0 for seed 3 (finished seeds: 0)" in capsys.readouterr().err
    assert main(["samples", "--suite", "miniscan", "--model", "copy", "--split", "dev", *store]) == 2
    assert "has no test split 'dev'; its test splits are test" in capsys.readouterr().err
    assert main(["samples", "--suite", "miniscan", "--model", "nobody", *store]) == 2
    assert "no runs of model 'nobody'" in capsys.readouterr().err


def test_samples_piped_into_head_end_quietly(runner: Runner, store_path: Path) -> None:
    runner.evaluate("lookup-tables", ModelSpec(name="copy"), [0])
    runner.store.close()
    command = [sys.executable, "-m", "structbench.cli", "samples", "--suite", "lookup-tables", "--model", "copy"]
    with subprocess.Popen(
        [*command, "--store", str(store_path)], stdout=subprocess.PIPE, stderr=subprocess.PIPE
    ) as child:
        assert child.stdout is not None and child.stderr is not None
        first = json.loads(child.stdout.readline())
        child.stdout.close()  # what `| head -1` does after its line
        error = child.stderr.read().decode()
        assert child.wait(timeout=60) == 0
    assert first["model"] == "copy" and "Traceback" not in error and "BrokenPipe" not in error
