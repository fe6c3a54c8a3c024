"""Who is best at what: each family's question, its models ranked on its headline suites best first, the
trivial floor as a line and the models that cover the family only partly apart with what they miss."""

from __future__ import annotations

import re
from pathlib import Path

from structbench.reports.builders.rankings import HEADLINES, QUESTIONS, rankings
from structbench.reports.render import write_report
from structbench.runs.runner import Runner
from structbench.specs import FAMILY_ORDER, ModelSpec
from tests.reports.support import TRIVIAL, interval_stats, summary


def test_every_family_asks_its_question_in_one_sentence_and_names_its_headline_suites() -> None:
    assert set(QUESTIONS) == set(FAMILY_ORDER) == set(HEADLINES)
    for question in QUESTIONS.values():
        assert question.startswith("Which ") and question.endswith("?") and question.count("?") == 1


def test_a_family_ranks_the_models_with_every_headline_suite_and_lists_the_others_with_what_they_miss() -> None:
    summaries = [
        summary(
            "scan-length",
            {"gru": 0.1, "tf": 0.3, "length-only": 0.9, "copy": 0.0, "oracle": 1.0},
            floors=TRIVIAL,
            ceilings={"oracle"},
        ),
        summary(
            "scan-addprim-jump",
            {"gru": 0.05, "tf": 0.01, "copy": 0.0, "oracle": 1.0},
            floors=TRIVIAL,
            ceilings={"oracle"},
        ),
        summary("miniscan", {"miniscan-only": 0.6}),
        summary("lookup-tables", {"gru": 0.4, "random": 0.0}, floors=TRIVIAL),
    ]
    systematicity, lookup = rankings(summaries)
    assert systematicity.question == QUESTIONS["systematicity"]
    assert [board.spec.id for board in systematicity.boards] == ["scan-length", "scan-addprim-jump"]
    # the mean over both headline suites orders them: tf (0.155) above gru (0.075); the oracle is no entry
    assert [entry.model for entry in systematicity.entries] == ["tf", "gru"]
    assert systematicity.entries[0].score == (0.3 + 0.01) / 2
    assert systematicity.floor_model == "copy" and [e.model for e in systematicity.above] == ["tf", "gru"]
    partial = {found.model: (found.misses, found.has) for found in systematicity.partial}
    assert partial == {
        "length-only": (("scan-addprim-jump@2.0.0",), ("scan-length@2.0.0",)),
        "miniscan-only": (("scan-length@2.0.0", "scan-addprim-jump@2.0.0"), ("miniscan@1.0.0",)),
    }
    assert (lookup.family, [e.model for e in lookup.entries], lookup.floor_model) == ("lookup", ["gru"], "random")


def test_a_model_at_or_below_the_floor_is_ranked_under_its_line() -> None:
    board = summary("agreement-attractors", {"lm": 0.9, "unigram": 0.5, "bad": 0.3, "majority": 0.5}, floors=TRIVIAL)
    board.board.scores["lm"] = interval_stats(0.9, 0.85, 0.95)
    (found,) = rankings([board])
    assert [e.model for e in found.above] == ["lm"] and [e.model for e in found.below] == ["unigram", "bad"]


def test_a_family_without_its_headline_suites_ranks_on_its_generalisation_suites() -> None:
    (found,) = rankings([summary("scan-simple", {"a": 0.9}), summary("miniscan", {"a": 0.2, "b": 0.4})])
    assert [board.spec.id for board in found.boards] == ["miniscan"]
    assert [e.model for e in found.entries] == ["b", "a"] and found.partial == ()


def test_the_overviews_first_screen_is_the_rankings_and_the_matrix_is_one_click_away(
    runner: Runner, tmp_path: Path
) -> None:
    for name in ("copy", "random", "tests.reports.support:Solver"):
        runner.evaluate("lookup-tables", ModelSpec(name=name), [0, 1])
    runner.evaluate("lookup-tables-mt", ModelSpec(name="random"), [0])
    html = write_report(runner.store, tmp_path / "site").read_text()
    assert html.index('<section id="overview">') < html.index('<section id="matrix">')
    lookup = html[html.index('<article class="ranking" id="best-lookup"') : html.index("</article>")]
    assert QUESTIONS["lookup"] in lookup and 'href="suites/lookup-tables@1.0.0.html"' in lookup
    ranked = re.findall(r'<li value="(\d)"><div class="who">([^<]+)<', lookup)
    assert ranked == [("1", "solver")]
    # the floor is a line of the list, not a numbered row: the better of copy (0) and random (above 0)
    assert re.search(r'<li class="floor"><span class="floor-label">floor: random</span>', lookup)
    assert lookup.count("<li") == 2 and "<details" not in lookup  # floors are no partial models either
    matrix = html[html.index('<section id="matrix">') :]
    assert matrix.startswith('<section id="matrix">\n  <details class="matrix"><summary>')
    assert '<table class="overview summary' in matrix[: matrix.index("</details>")]
