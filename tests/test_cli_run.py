"""`structbench run` as scripts use it: the JSON record, the store answering repeats, clear errors."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from harness import registry
from harness.cli import main
from tests import helpers


def run_json(capsys: pytest.CaptureFixture[str], *args: str) -> dict:  # type: ignore[type-arg]
    assert main(["run", *args, "--json", "--no-progress"]) == 0
    return json.loads(capsys.readouterr().out)


@pytest.mark.parametrize("suite_id", ["lookup-tables", "lookup-tables-mt"])
@pytest.mark.parametrize(("model", "expected"), [("oracle", 1.0), ("copy", 0.0)])
def test_oracle_solves_and_copy_fails_every_test_split(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, suite_id: str, model: str, expected: float
) -> None:
    record = run_json(
        capsys, "--suite", suite_id, "--model", model, "--seeds", "0,1,2", "--store", str(tmp_path / "r.sqlite")
    )
    assert record["suite"] == suite_id and record["seeds"] == [0, 1, 2]
    assert record["status"] == {"0": "done", "1": "done", "2": "done"}
    tests = [s.name for s in registry.suite(suite_id).spec.splits_with_role("test")]
    assert sorted(record["scores"]) == sorted(tests)
    for split in tests:
        stats = record["scores"][split]["sequence_accuracy"]
        assert stats["mean"] == expected and stats["per_seed"] == [expected] * 3
        assert stats["n_seeds"] == 3 and stats["ci_low"] == stats["ci_high"] == expected
        assert set(stats) == {"mean", "std", "min", "max", "ci_low", "ci_high", "n_seeds", "per_seed"}


def test_a_repeated_run_is_answered_from_the_store(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    args = ["--suite", "lookup-tables", "--model", "tests.helpers:CountingCopy", "--seeds", "0,1,2"]
    store = ["--store", str(tmp_path / "r.sqlite")]
    helpers.CONSTRUCTED.clear()
    first = run_json(capsys, *args, *store)
    assert len(helpers.CONSTRUCTED) == 3
    second = run_json(capsys, *args, *store)
    assert len(helpers.CONSTRUCTED) == 3, "the model was built again instead of reading the store"
    assert first == second
    # a different setting is a different model: it runs
    run_json(capsys, *args, *store, "--set", "tag=other")
    assert helpers.CONSTRUCTED[-3:] == ["other"] * 3


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--model", "oracel"], "did you mean oracle"),
        (["--model", "oracle", "--set", "depth=3"], "has no setting 'depth'"),
        (["--model", "oracle", "--seeds", "abc"], "not a comma-separated list of integers"),
        (["--model", "oracle", "--seeds", "1,1"], "each once"),
        (["--model", "oracle", "--set", "novalue"], "is not key=value"),
    ],
)
def test_user_errors_are_one_sentence_and_exit_2(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, args: list[str], message: str
) -> None:
    code = main(["run", "--suite", "lookup-tables", "--store", str(tmp_path / "r.sqlite"), *args])
    err = capsys.readouterr().err.strip()
    assert code == 2
    assert message in err and len(err.splitlines()) == 1 and "Traceback" not in err


def test_console_script_prints_the_record(tmp_path: Path) -> None:
    script = Path(sys.executable).with_name("structbench")
    command = [str(script)] if script.exists() else [sys.executable, "-m", "harness.cli"]
    out = subprocess.run(
        [
            *command,
            "run",
            "--suite",
            "lookup-tables",
            "--model",
            "oracle",
            "--json",
            "--store",
            str(tmp_path / "r.sqlite"),
        ],
        capture_output=True,
        text=True,
        check=True,
    )
    assert json.loads(out.stdout)["scores"]["heldout_tables"]["sequence_accuracy"]["mean"] == 1.0
