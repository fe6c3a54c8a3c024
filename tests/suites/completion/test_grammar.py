"""Sentence completion: one grammatical candidate per item; local constraints are easier for n-grams."""

from __future__ import annotations

from collections import Counter

from structbench import registry
from structbench.data import freeze
from structbench.protocols import ask
from structbench.runs.runner import Runner
from structbench.specs import ModelSpec
from structbench.suites.completion.grammar import CONSTRAINTS, grammatical
from tests.conftest import REPO

PATH = "structbench.suites.completion.grammar:SentenceCompletion"


def test_every_item_has_exactly_one_grammatical_candidate() -> None:
    suite = registry.suite(PATH)
    manifest = freeze.ensure_built(suite)
    assert (
        manifest.suite_hash
        in (REPO / "src" / "structbench" / "suites" / "manifests" / f"{suite.spec.key}.json").read_text()
    )
    test = freeze.load_split(suite, manifest, 0, "test").examples
    assert Counter(e.meta["constraint"] for e in test) == {
        "agreement": 500, "subcategorisation": 500, "selection": 500, "long-distance": 500,
    }  # fmt: skip
    for example in test:
        candidates = example.candidates or []
        assert len(candidates) == 5 and len({tuple(c) for c in candidates}) == 5
        assert [grammatical(c) for c in candidates] == [i == example.answer for i in range(5)]
    assert len({e.answer for e in test}) == 5
    train = {tuple(e.input) for e in freeze.load_split(suite, manifest, 0, "train").examples}
    assert not any(tuple((e.candidates or [])[e.answer or 0]) in train for e in test)


def test_grammar_rules() -> None:
    assert grammatical("the old dogs that the cat saw sleep often .".split())
    assert not grammatical("the old dogs that the cat saw sleeps often .".split())
    assert not grammatical("the dog drinks the bread .".split())
    assert not grammatical("the dog sleeps the bread .".split())


def test_spec_declares_an_in_distribution_test() -> None:
    spec = registry.suite(PATH).spec
    assert (spec.primary_metric, spec.higher_is_better, spec.recipe) == ("accuracy", True, "sentence-completion")
    assert [(s.name, s.test_role, s.ranked) for s in spec.splits_with_role("test")] == [
        ("test", "in-distribution", True)
    ]


def test_oracle_solves_every_constraint() -> None:
    suite = registry.suite(PATH)
    manifest = freeze.ensure_built(suite)
    splits = {s.name: freeze.load_split(suite, manifest, 0, s.name) for s in suite.spec.splits}
    test = splits["test"]
    metrics = suite.score(test, ask(suite.oracle(splits), suite.spec, test.examples)).metrics
    assert metrics["accuracy"] == (1.0, 2000)
    assert {c: metrics[f"accuracy[constraint={c}]"] for c in CONSTRAINTS} == {c: (1.0, 500) for c in CONSTRAINTS}


def test_oracle_solves_and_ngram_prefers_local_constraints(runner: Runner) -> None:
    oracle = runner.evaluate(PATH, ModelSpec(name="oracle"), [0]).scores["test"]
    assert oracle["accuracy"].mean == 1.0
    ngram = runner.evaluate(PATH, ModelSpec(name="ngram"), [0]).breakdowns["test"]["accuracy"]["constraint"]
    local = min(ngram[c].mean for c in ("agreement", "subcategorisation", "selection"))
    assert local > 0.9
    assert ngram["long-distance"].mean < local - 0.3
