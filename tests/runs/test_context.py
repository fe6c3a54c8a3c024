"""A run's facts are made once: `Keyed` per (suite, model), `SeedContext` per seed, `Asked.of` checks settings."""

from __future__ import annotations

import pytest

from structbench import registry
from structbench.data import freeze
from structbench.errors import UserError
from structbench.runs import identity, settings
from structbench.runs.context import Keyed
from structbench.runs.identity import Asked, model_facts, model_hash, model_record
from structbench.runs.runner import Runner
from structbench.specs import ModelSpec


class Undeclared:
    """Has the transduction method but says nothing of the protocols it speaks."""

    def transduce(self, inputs: list[list[str]]) -> list[list[str]]:
        return inputs


def test_a_seed_context_holds_the_fields_the_store_claims_the_run_under(runner: Runner) -> None:
    suite = registry.suite("lookup-tables")
    spec = ModelSpec(name="ngram", params={"order": 3})
    keyed = Keyed.of(suite, Asked.of(spec, limit=5))
    facts = {**model_facts(spec, suite.spec.id), "limit": 5, "comparable": False}
    assert keyed.facts == facts and keyed.model_hash == model_hash(spec, facts)
    assert keyed.label == "ngram[order=3] (partial: first 5 per split)"
    manifest = freeze.ensure_built(suite)
    for seed in (0, 4, 7):
        context = keyed.seed(manifest, seed)
        assert context.draw == seed % suite.spec.n_draws == context.fields["draw"]
        assert context.fields["model_hash"] == keyed.model_hash and context.fields["seed"] == seed
        assert context.where == f"{suite.spec.key} x {keyed.label} seed {seed}"
    record = runner.evaluate("lookup-tables", Asked.of(spec, limit=5), [4])
    stored = runner.store.runs().iloc[0]
    assert stored["model_hash"] == keyed.model_hash and stored["draw"] == 4 % suite.spec.n_draws
    assert record.model == keyed.label
    assert stored["model_spec"] == keyed.record and keyed.record.startswith('{"comparable": false')
    assert model_record(spec, facts) == {"name": "ngram", "params": {"order": 3}, **facts}


def test_settings_are_checked_once_when_the_model_is_asked(runner: Runner, monkeypatch: pytest.MonkeyPatch) -> None:
    checked: list[ModelSpec] = []
    check = settings.check_settings

    def counted(spec: ModelSpec) -> None:
        checked.append(spec)
        check(spec)

    monkeypatch.setattr(identity, "check_settings", counted)
    with pytest.raises(UserError, match="has no setting 'ordr'"):
        Asked.of(ModelSpec(name="ngram", params={"ordr": 3}))
    checked.clear()
    runner.evaluate("lookup-tables", ModelSpec(name="copy"), [0, 1])
    assert checked == [ModelSpec(name="copy")]  # once, however many seeds


def test_a_protocol_method_without_a_declaration_is_refused_before_any_data_is_built() -> None:
    suite = registry.suite("lookup-tables")
    with pytest.raises(UserError, match=r"add `protocols = \('transduction',\)`"):
        Keyed.of(suite, Asked.of(ModelSpec(name="x:Undeclared"), instance=Undeclared()))
