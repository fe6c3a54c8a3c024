"""Any drift of a baseline's numbers on any offline suite fails here (tox, or tox -e regression alone),
naming the cell that moved and by how much."""

from __future__ import annotations

import json
from typing import Any

import pytest

from structbench.specs import ModelSpec
from tests.regression.golden import GOLDEN, NEURAL, NEURAL_TOLERANCE, compute

pytestmark = pytest.mark.regression

NEURAL_LABELS = {ModelSpec(name=name, params=settings).label for name, (_, settings) in NEURAL.items()}


def drift(expected: dict[str, Any], actual: dict[str, Any]) -> list[str]:
    """One line per cell (suite, model, split, metric, seed) that moved, with the change."""
    lines = []
    for suite in sorted(set(expected) | set(actual)):
        was, now = expected.get(suite), actual.get(suite)
        if was is None or now is None:
            lines.append(f"{suite}: {'new suite' if was is None else 'no longer computed'}")
            continue
        if was["suite_hash"] != now["suite_hash"]:
            lines.append(f"{suite}: data changed, suite hash {was['suite_hash'][:12]} -> {now['suite_hash'][:12]}")
        for model in sorted((set(was) | set(now)) - {"suite_hash"}):
            tolerance = NEURAL_TOLERANCE if model in NEURAL_LABELS else 0.0
            old, new = was.get(model), now.get(model)
            if not isinstance(old, dict) or not isinstance(new, dict):
                if old != new:
                    lines.append(f"{suite} {model}: {old if isinstance(old, str) else 'scored'} -> "
                                 f"{new if isinstance(new, str) else 'scored'}")  # fmt: skip
                continue
            for split in sorted(set(old) | set(new)):
                for metric in sorted(set(old.get(split, {})) | set(new.get(split, {}))):
                    before, after = old.get(split, {}).get(metric), new.get(split, {}).get(metric)
                    if before is None or after is None or len(before) != len(after):
                        lines.append(f"{suite} {model} {split} {metric}: {before} -> {after}")
                        continue
                    for seed, (b, a) in enumerate(zip(before, after, strict=True)):
                        if abs(a - b) > tolerance:
                            lines.append(
                                f"{suite} {model} {split} {metric} seed {seed}: {b:.6g} -> {a:.6g} ({a - b:+.4g})"
                            )
    return lines


def test_results_match_golden_table() -> None:
    expected = json.loads(GOLDEN.read_text())
    moved = drift(expected, json.loads(json.dumps(compute())))
    assert not moved, f"{len(moved)} cells drifted from tests/regression/golden.json:\n" + "\n".join(moved[:40])


def test_drift_names_the_cell_and_the_change() -> None:
    cell = {"test": {"accuracy": [0.5, 0.25]}}
    neural = sorted(NEURAL_LABELS)[0]
    expected = {"toy": {"suite_hash": "a" * 64, "ngram": cell, neural: cell, "copy": "n/a"}}
    actual = json.loads(json.dumps(expected))
    actual["toy"]["ngram"]["test"]["accuracy"][1] = 0.3
    actual["toy"][neural]["test"]["accuracy"][1] = 0.26  # within the neural tolerance
    actual["toy"]["copy"] = {"test": {}}
    assert drift(expected, actual) == [
        "toy copy: n/a -> scored",
        "toy ngram test accuracy seed 1: 0.25 -> 0.3 (+0.05)",
    ]
    actual["toy"][neural]["test"]["accuracy"][0] = 0.45
    assert f"toy {neural} test accuracy seed 0: 0.5 -> 0.45 (-0.05)" in drift(expected, actual)
