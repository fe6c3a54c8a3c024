"""The overview's summary columns: one per family and kind of suite, a series of suites one unit of it."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from structbench.reports.builders.families import columns
from structbench.reports.builders.overview import overview_rows
from structbench.reports.render import write_report
from structbench.runs.runner import Runner
from structbench.specs import ModelSpec
from tests.reports.support import issue_33, summary


def test_in_distribution_suites_have_columns_of_their_own_apart_from_generalisation() -> None:
    summaries = issue_33()
    rows = {row.model: row for row in overview_rows(summaries)}
    found = {(column.kind, column.family): column for column in columns(summaries)}
    assert list(found) == [
        ("generalisation", "systematicity"),
        ("generalisation", "lookup"),
        ("in-distribution", "systematicity"),
    ]
    assert [unit.name for unit in found[("generalisation", "systematicity")].units] == ["scan-length@2.0.0"]
    within = found[("in-distribution", "systematicity")]
    assert [unit.name for unit in within.units] == ["grounded-weak@1.0.0", "scan-simple@2.0.0"]
    # a family's cell: the mean over the family's suites a model was run on, and how many that is
    assert within.summary(rows["lstm"]) == (pytest.approx((0.71 + 0.99) / 2), 2)
    assert within.summary(rows["parser (mine)"]) == (pytest.approx(0.8), 1)
    assert within.summary(rows["composer (mine)"]) is None


def test_a_series_of_suites_is_one_unit_of_its_family_drawn_as_one_small_curve() -> None:
    summaries = [
        summary("scan-fewshot-1", {"a": 0.1, "b": 0.0}),
        summary("scan-fewshot-2", {"a": 0.3}),
        summary("scan-fewshot-4", {"a": 0.5, "b": 0.0}),
        summary("scan-length", {"a": 0.9, "b": 0.2}),
    ]
    rows = {row.model: row for row in overview_rows(summaries)}
    (column,) = columns(summaries)
    series, length = column.units
    assert (series.name, series.xs, length.name) == ("scan-fewshot", (1.0, 2.0, 4.0), "scan-length@2.0.0")
    # three few-shot suites weigh as much as scan-length, not three times as much
    assert column.summary(rows["a"]) == (pytest.approx((0.3 + 0.9) / 2), 4)  # with a score on all 4 suites
    assert series.value(rows["b"]) == 0.0 and column.summary(rows["b"]) == (pytest.approx(0.1), 3)
    # b has no point at k = 2: its curve breaks there; a lone point is still drawn (as a dot)
    assert series.spark(rows["a"]) == ["0.0,25.4 50.0,20.2 100.0,15.0"]  # 0 at y 28, 100% at y 2
    assert series.spark(rows["b"]) == ["0.0,28.0 0.0,28.0", "100.0,28.0 100.0,28.0"]
    assert series.described(rows["b"]).endswith(": 1 → 0.0, 2 → –, 4 → 0.0")


def test_the_overview_shows_one_summary_column_per_family_and_every_suite_under_its_family(
    runner: Runner, tmp_path: Path
) -> None:
    for suite in ("lookup-tables", "pos-synthetic"):
        for name in ("random", "majority"):
            runner.evaluate(suite, ModelSpec(name=name), [0])
    html = write_report(runner.store, tmp_path / "site").read_text()
    summary_table = html[html.index('<table class="overview summary') : html.index("</table>")]
    kinds = re.findall(r'<th scope="colgroup" colspan="1" class="kind kind-([a-z-]+)', summary_table)
    assert kinds == ["generalisation", "in-distribution"]
    assert re.findall(r'<th scope="col" class="family[^"]*"><a href="#([^"]+)">', summary_table) == [
        "generalisation-lookup",
        "in-distribution-pos-induction",
    ]
    within = html[html.index('id="in-distribution-pos-induction"') :]
    assert 'href="suites/pos-synthetic@1.0.0.html"' in within[: within.index("</details>")]
    general = html[html.index('id="generalisation-lookup"') :]
    assert 'href="suites/pos-synthetic@1.0.0.html"' not in general[: general.index("</details>")]
