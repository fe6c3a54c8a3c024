"""The one cell function: the numbers of `run --json` and of the leaderboard come from `cells`."""

from __future__ import annotations

import math
import random
import re
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from scipy import stats

from structbench.cells import CELL_KEYS, ScoreColumns, as_stats, cell, cells, first_impossible, value_problem
from structbench.reports.render import write_report
from structbench.runs.runner import Runner
from structbench.specs import ModelSpec
from tests.support.helpers import read_results


def _scores(per_cell: list[list[float | None]], items: int = 10, proportion: bool = False) -> pd.DataFrame:
    rows = []
    for index, values in enumerate(per_cell):
        for seed, value in enumerate(values):
            key = {k: "x" for k in CELL_KEYS} | {"model": f"m{index:05d}", "breakdown": "", "level": ""}
            rows.append({**key, "seed": seed, "value": value, "n": items, "proportion": proportion})
    return pd.DataFrame(rows)


def test_seeds_that_differ_get_scipys_student_t_interval() -> None:
    rng = np.random.default_rng(7)
    per_cell: list[list[float | None]] = [list(rng.random(n)) for n in (2, 3, 5, 10) for _ in range(3)]
    frame = cells(_scores(per_cell)).set_index("model")
    for index, values in enumerate(per_cell):
        array = np.asarray(values, dtype=float)
        row = frame.loc[f"m{index:05d}"]
        expected = stats.t.interval(0.95, len(array) - 1, loc=array.mean(), scale=stats.sem(array))
        assert (row["ci_low"], row["ci_high"]) == pytest.approx(expected, rel=1e-12)
        assert row["interval"] == f"t over {len(array)} seeds"
        assert row["per_seed"] == values and row["n_seeds"] == len(array)
        assert (row["mean"], row["std"]) == pytest.approx((array.mean(), array.std(ddof=1)), rel=1e-12)
        assert (row["min"], row["max"]) == (array.min(), array.max())


def test_one_seed_of_a_proportion_gets_scipys_wilson_interval_over_its_items() -> None:
    counts = [0, 1, 7, 250, 499, 500]
    frame = cells(_scores([[k / 500] for k in counts], items=500, proportion=True)).set_index("model")
    for index, k in enumerate(counts):
        row = frame.loc[f"m{index:05d}"]
        expected = stats.binomtest(k, 500).proportion_ci(confidence_level=0.95, method="wilson")
        assert (row["ci_low"], row["ci_high"]) == pytest.approx((expected.low, expected.high), rel=1e-9, abs=1e-15)
        assert row["interval"] == "Wilson over 500 items"


def test_a_deterministic_model_is_not_certain_and_a_graded_metric_claims_nothing() -> None:
    agreeing = cell([0.8, 0.8, 0.8], items=50, proportion=True)
    assert agreeing.interval == "Wilson over 50 items" and agreeing.ci_low is not None
    assert agreeing.ci_low < 0.8 < agreeing.ci_high  # seeds that agree say nothing about another test set
    graded = cell([0.8], items=50, proportion=False)
    assert (graded.interval, graded.ci_low, graded.ci_high, graded.std) == ("none", None, None, None)
    perfect = cell([1.0, 1.0], items=10, proportion=True)
    assert perfect.ci_high == 1.0 and perfect.ci_low == pytest.approx(0.7225, abs=1e-4)


def test_a_proportions_t_interval_stays_within_zero_and_one() -> None:
    near_one = cell([1.0, 0.9, 1.0], items=10, proportion=True)
    assert near_one.interval == "t over 3 seeds" and near_one.ci_high == 1.0


@pytest.mark.parametrize("seeds", [3, 5, 10])
def test_the_t_interval_covers_the_true_mean_95_percent_of_the_time(seeds: int) -> None:
    """The interval over seeds, simulated: 4,000 cells of normal per-seed values (the bootstrap it
    replaced covered about 77% at 3 seeds). 4,000 draws put 93-97% five standard errors apart."""
    rng = np.random.default_rng(seeds)
    values = rng.normal(0.6, 0.05, size=(4000, seeds))
    frame = cells(_scores(values.tolist()))
    covered = (frame["ci_low"] <= 0.6) & (frame["ci_high"] >= 0.6)
    assert 0.93 <= covered.mean() <= 0.97


@pytest.mark.parametrize(("items", "p"), [(100, 0.3), (500, 0.8), (2000, 0.05)])
def test_the_wilson_interval_covers_the_true_proportion_95_percent_of_the_time(items: int, p: float) -> None:
    rng = np.random.default_rng(items)
    values = rng.binomial(items, p, size=4000) / items
    frame = cells(_scores([[v] for v in values.tolist()], items=items, proportion=True))
    covered = (frame["ci_low"] <= p) & (p <= frame["ci_high"])
    assert 0.93 <= covered.mean() <= 0.97


def test_undefined_seed_values_do_not_count() -> None:
    frame = cells(_scores([[0.2, None, 0.4]]))
    assert frame["n_seeds"].tolist() == [2]
    assert frame["per_seed"].tolist() == [[0.2, 0.4]]


def test_per_seed_values_come_in_seed_order() -> None:
    shuffled = _scores([[0.1, 0.2, 0.3]]).sample(frac=1.0, random_state=3)
    assert cells(shuffled)["per_seed"].tolist() == [[0.1, 0.2, 0.3]]


def test_run_json_and_the_report_agree_on_every_cell(runner: Runner, tmp_path: Path) -> None:
    """Seeds asked in two batches: the second record covers all three, as the leaderboard does."""
    records = [
        runner.evaluate("miniscan", ModelSpec(name="random"), [0, 1]),
        runner.evaluate("miniscan", ModelSpec(name="random"), [2]),
        runner.evaluate("lookup-tables", ModelSpec(name="copy"), [0, 1, 2]),
        runner.evaluate("agreement-attractors", ModelSpec(name="unigram"), [0]),
    ]
    write_report(runner.store, tmp_path / "site")
    reported = {
        (row["suite"], row["model"], row["split"], row["metric"], row["breakdown"], row["level"]): row
        for row in read_results(tmp_path / "site" / "results.json")
    }
    compared = 0
    for record in records[1:]:
        cells_of_record = [
            ((split, metric, "", ""), measured)
            for split, metrics in record.scores.items()
            for metric, measured in metrics.items()
        ] + [
            ((split, metric, key, level), measured)
            for split, by_metric in record.breakdowns.items()
            for metric, by_key in by_metric.items()
            for key, by_level in by_key.items()
            for level, measured in by_level.items()
        ]
        for (split, metric, key, level), measured in cells_of_record:
            row = reported[(record.suite, record.model, split, metric, key, level)]
            assert (row["mean"], row["n_seeds"], row["per_seed"]) == (
                measured.mean,
                measured.n_seeds,
                measured.per_seed,
            )
            assert (row["ci_low"], row["ci_high"], row["interval"]) == (
                measured.ci_low,
                measured.ci_high,
                measured.interval,
            )
            compared += 1
    assert records[1].scores["test"]["sequence_accuracy"].n_seeds == 3
    assert compared > 50  # breakdowns included


@pytest.mark.parametrize(
    ("value", "n", "proportion", "problem"),
    [
        (float("inf"), 10, False, "the value inf, not a finite number"),
        (-float("inf"), 10, True, "the value -inf, not a finite number"),
        (7.5, 10, True, "the value 7.5, outside the range [0, 1] accuracy takes"),
        (-0.25, 10, True, "the value -0.25, outside the range [0, 1] accuracy takes"),
        (0.5, -5, True, "an item count of -5, below 0"),
    ],
)
def test_a_value_no_metric_takes_is_named_and_never_made_a_cell(
    value: float, n: int, proportion: bool, problem: str
) -> None:
    """A score of 7.5 was once shown as `750.0 ... best`, and inf as `inf ... best`: cells refuse them
    (the store's readers and the bundle's refuse them first, naming the run)."""
    assert value_problem("accuracy", value, n, proportion) == problem
    scores = pd.DataFrame({key: "" for key in CELL_KEYS} | {"metric": "accuracy", "seed": [0, 1], "value": [0.5, value],
                                                             "n": [10, n], "proportion": proportion})  # fmt: skip
    assert first_impossible(scores) == (1, problem)
    with pytest.raises(ValueError, match=re.escape(problem)):
        cells(scores)


def test_the_store_wide_check_finds_the_first_row_the_per_score_rule_refuses() -> None:
    """`first_impossible` checks hundreds of thousands of rows at once; it must find the row `value_problem`,
    the rule for one score, refuses first: over declared and undeclared metrics, fractions and not,
    undefined values and negative counts."""
    rng = random.Random(3)
    metrics = ["accuracy", "variation_of_information", "dev_perplexity", "log_likelihood"]
    for _ in range(400):
        rows = [
            (
                rng.choice(metrics),
                rng.choice([0.0, 0.5, 1.0, 1.5, -0.5, 3.0, math.nan, math.inf]),
                rng.choice([10, 0, -1]),
                rng.random() < 0.5,
            )
            for _ in range(rng.randint(1, 6))
        ]
        problems = [(at, value_problem(m, None if v != v else v, n, p)) for at, (m, v, n, p) in enumerate(rows)]
        expected = next(((at, problem) for at, problem in problems if problem is not None), None)
        scores = pd.DataFrame(rows, columns=["metric", "value", "n", "proportion"])
        assert first_impossible(scores) == expected, rows


def test_undefined_values_and_graded_metrics_outside_zero_and_one_are_possible() -> None:
    assert value_problem("accuracy", None, 0, True) is None
    assert value_problem("accuracy", float("nan"), 10, True) is None  # undefined: no items
    assert value_problem("variation_of_information", 3.2, 10, False) is None
    assert value_problem("log_likelihood", -120.5, 10, False) is None


def test_a_configurations_columns_make_the_cells_its_frame_makes() -> None:
    """`run`'s record aggregates one configuration's rows without a frame (`ScoreColumns`): the same cells,
    undefined values left out, in the same key order."""
    rng = np.random.default_rng(11)
    rows = []
    for seed in (2, 0, 1):
        for split, metric, key, level in [("b", "accuracy", "", ""), ("a", "accuracy", "n", "2"),
                                          ("a", "accuracy", "n", "10"), ("a", "loss", "", "")]:  # fmt: skip
            value = None if (seed, level) == (1, "2") else float(rng.random())
            rows.append({k: "x" for k in CELL_KEYS} | {"split": split, "metric": metric, "breakdown": key,
                        "level": level, "seed": seed, "value": value, "n": 20 + seed, "proportion": metric != "loss"})  # fmt: skip
    frame = pd.DataFrame(rows)
    frame["value"] = frame["value"].astype(float)
    columns = ScoreColumns(
        keys=list(
            zip(frame["model"], frame["split"], frame["metric"], frame["breakdown"], frame["level"], strict=True)
        ),
        seeds=frame["seed"].to_numpy(),
        values=frame["value"].to_numpy(),
        items=frame["n"].to_numpy(),
        proportion=frame["proportion"].to_numpy(),
        metrics=frame["metric"].to_numpy(dtype=object),
    ).defined()
    expected = [
        ((row["model"], row["split"], row["metric"], row["breakdown"], row["level"]), as_stats(row))
        for row in cells(frame).to_dict("records")
    ]
    assert columns.cells() == expected
    assert [stats.n_seeds for _, stats in expected] == [
        3,
        2,
        3,
        3,
    ]  # level "10" sorts first; seed 1 of "2" is undefined
