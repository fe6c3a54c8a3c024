"""SyntaxGym (Hu et al. 2020): the build's counts and manifest, every formula parsed and checked against
hand-made surprisal tables, malformed formulas, circuits, the items' pairing with the published
per-item results, and whole runs through the protocol."""

from __future__ import annotations

import csv
import json
import re
from collections import Counter
from pathlib import Path
from typing import Any, ClassVar

import pytest

from structbench import registry
from structbench.analysis.published import syntaxgym_runs
from structbench.analysis.suite_score import group_scores, suite_scores
from structbench.cells import current_scores
from structbench.data import freeze
from structbench.errors import UserError
from structbench.protocols import ask
from structbench.reports.render import write_report
from structbench.runs.runner import Runner
from structbench.specs import Condition, Example, ModelSpec, Split
from structbench.store import Store
from structbench.suites import syntaxgym_formula
from structbench.suites.syntaxgym import (
    CIRCUITS,
    NOT_ANALYSED,
    SUITES,
    SyntaxGym,
    circuit,
    circuit_scores,
    circuit_splits,
    item_holds,
    read_suite,
)
from structbench.suites.syntaxgym_formula import FormulaError, parse_formula, regions
from tests.conftest import REPO, SHARED_DATA

SUITE_DIR = SHARED_DATA / "syntaxgym" / "test_suites"
RESULTS_DIR = SHARED_DATA / "syntaxgym" / "sg_results"


def suite_file(name: str) -> Any:
    return json.loads((SUITE_DIR / f"{name}.json").read_text(encoding="utf-8"))


def frozen() -> dict[str, Split]:
    suite = registry.suite("syntaxgym")
    manifest = freeze.ensure_built(suite)
    return {s.name: freeze.load_split(suite, manifest, 0, s.name) for s in suite.spec.splits}


ALL_FORMULAS = [
    (name, index, prediction["formula"])
    for name in SUITES
    for index, prediction in enumerate(suite_file(name)["predictions"], start=1)
]


def test_builds_34_suites_of_842_items_as_its_manifest_says() -> None:
    suite = registry.suite("syntaxgym")
    manifest = freeze.ensure_built(suite)
    committed = REPO / "src" / "structbench" / "suites" / "manifests" / "syntaxgym@1.0.0.json"
    assert manifest.suite_hash in committed.read_text(encoding="utf-8")
    splits = frozen()
    tests = [s for s in suite.spec.splits if s.role == "test"]
    assert len(tests) == 34 and sorted(s.name for s in tests) == sorted(p.stem for p in SUITE_DIR.glob("*.json"))
    assert sum(len(splits[s.name]) for s in tests) == 842
    assert sum(len(splits[s.name]) for s in suite.spec.ranked_splits) == 799
    assert len(splits["train"]) == 0
    for split in tests:
        items = suite_file(split.name)["items"]
        assert split.size == len(splits[split.name]) == len(items)
        first = items[0]
        example = splits[split.name].examples[0]
        assert example.id == f"{split.name}-{first['item_number']}" and example.meta["item"] == first["item_number"]
        assert [c.name for c in example.conditions or []] == [c["condition_name"] for c in first["conditions"]]
        assert [" ".join(r) for r in (example.conditions or [])[0].regions] == [
            r["content"] for r in first["conditions"][0]["regions"]
        ]


def test_the_three_suites_the_paper_drops_are_scored_but_not_ranked() -> None:
    spec = SyntaxGym.spec
    assert {s.name for s in spec.splits if s.role == "test" and not s.ranked} == set(NOT_ANALYSED)
    assert all(s.test_role == "generalisation" for s in spec.splits if s.role == "test")
    assert (spec.family, spec.protocol, spec.primary_metric) == ("syntax", "region-surprisal", "accuracy")


def test_every_analysed_suite_has_one_of_the_six_circuits() -> None:
    groups = circuit_splits()
    assert list(groups) == list(CIRCUITS) and len(CIRCUITS) == 6
    members = [name for names in groups.values() for name in names]
    assert sorted(members) == sorted(set(SUITES) - set(NOT_ANALYSED))
    assert {name: len(names) for name, names in groups.items()} == {
        "Licensing": 10,
        "Long-Distance Dependencies": 6,
        "Agreement": 3,
        "Garden-Path Effects": 6,
        "Gross Syntactic State": 4,
        "Center Embedding": 2,
    }
    assert circuit("nn-nv-rpl") is None and circuit("fgd-embed3") == "Long-Distance Dependencies"
    accuracies = dict.fromkeys(SUITES, 0.0) | {"number_orc": 1.0, "number_prep": 0.5}
    scores = circuit_scores(accuracies)
    assert scores["Agreement"] == pytest.approx(0.5) and scores["Center Embedding"] == 0.0


@pytest.mark.parametrize(("name", "index", "formula"), ALL_FORMULAS, ids=[f"{n}-{i}" for n, i, _ in ALL_FORMULAS])
def test_every_formula_of_the_34_suites_parses_and_names_what_its_items_have(
    name: str, index: int, formula: str
) -> None:
    parsed = parse_formula(formula, suite=name, prediction=index)
    items = suite_file(name)["items"]
    for item in items:
        lengths = {c["condition_name"]: len(c["regions"]) for c in item["conditions"]}
        syntaxgym_formula.check_references(parsed, lengths, where=name)
    # a table where every referenced region holds a distinct value evaluates to a truth value
    table = {(r.condition, r.number or 1): float(i) for i, r in enumerate(regions(parsed))}
    assert parsed.holds(table) in (True, False)


def holds(formula: str, table: dict[tuple[str, int], float]) -> bool:
    return parse_formula(formula, suite="test", prediction=1).holds(table)


def test_formulas_of_the_suites_evaluate_to_the_truth_values_worked_out_by_hand() -> None:
    mvrr = str(suite_file("mvrr")["predictions"][0]["formula"])
    cells = ("reduced_ambig", "unreduced_ambig", "reduced_unambig", "unreduced_unambig")
    # garden path 10 > 5, reduction 10 > 4, and the interaction 10 - 5 > 4 - 3
    assert holds(mvrr, {(c, 5): v for c, v in zip(cells, (10.0, 5.0, 4.0, 3.0), strict=True)})
    # the same, but the interaction fails: 10 - 5 > 4 - (-2) is false
    assert not holds(mvrr, {(c, 5): v for c, v in zip(cells, (10.0, 5.0, 4.0, -2.0), strict=True)})
    # the garden path fails: 5 > 5 is false
    assert not holds(mvrr, {(c, 5): v for c, v in zip(cells, (5.0, 5.0, 4.0, 3.0), strict=True)})

    cleft = str(suite_file("cleft")["predictions"][0]["formula"])
    # (6 - 2) + ((1 + 3) - (4 + 1)) = 3 > 0; then (6 - 2) + ((1 + 3) - (4 + 4)) = 0, not > 0
    table = {("np_mismatch", 6): 6.0, ("np_match", 6): 2.0, ("vp_mismatch", 5): 1.0, ("vp_mismatch", 6): 3.0}
    table |= {("vp_match", 5): 4.0, ("vp_match", 6): 1.0}
    assert holds(cleft, table)
    assert not holds(cleft, table | {("vp_match", 6): 4.0})

    equal = str(suite_file("fgd_hierarchy")["predictions"][1]["formula"])

    def both(a: float, b: float) -> dict[tuple[str, int], float]:
        return {("what_nogap", 9): a, ("that_nogap", 9): b, ("what_subjgap", 6): 1.0, ("that_subjgap", 6): 1.0}

    assert holds(equal, both(10.0, 10.0009))  # within atol 1e-3
    assert not holds(equal, both(10.0, 10.0012))  # beyond 1e-3 + 1e-5 x 10.0012
    assert holds(equal, both(100.0019, 100.0))  # rtol counts: 1e-3 + 1e-5 x 100 = 2e-3
    assert not holds(equal, both(100.0, 100.0021))


def test_precedence_and_grouping_are_those_of_syntaxgym_core() -> None:
    # + and - group left to right (syntaxgym-core's own test: 5 - 4 - 3 < 0)
    assert holds("5 - 4 - 3 < 0", {}) and holds("5+4=9-1+1", {}) and holds("5-(3+2)=0", {})
    # & and | share one level, left to right: (T | F) & F is false, where & binding tighter would give true
    assert not holds("2 > 1 | 1 > 2 & 1 > 2", {})
    assert holds("1 > 2 & 1 > 2 | 2 > 1", {})
    # arithmetic binds tighter than comparison, comparison tighter than &
    assert holds("1 + 1 > 1 & 3 - 1 = 2", {})
    # `*` is the sum of the condition's regions; numbers may be signed and in exponent form
    assert holds("(*;%a%) = 6 & (2;%a%) > -1.5e0", {("a", 1): 1.0, ("a", 2): 2.0, ("a", 3): 3.0})


@pytest.mark.parametrize(
    ("formula", "says"),
    [
        ("(1;%a%) < (2;%a%) < 3", "chains a second comparison"),
        ("((1;%a%) < 2", "is not closed"),
        ("(1;%a%) < 2)", "follows a complete formula"),
        ("(1;%a%) +", "ends where an operand was expected"),
        ("(1;%a%) & 2", "joins comparisons, not numbers"),
        ("(1;%a%) + 2", "must be a comparison"),
        ("((1;%a%) < 2) + 1 > 0", "adds numbers, not comparisons"),
        ("(1;a) > 0", "outside a region reference"),
        ("__import__('os').system('true') > 0", "is not part of the formula language"),
        ("(1;%a%) >= 2", "stands where a region"),
        ("", "ends where an operand was expected"),
    ],
)
def test_a_malformed_formula_is_one_sentence_naming_the_suite_and_the_prediction(formula: str, says: str) -> None:
    with pytest.raises(FormulaError) as raised:
        parse_formula(formula, suite="npz_obj", prediction=2)
    message = str(raised.value)
    assert message.startswith("the SyntaxGym suite npz_obj, prediction 2") and says in message
    assert message.count(". ") == 0 and "\n" not in message


def test_formulas_are_never_evaluated_as_python(monkeypatch: pytest.MonkeyPatch) -> None:
    """No `eval` or `exec` is reached, whatever the formula says."""

    def refuse(*_: object) -> None:
        raise AssertionError("eval was called")

    monkeypatch.setattr("builtins.eval", refuse)
    monkeypatch.setattr("builtins.exec", refuse)
    for _, index, formula in ALL_FORMULAS[:5]:
        parse_formula(formula, suite="x", prediction=index)
    with pytest.raises(FormulaError):
        parse_formula("(lambda: 1)() > 0", suite="x", prediction=1)


def test_a_suite_file_whose_formula_names_a_missing_condition_is_refused_naming_the_file() -> None:
    data = suite_file("number_prep")
    data["predictions"] = [{"type": "formula", "formula": "(6;%match_sing%) < (6;%nowhere%)"}]
    with pytest.raises(UserError, match=r"^number_prep\.json: .*prediction 1 .*condition `nowhere`"):
        read_suite(data, "number_prep", "number_prep.json")
    data["predictions"] = [{"type": "formula", "formula": "(9;%match_sing%) < (6;%mismatch_sing%)"}]
    with pytest.raises(UserError, match=r"region 9 of condition `match_sing`, which has regions 1 to 7"):
        read_suite(data, "number_prep", "number_prep.json")
    data["predictions"] = [{"type": "formula", "formula": "(6;%match_sing%) <"}]
    with pytest.raises(UserError, match=r"prediction 1 .* is malformed"):
        read_suite(data, "number_prep", "number_prep.json")


class RegionLength:
    """Surprisal = the region's number of words: a model whose answers are known by hand."""

    name = "region-length"
    protocols = ("region-surprisal",)
    asked: ClassVar[list[list[list[str]]]] = []

    def region_surprisals(self, sentences: list[list[list[str]]]) -> list[list[float]]:
        RegionLength.asked.extend(sentences)
        return [[float(len(region)) for region in regions] for regions in sentences]


def test_the_protocol_asks_non_empty_regions_and_stores_zero_for_empty_ones() -> None:
    suite = registry.suite("syntaxgym")
    split = frozen()["npz_ambig"]
    RegionLength.asked = []
    predictions = ask(RegionLength(), suite.spec, split.examples)
    assert all(region for sentence in RegionLength.asked for region in sentence)
    first = split.examples[0]
    conditions = first.conditions or []
    assert len(RegionLength.asked) == sum(len(e.conditions or []) for e in split.examples)
    assert predictions[0] == [[float(len(region)) for region in c.regions] for c in conditions]
    assert [c.regions[2] for c in conditions] == [[], [], [","], [","]] and predictions[0][0][2] == 0.0
    scores = suite.score(split, predictions)
    expected = sum(item_holds("npz_ambig", e, p) for e, p in zip(split.examples, predictions, strict=True))
    assert scores.metrics["accuracy"] == (expected / len(split), len(split))
    assert scores.correct == [item_holds("npz_ambig", e, p) for e, p in zip(split.examples, predictions, strict=True)]


def test_an_item_is_right_only_when_all_its_predictions_hold() -> None:
    example = Example(
        id="x-1",
        input=[],
        conditions=[Condition(name="a", regions=[["w"], ["v"]]), Condition(name="b", regions=[["w"], []])],
        formulas=["(1;%a%) > (1;%b%)", "(2;%a%) > (2;%b%)"],
    )
    assert item_holds("x", example, [[2.0, 1.0], [1.0, 0.0]])
    assert not item_holds("x", example, [[2.0, 0.0], [1.0, 0.0]])  # the second prediction fails
    assert not item_holds("x", example, [[1.0, 1.0], [1.0, 0.0]])  # the first fails


def test_a_run_scores_all_34_suites_and_ranks_the_31(runner: Runner, store: Store) -> None:
    record = runner.evaluate("syntaxgym", ModelSpec(name="tests.suites.test_syntaxgym:RegionLength"), [0])
    assert record.status == {"0": "done"}
    assert set(record.scores) == set(SUITES)
    # the SyntaxGym score is the mean over the 31 analysed suites; the circuits, the mean over theirs
    spec, accuracy = SyntaxGym.spec, {name: record.scores[name]["accuracy"].mean for name in SUITES}
    current = current_scores(store.scores(suite="syntaxgym", suite_hash=record.suite_hash), store.runs())
    score = suite_scores(current, [(spec, record.suite_hash)])[0][record.model]
    analysed = [accuracy[name] for name in SUITES if name not in NOT_ANALYSED]
    assert len(analysed) == 31 and score.mean == pytest.approx(sum(analysed) / 31)
    circuits = group_scores(current, spec, record.suite_hash, SyntaxGym.split_groups)
    assert list(circuits) == list(CIRCUITS)
    assert {name: cells[record.model].mean for name, cells in circuits.items()} == pytest.approx(
        circuit_scores(accuracy)
    )
    suite, splits = registry.suite("syntaxgym"), frozen()
    for name in ("number_src", "npz_obj", "nn-nv-rpl"):
        direct = suite.score(splits[name], ask(RegionLength(), suite.spec, splits[name].examples))
        assert record.scores[name]["accuracy"].mean == direct.metrics["accuracy"][0]


def group_row(section: str, label: str) -> list[str]:
    """The percentages of one row of a page's "By group" table, in its column order (score, then groups)."""
    (row,) = [r for r in re.findall(r"<tr[^>]*>(.*?)</tr>", section, re.S) if re.search(rf">{label}<", r)]
    return re.findall(r'<span class="mean">([0-9.]+)</span>', row)


def test_the_page_shows_each_circuit_for_measured_and_published_rows(
    runner: Runner, store: Store, tmp_path: Path
) -> None:
    """The suite page's "By group" table: a measured row's circuit cells are its circuit scores, a published
    row's are the authors' per-item results averaged over each circuit's suites the same way."""
    record = runner.evaluate("syntaxgym", ModelSpec(name="tests.suites.test_syntaxgym:RegionLength"), [0])
    suite = registry.suite("syntaxgym")
    gpt2 = [run for run in syntaxgym_runs(suite) if run.model == "published:gpt-2-pretrained"]
    store.add_published(gpt2)
    site = write_report(store, tmp_path / "report")
    page = (site.parent / "suites" / "syntaxgym@1.0.0.html").read_text(encoding="utf-8")
    section = page[page.index('<section id="groups">') :]
    section = section[: section.index("</section>")]
    headers = re.findall(r'<th scope="col">([^<]+)<span class="status">', section)
    assert headers == ["score", *CIRCUITS]

    def shown(accuracy: dict[str, float]) -> list[str]:
        analysed = [value for name, value in accuracy.items() if name not in NOT_ANALYSED]
        return [f"{100 * v:.1f}" for v in (sum(analysed) / len(analysed), *circuit_scores(accuracy).values())]

    measured = {name: record.scores[name]["accuracy"].mean for name in SUITES}
    assert group_row(section, record.model) == shown(measured)
    (run,) = gpt2
    published = {name: sum(ok for ok, _ in items.values()) / len(items) for name, items in run.items.items()}
    assert group_row(section, "gpt-2-pretrained") == shown(published)


@pytest.mark.parametrize("name", ["ngram", "unigram", "lstm-lm"])
def test_models_that_learned_nothing_are_not_applicable(runner: Runner, name: str) -> None:
    record = runner.evaluate("syntaxgym", ModelSpec(name=name), [0])
    assert record.status == {"0": "n/a"}


def published_files() -> list[Path]:
    return sorted(RESULTS_DIR.glob("*.csv"))


@pytest.mark.skipif(not RESULTS_DIR.is_dir(), reason="the authors' per-item results are not in STRUCTBENCH_SOURCE_DIR")
def test_the_published_per_item_results_pair_with_the_examples_by_suite_and_item() -> None:
    """`sg_results/*.csv` (model, suite, item, correct) number items from 0: item + 1 is the example's
    `item`, and `SUITE-(item + 1)` its id, for every row of every file."""
    ids = {name: {e.id for e in split.examples} for name, split in frozen().items() if name != "train"}
    for path in published_files():
        with path.open(encoding="utf-8", newline="") as handle:
            rows = list(csv.DictReader(handle))
        assert rows and set(rows[0]) == {"model", "suite", "item", "correct"}
        per_model: Counter[tuple[str, str]] = Counter()
        for row in rows:
            assert f"{row['suite']}-{int(row['item']) + 1}" in ids[row["suite"]], (path.name, row)
            per_model[row["model"], row["suite"]] += 1
        for (_, suite), count in per_model.items():
            assert count == len(ids[suite]), (path.name, suite)  # every item once per model and suite
