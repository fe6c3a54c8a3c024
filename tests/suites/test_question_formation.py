"""Question formation: the transformation reproduces McCoy's data; the splits hold out what they claim."""

from __future__ import annotations

from collections import Counter

import pytest

from structbench import registry
from structbench.data import freeze
from structbench.runs.runner import Runner
from structbench.specs import Example, ModelSpec, Split
from structbench.suite import SourceFiles
from structbench.suites import question_formation
from structbench.suites.question_formation import (
    AUXILIARIES,
    INTRANSITIVE,
    KEPT,
    PREPOSITIONS,
    RELATIVE_CLAUSES,
    RELATIVISERS,
    TRANSITIVE,
    kept,
    parse_grammar,
    scored_by_mccoy,
    structure,
    transform,
)
from tests.conftest import REPO, SHARED_DATA

SUITES = {
    "structbench.suites.question_formation:QuestionFormation": "question-formation",
    "structbench.suites.question_formation:QuestionFormationNoAgreement": "question-formation-noagr",
}


@pytest.fixture(scope="module", params=list(SUITES))
def built(request: pytest.FixtureRequest) -> tuple[str, dict[str, Split]]:
    suite = registry.suite(request.param)
    manifest = freeze.ensure_built(suite)
    return request.param, {s.name: freeze.load_split(suite, manifest, 0, s.name) for s in suite.spec.splits}


def test_the_transformation_reproduces_all_published_pairs() -> None:
    pairs = [
        line.split("\t")
        for name in ("dev", "test", "gen")
        for line in (SHARED_DATA / "question_formation" / f"question.{name}").read_text().splitlines()
    ]
    assert len(pairs) == 21000
    wrong = [(source, target) for source, target in pairs if transform(source.split()) != target.split()]
    assert not wrong, wrong[:3]


@pytest.mark.parametrize("grammar", ["question.gr", "question_noagr.gr"])
def test_closed_classes_are_those_of_the_grammars(grammar: str) -> None:
    rules = parse_grammar((SHARED_DATA / "question_formation" / grammar).read_text())

    def words(*categories: str) -> set[str]:
        return {side[0] for c in categories if c in rules for side in rules[c][0]}

    assert words("Aux", "Aux_S", "Aux_P") <= AUXILIARIES
    assert words("Prep") == PREPOSITIONS and words("Rel") == RELATIVISERS
    assert words("V_intrans") == INTRANSITIVE and words("V_trans") == TRANSITIVE


def test_splits_are_disjoint_and_hold_out_rc_questions(built: tuple[str, dict[str, Split]]) -> None:
    path, splits = built
    sentences = {name: [tuple(e.input[:-2]) for e in split.examples] for name, split in splits.items()}
    # what the 2018 supplement's procedure keeps of 120,000 generated sentences (the authors' train files: 100,000)
    assert len(set(sentences["train"])) == len(sentences["train"]) == KEPT[registry.suite(path).spec.id]
    assert not set(sentences["train"]) & (set(sentences["dev"]) | set(sentences["test"]) | set(sentences["gen"]))

    def kinds(examples: list[Example]) -> Counter[tuple[object, bool]]:
        return Counter((e.meta["task"], e.meta["subject"] in RELATIVE_CLAUSES) for e in examples)

    assert kinds(splits["train"].examples)[("quest", True)] == 0
    assert kinds(splits["test"].examples)[("quest", True)] == 0
    assert set(kinds(splits["gen"].examples)) == {("quest", True)}
    for example in splits["train"].examples[:2000]:
        assert example.target == transform(example.input)


def test_train_has_the_structure_distribution_of_test(built: tuple[str, dict[str, Split]]) -> None:
    _, splits = built

    def shares(split: Split) -> dict[tuple[str, str], float]:
        counts = Counter(structure(e.input[:-2]) for e in split.examples)
        return {cell: n / len(split) for cell, n in counts.items()}

    train, test = shares(splits["train"]), shares(splits["test"])
    assert set(train) == set(test)
    assert max(abs(train[c] - test[c]) for c in train) < 0.015


def test_a_fresh_build_reproduces_the_committed_manifest(built: tuple[str, dict[str, Split]]) -> None:
    path, _ = built
    suite = registry.suite(path)
    committed = (REPO / "src" / "structbench" / "suites" / "manifests" / f"{suite.spec.key}.json").read_text()
    assert freeze.expected_manifest(suite).suite_hash in committed  # type: ignore[union-attr]


@pytest.mark.parametrize("path", list(SUITES))
def test_oracle_and_copy(runner: Runner, path: str) -> None:
    oracle = runner.evaluate(path, ModelSpec(name="oracle"), [0])
    for split in ("test", "gen"):
        assert oracle.scores[split]["sequence_accuracy"].mean == 1.0
        assert oracle.scores[split]["first_word_main_aux"].mean == 1.0
    copy = runner.evaluate(path, ModelSpec(name="copy"), [0])
    # copying the input never produces a whole target (the task token is copied too) ...
    assert copy.scores["test"]["sequence_accuracy"].mean == 0.0
    # ... but starts declaratives right, and on gen starts with the subject's determiner
    assert copy.scores["test"]["first_word_accuracy"].mean > 0.5
    assert copy.scores["gen"]["first_word_not_aux"].mean == 1.0


def test_spec_and_first_word_shares(built: tuple[str, dict[str, Split]]) -> None:
    path, splits = built
    suite = registry.suite(path)
    spec = suite.spec
    # McCoy et al.'s headline: first-word accuracy on gen (where the two rules part)
    assert (spec.primary_metric, spec.recipe, spec.higher_is_better) == (
        "first_word_accuracy",
        "question-formation",
        True,
    )
    assert {s.name: s.test_role for s in spec.splits_with_role("test")} == {
        "test": "in-distribution",
        "gen": "generalisation",
    }
    assert [s.name for s in spec.ranked_splits] == ["gen"]
    split = splits["gen"]
    outputs = suite.oracle(splits).transduce([e.input for e in split.examples])
    # the linear rule: every question starts with the sentence's first auxiliary
    linear = [[e.meta["first_aux"], *o[1:]] for e, o in zip(split.examples, outputs, strict=True)]
    metrics = suite.score(split, linear).metrics
    shares = {k: v for k, v in metrics.items() if k.startswith("first_word_") and "accuracy" not in k}
    assert set(shares) == {f"first_word_{kind}" for kind in ("main_aux", "first_aux", "other_aux", "not_aux")}
    assert all(n == len(split) for _, n in shares.values())  # gen holds questions only
    assert sum(v for v, _ in shares.values()) == pytest.approx(1.0)
    assert shares["first_word_first_aux"][0] > 0.5 and shares["first_word_not_aux"][0] == 0.0
    assert metrics["first_word_accuracy"][0] == shares["first_word_main_aux"][0]
    split = splits["test"]
    # only copy-task items: no share metrics at all
    declaratives = split.model_copy(update={"examples": [e for e in split.examples if e.meta["task"] == "decl"]})
    metrics = suite.score(declaratives, [e.target for e in declaratives.examples]).metrics
    assert not any(k.startswith("first_word_") and "accuracy" not in k for k in metrics)


def test_mccoys_scoring_condition_keeps_every_published_gen_item() -> None:
    lines = (SHARED_DATA / "question_formation" / "question.gen").read_text().splitlines()
    assert len(lines) == 10_000 and all(scored_by_mccoy(line.split("\t")[0].split()) for line in lines)
    assert not scored_by_mccoy("my yak that can giggle can swim .".split())  # one auxiliary twice
    assert not scored_by_mccoy("my yak that will admire the newt who can read could swim .".split())  # three


@pytest.mark.parametrize(("version", "linear_share"), [("2.0.0", 0.0), ("1.0.0", 0.2469)])
def test_on_noagr_gen_the_linear_rule_scores_zero_from_version_2(version: str, linear_share: float) -> None:
    """Version 1.0.0 stays loadable for the results stored on it; its gen let the linear rule
    (front the first auxiliary) score where McCoy's evaluation gives it 0."""
    suite = registry.suite(f"question-formation-noagr@{version}")
    assert suite.spec.version == version
    gen = freeze.load_split(suite, freeze.ensure_built(suite), 0, "gen")
    hierarchical = [transform(e.input) for e in gen.examples]
    linear = [[str(e.meta["first_aux"]), *h[1:]] for e, h in zip(gen.examples, hierarchical, strict=True)]
    assert suite.score(gen, linear).metrics["first_word_accuracy"] == (linear_share, 10_000)
    assert suite.score(gen, hierarchical).metrics["first_word_accuracy"] == (1.0, 10_000)


@pytest.mark.long_running
@pytest.mark.parametrize(
    ("key", "train"),
    [
        ("question-formation@1.0.0", 120_000),
        ("question-formation-noagr@1.0.0", 120_000),
        ("question-formation-noagr@2.0.0", 120_000),
    ],
)
def test_earlier_versions_stay_loadable_as_released(key: str, train: int) -> None:
    """The versions before the supplement's training-set procedure build to their committed manifests, with
    120,000 training items after the drop, for the results stored on them."""
    suite = registry.suite(key)
    manifest = freeze.ensure_built(suite)
    committed = (REPO / "src" / "structbench" / "suites" / "manifests" / f"{key}.json").read_text()
    assert suite.spec.key == key and manifest.suite_hash in committed
    assert manifest.splits["draw0/train"].n_examples == suite.spec.split("train").size == train


def test_training_sets_drop_rc_subject_questions_after_generating() -> None:
    """The 2018 supplement: 120,000 sentences generated, each given a task, and the question-task ones
    with a relative clause on the subject left out, so train is what remains, not 120,000."""
    plain, rc = "my yak can giggle".split(), "my yak that can read will giggle".split()
    items = [(plain, "quest"), (plain, "decl"), (rc, "quest"), (rc, "decl")]
    assert kept(items) == [(plain, "quest"), (plain, "decl"), (rc, "decl")]
    assert registry.suite("question-formation").spec.split("train").size == KEPT["question-formation"] == 100_696
    assert registry.suite("question-formation-noagr").spec.split("train").size == 96_257


def test_the_agreement_train_takes_its_structure_shares_from_dev_alone(monkeypatch: pytest.MonkeyPatch) -> None:
    """From 2.0.0 train's sentence-structure shares are measured on the published dev file, so that
    the test set is read only to keep its sentences out of train."""
    measured: list[list[str]] = []
    shares_of = question_formation.structure_shares

    def spy(examples: list[Example]) -> dict[tuple[str, str], float]:
        measured.append([e.id for e in examples])
        return shares_of(examples)

    monkeypatch.setattr(question_formation, "structure_shares", spy)
    monkeypatch.setattr(question_formation, "GENERATED", 600)  # the procedure, not its size
    suite = registry.suite("question-formation")
    splits = suite.generate(0, SourceFiles(suite.sources, SHARED_DATA))
    assert len(measured) == 1 and len(measured[0]) == 1000 and all(i.startswith("dev-") for i in measured[0])
    assert len(splits["train"]) < 600 and all(
        e.meta["task"] == "decl" or e.meta["subject"] not in RELATIVE_CLAUSES for e in splits["train"]
    )
