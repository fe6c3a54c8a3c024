"""`build_site`'s choice of what a site shows: the filters on suites and models, and the installed suites without results."""

from __future__ import annotations

import multiprocessing
import os
from concurrent.futures import ProcessPoolExecutor
from concurrent.futures.process import BrokenProcessPool
from pathlib import Path

import pytest

from structbench.errors import UserError
from structbench.reports.builders.from_store import build_site
from structbench.reports.builders.site import Site
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


def _shown(site: Site) -> tuple[list[tuple[set[str], dict[str, str]]], list[tuple[str, str]]]:
    """What the boards show of the model classes' answers (ceilings, under-trained rows) and the claims' verdicts."""
    boards = [(board.ceilings, board.under_trained) for board in site.boards]
    return boards, [(check.own.status, check.own.evidence) for check in site.claims]


def test_a_site_built_with_a_worker_process_shows_what_one_built_without_it_shows(runner: Runner) -> None:
    """The report asks the model classes (an import of PyTorch) and checks the claims in its worker process
    while it reads the store; a worker that has died leaves that work to the report's own process."""
    suite, short = "agreement-attractors-number", "tests.analysis.test_under_trained:ShortGuesser"
    runner.evaluate(suite, ModelSpec(name="oracle"), [0])
    runner.evaluate(suite, ModelSpec(name=short), [0])
    alone = _shown(build_site(runner.store))
    ((ceilings, under),) = alone[0]
    assert ceilings == {"oracle"} and list(under) == ["ShortGuesser"]
    assert under["ShortGuesser"].endswith(f"; needs the paper budget on {suite} ({{}})")
    fork = multiprocessing.get_context("fork")
    with ProcessPoolExecutor(1, mp_context=fork) as worker:
        assert _shown(build_site(runner.store, worker=worker)) == alone
    with ProcessPoolExecutor(1, mp_context=fork) as dead:
        with pytest.raises(BrokenProcessPool):
            dead.submit(os._exit, 1).result()
        assert _shown(build_site(runner.store, worker=dead)) == alone
