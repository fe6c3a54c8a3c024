"""What `structbench run` prints without --json: a model that is n/a says so and why, a failed seed
says it failed, and a cell read partly from the store says which seeds came from where."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from structbench.cli import main


def printed(capsys: pytest.CaptureFixture[str], store_path: Path, *args: str, code: int = 0) -> list[str]:
    assert main(["run", "--suite", "lookup-tables", *args, "--store", str(store_path), "--no-progress"]) == code
    return capsys.readouterr().out.splitlines()


def test_a_model_that_does_not_speak_the_protocol_prints_n_a_and_why(
    capsys: pytest.CaptureFixture[str], store_path: Path
) -> None:
    lines = printed(capsys, store_path, "--model", "ngram", "--seeds", "0,1")
    assert lines[0].endswith("x ngram")
    assert lines[1] == "n/a: ngram does not speak the transduction protocol"
    assert not any("failed" in line or line.startswith("split") for line in lines), "no empty table, no failure"
    assert main(["run", "--suite", "lookup-tables", "--model", "ngram", "--store", str(store_path), "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["status"] == {"0": "n/a"}, "the table and --json agree"


def test_a_failed_seed_still_says_failed(capsys: pytest.CaptureFixture[str], store_path: Path) -> None:
    model = ["--model", "tests.support.helpers:CrashOnSeed", "--set", "crash_seed=1", "--seeds", "0,1"]
    lines = printed(capsys, store_path, *model, code=1)
    assert lines[-2] == "seed 1 failed: RuntimeError: exploding gradient at seed 1"


def test_a_cell_read_partly_from_the_store_names_the_seeds_of_each(
    capsys: pytest.CaptureFixture[str], store_path: Path
) -> None:
    first = printed(capsys, store_path, "--model", "copy", "--seeds", "0")
    assert not any(line.startswith("cells over") for line in first), "every seed run now: nothing to explain"
    again = printed(capsys, store_path, "--model", "copy", "--seeds", "1")
    assert "cells over seeds 0, 1: seed 1 run now; seed 0 from the store, not asked for this time" in again
    both = printed(capsys, store_path, "--model", "copy", "--seeds", "1,2")
    sources = "seed 2 run now; seed 1 from the store; seed 0 from the store, not asked for this time"
    assert f"cells over seeds 0, 1, 2: {sources}" in both
