"""Every metric and statistic declares the values it can take, and no interval leaves them."""

from __future__ import annotations

import json
import math
import re
import statistics
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from scipy import stats

from structbench import registry, scoring
from structbench.cells import CELL_KEYS, cells
from structbench.metrics import METRICS, RANGES, STATISTICS, Range, in_range, metric_range

REPOSITORY = Path(__file__).resolve().parents[1]
GOLDEN = REPOSITORY / "tests" / "regression" / "golden.json"
BUNDLE = REPOSITORY / "src" / "structbench" / "reference_runs" / "runs"


def golden_metrics() -> dict[str, set[str]]:
    """suite -> every metric name the golden table holds a value of (every baseline, every offline suite),
    breakdown cells (`accuracy[attractors=2]`) by their metric."""
    found: dict[str, set[str]] = {}
    for suite, models in json.loads(GOLDEN.read_text(encoding="utf-8")).items():
        for entry in models.values():
            if isinstance(entry, dict):
                for split in entry.values():
                    if isinstance(split, dict):
                        found.setdefault(suite, set()).update(name.partition("[")[0] for name in split)
    return found


def protocol_metrics(protocol: str) -> set[str]:
    """The names every suite of `protocol` is scored with, whatever its data: the protocol's per-example
    metrics, and tag induction's metrics of the whole split."""
    names = set(scoring.protocol_values(protocol, [], []))
    if protocol == "tag-induction":
        names |= set(scoring.induction_metrics(["NOUN", "VERB"], [0, 1]))
    return names


def test_every_metric_a_registered_suite_can_emit_declares_its_range() -> None:
    """A suite's scorer emits its protocol's metrics and its own `extra_metrics`, whose names depend on
    its data (question formation's shares of first words): those are read from the golden table, which
    scores every baseline on every suite that builds offline, and every suite with metrics of its own
    are there too, with the names the suite scores an empty split with (those of a suite the golden table
    cannot hold: COGS lacks its gen file offline, no baseline answers SyntaxGym's region surprisals)."""
    golden = golden_metrics()
    emitted: set[str] = set()
    for name in registry.suite_names():
        suite = registry.suite(name)
        emitted |= protocol_metrics(suite.spec.protocol) | golden.get(name, set())
        emitted |= set(suite.extra_metrics("test", [], []))
        assert suite.spec.primary_metric in emitted
    undeclared = sorted(name for name in emitted if metric_range(name) is None)
    assert not undeclared, f"metrics without a declared range in structbench.metrics: {undeclared}"
    assert emitted == set(METRICS), f"declared but emitted by no suite: {sorted(set(METRICS) - emitted)}"


def test_every_statistic_a_suite_or_reference_run_has_declares_its_range() -> None:
    declared = {s.name for name in registry.suite_names() for s in registry.suite(name).spec.statistics}
    declared |= {s.censored_by for name in registry.suite_names() for s in registry.suite(name).spec.statistics}
    reported = {
        key
        for path in BUNDLE.rglob("*.json")
        for found in re.findall(r'"statistics": (\{[^{}]*\})', path.read_text(encoding="utf-8"))
        for key in json.loads(found)
    }
    assert reported, "the reference bundle holds runs that report statistics"
    named = sorted(name for name in (declared | reported) - {None} if name not in STATISTICS)
    assert not named, f"statistics without a declared range in structbench.metrics: {named}"
    assert not set(STATISTICS) & set(METRICS)


def spread_across(declared: Range) -> list[float]:
    """Three seeds whose t-interval reaches past the range's finite ends: two at the low end, one far off."""
    if math.isinf(declared.high):
        return [declared.low, declared.low, declared.low + 5.0]
    return [declared.high, declared.high, declared.low + 0.1 * (declared.high - declared.low)]


@pytest.mark.parametrize("name", sorted(RANGES))
def test_cells_clip_every_interval_to_its_metrics_range(name: str) -> None:
    declared = RANGES[name]
    values = spread_across(declared)
    mean, half = statistics.mean(values), stats.t.ppf(0.975, 2) * statistics.stdev(values) / math.sqrt(3)
    assert mean - half < declared.low or mean + half > declared.high  # the test can fail
    for breakdown in ("", "attractors"):  # a breakdown cell has its metric's range
        rows = pd.DataFrame(
            [
                {**dict.fromkeys(CELL_KEYS, ""), "metric": name, "breakdown": breakdown, "level": "2" if breakdown else "",
                 "seed": seed, "value": value, "n": 50, "proportion": False}
                for seed, value in enumerate(values)
            ]
        )  # fmt: skip
        (row,) = cells(rows).to_dict("records")
        assert row["interval"] == "t over 3 seeds"
        assert row["ci_low"] == pytest.approx(max(declared.low, mean - half))
        assert row["ci_high"] == pytest.approx(min(declared.high, mean + half))


def test_an_undeclared_metric_is_clipped_only_where_its_values_are_fractions_of_items() -> None:
    rows = pd.DataFrame(
        [
            {**dict.fromkeys(CELL_KEYS, ""), "model": model, "metric": "plugin_score", "seed": seed, "value": value,
             "n": 10, "proportion": model == "fraction"}
            for model in ("fraction", "graded")
            for seed, value in enumerate([1.0, 1.0, 0.1])
        ]
    )  # fmt: skip
    found = cells(rows).set_index("model")
    assert found.loc["fraction", "ci_high"] == 1.0 and found.loc["fraction", "ci_low"] == 0.0
    assert found.loc["graded", "ci_high"] > 1.0 and found.loc["graded", "ci_low"] < 0.0


def test_a_value_outside_its_metrics_range_is_refused() -> None:
    assert in_range("v_measure", 0.645) and not in_range("v_measure", 1.098)
    assert in_range("accuracy[attractors=2]", 1.0) and not in_range("accuracy[attractors=2]", -0.01)
    assert in_range("variation_of_information", 3.7) and not in_range("variation_of_information", -1e-9)
    assert in_range("dev_perplexity", 71.39) and not in_range("dev_perplexity", 0.5)
    assert not in_range("accuracy", math.nan) and not in_range("trials_to_criterion", math.inf)
    assert in_range("a_plugins_own_score", -3.0) and not in_range("a_plugins_own_score", math.nan)
    assert metric_range("a_plugins_own_score") is None
    assert in_range("accuracy", np.float32(0.5)) and not in_range("accuracy", np.float64(1.5))


def test_a_range_is_shown_as_an_interval() -> None:
    assert RANGES["accuracy"].shown() == "[0, 1]"
    assert RANGES["variation_of_information"].shown() == "[0, ∞)"
    assert RANGES["dev_perplexity"].shown() == "[1, ∞)"
