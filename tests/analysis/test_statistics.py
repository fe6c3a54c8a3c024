"""Statistics of training on the leaderboard: a model's optional `statistics()` (a language model's dev
perplexity, say) is stored with its run, shown as a column of its suite page, and no answer of it,
however wrong, costs a finished run."""

from __future__ import annotations

import json
from collections.abc import Mapping
from pathlib import Path

import pytest

from structbench.analysis.claims import CellRef, Claim, check_all, claim_cells
from structbench.analysis.statistics import Sample
from structbench.protocols import StatisticsReporter, checked_statistics
from structbench.reports.builders.boards import aggregate, boards
from structbench.reports.render import write_report
from structbench.runs.runner import Runner
from structbench.specs import ModelSpec, Split
from structbench.store import Store, run_statistics
from tests.store.test_store import run_fields, toy_results

SUITE = "lookup-tables"


class Perplexed:
    """Copies its input; reports a dev perplexity that depends on the seed, or misbehaves as `mode` says."""

    name = "perplexed"
    protocols = ("transduction",)

    def __init__(self, mode: str = "good") -> None:
        self.mode = mode
        self.seed = -1

    def fit(self, train: Split, dev: Split | None, *, seed: int) -> None:
        self.seed = seed

    def transduce(self, inputs: list[list[str]]) -> list[list[str]]:
        return [list(tokens) for tokens in inputs]

    def statistics(self) -> Mapping[str, float]:
        if self.mode == "raises":
            raise ValueError("no dev split")
        if self.mode == "junk":
            return {"dev_perplexity": float("nan"), "Dev Loss": 1.0, "epochs": True, "best_epoch": 3}
        return {"dev_perplexity": (80.0 if self.mode == "high" else 70.0) + self.seed}


def perplexed(mode: str = "good") -> ModelSpec:
    return ModelSpec(name="tests.analysis.test_statistics:Perplexed", params={} if mode == "good" else {"mode": mode})


def test_checked_statistics_keeps_finite_numbers_under_snake_case_names() -> None:
    assert checked_statistics({"dev_perplexity": 71.39, "best_epoch": 3}) == (
        {"dev_perplexity": 71.39, "best_epoch": 3.0},
        [],
    )
    valid, dropped = checked_statistics({"dev perplexity": 1.0, "loss": float("inf"), "done": True})
    assert valid == {} and len(dropped) == 3
    assert checked_statistics(None) == ({}, ["statistics() returned a NoneType, not a mapping"])
    many = {f"s{i}": float(i) for i in range(20)}
    assert len(checked_statistics(many)[0]) == 12  # a column each: the page stays readable
    assert isinstance(Perplexed(), StatisticsReporter)


def test_finish_run_keeps_statistics_beside_compute(store: Store) -> None:
    claim = store.claim_run(run_fields(environment='{"python": "3.11.9"}'))
    store.finish_run(claim, toy_results(), 1.0, 2.0, {"parameters": 10}, {"dev_perplexity": 75.17})
    environment = store.run_record(claim.run_id)["environment"]
    assert json.loads(environment) == {
        "python": "3.11.9",
        "compute": {"parameters": 10},
        "statistics": {"dev_perplexity": 75.17},
    }
    assert run_statistics(environment) == {"dev_perplexity": 75.17}
    assert run_statistics("not json") == {} and run_statistics('{"statistics": [1]}') == {}


def test_a_models_statistics_are_stored_averaged_over_seeds_and_shown_on_its_suite_page(
    runner: Runner, tmp_path: Path
) -> None:
    runner.evaluate(SUITE, perplexed(), [0, 1, 2])
    runs = runner.store.runs()
    assert [run_statistics(e) for e in runs["environment"]] == [{"dev_perplexity": 70.0 + s} for s in range(3)]
    (board,) = boards(runner.store, aggregate(runner.store))
    assert board.statistic_names == ["dev_perplexity"]
    assert board.statistic_sample("perplexed", "dev_perplexity") == Sample({0: 70.0, 1: 71.0, 2: 72.0})
    write_report(runner.store, tmp_path / "site", suites=None, models=None, title="t")
    page = next((tmp_path / "site" / "suites").glob("lookup-tables*.html")).read_text()
    assert ">dev perplexity</th>" in page and '<td data-value="71.0">71</td>' in page


@pytest.mark.parametrize("mode", ["raises", "junk"])
def test_bad_statistics_are_logged_and_the_run_is_stored(runner: Runner, mode: str) -> None:
    messages: list[str] = []
    runner.log = messages.append
    record = runner.evaluate(SUITE, perplexed(mode), [0])
    assert record.status == {"0": "done"}
    stored = run_statistics(runner.store.runs()["environment"].iloc[0])
    if mode == "raises":
        assert stored == {} and any("statistics() raised ValueError: no dev split" in m for m in messages)
    else:
        assert stored == {"best_epoch": 3.0}
        assert any("statistics() entries left out" in m and "Dev Loss" in m for m in messages)


def test_a_claim_on_a_training_statistic_compares_its_means_over_seeds(runner: Runner) -> None:
    runner.evaluate(SUITE, perplexed(), [0, 1, 2])  # dev perplexity 70, 71, 72
    runner.evaluate(SUITE, perplexed("high"), [0, 1, 2])  # 80, 81, 82
    claim = Claim(
        id="lower-perplexity", statement="perplexed reaches the lower dev perplexity", source="a thesis",
        suite=SUITE, metric="dev_perplexity", lower=CellRef(model="perplexed", split="training"),
        than=[CellRef(model='perplexed[mode="high"]', split="training")],
    )  # fmt: skip
    (verdict,) = check_all(claim_cells(aggregate(runner.store), runner.store.runs()), [claim])
    assert verdict.status == "reproduced"
    assert verdict.evidence.startswith("perplexed on lookup-tables/training: 71.00 [68.52, 73.48] (t over 3 seeds) vs ")
    flipped = claim.model_copy(update={"lower": claim.than[0], "than": [claim.lower]})
    (against,) = check_all(claim_cells(aggregate(runner.store), runner.store.runs()), [flipped])
    assert against.status == "contradicted" and against.comparisons[0].test == "Welch's t-test over seeds"
