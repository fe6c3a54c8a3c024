"""`structbench runs` and the did-you-mean of the commands that take a stored label: a new user finds
the labels a store holds, and every command an error suggests is one that works."""

from __future__ import annotations

import json
import re
import shlex
from pathlib import Path

import pytest

from structbench.cli import main


@pytest.fixture
def stored(store_path: Path, capsys: pytest.CaptureFixture[str]) -> Path:
    """A store with copy (seeds 0, 1) and ngram[order=3] (seed 0, n/a on a transduction suite)."""
    store = ["--store", str(store_path), "--no-progress", "--json", "--suite", "lookup-tables"]
    assert main(["run", *store, "--model", "copy", "--seeds", "0,1"]) == 0
    assert main(["run", *store, "--model", "ngram", "--set", "order=3", "--seeds", "0"]) == 0
    capsys.readouterr()
    return store_path


def test_runs_lists_each_label_with_its_configuration_and_seeds(
    stored: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["runs", "--store", str(stored)]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[0].split()[:2] == ["label", "suite"]
    assert lines[2].split() == ["copy", "lookup-tables@1.0.0", "--model", "copy", "0:done", "1:done"]
    row = ["ngram[order=3]", "lookup-tables@1.0.0", "--model", "ngram", "--set", "order=3", "0:n/a"]
    assert lines[3].split() == row


def test_runs_json_filters_by_suite_and_model_pattern(stored: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["runs", "--store", str(stored), "--suite", "lookup-tables@1.0.0", "--model", "ngr*", "--json"]) == 0
    assert json.loads(capsys.readouterr().out) == [
        {
            "label": "ngram[order=3]",
            "suite": "lookup-tables",
            "version": "1.0.0",
            "model": {"name": "ngram", "params": {"order": 3}},
            "configuration": None,
            "seeds": [0],
            "status": {"0": "n/a"},
        }
    ]
    assert main(["runs", "--store", str(stored), "--model", "ngram[order=3]", "--json"]) == 0
    assert [row["label"] for row in json.loads(capsys.readouterr().out)] == ["ngram[order=3]"], "a label, not a pattern"
    assert main(["runs", "--store", str(stored), "--suite", "miniscan"]) == 0
    assert capsys.readouterr().out.startswith("no stored runs match --suite miniscan")


def test_runs_needs_an_existing_store(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["runs", "--store", str(tmp_path / "none.sqlite")]) == 2
    assert "no results store at" in capsys.readouterr().err


def suggested(error: str) -> list[list[str]]:
    """The `structbench ...` commands an error message suggests, as argument lists."""
    return [shlex.split(command)[1:] for command in re.findall(r"`(structbench [^`]*)`", error)]


@pytest.mark.parametrize(
    ("command", "typo", "meant"),
    [
        (["compare", "--models", "copy,ngram[order=2]"], "ngram[order=2]", "'ngram[order=3]'"),
        (["compare", "--models", "copy,table-composer", "--statistic", "x"], "table-composer", None),
        (["samples", "--model", "cpy"], "cpy", "'copy'"),
    ],
)
def test_an_unknown_label_offers_stored_labels_and_only_valid_commands(
    stored: Path, capsys: pytest.CaptureFixture[str], command: list[str], typo: str, meant: str | None
) -> None:
    assert main([*command, "--suite", "lookup-tables", "--store", str(stored)]) == 2
    error = capsys.readouterr().err
    assert f"no runs of model {typo!r} on lookup-tables@1.0.0" in error
    assert len(error.strip().splitlines()) == 1
    if meant:
        assert f"did you mean {meant}?" in error
    assert "run --model" not in error and f"--model {typo}" not in error, "suggests a run that cannot work"
    commands = suggested(error)
    assert commands == [["runs", "--suite", "lookup-tables@1.0.0", "--store", str(stored)]]
    for args in commands:
        assert main(args) == 0
        assert "copy" in capsys.readouterr().out


def test_an_unknown_label_that_is_a_model_name_suggests_running_it(
    stored: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["samples", "--suite", "lookup-tables", "--model", "oracle", "--store", str(stored)]) == 2
    commands = suggested(capsys.readouterr().err)
    assert ["run", "--suite", "lookup-tables@1.0.0", "--model", "oracle", "--store", str(stored)] in commands


def test_samples_of_a_label_without_a_finished_run_says_so(stored: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["samples", "--suite", "lookup-tables", "--model", "ngram[order=3]", "--store", str(stored)]) == 2
    error = capsys.readouterr().err
    assert "ngram[order=3] has no finished run on lookup-tables@1.0.0 to show (seed 0 n/a)" in error
    assert suggested(error) == [
        ["runs", "--suite", "lookup-tables@1.0.0", "--model", "ngram[order=3]", "--store", str(stored)]
    ]


def test_report_models_that_match_nothing_offer_the_stored_labels(
    stored: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["report", "--store", str(stored), "--out", str(tmp_path / "site"), "--models", "cpy"]) == 2
    error = capsys.readouterr().err
    assert "no runs in" in error and "did you mean 'copy'?" in error
    assert suggested(error) == [["runs", "--store", str(stored)]]
