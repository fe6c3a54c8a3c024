"""The runner keeps every result: crashes are recorded, interrupted runs resume, mismatches are n/a."""

from __future__ import annotations

import pytest

from harness.runner import Runner
from harness.specs import ModelSpec
from tests import helpers


def statuses(runner: Runner) -> dict[int, str]:
    runs = runner.store.runs()
    return dict(zip(runs["seed"], runs["status"], strict=True))


def test_a_crashed_fit_is_a_failed_run_and_the_next_seed_still_runs(runner: Runner) -> None:
    record = runner.evaluate(
        "lookup-tables", ModelSpec(name="tests.helpers:CrashOnSeed", params={"crash_seed": 0}), [0, 1]
    )
    assert record.status == {"0": "failed", "1": "done"}
    assert "exploding gradient at seed 0" in record.errors["0"]
    assert statuses(runner) == {0: "failed", 1: "done"}
    error = runner.store.runs().set_index("seed").loc[0, "error"]
    assert "RuntimeError: exploding gradient at seed 0" in error  # the traceback tail is stored
    assert record.scores["heldout_tables"]["sequence_accuracy"].n_seeds == 1


def test_an_interrupted_run_is_redone_and_finished_ones_are_kept(
    runner: Runner, monkeypatch: pytest.MonkeyPatch
) -> None:
    model = ModelSpec(name="tests.helpers:InterruptOnSeed", params={"interrupt_seed": 1})
    with pytest.raises(KeyboardInterrupt):
        runner.evaluate("lookup-tables", model, [0, 1, 2])
    assert statuses(runner) == {0: "done", 1: "running"}
    finished_at = runner.store.runs().set_index("seed").loc[0, "finished_at"]
    # the same cell again, this time without the Ctrl-C
    monkeypatch.setattr(helpers.InterruptOnSeed, "transduce", lambda self, inputs: [list(t) for t in inputs])
    record = runner.evaluate("lookup-tables", model, [0, 1, 2])
    assert record.status == {"0": "done", "1": "done", "2": "done"}
    assert statuses(runner) == {0: "done", 1: "done", 2: "done"}
    assert runner.store.runs().set_index("seed").loc[0, "finished_at"] == finished_at, "seed 0 was run again"


def test_a_model_without_the_suites_protocol_is_not_applicable(runner: Runner) -> None:
    record = runner.evaluate("lookup-tables", ModelSpec(name="tests.helpers:ClassifierOnly"), [0])
    assert record.status == {"0": "n/a"}
    assert record.scores == {"heldout_inputs": {}, "heldout_compositions": {}, "heldout_tables": {},
                             "new_compositions": {}, "longer_3": {}, "longer_4": {}, "longer_5": {}}  # fmt: skip


def test_every_prediction_is_stored_with_its_correctness(runner: Runner) -> None:
    runner.evaluate("lookup-tables-mt", ModelSpec(name="oracle"), [3])
    run_id = int(runner.store.runs()["id"].iloc[0])
    predictions = runner.store.predictions(run_id)
    sizes = predictions.groupby("split").size().to_dict()
    assert sizes == {"heldout_inputs": 40, "heldout_compositions": 64, "heldout_tables": 192, "new_compositions": 32,
                     "longer_compositions_seen": 544, "longer_compositions_incremental": 1084,
                     "longer_compositions_new": 32}  # fmt: skip
    assert predictions["correct"].eq(1).all()
    assert runner.store.runs()["draw"].iloc[0] == 3


def test_seeds_cycle_through_the_draws(runner: Runner) -> None:
    runner.evaluate("lookup-tables", ModelSpec(name="copy"), [0, 4, 5, 7])
    runs = runner.store.runs()
    assert dict(zip(runs["seed"], runs["draw"], strict=True)) == {0: 0, 4: 4, 5: 0, 7: 2}
