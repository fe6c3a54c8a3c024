"""A run's facts are made once: `ModelOnSuite` per (suite, model), `SeedRun` per seed, `ModelRequest.of` checks settings."""

from __future__ import annotations

import hashlib
import json

import pytest

from structbench import registry
from structbench.data import freeze
from structbench.errors import UserError
from structbench.runs import request, settings
from structbench.runs.context import ModelOnSuite
from structbench.runs.key import ModelKey, RunKey
from structbench.runs.request import ModelRequest
from structbench.runs.runner import Runner
from structbench.specs import ModelSpec


class Undeclared:
    """Has the transduction method but says nothing of the protocols it speaks."""

    def transduce(self, inputs: list[list[str]]) -> list[list[str]]:
        return inputs


def test_a_seed_run_holds_the_fields_the_store_claims_the_run_under(runner: Runner) -> None:
    suite = registry.suite("lookup-tables")
    spec = ModelSpec(name="ngram", params={"order": 3})
    on_suite = ModelOnSuite.of(suite, ModelRequest.of(spec, limit=5))
    whole = ModelKey.of(suite.spec.id, ModelRequest.of(spec))
    assert on_suite.key.facts == {**whole.facts, "limit": 5, "comparable": False}  # a partial run is its own
    assert on_suite.key.model_hash == hashlib.sha256(on_suite.key.record_json.encode()).hexdigest()
    assert on_suite.key.model_hash != whole.model_hash
    assert on_suite.label == "ngram[order=3] (partial: first 5 per split)"
    manifest = freeze.ensure_built(suite)
    for seed in (0, 4, 7):
        seed_run = on_suite.seed_run(manifest, seed)
        assert seed_run.draw == seed % suite.spec.n_draws == seed_run.claim_fields["draw"]
        assert seed_run.key == RunKey.of(suite.spec, manifest.suite_hash, ModelRequest.of(spec, limit=5), seed)
        assert seed_run.claim_fields["model_hash"] == on_suite.key.model_hash and seed_run.claim_fields["seed"] == seed
        assert seed_run.where == f"{suite.spec.key} x {on_suite.label} seed {seed}"
    record = runner.evaluate("lookup-tables", ModelRequest.of(spec, limit=5), [4])
    stored = runner.store.runs().iloc[0]
    assert stored["model_hash"] == on_suite.key.model_hash and stored["draw"] == 4 % suite.spec.n_draws
    assert record.model == on_suite.label
    assert stored["model_spec"] == on_suite.key.record_json and on_suite.key.record_json.startswith(
        '{"comparable": false'
    )
    assert json.loads(on_suite.key.record_json) == {"name": "ngram", "params": {"order": 3}, **on_suite.key.facts}


def test_a_run_key_is_made_for_the_suite_its_model_key_was_made_for() -> None:
    lookup, scan = registry.suite("lookup-tables").spec, registry.suite("scan-simple").spec
    model = ModelKey.of(lookup.id, ModelRequest.of(ModelSpec(name="copy")))
    assert RunKey.of(lookup, "0" * 64, model, 1).stored_fields()["model_hash"] == model.model_hash
    with pytest.raises(ValueError, match="made for suite 'lookup-tables'"):
        RunKey.of(scan, "0" * 64, model, 1)


def test_settings_are_checked_once_when_the_model_is_asked(runner: Runner, monkeypatch: pytest.MonkeyPatch) -> None:
    checked: list[ModelSpec] = []
    check = settings.check_settings

    def counted(spec: ModelSpec) -> None:
        checked.append(spec)
        check(spec)

    monkeypatch.setattr(request, "check_settings", counted)
    with pytest.raises(UserError, match="has no setting 'ordr'"):
        ModelRequest.of(ModelSpec(name="ngram", params={"ordr": 3}))
    checked.clear()
    runner.evaluate("lookup-tables", ModelSpec(name="copy"), [0, 1])
    assert checked == [ModelSpec(name="copy")]  # once, however many seeds


def test_a_protocol_method_without_a_declaration_is_refused_before_any_data_is_built() -> None:
    suite = registry.suite("lookup-tables")
    with pytest.raises(UserError, match=r"add `protocols = \('transduction',\)`"):
        ModelOnSuite.of(suite, ModelRequest.of(ModelSpec(name="x:Undeclared"), instance=Undeclared()))
