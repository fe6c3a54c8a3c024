"""The overview's order and marks, on boards built by hand: a reader trusts the first row to be the
best model, whichever suites each model was run on."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from structbench import registry
from structbench.baselines.trivial import Oracle
from structbench.reports.boards import Compute, SuiteBoard, aggregate, boards, statistic_marks
from structbench.reports.conditions import Condition
from structbench.reports.families import columns
from structbench.reports.figures import PALETTE, Line, Style, merge_equal, model_styles
from structbench.reports.overview import Summary, overview_rows, win_rates
from structbench.reports.render import write_report
from structbench.reports.series import Curve
from structbench.reports.site import board_order, build_site
from structbench.reports.views.pages import families, pages
from structbench.reports.views.plots import no_plot_reason
from structbench.reports.writers.markdown import leaderboard_markdown
from structbench.runs.runner import Runner
from structbench.specs import ModelSpec, SeedStats, natural_key

TRIVIAL = {"copy", "majority", "random"}


class Solver(Oracle):
    """The suite's own solver, ranked like any model (not a ceiling)."""

    name = "solver"
    ceiling = False


def stats(mean: float) -> SeedStats:
    """A one-seed cell of `mean`."""
    return SeedStats(
        mean=mean, std=None, min=mean, max=mean, ci_low=None, ci_high=None, interval="none", n_seeds=1, per_seed=[mean]
    )


def summary(suite: str, scores: dict[str, float], **board: set[str]) -> Summary:
    """The overview cells of one hand-made board of `suite` whose models score `scores`."""
    spec = registry.suite(suite).spec
    made = SuiteBoard(
        spec=spec,
        suite_hash="0" * 64,
        splits=[s.name for s in spec.splits_with_role("test")],
        ranked=[s.name for s in spec.ranked_splits],
        slug=spec.key,
        scores={model: stats(mean) for model, mean in scores.items()},
        **board,  # type: ignore[arg-type]
    )
    return Summary(made, {"generalisation": dict(made.scores), "in-distribution": {}})


def issue_33() -> list[Summary]:
    """Issue 33's store: the baselines on four suites, `composer (mine)` perfect on lookup-tables
    alone, `parser (mine)` on two of the suites."""
    baselines = {
        "lookup-tables": {"copy": 0.0, "majority": 0.0, "random": 0.0, "lstm": 0.42, "transformer": 0.61},
        "scan-length": {"copy": 0.0, "majority": 0.0, "random": 0.0, "lstm": 0.14, "transformer": 0.03},
        "grounded-weak": {"copy": 0.0, "majority": 0.003, "random": 0.0, "lstm": 0.71, "transformer": 0.66},
        "scan-simple": {"copy": 0.0, "majority": 0.0, "random": 0.0, "lstm": 0.99, "transformer": 0.98},
    }
    baselines["lookup-tables"]["composer (mine)"] = 1.0
    baselines["scan-length"]["parser (mine)"] = 0.9
    baselines["grounded-weak"]["parser (mine)"] = 0.8
    return [summary(suite, scores) for suite, scores in baselines.items()]


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


def test_a_board_marks_no_split_where_only_the_trivial_baselines_ran_and_the_first_model_that_beats_them(
    runner: Runner,
) -> None:
    for name in ("copy", "random"):
        runner.evaluate("lookup-tables", ModelSpec(name=name), [0])
    (board,) = boards(runner.store, aggregate(runner.store))
    assert board.floors == {"copy", "random"}
    assert board.best == {} and all(board.mark(m, s) == "" for m, _ in board.rows for s in board.ranked)
    runner.evaluate("lookup-tables", ModelSpec(name="tests.reports.test_overview:Solver"), [0])
    (board,) = boards(runner.store, aggregate(runner.store))
    assert board.best == dict.fromkeys(board.ranked, "solver")


FEWSHOT = [f"scan-fewshot-{k}" for k in (1, 2, 4, 8, 16, 32, 64, 128, 256, 512, 1024)]


def test_suite_ids_sort_with_their_numbers_by_value() -> None:
    assert sorted(reversed(FEWSHOT), key=natural_key) == FEWSHOT
    assert sorted(["scan-filler-0", "scan-fewshot-16", "scan-fewshot-2"], key=natural_key) == [
        "scan-fewshot-2",
        "scan-fewshot-16",
        "scan-filler-0",
    ]
    names = registry.suite_names()
    assert [name for name in names if name.startswith("scan-fewshot-")] == FEWSHOT
    assert [name for name in names if name.startswith("logic-bowman-le")] == [
        f"logic-bowman-le{n}" for n in (3, 6, 9, 12)
    ]


def test_the_overview_columns_suite_lists_and_markdown_list_suites_in_natural_order() -> None:
    shuffled = [
        summary(name, {"lstm": 0.5}).board for name in ["scan-fewshot-1024", "scan-fewshot-128", "scan-fewshot-2"]
    ]
    ordered = sorted(shuffled, key=board_order)
    assert [board.spec.id for board in ordered] == ["scan-fewshot-2", "scan-fewshot-128", "scan-fewshot-1024"]
    # the overview's columns and every page's suite index group these boards; the Markdown takes them in order
    assert [board.spec.id for _, members in families(tuple(ordered)) for board in members] == [
        "scan-fewshot-2",
        "scan-fewshot-128",
        "scan-fewshot-1024",
    ]
    markdown = leaderboard_markdown(ordered, [])
    assert (
        markdown.index("## scan-fewshot-2@")
        < markdown.index("## scan-fewshot-128@")
        < markdown.index("## scan-fewshot-1024@")
    )


def test_a_model_keeps_its_style_whichever_other_models_a_site_or_plot_holds() -> None:
    labels = [f"model-{n}" for n in range(30)]
    styles = model_styles(labels)
    assert len(set(styles.values())) == 30  # ten colours, each solid, dashed and dotted
    assert model_styles(reversed(labels)) == styles
    assert styles["model-2"] == Style(PALETTE[2]) and styles["model-12"] == Style(PALETTE[2], "dashed")


def test_a_model_has_one_colour_on_every_page_of_the_site(runner: Runner, tmp_path: Path) -> None:
    # solver ranks first on lookup-tables, copy first on the scan-filler curve: colours given out in rank
    # order per plot gave copy two colours
    runner.evaluate("lookup-tables", ModelSpec(name="tests.reports.test_overview:Solver"), [0])
    for suite in ("lookup-tables", "scan-filler-0", "scan-filler-1"):
        for name in ("copy", "random"):
            runner.evaluate(suite, ModelSpec(name=name), [0])
    site = build_site(runner.store)
    drawn = pages(site)
    (lookup,) = [page for page in drawn.suites if page.board.spec.id == "lookup-tables"]
    (curve,) = site.curves
    seen: dict[str, set[Style]] = {}
    for model, style in [*(pair for view in lookup.plots for pair in view.plotted), *curve.plotted]:
        seen.setdefault(model, set()).add(style)
    assert {"copy", "random", "solver"} <= seen.keys()
    assert all(found == {site.styles[model]} for model, found in seen.items())
    index = write_report(runner.store, tmp_path / "site")
    for page in (index, index.parent / "suites" / "lookup-tables@1.0.0.html"):
        html = page.read_text()
        # copy's entry, alone or leading a line it shares with models of equal values (random at 0 too)
        line = f'<span class="line" style="background: {site.styles["copy"].colour}"></span>copy'
        assert f"{line}</li>" in html or f"{line}, " in html


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


def test_a_statistic_column_marks_no_best_that_the_trivial_baselines_reach() -> None:
    def reporting(trials: dict[str, list[float]], **board: set[str]) -> SuiteBoard:
        made = summary("dsr", dict.fromkeys(trials, 0.5), **board).board
        made.rows = [(model, {}) for model in trials]
        made.compute = {
            model: Compute(None, None, "", {seed: {"trials_to_criterion": value} for seed, value in enumerate(values)})
            for model, values in trials.items()
        }
        return made

    # fewer trials is better: `copy` needing fewest (a floor, say a plugin's trivial learner) leaves nothing to mark
    trials = {"copy": [100.0, 110.0], "lstm": [400.0, 420.0], "srn": [900.0, 950.0]}
    assert statistic_marks(reporting(trials, floors={"copy"})) == {}
    assert statistic_marks(reporting(trials))["trials_to_criterion"] == {"copy": "best"}
    beaten = {**trials, "copy": [1000.0, 1010.0]}
    assert statistic_marks(reporting(beaten, floors={"copy"}))["trials_to_criterion"] == {"lstm": "best"}


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


def test_lines_of_equal_values_are_drawn_once_and_the_legend_names_every_model() -> None:
    zero = [stats(0.0), stats(0.0)]
    curve = Curve(
        "scan-fillers", "fillers", False, [0, 1], [],
        cells={"lstm": [stats(0.4), stats(0.2)], "copy": zero, "majority": zero, "random": zero},
        styles=model_styles(["lstm", "copy", "majority", "random"]),
    )  # fmt: skip
    assert [line.labels for line in curve.lines] == [("lstm",), ("copy", "majority", "random")]
    assert [models for models, _ in curve.legend] == [("lstm",), ("copy", "majority", "random")]
    assert len(curve.plot("sequence_accuracy (%)").lines) == 2
    assert merge_equal([Line.of("a", Style("#000"), zero), Line.of("b", Style("#111"), [stats(0.0), None])]) == [
        Line.of("a", Style("#000"), zero),
        Line.of("b", Style("#111"), [stats(0.0), None]),
    ]
