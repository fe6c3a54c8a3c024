"""The runner keeps every result: crashes are recorded, interrupted runs resume, mismatches are n/a."""

from __future__ import annotations

import json
from typing import ClassVar

import pytest

from structbench import __version__, registry
from structbench.data import freeze
from structbench.reports.builders.boards import aggregate, boards
from structbench.runs.key import RunKey
from structbench.runs.request import ModelRequest
from structbench.runs.runner import Runner
from structbench.specs import ModelSpec
from tests.store.test_store import claim_and_die
from tests.support import helpers

CONSTRUCTED: list[int] = []


class CountingOracle:
    """The lookup solver, counting how often it is built (one construction per seed that runs)."""

    name = "counting-oracle"
    protocols = ("transduction",)

    def __init__(self) -> None:
        CONSTRUCTED.append(1)
        self.solver: object = None

    def use_oracle(self, solver: object) -> None:
        self.solver = solver

    def transduce(self, inputs: list[list[str]]) -> list[list[str]]:
        return self.solver.transduce(inputs)  # type: ignore[attr-defined, no-any-return]


class ConfiguredOracle(CountingOracle):
    """The lookup solver with a configuration a test can change, as an edited recipe file would."""

    recipe: ClassVar[dict[str, object]] = {"epochs": 1}

    @classmethod
    def configuration(cls, suite: str) -> dict[str, object]:
        return {"suite": suite, **cls.recipe}


def statuses(runner: Runner) -> dict[int, str]:
    runs = runner.store.runs()
    return dict(zip(runs["seed"], runs["status"], strict=True))


def by_seed(runner: Runner, seed: int, column: str) -> object:
    return runner.store.runs().set_index("seed").loc[seed, column]


def test_a_crashed_fit_is_a_failed_run_and_the_next_seed_still_runs(runner: Runner) -> None:
    record = runner.evaluate(
        "lookup-tables", ModelSpec(name="tests.support.helpers:CrashOnSeed", params={"crash_seed": 0}), [0, 1]
    )
    assert record.status == {"0": "failed", "1": "done"}
    assert record.errors == {"0": "RuntimeError: exploding gradient at seed 0"}
    assert statuses(runner) == {0: "failed", 1: "done"}
    error = by_seed(runner, 0, "error")
    assert isinstance(error, str) and "RuntimeError: exploding gradient at seed 0" in error
    assert "Traceback" in error  # the traceback tail is stored for debugging
    assert runner.store.run_status(int(by_seed(runner, 1, "id"))) == ("done", None)  # type: ignore[call-overload]
    # only the finished seed is scored
    assert record.scores["heldout_tables"]["sequence_accuracy"].n_seeds == 1
    assert set(runner.store.scores()["seed"]) == {1}
    failed_id = int(by_seed(runner, 0, "id"))  # type: ignore[call-overload]
    assert runner.store.predictions(failed_id).empty


def test_a_failed_run_is_tried_again_next_time(runner: Runner, monkeypatch: pytest.MonkeyPatch) -> None:
    model = ModelSpec(name="tests.support.helpers:CrashOnSeed", params={"crash_seed": 0})
    assert runner.evaluate("lookup-tables", model, [0]).status == {"0": "failed"}
    monkeypatch.setattr(helpers.CrashOnSeed, "fit", lambda self, train, dev, *, seed: None)
    record = runner.evaluate("lookup-tables", model, [0])
    assert record.status == {"0": "done"} and record.errors == {}
    assert statuses(runner) == {0: "done"}
    assert len(runner.store.runs()) == 1


def test_an_interrupted_run_is_redone_and_finished_ones_are_kept(
    runner: Runner, monkeypatch: pytest.MonkeyPatch
) -> None:
    model = ModelSpec(name="tests.support.helpers:InterruptOnSeed", params={"interrupt_seed": 1})
    with pytest.raises(KeyboardInterrupt):
        runner.evaluate("lookup-tables", model, [0, 1, 2])
    assert statuses(runner) == {0: "done", 1: "interrupted"}  # seed 2 never started
    seed0 = runner.store.runs().set_index("seed").loc[0, ["id", "started_at", "finished_at"]].tolist()
    # the same cell again, this time without the Ctrl-C
    monkeypatch.setattr(helpers.InterruptOnSeed, "transduce", lambda self, inputs: [list(t) for t in inputs])
    record = runner.evaluate("lookup-tables", model, [0, 1, 2])
    assert record.status == {"0": "done", "1": "done", "2": "done"}
    assert statuses(runner) == {0: "done", 1: "done", 2: "done"}
    assert len(runner.store.runs()) == 3  # the interrupted row was replaced, not duplicated
    assert runner.store.runs().set_index("seed").loc[0, ["id", "started_at", "finished_at"]].tolist() == seed0
    assert record.scores["heldout_tables"]["sequence_accuracy"].n_seeds == 3


def test_a_run_left_running_by_a_killed_process_is_redone_alone(runner: Runner) -> None:
    model = ModelSpec(name="tests.runs.test_runner:CountingOracle")
    CONSTRUCTED.clear()
    runner.evaluate("lookup-tables", model, [0, 1])
    assert len(CONSTRUCTED) == 2
    suite = registry.suite("lookup-tables")
    manifest = freeze.ensure_built(suite)
    key = RunKey.of(suite.spec, manifest.suite_hash, ModelRequest.of(model), 2)  # its code's fingerprint included
    claim_and_die(  # what a process killed while evaluating seed 2 leaves behind: `running`, its owner dead
        runner.store.path,
        {
            **key.stored_fields(), "model": model.label, "draw": 2,
            "harness_version": __version__, "git_commit": None, "environment": "{}",
        },
    )  # fmt: skip
    assert statuses(runner) == {0: "done", 1: "done", 2: "interrupted"}
    stale_id = by_seed(runner, 2, "id")
    stale_started = by_seed(runner, 2, "started_at")
    record = runner.evaluate("lookup-tables", model, [0, 1, 2])
    assert len(CONSTRUCTED) == 3, "only the unfinished seed should run again"
    assert record.status == {"0": "done", "1": "done", "2": "done"}
    assert statuses(runner) == {0: "done", 1: "done", 2: "done"}
    assert by_seed(runner, 2, "started_at") > stale_started  # type: ignore[operator]
    assert by_seed(runner, 2, "id") == stale_id  # taken over in place, never deleted
    assert record.scores["new_compositions"]["sequence_accuracy"].per_seed == [1.0, 1.0, 1.0]


def test_a_model_without_the_suites_protocol_is_not_applicable(runner: Runner) -> None:
    model = ModelSpec(name="tests.support.helpers:ClassifierOnly")
    record = runner.evaluate("lookup-tables", model, [0, 1])
    assert record.status == {"0": "n/a", "1": "n/a"}
    assert "transduction" in record.errors["0"]
    tests = [s.name for s in registry.suite("lookup-tables").spec.splits_with_role("test")]
    assert record.scores == {name: {} for name in tests}
    assert statuses(runner) == {0: "n/a", 1: "n/a"}
    assert "does not speak the transduction protocol" in str(by_seed(runner, 0, "error"))
    # asked again, the store answers: still n/a, nothing new recorded
    ids = list(runner.store.runs()["id"])
    assert runner.evaluate("lookup-tables", model, [0, 1]).status == {"0": "n/a", "1": "n/a"}
    assert list(runner.store.runs()["id"]) == ids


def test_every_prediction_is_stored_with_its_correctness(runner: Runner) -> None:
    suite = registry.suite("lookup-tables-mt")
    runner.evaluate("lookup-tables-mt", ModelSpec(name="oracle"), [3])
    run_id = int(runner.store.runs()["id"].iloc[0])
    assert runner.store.runs()["draw"].iloc[0] == 3
    predictions = runner.store.predictions(run_id)
    sizes = predictions.groupby("split").size().to_dict()
    assert sizes == {s.name: s.size for s in suite.spec.splits_with_role("test")}
    assert sizes["heldout_tables"] == 192 and sizes["new_compositions"] == 32
    assert predictions["correct"].eq(1).all()
    # the stored prediction is the gold target, under the example's id
    manifest = freeze.ensure_built(suite)
    gold = {e.id: e.target for e in freeze.load_split(suite, manifest, 3, "heldout_compositions").examples}
    stored = predictions[predictions["split"] == "heldout_compositions"]
    assert {i: json.loads(p) for i, p in zip(stored["example_id"], stored["prediction"], strict=True)} == gold


def test_wrong_predictions_are_stored_as_incorrect(runner: Runner) -> None:
    runner.evaluate("lookup-tables", ModelSpec(name="copy"), [0])
    predictions = runner.store.predictions(int(runner.store.runs()["id"].iloc[0]))
    assert len(predictions) == sum(s.size or 0 for s in registry.suite("lookup-tables").spec.splits_with_role("test"))
    assert predictions["correct"].eq(0).all()


def test_seeds_cycle_through_the_draws(runner: Runner) -> None:
    runner.evaluate("lookup-tables", ModelSpec(name="copy"), [0, 4, 5, 7])
    runs = runner.store.runs()
    assert dict(zip(runs["seed"], runs["draw"], strict=True)) == {0: 0, 4: 4, 5: 0, 7: 2}


def test_a_changed_configuration_is_run_again_and_only_the_newest_is_reported(
    runner: Runner, monkeypatch: pytest.MonkeyPatch
) -> None:
    spec = ModelSpec(name="tests.runs.test_runner:ConfiguredOracle")
    runner.evaluate("lookup-tables", spec, [0, 1])
    CONSTRUCTED.clear()
    runner.evaluate("lookup-tables", spec, [0, 1])
    assert CONSTRUCTED == []  # same configuration: answered from the store
    monkeypatch.setattr(ConfiguredOracle, "recipe", {"epochs": 2})
    record = runner.evaluate("lookup-tables", spec, [0])
    assert len(CONSTRUCTED) == 1  # the recipe changed: the stored runs no longer answer for it
    assert record.scores["heldout_tables"]["sequence_accuracy"].n_seeds == 1
    runs = runner.store.runs()
    assert len(runs) == 3  # the runs of the old configuration are kept
    assert json.loads(runs.iloc[-1]["model_spec"])["configuration"] == {"suite": "lookup-tables", "epochs": 2}
    results = aggregate(runner.store)
    cell = results[
        (results.split == "heldout_tables") & (results.metric == "sequence_accuracy") & (results.breakdown == "")
    ]
    assert cell["n_seeds"].tolist() == [1]  # not the three seeds of two configurations mixed
    (board,) = boards(runner.store, results)
    assert board.status == {"ConfiguredOracle": "1 done"}  # the class name: its `name` is its parent's
