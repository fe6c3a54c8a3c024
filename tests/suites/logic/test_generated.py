"""Propositional logic: relations from truth tables, bins, splits, oracle and majority."""

from __future__ import annotations

import itertools

import numpy as np
import pytest

from structbench import registry
from structbench.data import freeze
from structbench.runs.runner import Runner
from structbench.specs import ModelSpec
from structbench.suites.logic.generated import LABELS, SEPARATOR, VARIABLES, FormulaGenerator, evaluate, relation
from tests.conftest import REPO

SUITES = [f"structbench.suites.logic.generated:LogicLe{n}" for n in (3, 6, 9, 12)]


def worlds(tokens: list[str]) -> set[int]:
    """Brute force: the assignments (as integers) under which the formula is true."""
    expression = " ".join(tokens).replace("(", " ( ").replace(")", " ) ")
    satisfied = set()
    for world in range(64):
        names = {v: bool(world >> i & 1) for i, v in enumerate(VARIABLES)}
        if eval(expression, {}, names):  # the formula uses only and/or/not, variables and brackets
            satisfied.add(world)
    return satisfied


def brute_relation(p: set[int], h: set[int]) -> str:
    everything = set(range(64))
    if p == h:
        return "="
    if p < h:
        return "<"
    if p > h:
        return ">"
    if not p & h:
        return "^" if p | h == everything else "|"
    return "v" if p | h == everything else "#"


def test_relations_match_a_brute_force_set_computation() -> None:
    generator = FormulaGenerator(7)
    seen = set()
    for ops in itertools.islice(itertools.cycle(range(1, 8)), 400):
        premise, hypothesis = generator.pair(ops)
        p, h = worlds(premise), worlds(hypothesis)
        expected = brute_relation(p, h)
        assert relation(evaluate(premise), evaluate(hypothesis)) == expected
        seen.add(expected)
    assert seen >= {"#", "<", ">", "|", "v"}
    assert relation(evaluate(["a"]), evaluate(["(", "not", "a", ")"])) == "^"
    assert relation(evaluate(["a"]), evaluate(["a"])) == "="


@pytest.fixture(scope="module")
def le6() -> dict[str, list]:  # type: ignore[type-arg]
    suite = registry.suite(SUITES[1])
    manifest = freeze.ensure_built(suite)
    return {s.name: freeze.load_split(suite, manifest, 0, s.name).examples for s in suite.spec.splits}


def test_bins_splits_and_labels(le6: dict[str, list]) -> None:  # type: ignore[type-arg]
    assert {e.meta["n_ops"] for e in le6["train"]} == set(range(7))
    for b in range(13):
        assert {e.meta["n_ops"] for e in le6[f"ops-{b:02d}"]} == {b}
    for e in le6["ops-09"][:200]:
        cut = e.input.index(SEPARATOR)
        counts = [sum(t in ("and", "or", "not") for t in side) for side in (e.input[:cut], e.input[cut + 1 :])]
        assert max(counts) == 9
    pairs = {name: {tuple(e.input) for e in examples} for name, examples in le6.items() if name != "pooled"}
    for a, b in itertools.combinations(pairs, 2):
        assert not pairs[a] & pairs[b], (a, b)
    assert {e.label for e in le6["pooled"]} == set(LABELS)
    assert len(le6["pooled"]) == sum(len(le6[f"ops-{b:02d}"]) for b in range(13))


def test_suites_share_their_test_items_and_manifests() -> None:
    tests = []
    for path in SUITES:
        suite = registry.suite(path)
        manifest = freeze.ensure_built(suite)
        committed = (REPO / "src" / "structbench" / "suites" / "manifests" / f"{suite.spec.key}.json").read_text()
        assert manifest.suite_hash in committed
        tests.append(manifest.splits["draw0/pooled"].sha256)
    assert len(set(tests)) == 1


@pytest.mark.parametrize("path", [SUITES[0]])
def test_oracle_solves_every_bin_and_majority_is_the_independence_rate(runner: Runner, path: str) -> None:
    oracle = runner.evaluate(path, ModelSpec(name="oracle"), [0])
    assert all(scores["accuracy"].mean == 1.0 for scores in oracle.scores.values())
    majority = runner.evaluate(path, ModelSpec(name="majority"), [0])
    pooled = majority.scores["pooled"]["accuracy"].mean
    assert np.isclose(pooled, 0.5, atol=0.05)
    assert runner.evaluate(path, ModelSpec(name="copy"), [0]).status == {"0": "n/a"}


@pytest.mark.parametrize("limit", [3, 6, 9, 12])
def test_bins_up_to_the_training_limit_are_in_distribution_and_pooled_is_unranked(limit: int) -> None:
    spec = registry.suite(f"logic-inference-le{limit}").spec
    assert (spec.primary_metric, spec.recipe, spec.labels) == ("accuracy", "default", LABELS)
    for b in range(13):
        split = spec.split(f"ops-{b:02d}")
        assert split.ranked
        assert split.test_role == ("in-distribution" if b <= limit else "generalisation")
    pooled = spec.split("pooled")
    assert not pooled.ranked
    assert pooled.test_role == ("in-distribution" if limit == 12 else "generalisation")
    assert [s.name for s in spec.ranked_splits] == [f"ops-{b:02d}" for b in range(13)]


def test_oracle_and_pooled_breakdown_by_bin(le6: dict[str, list]) -> None:  # type: ignore[type-arg]
    suite = registry.suite(SUITES[1])
    manifest = freeze.ensure_built(suite)
    splits = {s.name: freeze.load_split(suite, manifest, 0, s.name) for s in suite.spec.splits}
    pooled = splits["pooled"]
    answers = suite.oracle(splits).classify([e.input for e in pooled.examples], LABELS)
    metrics = suite.score(pooled, answers).metrics
    assert metrics["accuracy"] == (1.0, len(pooled))
    assert {k: v for k, v in metrics.items() if k.startswith("accuracy[")} == {
        f"accuracy[n_ops={b}]": (1.0, len(le6[f"ops-{b:02d}"])) for b in range(13)
    }
