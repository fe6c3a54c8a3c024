"""`structbench report`: its options as the command line gives them, and the site where it says it wrote one."""

from __future__ import annotations

from pathlib import Path

import pytest

from structbench.cli import main
from structbench.runs.runner import Runner
from structbench.specs import ModelSpec
from tests.reports.support import suite_page
from tests.support.helpers import read_results


def test_report_command_writes_the_four_files(
    runner: Runner, store_path: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    runner.evaluate("lookup-tables-mt", ModelSpec(name="copy"), [0, 1])
    runner.store.close()
    out = tmp_path / "out"
    assert main(["report", "--store", str(store_path), "--out", str(out)]) == 0
    assert capsys.readouterr().out.strip() == str(out / "index.html")
    for name in ("index.html", "leaderboard.md", "results.csv", "results.json"):
        assert (out / name).is_file()
    assert "lookup-tables-mt@1.0.0" in (out / "index.html").read_text()
    assert "n = 2 · Wilson</span>" in suite_page(out / "index.html", "lookup-tables-mt@1.0.0")


def test_report_writes_where_quickstart_does_when_no_folder_is_given(
    runner: Runner, store_path: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """In the home's `site/` (issue 46): nothing is left in the folder the command ran in, no lock either."""
    runner.evaluate("lookup-tables", ModelSpec(name="copy"), [0])
    runner.store.close()
    work = tmp_path / "work"
    work.mkdir()
    monkeypatch.chdir(work)
    monkeypatch.setenv("STRUCTBENCH_HOME", str(tmp_path / "home"))
    assert main(["report", "--store", str(store_path), "--no-reference"]) == 0
    site = tmp_path / "home" / "site"
    assert "lookup-tables@1.0.0" in (site / "index.html").read_text()
    assert list(work.iterdir()) == [] and not (site.parent / ".site.lock").exists()


def test_report_command_refuses_a_missing_store(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["report", "--store", str(tmp_path / "none.sqlite"), "--out", str(tmp_path / "out")]) == 2
    assert "no results store" in capsys.readouterr().err
    assert not (tmp_path / "none.sqlite").exists()
    assert not (tmp_path / "out").exists()


def test_the_report_command_takes_comma_lists_and_patterns(runner: Runner, store_path: Path, tmp_path: Path) -> None:
    runner.evaluate("lookup-tables", ModelSpec(name="copy"), [0])
    runner.evaluate("lookup-tables", ModelSpec(name="random"), [0])
    runner.store.close()
    out = tmp_path / "out"
    assert main(["report", "--store", str(store_path), "--out", str(out), "--models", "copy,rand*"]) == 0
    assert {r["model"] for r in read_results(out / "results.json")} == {"copy", "random"}
