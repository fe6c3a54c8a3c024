"""Gulordava et al.'s agreement test set: pairing, counts, spec, oracle and ties."""

from __future__ import annotations

import ast
import importlib
from collections import Counter
from pathlib import Path

import pytest

from structbench import registry
from structbench.data import freeze
from structbench.protocols import ask
from structbench.runs.runner import Runner
from structbench.specs import ModelSpec, Split
from tests.conftest import REPO

PATH = "structbench.suites.agreement.gulordava:AgreementGulordava"


def frozen_splits() -> dict[str, Split]:
    suite = registry.suite(PATH)
    manifest = freeze.ensure_built(suite)
    return {s.name: freeze.load_split(suite, manifest, 0, s.name) for s in suite.spec.splits}


@pytest.mark.parametrize("path", [PATH, "agreement-gulordava@1.0.0"])
def test_rows_pair_into_410_items(path: str) -> None:
    suite = registry.suite(path)
    manifest = freeze.ensure_built(suite)
    assert (
        manifest.suite_hash
        in (REPO / "src" / "structbench" / "suites" / "manifests" / f"{suite.spec.key}.json").read_text()
    )
    items = freeze.load_split(suite, manifest, 0, "test").examples
    assert Counter(e.meta["type"] for e in items) == {"original": 41, "generated": 369}
    assert Counter(e.meta["n_attr"] for e in items) == {0: 330, 1: 70, 2: 10}
    for item in items:
        good, bad = item.candidates or [[], []]
        if suite.spec.continuations:  # 2.0.0: the two forms, as continuations of the prefix
            assert len(good) == len(bad) == 1 and good != bad
        else:  # 1.0.0: prefix + form, compared as whole sequences
            assert good[:-1] == bad[:-1] == item.input and good[-1] != bad[-1]
    assert len(freeze.load_split(suite, manifest, 0, "train")) == 0


def test_spec_declares_accuracy_and_a_generalisation_test() -> None:
    spec = registry.suite(PATH).spec
    assert (spec.primary_metric, spec.higher_is_better, spec.recipe) == ("accuracy", True, "default")
    assert [(s.name, s.test_role, s.ranked) for s in spec.splits_with_role("test")] == [
        ("test", "generalisation", True)
    ]


class ConstantScorer:
    name = "constant"
    protocols = ("minimal-pair",)

    def loglikelihood(self, requests: list[tuple[list[str], list[str]]]) -> list[float]:
        return [-1.0] * len(requests)


class PreferShorterVerb:
    name = "shorter-verb"
    protocols = ("minimal-pair",)

    def loglikelihood(self, requests: list[tuple[list[str], list[str]]]) -> list[float]:
        return [-float(len(words[-1])) for _, words in requests]


class WholeSentences:
    """A model that scores whole sentences only, as every minimal-pair model did before continuations."""

    name = "whole-sentences"
    protocols = ("minimal-pair",)

    def logprob(self, sequences: list[list[str]]) -> list[float]:
        return [0.0] * len(sequences)


def test_oracle_passes_ties_fail_and_breakdowns_add_up() -> None:
    suite = registry.suite(PATH)
    splits = frozen_splits()
    test = splits["test"]

    def metrics(model: object) -> dict[str, tuple[float, int]]:
        return suite.score(test, ask(model, suite.spec, test.examples)).metrics

    oracle = metrics(suite.oracle(splits))
    assert oracle["accuracy"] == (1.0, 410)
    assert oracle["accuracy[type=original]"] == (1.0, 41) and oracle["accuracy[n_attr=2]"] == (1.0, 10)
    for key in ("type", "n_attr", "pattern"):
        assert sum(n for name, (_, n) in oracle.items() if name.startswith(f"accuracy[{key}=")) == 410
    assert metrics(ConstantScorer())["accuracy"] == (0.0, 410)
    assert 0.0 < metrics(PreferShorterVerb())["accuracy"][0] < 1.0


def test_the_runner_hands_the_oracle_its_frozen_splits(runner: Runner) -> None:
    record = runner.evaluate(PATH, ModelSpec(name="oracle"), [0])
    assert record.scores["test"]["accuracy"].mean == 1.0
    tied = runner.evaluate(PATH, ModelSpec(name="tests.suites.agreement.test_gulordava:ConstantScorer"), [0]).scores[
        "test"
    ]
    assert tied["accuracy"].mean == 0.0


@pytest.mark.parametrize("name", ["ngram", "unigram"])
def test_count_models_are_not_applicable_on_zero_shot_data(runner: Runner, name: str) -> None:
    """No train split: an n-gram model learned nothing, so it is n/a, not a row of ties scored wrong."""
    record = runner.evaluate(PATH, ModelSpec(name=name), [0])
    assert record.status == {"0": "n/a"} and "this suite has none (zero-shot data)" in record.errors["0"]


def test_a_model_without_loglikelihood_is_not_applicable_with_the_reason(runner: Runner) -> None:
    record = runner.evaluate(PATH, ModelSpec(name="tests.suites.agreement.test_gulordava:WholeSentences"), [0])
    assert record.status == {"0": "n/a"}
    assert "does not score continuations" in record.errors["0"] and "loglikelihood" in record.errors["0"]
    old = runner.evaluate(
        "agreement-gulordava@1.0.0", ModelSpec(name="tests.suites.agreement.test_gulordava:WholeSentences"), [0]
    )
    assert old.status == {"0": "done"}


@pytest.mark.parametrize(
    "module",
    [
        "structbench.suites.agreement.gulordava",
        "structbench.suites.agreement.attractors",
        "structbench.suites.completion.grammar",
        "structbench.suites.agreement.linzen",
        "structbench.suites.completion.msr",
        "structbench.suites.pos_induction",
    ],
)
def test_suite_modules_import_no_storage_and_no_other_suite(module: str) -> None:
    """Oracles read the splits the runner hands them; shared pieces come from suites.common only."""
    tree = ast.parse(Path(importlib.import_module(module).__file__ or "").read_text(encoding="utf-8"))
    imported: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            imported |= {alias.name for alias in node.names}
        elif isinstance(node, ast.ImportFrom):
            imported |= {f"{node.module}.{alias.name}" for alias in node.names}
    assert not [
        m for m in imported if m.startswith(("structbench.data.freeze", "structbench.store", "structbench.runs.runner"))
    ]
    assert {m.rsplit(".", 1)[0] for m in imported if m.startswith("structbench.suites.")} <= {
        "structbench.suites.common"
    }
