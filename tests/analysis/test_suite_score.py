"""One suite score (`structbench.analysis.suite_score`): the number that orders a suite's page, fills its
overview cell and is the quickstart line."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from structbench import registry
from structbench.analysis.suite_score import score_splits, stored_score
from structbench.cli import main
from structbench.reports.builders.from_store import build_site
from structbench.store import Store
from tests.support.helpers import read_results


def test_the_score_splits_are_the_ranked_generalisation_splits_else_every_ranked_split() -> None:
    logic = registry.suite("logic-inference-le3").spec
    assert score_splits(logic) == [f"ops-{k:02d}" for k in range(4, 13)]  # ops-00 … ops-03 are in-distribution
    lookup = registry.suite("lookup-tables").spec
    assert score_splits(lookup) == [s.name for s in lookup.ranked_splits]


@pytest.mark.long_running
def test_one_score_orders_the_suite_page_fills_the_overview_and_is_the_quickstart_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    store_path = tmp_path / "results.sqlite"
    assert main(["quickstart", "--store", str(store_path), "--out", str(tmp_path / "site"), "logic-inference-le3"]) == 0
    printed = capsys.readouterr().err
    with Store(store_path) as store:
        site = build_site(store)
        (board,) = site.boards
        (summary,) = site.summaries
        assert summary.cells["generalisation"] == board.scores  # the overview cell is the score
        ranked = [model for model, _ in board.ranked_rows]
        scored = [model for model in ranked if model in board.scores]
        assert ranked == sorted(scored, key=lambda model: -board.scores[model].mean) + [
            model for model in ranked if model not in board.scores
        ]  # and orders the page, a model without one last
        assert "  copy               n/a" in printed.splitlines() and "copy" not in board.scores  # n/a on this suite
        rows = read_results(tmp_path / "site" / "results.json")
        for model, score in board.scores.items():
            assert stored_score(store, board.spec, board.suite_hash, model) == score
            assert f"suite score (accuracy) {score.mean:.3f}" in next(
                line for line in printed.splitlines() if line.split()[:1] == [model]
            )
            per_seed = np.mean(
                [
                    r["per_seed"]
                    for r in rows
                    if r["model"] == model and r["metric"] == "accuracy" and not r["breakdown"]
                    and r["split"] in board.generalisation
                ],
                axis=0,
            )  # fmt: skip
            assert score.mean == pytest.approx(float(per_seed.mean()), abs=1e-12)
