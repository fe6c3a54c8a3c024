"""The one cell function: the numbers of `run --json` and of the leaderboard come from `cells`."""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from structbench.cells import CELL_KEYS, cells
from structbench.reports.render import write_report
from structbench.runner import Runner
from structbench.specs import ModelSpec, SeedStats
from tests.helpers import read_results


def scipy_stats(values: list[float]) -> SeedStats:
    """What the harness computed per cell before `cells`: scipy's percentile bootstrap, one call per cell."""
    from scipy import stats

    array = np.asarray(values)
    low = high = float(array.mean())
    if len(array) > 1 and not np.all(array == array[0]):
        interval = stats.bootstrap(
            (array,), np.mean, n_resamples=9999, method="percentile", rng=np.random.default_rng(0)
        ).confidence_interval
        low, high = float(interval.low), float(interval.high)
    return SeedStats(
        mean=float(array.mean()), std=float(array.std(ddof=1)) if len(array) > 1 else None,
        min=float(array.min()), max=float(array.max()), ci_low=low, ci_high=high,
        n_seeds=len(array), per_seed=list(values),
    )  # fmt: skip


def _scores(per_cell: list[list[float | None]]) -> pd.DataFrame:
    rows = []
    for index, values in enumerate(per_cell):
        for seed, value in enumerate(values):
            key = {k: "x" for k in CELL_KEYS} | {"model": f"m{index}", "breakdown": "", "level": ""}
            rows.append({**key, "seed": seed, "value": value, "n": 10})
    return pd.DataFrame(rows)


def test_cells_match_scipys_bootstrap_for_every_seed_count() -> None:
    rng = np.random.default_rng(7)
    per_cell: list[list[float | None]] = [list(rng.random(n)) for n in (1, 2, 3, 3, 5, 8, 10) for _ in range(3)]
    per_cell.append([0.5, 0.5, 0.5])  # identical seeds: a zero-width interval
    frame = cells(_scores(per_cell)).set_index("model")
    for index, values in enumerate(per_cell):
        expected = scipy_stats([v for v in values if v is not None])
        row = frame.loc[f"m{index}"]
        assert row["per_seed"] == expected.per_seed
        assert (row["mean"], row["min"], row["max"]) == (expected.mean, expected.min, expected.max)
        assert (row["ci_low"], row["ci_high"]) == pytest.approx((expected.ci_low, expected.ci_high), rel=1e-12)
        assert row["n_seeds"] == expected.n_seeds
        assert (expected.std is None and math.isnan(row["std"])) or row["std"] == pytest.approx(expected.std)


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
    write_report(runner.store, tmp_path)
    reported = {
        (row["suite"], row["model"], row["split"], row["metric"], row["breakdown"], row["level"]): row
        for row in read_results(tmp_path / "results.json")
    }
    compared = 0
    for record in records[1:]:
        cells_of_record = [
            ((split, metric, "", ""), stats)
            for split, metrics in record.scores.items()
            for metric, stats in metrics.items()
        ] + [
            ((split, metric, key, level), stats)
            for split, by_metric in record.breakdowns.items()
            for metric, by_key in by_metric.items()
            for key, by_level in by_key.items()
            for level, stats in by_level.items()
        ]
        for (split, metric, key, level), stats in cells_of_record:
            row = reported[(record.suite, record.model, split, metric, key, level)]
            assert (row["mean"], row["n_seeds"], row["per_seed"]) == (stats.mean, stats.n_seeds, stats.per_seed)
            assert (row["ci_low"], row["ci_high"]) == (stats.ci_low, stats.ci_high)
            compared += 1
    assert records[1].scores["test"]["sequence_accuracy"].n_seeds == 3
    assert compared > 50  # breakdowns included
