"""Grounded scenes: the chapter's example, the four held-out conditions, oracle and scorers."""

from __future__ import annotations

import pytest

from structbench import registry
from structbench.data import freeze
from structbench.runs.runner import Runner
from structbench.specs import Example, ModelSpec, Split
from structbench.suites.grounded import flatten, meaning, parse_input, parse_np
from tests.conftest import REPO

CONDITIONS = ("weak", "categorical", "descriptive", "strong")


def test_the_example_of_figure_4_5() -> None:
    scene = [("small", "red", "pyramid", 1), ("large", "blue", "block", 4), ("medium", "red", "cylinder", 3),
             ("small", "green", "pyramid", 2)]  # fmt: skip
    words = "the small pyramids are near the blue block".split()
    assert " ".join(flatten(meaning(scene, words))) == (
        "Size small 1+2 | Shape pyramid 1+2 | Location near 1+2 4 | Color blue 4 | Shape block 4"
    )


def splits_of(condition: str, draw: int) -> dict[str, Split]:
    suite = registry.suite(f"structbench.suites.grounded:Grounded{condition.title()}")
    manifest = freeze.ensure_built(suite)
    committed = (REPO / "src" / "structbench" / "suites" / "manifests" / f"{suite.spec.key}.json").read_text()
    assert manifest.suite_hash in committed
    return {s.name: freeze.load_split(suite, manifest, draw, s.name) for s in suite.spec.splits}


def phrases(example: Example) -> tuple[list[tuple[str, str, str, int]], list[list[str]]]:
    """The scene and the word lists of the sentence's noun phrases."""
    scene, words = parse_input(example.input)
    subject, i = parse_np(words, 0)
    out = [subject.words()]
    if words[i + 1] in ("on", "under", "near"):
        out.append(parse_np(words, i + 2)[0].words())
    return scene, out


@pytest.mark.parametrize("condition", CONDITIONS)
def test_each_condition_holds_out_what_it_claims(condition: str) -> None:
    splits = splits_of(condition, 1)
    held_out = tuple(splits["test"].examples[0].meta["held_out"].split())  # type: ignore[union-attr]
    full = ["the", held_out[0], held_out[1]]
    inputs = {name: {tuple(e.input) for e in split.examples} for name, split in splits.items()}
    assert not inputs["train"] & inputs["test"] and not inputs["dev"] & inputs["test"]

    def shows(example: Example) -> bool:
        return any(o[:3] == held_out for o in parse_input(example.input)[0])

    def describes(example: Example) -> bool:
        return any(p[:3] == full and p[3].startswith(held_out[2]) for p in phrases(example)[1])

    train = splits["train"].examples
    test = splits["test"].examples
    if condition == "weak":
        assert any(shows(e) for e in train) and any(describes(e) for e in train)
        return
    assert not any(describes(e) for e in train)
    assert any(shows(e) for e in train) == (condition == "descriptive")
    assert all(shows(e) for e in test)
    assert all(describes(e) for e in test) == (condition != "categorical")
    if condition == "categorical":
        assert not any(describes(e) for e in test)


def test_held_out_type_varies_with_the_draw() -> None:
    types = {splits_of("strong", d)["test"].examples[0].meta["held_out"] for d in range(5)}
    assert len(types) >= 3


@pytest.mark.parametrize("condition", CONDITIONS)
def test_oracle_solves_and_scorers_separate_ids_from_words(runner: Runner, condition: str) -> None:
    path = f"structbench.suites.grounded:Grounded{condition.title()}"
    oracle = runner.evaluate(path, ModelSpec(name="oracle"), [0])
    assert {
        m: oracle.scores["test"][m].mean for m in ("sequence_accuracy", "linguistic_accuracy", "referent_accuracy")
    } == {
        "sequence_accuracy": 1.0,
        "linguistic_accuracy": 1.0,
        "referent_accuracy": 1.0,
    }
    assert runner.evaluate(path, ModelSpec(name="copy"), [0]).scores["test"]["sequence_accuracy"].mean == 0.0


def test_wrong_ids_cost_referent_but_not_linguistic_accuracy() -> None:
    suite = registry.suite("structbench.suites.grounded:GroundedWeak")
    splits = splits_of("weak", 0)
    split = splits["test"]
    predictions = suite.oracle(splits).transduce([e.input for e in split.examples])
    shifted = [[{"1": "2", "2": "1"}.get(t, t) for t in p] for p in predictions]
    scores = suite.score(split, shifted).metrics
    assert scores["linguistic_accuracy"][0] == 1.0
    assert scores["referent_accuracy"][0] < 1.0 and scores["sequence_accuracy"][0] < 1.0

    predicates = sum(int(e.meta["n_predicates"]) for e in split.examples)
    assert scores["referent_accuracy"][1] == predicates and scores["linguistic_accuracy"][1] == len(split)


@pytest.mark.parametrize("condition", CONDITIONS)
def test_spec_declares_the_test_role_of_each_condition(condition: str) -> None:
    spec = registry.suite(f"grounded-{condition}").spec
    assert (spec.primary_metric, spec.recipe, spec.n_draws) == ("sequence_accuracy", "default", 5)
    (test,) = spec.splits_with_role("test")
    assert test.name == "test" and test.ranked
    assert test.test_role == ("in-distribution" if condition == "weak" else "generalisation")
