"""A third-party suite registered the way a plugin distribution registers it: an installed
distribution whose metadata declares it in the `structbench.suites` entry-point group."""

from __future__ import annotations

import pytest

from structbench import registry
from structbench.runs.runner import Runner
from structbench.specs import ModelSpec


@pytest.mark.usefixtures("installed_plugin")
def test_plugin_suite_runs_oracle_and_copy(runner: Runner) -> None:
    assert "reverse-words" in registry.suite_names()
    oracle = runner.evaluate("reverse-words", ModelSpec(name="oracle"), [0])
    assert {split: cells["sequence_accuracy"].mean for split, cells in oracle.scores.items()} == {
        "test_short": 1.0,
        "test": 1.0,
    }
    copy = runner.evaluate("reverse-words", ModelSpec(name="copy"), [0])
    suite = registry.suite("reverse-words")
    test = suite.generate(0, files=None)["test"]  # type: ignore[arg-type]  # the generator reads no files
    palindromes = sum(e.input == e.target for e in test) / len(test)
    assert copy.scores["test"]["sequence_accuracy"].mean == palindromes < 1.0
    by_length = copy.breakdowns["test"]["sequence_accuracy"]["length"]
    assert set(by_length) == {str(e.meta["length"]) for e in test}
    assert sum(
        cell.mean * len([e for e in test if str(e.meta["length"]) == level]) for level, cell in by_length.items()
    ) == pytest.approx(palindromes * len(test))
