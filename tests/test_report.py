"""The leaderboard renders what the store holds, escaped, with mean, CI and seed count."""

from __future__ import annotations

import json
from pathlib import Path

import pandas as pd
import pytest

from harness.cli import main
from harness.runner import Runner
from harness.specs import ModelSpec
from reports.render import write_report

HOSTILE = "<script>alert(1)</script>"


@pytest.fixture
def report(runner: Runner, tmp_path: Path) -> Path:
    runner.evaluate("lookup-tables", ModelSpec(name="oracle"), [0, 1, 2])
    runner.evaluate("lookup-tables", ModelSpec(name="tests.helpers:CountingCopy", params={"tag": HOSTILE}), [0])
    runner.evaluate("lookup-tables", ModelSpec(name="tests.helpers:CrashOnSeed"), [0])
    return write_report(runner.store, tmp_path / "report")


def test_model_names_are_escaped(report: Path) -> None:
    html = report.read_text()
    assert HOSTILE not in html
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in html


def test_cells_show_mean_ci_and_seed_count(report: Path) -> None:
    html = report.read_text()
    oracle_row = html[html.index("<td>oracle") : html.index("</tr>", html.index("<td>oracle"))]
    assert oracle_row.count('<span class="mean">100.0</span>') == 7
    assert oracle_row.count("[100.0, 100.0]") == 7
    assert oracle_row.count("n = 3") == 7
    assert "3 done" in oracle_row
    crashed = html[html.index("<td>tests.helpers:CrashOnSeed") :]
    assert "1 failed" in crashed[: crashed.index("</tr>")]


def test_markdown_csv_and_json_hold_every_metric(report: Path) -> None:
    folder = report.parent
    markdown = (folder / "leaderboard.md").read_text()
    assert "| oracle" in markdown and "100.0 [100.0, 100.0] (3)" in markdown
    rows = json.loads((folder / "results.json").read_text())
    oracle = [r for r in rows if r["model"] == "oracle" and r["split"] == "heldout_tables"]
    assert {r["metric"] for r in oracle} >= {"sequence_accuracy", "token_accuracy", "final_target_accuracy"}
    assert all(r["n_seeds"] == 3 and r["per_seed"] == [1.0, 1.0, 1.0] for r in oracle if "[" not in r["metric"])
    table = pd.read_csv(folder / "results.csv")
    assert len(table) == len(rows)


def test_report_command_refuses_a_missing_store(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["report", "--store", str(tmp_path / "none.sqlite"), "--out", str(tmp_path / "out")]) == 2
    assert "no results store" in capsys.readouterr().err
    assert not (tmp_path / "none.sqlite").exists()
