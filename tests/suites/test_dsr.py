"""Distracted Sequence Recall: trials as Monner defines them, and its headline statistic, training
trials to criterion, declared lower-is-better, shown as its own leaderboard column and compared
between models by Welch's t-test."""

from __future__ import annotations

import json
import random
import re
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import pytest
from scipy import stats

from structbench import registry
from structbench.analysis.claims import CellRef, Claim, check_all, claim_cells
from structbench.analysis.significance import p_shown
from structbench.analysis.statistics import compare_statistic
from structbench.cli import main
from structbench.convergence import Convergence, Criterion
from structbench.data import freeze
from structbench.errors import UserError
from structbench.reports.builders.boards import aggregate, boards
from structbench.reports.render import write_report
from structbench.runs.arguments import parse_seeds
from structbench.runs.runner import Runner
from structbench.specs import ModelSpec, Split
from structbench.suites.dsr import DISTRACTORS, PROMPTS, TARGETS, first_target_bin, recall, sample_trial

SUITE = "dsr"
MONNER = Criterion(statistic="dev_strict_accuracy", at_least=0.95)
TRIALS = {"quick": [1000.0, 1400.0, 900.0, 1300.0], "slow": [4000.0, 5200.0, 4700.0, 4100.0]}


class Recaller:
    """Answers every trial right; reports the trials to criterion `TRIALS[speed]` holds for its seed,
    or, on seed `stuck` (a criterion never reached), none: only the `cap` trials it trained, if given."""

    name = "recaller"
    protocols = ("transduction",)

    def __init__(self, speed: str = "quick", stuck: int = -1, cap: int = 0) -> None:
        self.speed, self.stuck, self.cap, self.seed = speed, stuck, cap, -1

    def fit(self, train: Split, dev: Split | None, *, seed: int) -> None:
        self.seed = seed

    def transduce(self, inputs: list[list[str]]) -> list[list[str]]:
        return [recall(tokens) for tokens in inputs]

    def convergence(self) -> dict[str, Any]:
        """Monner's criterion, as LSTM-g reports it: reached on every seed but `stuck`."""
        reached = self.seed != self.stuck
        judged = Convergence(criterion=MONNER, reached=reached, value=0.97 if reached else 0.6, epochs=1, seconds=1.0)
        return judged.model_dump()

    def statistics(self) -> Mapping[str, float]:
        if self.seed == self.stuck:
            return {"criterion_reached": 0.0} | ({"trials_trained": float(self.cap)} if self.cap else {})
        return {"trials_to_criterion": TRIALS[self.speed][self.seed], "criterion_reached": 1.0}


def recaller(**params: str | int) -> ModelSpec:
    return ModelSpec(name="tests.suites.test_dsr:Recaller", params=dict(params))


def test_a_trial_is_two_targets_among_twenty_distractors_then_the_two_prompts() -> None:
    rng = random.Random(0)
    for _ in range(200):
        tokens, targets = sample_trial(rng)
        assert len(tokens) == 24 and tokens[22:] == list(PROMPTS)
        assert [t for t in tokens[:22] if t in TARGETS] == targets
        assert sum(t in DISTRACTORS for t in tokens[:22]) == 20
        assert recall(tokens) == targets
    with pytest.raises(ValueError, match="prompts"):
        recall(["t1", "t2", "d1"])
    with pytest.raises(ValueError, match="exactly two"):
        recall(["t1", "d1", "p1", "p2"])
    assert [first_target_bin(p) for p in (1, 5, 6, 15, 21)] == ["01-05", "01-05", "06-10", "11-15", "16-21"]


def test_the_built_splits_are_disjoint_and_the_oracle_recalls_every_trial(runner: Runner) -> None:
    suite = registry.suite(SUITE)
    manifest = freeze.ensure_built(suite)
    splits = {name: freeze.load_split(suite, manifest, 0, name) for name in ("train", "dev", "test")}
    sizes = {name: len(split) for name, split in splits.items()}
    assert sizes == {"train": 50_000, "dev": 1_000, "test": 1_000}
    seen = [{tuple(e.input) for e in split.examples} for split in splits.values()]
    assert sum(map(len, seen)) == 52_000 == len(set().union(*seen))
    record = runner.evaluate(SUITE, ModelSpec(name="oracle"), [0])
    assert record.scores["test"]["sequence_accuracy"].mean == 1.0
    repeated = sum(bool(e.meta["repeated_target"]) for e in splits["test"].examples)
    assert 200 < repeated < 300  # two independent targets are the same symbol a quarter of the time
    assert suite.spec.statistics[0].name == "trials_to_criterion"
    assert suite.spec.statistics[0].higher_is_better is False


def test_trials_to_criterion_has_its_own_lower_is_better_column_with_marks(runner: Runner, tmp_path: Path) -> None:
    runner.evaluate(SUITE, recaller(), [0, 1, 2, 3])
    runner.evaluate(SUITE, recaller(speed="slow", stuck=3), [0, 1, 2, 3])
    (board,) = boards(runner.store, aggregate(runner.store))
    assert board.statistic_names == ["trials_to_criterion", "criterion_reached"]
    quick, slow = "recaller", 'recaller[speed="slow",stuck=3]'
    assert board.compute[slow].statistic_values["trials_to_criterion"] == [4000.0, 5200.0, 4700.0]
    assert board.statistic_marks == {"trials_to_criterion": {quick: "best"}}
    write_report(runner.store, tmp_path / "site", suites=None, models=None, title="t")
    page = (tmp_path / "site" / "suites" / "dsr@1.0.0.html").read_text()
    assert 'trials to criterion<span class="status">lower is better</span></th>' in page
    assert '<td class="best" data-value="1150.0">1150 <span class="tag rank">best</span></td>' in page
    assert '<td data-value="4633.333333333333">4633<span class="status">3 of 4 seeds</span></td>' in page


def test_compare_by_statistic_is_welchs_test_over_the_seeds_that_report_it(runner: Runner) -> None:
    runner.evaluate(SUITE, recaller(), [0, 1, 2, 3])
    runner.evaluate(SUITE, recaller(speed="slow", stuck=3), [0, 1, 2, 3])
    slow = 'recaller[speed="slow",stuck=3]'
    result = compare_statistic(runner.store, registry.suite(SUITE), "recaller", slow, "trials_to_criterion")
    expected = stats.ttest_ind(TRIALS["quick"], TRIALS["slow"][:3], equal_var=False)
    assert result.result.test == "welch" and result.result.p_value == pytest.approx(expected.pvalue)
    assert result.result.df == pytest.approx(expected.df)
    assert result.result.difference == pytest.approx(1150 - 4633.333333)
    assert result.b.without == [3] and result.verdict == "recaller better"
    with pytest.raises(UserError, match=re.escape("no runs of model 'nobody' on dsr@1.0.0")):
        compare_statistic(runner.store, registry.suite(SUITE), "recaller", "nobody", "trials_to_criterion")


def test_a_claim_of_fewer_trials_is_checked_by_welchs_test(runner: Runner) -> None:
    runner.evaluate(SUITE, recaller(), [0, 1, 2, 3])
    runner.evaluate(SUITE, recaller(speed="slow"), [0, 1, 2, 3])
    fewer = Claim(
        id="fewer-trials", statement="recaller needs fewer trials", source="a thesis", suite=SUITE,
        metric="trials_to_criterion", lower=CellRef(model="recaller", split="training"),
        than=[CellRef(model='recaller[speed="slow"]', split="training")],
    )  # fmt: skip
    (verdict,) = check_all(claim_cells(aggregate(runner.store), runner.store.runs()), [fewer])
    p = stats.ttest_ind(TRIALS["quick"], TRIALS["slow"], equal_var=False).pvalue
    assert verdict.status == "reproduced" and verdict.evidence.endswith(f", p {p_shown(p)}")
    assert verdict.comparisons[0].test == "Welch's t-test over seeds" and verdict.comparisons[0].p_value == p


def test_compare_statistic_on_the_command_line(runner: Runner, capsys: pytest.CaptureFixture[str]) -> None:
    runner.evaluate(SUITE, recaller(), [0, 1, 2, 3])
    runner.evaluate(SUITE, recaller(speed="slow"), [0, 1, 2, 3])
    slow = 'recaller[speed="slow"]'
    store = str(runner.store.path)
    args = ["compare", "--suite", SUITE, "--models", f"{slow},recaller", "--statistic", "trials_to_criterion"]
    assert main([*args, "--store", store, "--json"]) == 0
    printed = json.loads(capsys.readouterr().out)
    assert printed["verdict"] == "recaller better" and printed["higher_is_better"] is False
    assert printed["mean_a"] == 4500.0 and printed["ci_low"] > 0 and printed["test"] == "welch"


def test_a_seed_that_never_reached_the_criterion_is_censored_at_its_bound(runner: Runner, tmp_path: Path) -> None:
    """Leaving out a seed that ran out of trials flatters its model: it counts as right-censored at
    the trials it trained, in the logrank test, the board's restricted mean and the claims."""
    runner.evaluate(SUITE, recaller(), [0, 1, 2, 3])
    runner.evaluate(SUITE, recaller(speed="slow", stuck=3, cap=6000), [0, 1, 2, 3])
    slow = 'recaller[cap=6000,speed="slow",stuck=3]'
    result = compare_statistic(runner.store, registry.suite(SUITE), "recaller", slow, "trials_to_criterion")
    expected = stats.logrank(
        stats.CensoredData(uncensored=TRIALS["quick"]),
        stats.CensoredData(uncensored=TRIALS["slow"][:3], right=[6000.0]),
    )
    assert result.result.test == "logrank" and result.result.p_value == pytest.approx(expected.pvalue)
    assert result.b.censored == {3: 6000.0} and result.b.values == {0: 4000.0, 1: 5200.0, 2: 4700.0}
    assert result.b.mean == 4975.0 and result.verdict == "recaller better"  # (4000 + 5200 + 4700 + 6000) / 4
    (board,) = boards(runner.store, aggregate(runner.store))
    assert board.statistic_marks == {"trials_to_criterion": {"recaller": "best"}}
    assert set(board.under_trained) == {slow}  # its test scores are flagged; its trials are a censored measurement
    write_report(runner.store, tmp_path / "site", suites=None, models=None, title="t")
    page = (tmp_path / "site" / "suites" / "dsr@1.0.0.html").read_text()
    assert '<td data-value="4975.0">≥ 4975<span class="status">3 of 4 seeds reached it</span></td>' in page
    fewer = Claim(
        id="fewer-trials", statement="recaller needs fewer trials", source="a thesis", suite=SUITE,
        metric="trials_to_criterion", lower=CellRef(model="recaller", split="training"),
        than=[CellRef(model=slow, split="training")],
    )  # fmt: skip
    (verdict,) = check_all(claim_cells(aggregate(runner.store), runner.store.runs()), [fewer])
    assert verdict.status == "reproduced", verdict.evidence  # decided: not undecided (under-trained)
    assert "≥4975.00 (3 of 4 seeds reached it" in verdict.evidence
    assert verdict.evidence.endswith(
        f"logrank test over seeds (censored seeds): z {expected.statistic:.3g}, p {p_shown(expected.pvalue)}"
    )


def test_seeds_take_ranges() -> None:
    assert parse_seeds("0-3,7") == [0, 1, 2, 3, 7]
    with pytest.raises(UserError, match="each once"):
        parse_seeds("0-2,1")
    with pytest.raises(UserError, match="--seeds 0-9"):
        parse_seeds("0-x")
    with pytest.raises(UserError, match="more than 10000 seeds"):
        parse_seeds("0-10000000000")
