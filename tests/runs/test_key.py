"""A run's key is made by `RunKey.of`, and today's code makes the very key every shipped run is stored
under: a store written before answers the same runs, and the reference rows stay the users' rows' twins."""

from __future__ import annotations

import json

import pytest

from structbench import registry
from structbench.paths import reference_bundle_dir
from structbench.runs.context import ModelOnSuite
from structbench.runs.key import ModelKey, RunKey
from structbench.runs.request import ModelRequest
from structbench.specs import ModelSpec
from structbench.store.bundle import read_runs


def test_every_run_of_the_installed_bundle_is_keyed_as_it_is_stored(monkeypatch: pytest.MonkeyPatch) -> None:
    """Each bundled run's key (suite, version, model spec, model hash, configuration hash, comparable,
    seed) and label, made again from the name and settings its record holds, as `run` would ask for it."""
    monkeypatch.delenv("STRUCTBENCH_REFERENCE")
    runs = list(read_runs(reference_bundle_dir()))
    assert len(runs) >= 100, "the installed reference bundle holds fewer runs than it ships"
    made: dict[tuple[str, str], ModelOnSuite] = {}  # once per (suite, model), as `run` makes it
    for run in runs:
        row = run.row
        reference, record = f"{row['suite']}@{row['version']}", json.loads(row["model_spec"])
        if (reference, row["model_spec"]) not in made:
            request = ModelRequest.of(ModelSpec(name=record["name"], params=record["params"]))
            made[(reference, row["model_spec"])] = ModelOnSuite.of(registry.suite(reference), request)
        on_suite = made[(reference, row["model_spec"])]
        key = RunKey.of(on_suite.suite.spec, row["suite_hash"], on_suite.key, int(row["seed"]))
        fields = key.stored_fields()
        stored = {name: row[name] for name in fields}
        assert {**fields, "comparable": int(fields["comparable"])} == stored, f"{reference} x {row['model']}"
        assert on_suite.label == row["model"] and key.seed % on_suite.suite.spec.n_draws == row["draw"]
    assert len(made) == len({(run.row["suite"], run.row["version"], run.row["model_hash"]) for run in runs})


def test_settings_that_change_no_answer_or_ask_for_a_default_are_not_keyed() -> None:
    """The command model's time-out changes no answer (`unkeyed_settings`); `order=4` is ngram's default."""
    command = ModelSpec(name="command", params={"command": "python model.py"})
    timed = ModelSpec(name="command", params={"command": "python model.py", "timeout": 99})
    assert ModelKey.of("lookup-tables", ModelRequest.of(timed)) == ModelKey.of(
        "lookup-tables", ModelRequest.of(command)
    )
    ngram = ModelKey.of("lookup-tables", ModelRequest.of(ModelSpec(name="ngram")))
    explicit = ModelKey.of("lookup-tables", ModelRequest.of(ModelSpec(name="ngram", params={"order": 4})))
    assert (explicit.model_hash, explicit.spec, explicit.dropped_defaults) == (ngram.model_hash, ngram.spec, True)


def test_a_stored_record_is_moved_to_the_key_its_settings_have_today() -> None:
    """`ModelKey.of_stored` keeps a stored record's facts and drops the settings that ask for defaults."""
    today = ModelKey.of("lookup-tables", ModelRequest.of(ModelSpec(name="ngram")))
    stored = {**json.loads(today.record_json), "params": {"order": 4}}
    moved = ModelKey.of_stored("lookup-tables", stored)
    assert (moved.spec, moved.record_json, moved.model_hash, moved.dropped_defaults) == (
        today.spec,
        today.record_json,
        today.model_hash,
        True,
    )
    with pytest.raises(ValueError):
        ModelKey.of_stored("lookup-tables", {"name": "ngram", "params": {"order": [4]}})
