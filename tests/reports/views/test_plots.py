"""Which plots a suite page shows, and why a condition has none."""

from __future__ import annotations

from structbench.reports.builders.conditions import Condition
from structbench.reports.views.plots import no_plot_reason
from tests.reports.support import stats, summary


def test_a_condition_says_why_it_has_no_plot() -> None:
    board = summary("scan-length", {"copy": 0.0, "oracle": 1.0}, ceilings={"oracle"}).board
    board.rows = [("copy", {}), ("oracle", {})]
    only_oracle = Condition(
        "n actions", "n actions", ["1", "2"], {"copy": [None, None], "oracle": [stats(1), stats(1)]}
    )
    assert no_plot_reason(board, only_oracle, ["copy"]).startswith("no ranked model has a value here")
    many = Condition("kind", "kind", [f"k{i}" for i in range(20)], {"copy": [stats(0)] * 20, "oracle": [None] * 20})
    assert no_plot_reason(board, many, ["copy"]).startswith("20 levels, more than a plot can show")
    drawn = Condition("kind", "kind", ["a", "b"], {"copy": [stats(0), None], "oracle": [None, None]})
    assert no_plot_reason(board, drawn, ["copy"]) == ""
