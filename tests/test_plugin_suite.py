"""A third-party suite registered the way a plugin distribution registers it: an installed
distribution whose metadata declares it in the `structbench.suites` entry-point group."""

from __future__ import annotations

import shutil
from collections.abc import Iterator
from pathlib import Path

import pytest

from structbench import registry
from structbench.runner import Runner
from structbench.specs import ModelSpec

PLUGIN = Path(__file__).with_name("fixtures") / "plugin" / "reverse_suite.py"


@pytest.fixture
def installed_plugin(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """`reverse_suite.py` plus a dist-info folder, on sys.path: what `pip install` of a plugin leaves."""
    shutil.copy(PLUGIN, tmp_path / "reverse_suite.py")
    info = tmp_path / "structbench_reverse-1.0.dist-info"
    info.mkdir()
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: structbench-reverse\nVersion: 1.0\n")
    (info / "entry_points.txt").write_text("[structbench.suites]\nreverse-words = reverse_suite:ReverseWords\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    registry.clear_cache()
    yield
    registry.clear_cache()


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
