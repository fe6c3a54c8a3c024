"""Gulordava et al.'s agreement test set: pairing, counts, oracle and ties."""

from __future__ import annotations

from collections import Counter

from structbench import freeze, registry
from structbench.runner import Runner
from structbench.specs import ModelSpec
from tests.conftest import REPO

PATH = "structbench.suites.agreement:AgreementGulordava"


def test_rows_pair_into_410_items() -> None:
    suite = registry.suite(PATH)
    manifest = freeze.ensure_built(suite)
    assert manifest.suite_hash in (REPO / "suites" / "manifests" / f"{suite.spec.key}.json").read_text()
    items = freeze.load_split(suite, manifest, 0, "test").examples
    assert Counter(e.meta["type"] for e in items) == {"original": 41, "generated": 369}
    assert Counter(e.meta["n_attr"] for e in items) == {0: 330, 1: 70, 2: 10}
    for item in items:
        good, bad = item.candidates or [[], []]
        assert good[:-1] == bad[:-1] == item.input and good[-1] != bad[-1]
    assert len(freeze.load_split(suite, manifest, 0, "train")) == 0


class ConstantScorer:
    name = "constant"
    protocols = ("minimal-pair",)

    def logprob(self, sequences: list[list[str]]) -> list[float]:
        return [-1.0] * len(sequences)


class PreferShorterVerb:
    name = "shorter-verb"
    protocols = ("minimal-pair",)

    def logprob(self, sequences: list[list[str]]) -> list[float]:
        return [-float(len(s[-1])) for s in sequences]


def test_oracle_passes_ties_fail_and_breakdowns_add_up(runner: Runner) -> None:
    oracle = runner.evaluate(PATH, ModelSpec(name="oracle"), [0]).scores["test"]
    assert oracle["accuracy"].mean == 1.0
    assert oracle["accuracy[type=original]"].mean == oracle["accuracy[n_attr=2]"].mean == 1.0
    tied = runner.evaluate(PATH, ModelSpec(name="tests.test_agreement:ConstantScorer"), [0]).scores["test"]
    assert tied["accuracy"].mean == 0.0
    shorter = runner.evaluate(PATH, ModelSpec(name="tests.test_agreement:PreferShorterVerb"), [0]).scores["test"]
    assert 0.0 < shorter["accuracy"].mean < 1.0
