"""BLiMP: built from the pinned zip as upstream publishes it (67 paradigms of 1,000 pairs), its phenomena and
fields, the two tie rules, the suite score, zero-shot models, malformed data, and the published rows checked
against the authors' files to the digit."""

from __future__ import annotations

import csv
import io
import json
import re
import zipfile
from collections import Counter
from pathlib import Path
from statistics import mean
from typing import Any

import pytest

from structbench import registry
from structbench.analysis.references import Reference, load_references
from structbench.analysis.suite_score import score_splits, stored_score
from structbench.data import freeze
from structbench.data.sources import resolve
from structbench.errors import UserError
from structbench.protocols import ask
from structbench.reports.builders.boards import split_groups
from structbench.reports.builders.suite_board import SuiteBoard
from structbench.runs.runner import Runner
from structbench.specs import FAMILY_ORDER, ModelSpec, Split
from structbench.store import Store
from structbench.suites.blimp import (
    DATA,
    IDENTICAL_PAIRS,
    PARADIGMS,
    PHENOMENON,
    PUBLISHED_HUMANS,
    PUBLISHED_MODELS,
    parse_paradigm,
    read_paradigms,
)
from tests.conftest import REPO

MANIFEST = REPO / "src" / "structbench" / "suites" / "manifests" / "blimp@1.0.0.json"
TABLE_3 = {"5-gram": 61.2, "LSTM": 69.8, "Transformer-XL": 69.6, "GPT-2 (large)": 83.0}
"""The corrected Table 3's overall accuracy (%) of each model; human (individual) 88.6."""
COLUMNS = {"5-gram": "ngram", "LSTM": "lstm", "Transformer-XL": "txl", "GPT-2 (large)": "gpt2"}
TIED = {"passive_1": 2, "principle_A_case_2": 5}
"""The upstream pairs whose two sentences are the same string, per paradigm."""


@pytest.fixture(scope="module")
def splits() -> dict[str, Split]:
    suite = registry.suite("blimp")
    manifest = freeze.ensure_built(suite)
    return {s.name: freeze.load_split(suite, manifest, 0, s.name) for s in suite.spec.splits}


@pytest.fixture(scope="module")
def upstream() -> dict[str, list[dict[str, Any]]]:
    """The rows of every data/<UID>.jsonl in the pinned zip, read here without the suite's parser."""
    with zipfile.ZipFile(resolve(DATA)) as archive:
        return {
            name.removeprefix("data/").removesuffix(".jsonl"): [
                json.loads(line) for line in archive.read(name).decode("utf-8").splitlines() if line.strip()
            ]
            for name in archive.namelist()
            if name.startswith("data/") and name.endswith(".jsonl")
        }


def test_built_from_the_pinned_zip_67_paradigms_of_1000_pairs_as_upstream(
    splits: dict[str, Split], upstream: dict[str, list[dict[str, Any]]]
) -> None:
    suite = registry.suite("blimp")
    manifest = freeze.ensure_built(suite)
    assert json.loads(MANIFEST.read_text())["suite_hash"] == manifest.suite_hash
    assert freeze.verify(suite) == []
    tests = [s.name for s in suite.spec.splits_with_role("test")]
    assert len(tests) == 67 and set(tests) == set(upstream) and tests == list(PHENOMENON)
    assert len(splits["train"]) == 0
    for uid in tests:
        rows, examples = upstream[uid], splits[uid].examples
        assert len(examples) == len(rows) == 1000
        assert sorted(int(e.meta["pairID"]) for e in examples) == list(range(1000))
        for row, example in zip(rows, examples, strict=True):
            assert example.id == f"{uid}-{row['pairID']}" and example.input == [] and example.answer == 0
            good, bad = example.candidates or [[], []]
            assert (" ".join(good), " ".join(bad)) == (row["sentence_good"], row["sentence_bad"])
            assert example.meta["pairID"] == int(row["pairID"])
            assert (example.meta["one_prefix_method"], example.meta["two_prefix_method"]) == (
                row["one_prefix_method"],
                row["two_prefix_method"],
            )
    identical = Counter(
        uid for uid in tests for e in splits[uid].examples if e.candidates and e.candidates[0] == e.candidates[1]
    )
    assert identical == TIED and sum(identical.values()) == IDENTICAL_PAIRS


def test_12_phenomena_and_4_fields_as_the_paper_and_the_authors_results_file_count_them(
    splits: dict[str, Split], upstream: dict[str, list[dict[str, Any]]]
) -> None:
    paradigms = {uid: splits[uid].examples for uid in PHENOMENON}
    for uid, examples in paradigms.items():
        assert {e.meta["linguistics_term"] for e in examples} == {PHENOMENON[uid]}
        assert len({e.meta["field"] for e in examples}) == 1
    terms = Counter(str(examples[0].meta["linguistics_term"]) for examples in paradigms.values())
    assert terms == {
        "anaphor_agreement": 2,
        "argument_structure": 9,
        "binding": 7,
        "control_raising": 5,
        "determiner_noun_agreement": 8,
        "ellipsis": 2,
        "filler_gap_dependency": 7,
        "irregular_forms": 2,
        "island_effects": 8,
        "npi_licensing": 7,
        "quantifiers": 4,
        "subject_verb_agreement": 6,
    }
    fields = Counter(str(examples[0].meta["field"]) for examples in paradigms.values())
    assert fields == {"morphology": 18, "syntax": 26, "semantics": 9, "syntax_semantics": 14}
    # upstream spells two paradigms' phenomenon `s-selection` and one field `syntax/semantics`
    raw = {uid: (rows[0]["linguistics_term"], rows[0]["field"]) for uid, rows in upstream.items()}
    assert {uid for uid, (term, _) in raw.items() if term == "s-selection"} == {
        "animate_subject_passive",
        "animate_subject_trans",
    }
    assert {uid for uid, (_, field) in raw.items() if field == "syntax/semantics"} == {"principle_A_case_2"}
    # the authors' results file puts every paradigm under the phenomenon the suite does
    results = [json.loads(line) for line in resolve(PUBLISHED_MODELS).read_text().splitlines()]
    assert {r["UID"]: r["linguistics_term"] for r in results if r["UID"] != "overall"} == PHENOMENON


def test_spec_one_ranked_generalisation_split_per_paradigm_scored_as_continuations_of_nothing() -> None:
    spec = registry.suite("blimp").spec
    assert (spec.family, spec.protocol, spec.primary_metric, spec.continuations) == (
        "syntax",
        "minimal-pair",
        "accuracy",
        True,
    )
    assert spec.family in FAMILY_ORDER
    assert [(s.name, s.test_role, s.ranked, s.size) for s in spec.splits_with_role("test")] == [
        (uid, "generalisation", True, 1000) for uids in PARADIGMS.values() for uid in uids
    ]
    assert score_splits(spec) == list(PHENOMENON)


class Constant:
    """Every sentence alike: a model that learned nothing."""

    name = "constant"
    protocols = ("minimal-pair",)

    def loglikelihood(self, requests: list[tuple[list[str], list[str]]]) -> list[float]:
        return [-1.0] * len(requests)


class PreferShorter:
    """The sentence of fewer words is the more probable; equal lengths tie."""

    name = "prefer-shorter"
    protocols = ("minimal-pair",)

    def loglikelihood(self, requests: list[tuple[list[str], list[str]]]) -> list[float]:
        return [-float(len(words)) for _, words in requests]


class WholeSentences:
    """Scores whole sentences (`logprob`) only."""

    name = "whole-sentences"
    protocols = ("minimal-pair",)

    def logprob(self, sequences: list[list[str]]) -> list[float]:
        return [0.0] * len(sequences)


def test_a_tie_counts_wrong_in_accuracy_and_right_in_accuracy_lm_eval(splits: dict[str, Split]) -> None:
    suite = registry.suite("blimp")
    oracle = suite.oracle(splits)
    for uid in PHENOMENON:
        test = splits[uid]
        scored = suite.score(test, ask(oracle, suite.spec, test.examples)).metrics
        strict = 1.0 - TIED.get(uid, 0) / 1000
        assert scored["accuracy"] == (strict, 1000) and scored["accuracy_lm_eval"] == (1.0, 1000)
        term, field = (test.examples[0].meta[key] for key in ("linguistics_term", "field"))
        assert scored[f"accuracy[linguistics_term={term}]"] == (strict, 1000)
        assert scored[f"accuracy[field={field}]"] == (strict, 1000)
    test = splits["adjunct_island"]
    constant = suite.score(test, ask(Constant(), suite.spec, test.examples)).metrics
    assert constant["accuracy"] == (0.0, 1000) and constant["accuracy_lm_eval"] == (1.0, 1000)


def test_the_suite_score_is_the_unweighted_mean_of_the_67_paradigm_accuracies(store: Store, runner: Runner) -> None:
    label = "tests.suites.test_blimp:PreferShorter"
    record = runner.evaluate("blimp", ModelSpec(name=label), [0])
    assert record.status == {"0": "done"}
    accuracies = [record.scores[uid]["accuracy"].mean for uid in PHENOMENON]
    assert len(set(accuracies)) > 10, "the paradigms differ, so a weighted mean could differ"
    spec = registry.suite("blimp").spec
    score = stored_score(store, spec, record.suite_hash, record.model)
    assert score is not None and score.mean == pytest.approx(mean(accuracies), abs=1e-12)
    ties = [record.scores[uid]["accuracy_lm_eval"].mean - record.scores[uid]["accuracy"].mean for uid in PHENOMENON]
    assert all(tie >= 0 for tie in ties) and max(ties) > 0.1  # equal lengths tie, and lm-eval counts them right
    assert set(record.breakdowns["wh_island"]["accuracy"]) == {"linguistics_term", "field"}


@pytest.mark.parametrize(
    ("name", "reason"),
    [("ngram", "(zero-shot data)"), ("unigram", "(zero-shot data)"), ("lstm-lm", "train it elsewhere")],
)
def test_models_that_learn_from_train_sentences_are_not_applicable_with_the_reason(
    runner: Runner, name: str, reason: str
) -> None:
    record = runner.evaluate("blimp", ModelSpec(name=name), [0])
    assert record.status == {"0": "n/a"} and reason in record.errors["0"]


def test_a_model_without_loglikelihood_is_not_applicable_with_the_reason(runner: Runner) -> None:
    record = runner.evaluate("blimp", ModelSpec(name="tests.suites.test_blimp:WholeSentences"), [0])
    assert record.status == {"0": "n/a"} and "does not score continuations" in record.errors["0"]


ROW = {
    "sentence_good": "Who should Derek hug after shocking Richard?",
    "sentence_bad": "Who should Derek hug Richard after shocking?",
    "field": "syntax",
    "linguistics_term": "island_effects",
    "UID": "adjunct_island",
    "one_prefix_method": False,
    "two_prefix_method": False,
    "pairID": "0",
}


def lines(*rows: dict[str, Any]) -> str:
    return "".join(json.dumps(row) + "\n" for row in rows)


@pytest.mark.parametrize(
    ("change", "says"),
    [
        ({"sentence_bad": None}, "line 1 lacks two single-spaced sentences"),
        ({"sentence_good": "Who  should Derek hug?"}, "line 1 lacks two single-spaced sentences"),
        ({"one_prefix_method": "no"}, "line 1 lacks"),
        ({"linguistics_term": "binding"}, "line 1 has linguistics_term 'binding'"),
        ({"field": "phonology"}, "line 1 has linguistics_term 'island_effects' and field 'phonology'"),
    ],
)
def test_a_malformed_row_is_one_sentence_naming_the_file_and_line(change: dict[str, Any], says: str) -> None:
    with pytest.raises(UserError, match=re.escape("blimp/BLiMP.zip: data/adjunct_island.jsonl")) as error:
        parse_paradigm("adjunct_island", lines({**ROW, **change}))
    assert says in str(error.value) and "STRUCTBENCH_SOURCE_DIR" in str(error.value)


def test_a_paradigm_without_its_1000_pairs_or_a_zip_without_a_paradigm_is_refused(tmp_path: Path) -> None:
    with pytest.raises(UserError, match="holds 2 pairs, not pairIDs 0-999"):
        parse_paradigm("adjunct_island", lines(ROW, {**ROW, "pairID": "1"}))
    with pytest.raises(UserError, match="line 2 is not JSON"):
        parse_paradigm("adjunct_island", lines(ROW) + "{\n")
    path = tmp_path / "BLiMP.zip"
    with zipfile.ZipFile(path, "w") as archive:
        archive.writestr("data/adjunct_island.jsonl", lines(ROW))
    with (
        zipfile.ZipFile(path) as archive,
        pytest.raises(UserError, match=re.escape("lacks data/anaphor_gender_agreement.jsonl")),
    ):
        read_paradigms(archive)


def published() -> dict[str, Reference]:
    return {row.model: row for row in load_references() if row.suite == "blimp"}


def test_the_published_rows_are_the_authors_results_file_to_the_digit_and_table_3s_means() -> None:
    """raw_results/summary/models_summary.jsonl at the pinned commit (hash-checked), after the 2021 erratum."""
    rows = [json.loads(line) for line in resolve(PUBLISHED_MODELS).read_text().splitlines()]
    paradigms = {r["UID"]: r for r in rows if r["UID"] != "overall"}
    overall = next(r for r in rows if r["UID"] == r["linguistics_term"] == "overall")
    references = published()
    for model, column in COLUMNS.items():
        values = references[model].values["accuracy"]
        assert values == {uid: paradigms[uid][column] for uid in PHENOMENON}
        average = mean(values.values())
        assert round(100 * average, 1) == TABLE_3[model]
        assert average == pytest.approx(overall[column], abs=1e-9)  # the file's own overall row


def test_the_pages_phenomenon_means_of_the_published_rows_are_the_authors_own_per_phenomenon_rows() -> None:
    """The suite page's "By group" table averages a published row's paradigms into the 12 phenomena
    (`Blimp.split_groups`); the authors' results file has its own "overall" row per phenomenon."""
    rows = [json.loads(line) for line in resolve(PUBLISHED_MODELS).read_text().splitlines()]
    theirs = {r["linguistics_term"]: r for r in rows if r["UID"] == "overall" and r["linguistics_term"] != "overall"}
    suite = registry.suite("blimp")
    board = SuiteBoard(spec=suite.spec, suite_hash="", splits=list(PHENOMENON), ranked=list(PHENOMENON))
    board.groups = split_groups(suite.spec)
    assert list(board.groups) == list(PARADIGMS)
    references = published()
    for model, column in COLUMNS.items():
        means = board.group_means(references[model].values["accuracy"])
        assert means == pytest.approx({term: theirs[term][column] for term in PARADIGMS}, abs=1e-9)
    partial = board.group_means({uid: 1.0 for uid in PARADIGMS["binding"][1:]})
    assert partial["binding"] is None  # a row that lacks a paradigm has no phenomenon mean


def test_the_human_row_is_the_authors_validation_file_to_the_digit_and_table_3s_88_6() -> None:
    """raw_results/summary/human_validation_summary.csv (hash-checked): total_mean per paradigm; its two paradigms
    that failed validation are not in BLiMP."""
    rows = {r["Condition"]: r for r in csv.DictReader(io.StringIO(resolve(PUBLISHED_HUMANS).read_text()))}
    assert set(rows) - set(PHENOMENON) == {
        "coordinate_structure_constraint_subject_extraction",
        "wh_questions_object_gap_long_distance",
    }
    values = published()["human (individual annotators)"].values["accuracy"]
    assert values == {uid: float(rows[uid]["total_mean"]) for uid in PHENOMENON}
    assert round(100 * mean(values.values()), 1) == 88.6
