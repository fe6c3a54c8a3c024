"""Agreement attractors: items as claimed, oracle, and the n-gram attraction effect; KN sanity."""

from __future__ import annotations

import math

import pytest

from structbench import registry
from structbench.baselines.classical.ngram import EOS, UNK, KneserNey
from structbench.data import freeze
from structbench.protocols import ask
from structbench.reports.builders.overlap_audits import audit
from structbench.runs.runner import Runner
from structbench.specs import Example, ModelSpec, Split
from structbench.suites.agreement.attractors import (
    PLURAL_FORMS,
    PLURAL_NOUNS,
    PREPOSITIONS,
    SINGULAR_FORMS,
    TEST_SPLITS,
)
from tests.conftest import REPO

MINIMAL_PAIR, NUMBER = (
    "structbench.suites.agreement.attractors:AgreementAttractors",
    "structbench.suites.agreement.attractors:AgreementAttractorsNumber",
)


def loaded(path: str) -> dict[str, Split]:
    suite = registry.suite(path)
    manifest = freeze.ensure_built(suite)
    assert (
        manifest.suite_hash
        in (REPO / "src" / "structbench" / "suites" / "manifests" / f"{suite.spec.key}.json").read_text()
    )
    return {s.name: freeze.load_split(suite, manifest, 0, s.name) for s in suite.spec.splits}


def check_attractors(example: Example) -> None:
    prefix = example.input
    subject_plural = prefix[1] in PLURAL_NOUNS
    nouns = [w for i, w in enumerate(prefix[2:], 2) if prefix[i - 1] == "the"]
    attractors = sum((n in PLURAL_NOUNS) != subject_plural for n in nouns)
    assert attractors == example.meta["n_attractors"] and len(nouns) == example.meta["n_intervening"]


def test_items_carry_the_attractors_they_claim() -> None:
    splits = loaded(MINIMAL_PAIR)
    for name in TEST_SPLITS:
        for example in splits[name].examples:
            check_attractors(example)
            if name != "mixed" and name != "attractors-0":
                assert example.meta["n_attractors"] == example.meta["n_intervening"] == int(name[-1])
            # the two verb forms, as continuations of the prefix: nothing after the verb is compared
            good, bad = example.candidates or [[], []]
            assert len(good) == len(bad) == 1 and good != bad
            assert good[0] in (PLURAL_FORMS if example.input[1] in PLURAL_NOUNS else SINGULAR_FORMS)
    share = sum(e.meta["n_attractors"] == 0 for e in splits["train"].examples) / len(splits["train"])
    assert share > 0.85
    assert any(w in PREPOSITIONS for e in splits["mixed"].examples for w in e.input)
    assert registry.suite(MINIMAL_PAIR).spec.continuations


def test_no_test_or_dev_prefix_occurs_in_train() -> None:
    """2.0.0: a tested item is never one a model has read, as a sentence (LM suite) or as a prefix (number suite)."""
    splits, number = loaded(MINIMAL_PAIR), loaded(NUMBER)
    train_prefixes = {tuple(e.input) for e in number["train"].examples}
    for name in (*TEST_SPLITS, "dev"):
        assert not any(tuple(e.input) in train_prefixes for e in number[name].examples), name
        # both suites hold the same items: the number suite's prefix begins the LM suite's item
        pairs = zip(number[name].examples, splits[name].examples, strict=True)
        assert all(lm.input[: len(nb.input)] == nb.input for nb, lm in pairs), name
    tested = [tuple(e.input) for n in TEST_SPLITS for e in splits[n].examples]
    assert len(set(tested)) == len(tested) == 6 * 500  # every test split holds its own items: all six are ranked
    # dev is LM text: whole sentences, none beginning with a prefix of train
    train_sentences = {tuple(e.input) for e in splits["train"].examples}
    assert all(e.candidates is None for e in splits["dev"].examples)
    assert not any(tuple(e.input) in train_sentences for e in splits["dev"].examples)
    assert {e.meta["n_intervening"] for e in splits["dev"].examples} == {1, 2, 3, 4}


@pytest.mark.parametrize("path", [MINIMAL_PAIR, NUMBER])
def test_declared_deviations_state_the_dev_shares_the_build_has(path: str) -> None:
    """2.0.0's dev is not train's distribution, and the spec says by how much: no sentence without
    intervening nouns, about four times train's share with an attractor; the split sizes and
    `attractors-0`'s definition, which Linzen et al. and Tran do otherwise, are declared too."""
    splits = loaded(path)

    def shares(name: str) -> tuple[str, str]:
        examples = splits[name].examples
        bare = sum(e.meta["n_intervening"] == 0 for e in examples) / len(examples)
        attracted = sum(int(e.meta["n_attractors"]) > 0 for e in examples) / len(examples)
        return f"{100 * bare:.1f}%", f"{100 * attracted:.1f}%"

    (dev_bare, dev_attracted), (train_bare, train_attracted) = shares("dev"), shares("train")
    spec = registry.suite(path).spec
    declared = " ".join(spec.deviations.split())
    assert dev_bare == "0.0%" and f"0% of dev has no intervening noun (train {train_bare})" in declared
    assert f"{dev_attracted} has an attractor (train {train_attracted})" in declared
    assert "no sentence without intervening nouns" in spec.split("dev").description
    assert "Tran (§5.5.1)" in declared and "no intervening noun at all" in declared
    assert all(e.meta["n_intervening"] > 0 for e in splits["attractors-0"].examples)


@pytest.mark.parametrize("path", [MINIMAL_PAIR, NUMBER])
def test_the_overlap_audit_counts_no_repeated_item(path: str) -> None:
    suite = registry.suite(path)
    result = audit(suite, freeze.ensure_built(suite))
    assert len(result.splits) == 7 and all(s.n_examples in (500, 1000) for s in result.splits)
    for split in result.splits:
        assert (split.exact_duplicates, split.input_in_train, split.gold_sequence_in_train or 0) == (0, 0, 0)


def test_version_1_compares_whole_sentences_and_repeats_train_prefixes() -> None:
    """1.0.0 stays loadable as it was released: whole sentences, test prefixes that train repeats."""
    suite = registry.suite("agreement-attractors@1.0.0")
    assert suite.spec.continuations is False
    splits = loaded("agreement-attractors@1.0.0")
    for example in splits["attractors-1"].examples:
        check_attractors(example)
        good, bad = example.candidates or [[], []]
        assert good[: len(example.input)] == bad[: len(example.input)] == example.input and good != bad
    result = audit(suite, freeze.ensure_built(suite))
    dev = next(s for s in result.splits if s.name == "dev")
    assert dev.gold_sequence_in_train == 622
    number_suite = registry.suite("agreement-attractors-number@1.0.0")
    number = audit(number_suite, freeze.ensure_built(number_suite))
    repeated = {s.name: s.exact_duplicates for s in number.splits}
    assert (repeated["attractors-0"], repeated["attractors-1"], repeated["dev"]) == (95, 152, 773)


@pytest.mark.parametrize("path", [MINIMAL_PAIR, NUMBER])
def test_spec_declares_roles_and_ranks_every_test_split(path: str) -> None:
    spec = registry.suite(path).spec
    assert (spec.primary_metric, spec.higher_is_better, spec.recipe) == ("accuracy", True, "default")
    roles = {s.name: s.test_role for s in spec.splits_with_role("test")}
    assert roles == {name: "in-distribution" if name == "attractors-0" else "generalisation" for name in TEST_SPLITS}
    assert [s.name for s in spec.ranked_splits] == list(TEST_SPLITS)
    assert [s.name for s in spec.splits] == [s.name for s in registry.suite(MINIMAL_PAIR).spec.splits]


def test_number_suite_labels_the_subject() -> None:
    splits = loaded(NUMBER)
    for example in splits["attractors-3"].examples:
        assert example.label == ("plural" if example.input[1] in PLURAL_NOUNS else "singular")
    suite = registry.suite(NUMBER)
    oracle = suite.oracle(splits)
    for name in TEST_SPLITS:
        split = splits[name]
        metrics = suite.score(split, ask(oracle, suite.spec, split.examples)).metrics
        assert metrics["accuracy"] == (1.0, 500), name


def test_oracle_solves_every_split_and_breakdowns_cover_it() -> None:
    splits = loaded(MINIMAL_PAIR)
    suite = registry.suite(MINIMAL_PAIR)
    oracle = suite.oracle(splits)
    for name in TEST_SPLITS:
        split = splits[name]
        metrics = suite.score(split, ask(oracle, suite.spec, split.examples)).metrics
        assert metrics["accuracy"] == (1.0, 500), name
        for key in suite.breakdown_keys:
            cells = [value for metric, value in metrics.items() if metric.startswith(f"accuracy[{key}=")]
            assert cells and all(v == 1.0 for v, _ in cells) and sum(n for _, n in cells) == 500


def test_kneser_ney_is_a_distribution() -> None:
    sentences = [["the", "dog", "runs"], ["the", "dogs", "run"], ["a", "dog", "runs"], ["the", "cat", "runs"]] * 3
    model = KneserNey(order=3)
    model.fit(Split(suite="t@0", name="train", role="train", draw=0,
                    examples=[Example(id=str(i), input=s) for i, s in enumerate(sentences)]), None, seed=0)  # fmt: skip
    for history in [("<s>", "<s>"), ("<s>", "the"), ("the", "dog"), ("dog", "zebra")]:
        total = sum(model._probability(history, w) for w in [*model.vocabulary, UNK])
        assert math.isclose(total, 1.0, rel_tol=1e-9), history
    assert EOS in model.vocabulary
    good, bad = model.logprob([["the", "dog", "runs"], ["the", "dog", "run"]])
    assert good > bad


def test_kneser_ney_continuations_follow_the_chain_rule_with_no_end_token() -> None:
    sentences = [["the", "dog", "runs", "fast"], ["the", "dogs", "run"], ["a", "dog", "runs"]] * 3
    model = KneserNey(order=3)
    model.fit(Split(suite="t@0", name="train", role="train", draw=0,
                    examples=[Example(id=str(i), input=s) for i, s in enumerate(sentences)]), None, seed=0)  # fmt: skip
    context, words = ["the", "dog"], ["runs", "fast"]
    (both,) = model.loglikelihood([(context, words)])
    first, second = model.loglikelihood([(context, words[:1]), ([*context, *words[:1]], words[1:])])
    assert both == pytest.approx(first + second)
    assert first == pytest.approx(math.log(model._probability(("the", "dog"), "runs")))
    # a whole sentence is the continuation of nothing, its end token included
    assert model.logprob([words])[0] == pytest.approx(model.loglikelihood([([], [*words, EOS])])[0])


def test_ngram_accuracy_falls_as_attractors_rise(runner: Runner) -> None:
    record = runner.evaluate(MINIMAL_PAIR, ModelSpec(name="ngram"), [0])
    by_bin = [record.scores[f"attractors-{k}"]["accuracy"].mean for k in range(5)]
    # a 4-gram sees only the nearest noun: right without attractors, misled by any attractor
    assert by_bin[0] > 0.8
    assert max(by_bin[1:]) < 0.3
    oracle = runner.evaluate(MINIMAL_PAIR, ModelSpec(name="oracle"), [0])
    assert all(scores["accuracy"].mean == 1.0 for scores in oracle.scores.values())


@pytest.mark.parametrize("model", ["unigram"])
def test_unigram_floor_runs(runner: Runner, model: str) -> None:
    record = runner.evaluate(MINIMAL_PAIR, ModelSpec(name=model), [0])
    assert record.status == {"0": "done"}
