"""An explicit default is the default run: `--set depth=2` where the constructor's default depth is 2,
or `--set epochs=N` where the recipe says N on that suite, keys, labels and stores as the default;
a store made before that rule is moved to it when a runner opens it."""

from __future__ import annotations

import hashlib
import json
import sqlite3
from pathlib import Path

from structbench import registry
from structbench.data import freeze
from structbench.runs.context import ModelOnSuite
from structbench.runs.key import ModelKey
from structbench.runs.request import ModelRequest
from structbench.runs.runner import Runner
from structbench.specs import ModelSpec
from structbench.store import Store

SHALLOW = "tests.runs.test_normalise:ShallowComposer"


class ShallowComposer:
    """Copies its input; `depth` changes nothing but its key, as a real setting would change its answers."""

    name = "shallow-composer"
    protocols = ("transduction",)

    def __init__(self, depth: int = 2, rate: float = 0.5, tag: str = "") -> None:
        self.depth = depth

    def transduce(self, inputs: list[list[str]]) -> list[list[str]]:
        return [list(tokens) for tokens in inputs]


def keyed(name: str, suite: str = "lookup-tables", **params: object) -> ModelOnSuite:
    return ModelOnSuite.of(registry.suite(suite), ModelRequest.of(ModelSpec(name=name, params=params)))


def test_a_constructor_default_given_explicitly_is_the_default_run() -> None:
    default = keyed(SHALLOW)
    for explicit in ({"depth": 2}, {"depth": 2, "rate": 0.5}, {"rate": 0.5, "tag": ""}, {"depth": 2.0}):
        same = keyed(SHALLOW, **explicit)
        assert (same.key.model_hash, same.label, same.key.spec.params) == (
            default.key.model_hash,
            "shallow-composer",
            {},
        )
    deeper = keyed(SHALLOW, depth=3, rate=0.5)
    assert deeper.key.spec.params == {"depth": 3} and deeper.label == "shallow-composer[depth=3]"
    assert deeper.key.model_hash != default.key.model_hash
    assert keyed(SHALLOW, tag="x").key.spec.params == {"tag": "x"}


def test_a_recipe_value_given_explicitly_is_the_recipe_run_on_that_suite_only() -> None:
    factory = registry.model_factory("seq2seq-gru-attn")
    recipe = factory.configuration("scan-length")  # type: ignore[attr-defined]
    same = keyed("seq2seq-gru-attn", "scan-length", epochs=recipe["epochs"], budget="cpu-small", threads=1)
    assert same.key.model_hash == keyed("seq2seq-gru-attn", "scan-length").key.model_hash
    assert same.label == "seq2seq-gru-attn"
    other = recipe["epochs"] + 1
    changed = keyed("seq2seq-gru-attn", "scan-length", epochs=other)
    assert changed.key.spec.params == {"epochs": other} and changed.label == f"seq2seq-gru-attn[epochs={other}]"
    assert keyed("seq2seq-gru-attn", "scan-length", threads=2).label == "seq2seq-gru-attn[threads=2]"
    # a setting the others are invalid without stays, though the recipe has its value (tied embeddings)
    lm = ModelSpec(name="lstm-lm", params={"embedding": 128, "hidden": 16, "tie_embeddings": False})
    kept = ModelKey.of("agreement-attractors", ModelRequest.of(lm)).spec
    assert kept.params == {"hidden": 16, "tie_embeddings": False}


def test_a_stored_run_with_an_explicit_default_answers_the_default_after_opening(
    store_path: Path, runner: Runner
) -> None:
    """A run stored under the key an explicit default had before (params {"depth": 2}) is moved to
    the default's key and label when a runner opens the store, and answers the default run."""
    suite = registry.suite("lookup-tables")
    manifest = freeze.ensure_built(suite)
    default = keyed(SHALLOW)
    seed_run = default.seed_run(manifest, 0)
    old_record = json.dumps({**json.loads(default.key.record_json), "params": {"depth": 2}}, sort_keys=True)
    old_fields = {
        **seed_run.claim_fields,
        "model": "shallow-composer[depth=2]",
        "model_spec": old_record,
        "model_hash": hashlib.sha256(old_record.encode()).hexdigest(),
    }
    claim = runner.store.claim_run(old_fields)
    runner.store.finish_run(claim, {}, 0.0, 0.0, None)
    with Store(store_path) as reopened:
        again = Runner(reopened, progress=False)
        again.log = lambda message: None
        record = again.evaluate("lookup-tables", ModelRequest.of(ModelSpec(name=SHALLOW, params={"depth": 2})), [0])
        assert record.status == {"0": "done"} and record.model == "shallow-composer"
    with sqlite3.connect(store_path) as db:
        rows = db.execute("SELECT model, model_hash, id FROM runs").fetchall()
    assert rows == [("shallow-composer", default.key.model_hash, claim.run_id)]  # answered, not run again
