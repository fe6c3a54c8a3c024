"""The overview's order and marks, on boards built by hand: a reader trusts the first row to be the
best model, whichever suites each model was run on."""

from __future__ import annotations

import re
from pathlib import Path

import numpy as np
import pytest
from scipy import stats

from structbench import registry
from structbench.reports.builders.overview import overview_rows, win_rates
from structbench.reports.render import write_report
from structbench.runs.runner import Runner
from structbench.specs import ModelSpec
from tests.reports.support import TRIVIAL, interval_stats, issue_33, summary
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


def test_a_model_run_on_one_or_two_suites_where_it_is_best_ranks_above_the_trivial_baselines() -> None:
    rows = overview_rows(issue_33())
    order = [row.model for row in rows]
    # both own models win every comparison they take part in; copy and majority lose most of theirs
    assert order[:2] == ["composer (mine)", "parser (mine)"]
    assert order.index("composer (mine)") < order.index("copy") and order.index("parser (mine)") < order.index(
        "majority"
    )
    composer = rows[0]
    assert (composer.win_rate, composer.comparisons) == (1.0, 5)  # five other models on lookup-tables, no more
    assert composer.cells.keys() == {"lookup-tables@1.0.0"}


def test_a_win_rate_counts_only_head_to_head_comparisons_and_ties_count_half() -> None:
    rates = win_rates(
        [summary("scan-length", {"a": 0.5, "b": 0.5, "c": 0.2}), summary("lookup-tables", {"a": 0.1, "d": 0.3})]
    )
    # a: half against b, a win over c on scan-length; a loss to d on lookup-tables: 1.5 of 3
    assert rates["a"] == (0.5, 3)
    assert rates["b"] == (0.75, 2) and rates["c"] == (0.0, 2) and rates["d"] == (1.0, 1)


def test_an_in_distribution_suite_has_no_say_in_the_order() -> None:
    # e beats a on scan-simple, which says only that e learned its training data: no comparison counts
    rates = win_rates([summary("scan-length", {"a": 0.5, "b": 0.2}), summary("scan-simple", {"a": 0.1, "e": 0.9})])
    assert rates == {"a": (1.0, 1), "b": (0.0, 1)}


def test_models_with_no_head_to_head_comparison_come_after_those_with_one_and_set_apart_ones_last() -> None:
    rows = overview_rows(
        [
            summary("scan-length", {"a": 0.2, "b": 0.4, "oracle": 1.0}, ceilings={"oracle"}),
            summary("scan-simple", {"alone": 0.9, "oracle": 1.0}, ceilings={"oracle"}),
        ]
    )
    assert [(row.model, row.win_rate) for row in rows] == [("b", 1.0), ("a", 0.0), ("alone", None), ("oracle", None)]
    assert rows[-1].apart == "ceiling"  # the oracle is never an opponent either: `alone` has no comparison


def test_the_overview_page_states_its_rule_and_each_rows_win_rate(runner: Runner, tmp_path: Path) -> None:
    for name in ("copy", "random"):
        runner.evaluate("lookup-tables", ModelSpec(name=name), [0])
    html = write_report(runner.store, tmp_path / "site").read_text()
    rule = html[html.index('<span id="rank-rule">') : html.index("</span>", html.index('<span id="rank-rule">'))]
    assert "mean win rate" in rule and "head-to-head" in rule and "count half" in rule
    assert html.count("win rate 0.50 · 1 comparison</span>") == 2  # both 0.0: one tie each


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
