"""The overview's order and marks, on boards built by hand: a reader trusts the first row to be the
best model, whichever suites each model was run on."""

from __future__ import annotations

import re
from pathlib import Path

import numpy as np
import pytest
from scipy import stats

from structbench import registry
from structbench.reports.builders.overview import MIN_SHARED, overview_rows, win_rates
from structbench.reports.render import write_report
from structbench.runs.runner import Runner
from structbench.specs import ModelSpec
from tests.reports.support import TRIVIAL, interval_stats, summary
from tests.support.helpers import read_results


def test_an_overview_cell_is_the_mean_over_seeds_of_the_mean_over_ranked_generalisation_splits(
    runner: Runner, tmp_path: Path
) -> None:
    runner.evaluate("lookup-tables", ModelSpec(name="random"), [0, 1, 2])
    index = write_report(runner.store, tmp_path / "site")
    spec = registry.suite("lookup-tables").spec
    general = [s.name for s in spec.ranked_splits if s.test_role == "generalisation"]
    rows = [r for r in read_results(tmp_path / "site" / "results.json") if r["metric"] == "sequence_accuracy"]
    per_seed = np.mean([r["per_seed"] for r in rows if not r["breakdown"] and r["split"] in general], axis=0)
    mean = float(per_seed.mean())
    half = stats.t.ppf(0.975, 2) * per_seed.std(ddof=1) / np.sqrt(3)
    expected = f"{100 * mean:.1f}"
    html = index.read_text()
    cell = re.search(r'<td class="heat" data-value="([^"]+)"[^>]*title="([^"]+)"', html)
    assert cell is not None and float(cell.group(1)) == pytest.approx(mean, abs=1e-12)
    assert f"{expected} [{100 * max(mean - half, 0):.1f}, {100 * (mean + half):.1f}], 3 seeds, t over 3 seeds" in (
        cell.group(2)
    )


FIVE = ["scan-length", "scan-addprim-jump", "scan-addprim-turn-left", "lookup-tables", "miniscan"]
"""Five generalisation suites: the fewest two models must share to be compared (`MIN_SHARED`)."""


def test_two_models_are_compared_only_where_they_share_five_generalisation_suites() -> None:
    assert len(FIVE) == MIN_SHARED
    summaries = [summary(suite, {"a": 0.5, "b": 0.2}) for suite in FIVE]
    summaries[0] = summary(FIVE[0], {"a": 0.5, "b": 0.2, "lucky": 1.0})
    summaries.append(summary("lookup-tables-mt", {"lucky": 1.0, "a": 0.1}))
    # lucky beats a and b where it was run, on two suites: no comparison of it counts, for it or against them
    assert win_rates(summaries) == {"a": (1.0, 5), "b": (0.0, 5)}
    rows = overview_rows(summaries)
    assert [(row.model, row.win_rate) for row in rows] == [("a", 1.0), ("b", 0.0), ("lucky", None)]
    # one of the five left out: a and b share four, and no win rate is left
    assert win_rates(summaries[1:]) == {}


def test_a_win_rate_counts_only_head_to_head_comparisons_and_ties_count_half() -> None:
    scores = [{"a": 0.5, "b": 0.5, "c": 0.2}] + [{"a": 0.5, "b": 0.2}] * 4
    rates = win_rates([summary(suite, found) for suite, found in zip(FIVE, scores, strict=True)])
    # a: half against b on the first suite, a win on the other four; c shares one suite with each: not compared
    assert rates == {"a": (0.9, 5), "b": (0.1, 5)}


def test_an_in_distribution_suite_has_no_say_in_the_order() -> None:
    # e beats a on scan-simple, which says only that e learned its training data: no comparison counts
    summaries = [summary(suite, {"a": 0.5, "b": 0.2}) for suite in FIVE]
    summaries.append(summary("scan-simple", {"a": 0.1, "b": 0.95, "e": 0.9}))
    assert win_rates(summaries) == {"a": (1.0, 5), "b": (0.0, 5)}


def test_models_with_no_head_to_head_comparison_come_after_those_with_one_and_set_apart_ones_last() -> None:
    summaries = [summary(suite, {"a": 0.2, "b": 0.4, "oracle": 1.0}, ceilings={"oracle"}) for suite in FIVE]
    summaries.append(summary("scan-simple", {"alone": 0.9, "oracle": 1.0}, ceilings={"oracle"}))
    rows = overview_rows(summaries)
    assert [(row.model, row.win_rate) for row in rows] == [("b", 1.0), ("a", 0.0), ("alone", None), ("oracle", None)]
    assert rows[-1].apart == "ceiling"  # the oracle is never an opponent either: `alone` has no comparison


def test_the_overview_page_states_its_rule_and_each_rows_win_rate(runner: Runner, tmp_path: Path) -> None:
    for name in ("copy", "random"):
        runner.evaluate("lookup-tables", ModelSpec(name=name), [0])
    html = write_report(runner.store, tmp_path / "site").read_text()
    rule = html[html.index('<span id="rank-rule">') : html.index("</span>", html.index('<span id="rank-rule">'))]
    assert "mean win rate" in rule and "head-to-head" in rule and "count half" in rule
    assert f"shares at least {MIN_SHARED} generalisation suites" in " ".join(rule.split())
    assert html.count('<span class="status wrap">no head-to-head comparison</span>') == 2  # one suite in common


def test_no_best_mark_on_zero_or_on_a_value_the_trivial_baselines_reach() -> None:
    rows = overview_rows(
        [
            summary("scan-length", {"copy": 0.0, "majority": 0.0, "random": 0.0}, floors=TRIVIAL),
            summary("grounded-weak", {"copy": 0.0, "majority": 0.003, "random": 0.0}, floors=TRIVIAL),
            summary("scan-simple", {"copy": 0.0, "majority": 0.0, "lstm": 0.0, "solver": 0.2}, floors=TRIVIAL),
        ]
    )
    marks = {(row.model, suite): mark for row in rows for suite, (_, mark) in row.cells.items()}
    assert {key for key, mark in marks.items() if mark} == {("solver", "scan-simple@2.0.0")}
    assert marks[("solver", "scan-simple@2.0.0")] == "best"


def test_no_best_mark_where_the_cells_interval_reaches_the_floors() -> None:
    """scan-fewshot-1 in the reference runs: 0.3 [0.0, 1.0] against the floor's 0.0 [0.0, 0.3] is noise."""
    noisy = summary("scan-fewshot-1", {"copy": 0.0, "gru": 0.3}, floors={"copy"})
    noisy.board.scores = {"copy": interval_stats(0.0, 0.0, 0.3), "gru": interval_stats(0.3, 0.0, 1.0)}
    noisy.cells["generalisation"] = dict(noisy.board.scores)
    clear = summary("scan-length", {"copy": 0.0, "gru": 0.6}, floors={"copy"})
    clear.board.scores = {"copy": interval_stats(0.0, 0.0, 0.3), "gru": interval_stats(0.6, 0.35, 0.85)}
    clear.cells["generalisation"] = dict(clear.board.scores)
    marks = {
        (row.model, suite): mark for row in overview_rows([noisy, clear]) for suite, (_, mark) in row.cells.items()
    }
    assert marks[("gru", "scan-fewshot-1@1.0.0")] == ""
    assert marks[("gru", "scan-length@2.0.0")] == "best"
