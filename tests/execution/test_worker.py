"""The worker side of a run (`structbench.execution.worker`): an order carries a run to a worker
process and its JSON result carries the run's results back without changing a digit; a worker whose
install differs from the driver's refuses the run in one sentence; a model's crash is a failed result."""

from __future__ import annotations

import json
import math

import pytest

from structbench import __version__, registry
from structbench.data import freeze
from structbench.execution.worker import WorkOrder, execute, outcome_of, result_of
from structbench.runs.attempt import Ended, attempt
from structbench.runs.context import ModelOnSuite
from structbench.runs.request import ModelRequest
from structbench.specs import ModelSpec

HOSTILE = "tests.support.sweep_models:Hostile"


def order_for(suite_id: str, spec: ModelSpec, seed: int, **changes: object) -> WorkOrder:
    """The order a driver would send for `spec` on the suite, with `changes` made to it."""
    suite = registry.suite(suite_id)
    request = ModelRequest.of(spec)
    manifest = freeze.ensure_built(suite)
    fields = {
        "key": 7,
        "suite": suite_id,
        "suite_hash": manifest.suite_hash,
        "model": spec,
        "model_hash": ModelOnSuite.of(suite, request).key.model_hash,
        "seed": seed,
        "harness_version": __version__,
    }
    return WorkOrder.model_validate({**fields, **changes})


def test_a_workers_json_result_stores_exactly_what_the_runner_would() -> None:
    suite = registry.suite("lookup-tables")
    manifest = freeze.ensure_built(suite)
    request = ModelRequest.of(ModelSpec(name="random"))
    direct = attempt(ModelOnSuite.of(suite, request).seed_run(manifest, 3), log=lambda _: None, progress=False)
    travelled = outcome_of(type(result_of(7, direct)).model_validate_json(result_of(7, direct).model_dump_json()))
    assert not isinstance(direct, Ended) and not isinstance(travelled, Ended)
    assert list(travelled.results) == list(direct.results)
    for split, (scores, ids, predictions) in direct.results.items():
        t_scores, t_ids, t_predictions = travelled.results[split]
        assert list(t_ids) == list(ids) and json.dumps(t_predictions) == json.dumps(predictions)
        assert t_scores.correct == scores.correct
        for mine, theirs in zip(scores.scores, t_scores.scores, strict=True):
            assert (mine.metric, mine.n, mine.breakdown, mine.level, mine.proportion) == (
                theirs.metric, theirs.n, theirs.breakdown, theirs.level, theirs.proportion,
            )  # fmt: skip
            assert mine.value == theirs.value or (math.isnan(mine.value) and math.isnan(theirs.value))
    # and the worker makes the very same run from its order
    result = execute(order_for("lookup-tables", ModelSpec(name="random"), 3))
    assert result.status == "done" and result.key == 7
    assert [split.predictions for split in result.splits] == [list(p) for _, _, p in direct.results.values()]


@pytest.mark.parametrize(
    ("changes", "reason"),
    [
        ({"suite_hash": "0" * 64}, "data has hash"),
        ({"model_hash": "0" * 64}, "resolves to another configuration on the worker"),
        ({"harness_version": "0.0.1"}, "install the same structbench on every worker"),
        ({"model": ModelSpec(name="copy", params={"nonsense": 1})}, "has no setting 'nonsense'"),
    ],
)
def test_a_worker_unlike_the_driver_refuses_the_run_in_one_sentence(changes: dict[str, object], reason: str) -> None:
    result = execute(order_for("lookup-tables", ModelSpec(name="copy"), 0, **changes))
    assert result.status == "refused" and result.error is not None and reason in result.error
    assert result.splits == []


def test_a_model_crash_in_a_worker_is_a_failed_result_with_its_traceback() -> None:
    model = ModelSpec(name=HOSTILE, params={"behaviour": "crash"})
    result = execute(order_for("lookup-tables", model, 0))
    assert result.status == "failed" and result.message == "RuntimeError: exploding gradient at seed 0"
    assert result.error is not None and "Traceback" in result.error
    assert execute(order_for("lookup-tables", model, 1)).status == "done"  # the next seed is fine
