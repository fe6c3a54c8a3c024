"""Any drift of the baselines' numbers on the lookup suites fails here (tox -e regression)."""

from __future__ import annotations

import json

import pytest

from tests.regression.golden import GOLDEN, compute

pytestmark = pytest.mark.regression


def test_results_match_golden_table() -> None:
    expected = json.loads(GOLDEN.read_text())
    actual = json.loads(json.dumps(compute(), sort_keys=True))
    drift = [
        f"{suite} {model} {split} {metric}: {values} != {actual[suite][model][split][metric]}"
        for suite, entry in expected.items()
        for model, splits in entry.items()
        if model != "suite_hash"
        for split, metrics in splits.items()
        for metric, values in metrics.items()
        if actual.get(suite, {}).get(model, {}).get(split, {}).get(metric) != values
    ]
    assert not drift, "results drifted from tests/regression/golden.json:\n" + "\n".join(drift[:20])
    assert {s: e["suite_hash"] for s, e in actual.items()} == {s: e["suite_hash"] for s, e in expected.items()}
    assert actual == expected
