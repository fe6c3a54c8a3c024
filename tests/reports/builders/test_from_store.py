"""`build_site`'s choice of what a site shows: the filters on suites and models, and the installed suites without results."""

from __future__ import annotations

from pathlib import Path

import pytest

from structbench.errors import UserError
from structbench.reports.render import write_report
from structbench.runs.runner import Runner
from structbench.specs import ModelSpec
from tests.support.helpers import read_results


def test_filters_keep_debugging_runs_out_and_a_filter_that_matches_nothing_says_so(
    runner: Runner, tmp_path: Path
) -> None:
    runner.evaluate("lookup-tables", ModelSpec(name="copy"), [0])
    runner.evaluate("lookup-tables", ModelSpec(name="random"), [0])
    runner.evaluate("miniscan", ModelSpec(name="copy"), [0])
    site = tmp_path / "site"
    write_report(runner.store, site, models=["cop*"], suites=["lookup-*"], title="My <lab>")
    assert {r["model"] for r in read_results(site / "results.json")} == {"copy"}
    assert {r["suite"] for r in read_results(site / "results.json")} == {"lookup-tables"}
    assert sorted(p.name for p in (site / "suites").iterdir()) == ["lookup-tables@1.0.0.html"]
    rows = [line for line in (site / "leaderboard.md").read_text().splitlines() if line.startswith("| ")]
    assert [row for row in rows if row.startswith("| copy")] and not [row for row in rows if row.startswith("| random")]
    assert "<title>My &lt;lab&gt;</title>" in (site / "index.html").read_text()
    with pytest.raises(UserError, match=r"no runs in .* match --models nothing-like-this"):
        write_report(runner.store, site, models=["nothing-like-this"])


def test_suites_without_results_are_listed_with_the_reason(runner: Runner, tmp_path: Path) -> None:
    runner.evaluate("lookup-tables", ModelSpec(name="copy"), [0])
    html = write_report(runner.store, tmp_path / "site").read_text()
    assert "<li><code>pos-wsj@2.0.0</code>: needs your own copy of licensed data (penn_wsj/wsj.conll)</li>" in html
    assert "<li><code>lookup-tables@1.0.0</code>" not in html
