"""A run whose training never reached its criterion is kept, flagged under-trained on its board, never
marked best, and makes a claim resting on it undecided rather than "not reproduced"."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

import structbench
from structbench.analysis.claims import CellRef, Claim, check_all, claim_cells
from structbench.cli import main
from structbench.convergence import Convergence, Criterion, checked_convergence, under_trained
from structbench.reports.boards import aggregate, boards
from structbench.specs import Split
from structbench.store import Store

SUITE = "agreement-attractors-number"
RULE = Criterion(statistic="dev_accuracy", at_least=0.95)


class Guesser:
    """Always answers one label; reports that its training reached the criterion on the seeds in `learned`."""

    protocols = ("classification",)

    def __init__(self, label: str = "singular", learned: tuple[int, ...] = ()) -> None:
        self.label, self.learned, self.seed = label, learned, 0

    def fit(self, train: Split, dev: Split | None, *, seed: int) -> None:
        self.seed = seed

    def classify(self, inputs: list[list[str]], labels: list[str]) -> list[str]:
        return [self.label for _ in inputs]

    def convergence(self) -> dict[str, Any]:
        reached = self.seed in self.learned
        value = 0.97 if reached else 0.39 + self.seed / 10
        return Convergence(criterion=RULE, reached=reached, value=value, epochs=10, seconds=1.0).model_dump()


def test_an_under_trained_row_is_flagged_never_best_and_its_claims_are_undecided(
    store_path: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    seeds = [0, 1]
    structbench.evaluate(SUITE, Guesser("singular"), seeds=seeds, store=store_path, name="under", progress=False)
    said = capsys.readouterr().err
    assert "seed 1: under-trained: dev_accuracy 0.49 < 0.95 (flagged on the leaderboard)" in said
    structbench.evaluate(
        SUITE, Guesser("plural", learned=(0, 1)), seeds=seeds, store=store_path, name="learned", progress=False
    )
    with Store(store_path) as store:
        results = aggregate(store)
        board = boards(store, results)[0]
        cells = claim_cells(results, store.runs())
    assert board.under_trained == {"under": "under-trained: 2 of 2 seeds (dev_accuracy 0.39, 0.49 < 0.95)"}
    assert "under" in dict(board.ranked_rows)  # still ranked and shown
    assert all(best == "learned" for best in board.best.values()) and board.best
    claim = Claim(
        id="under-beats-learned", statement="s", source="p", suite=SUITE, metric="accuracy",
        greater=CellRef(model="under", split="mixed"), than=[CellRef(model="learned", split="mixed")],
    )  # fmt: skip
    (verdict,) = check_all(cells, [claim])
    assert verdict.status == "undecided (under-trained)"
    assert verdict.evidence.endswith("under: under-trained: 2 of 2 seeds (dev_accuracy 0.39, 0.49 < 0.95)")
    bound = Claim(
        id="learned-low", statement="s", source="p", suite=SUITE, metric="accuracy",
        cell=CellRef(model="learned", split="mixed"), at_most=0.99,
    )  # fmt: skip
    assert check_all(cells, [bound])[0].status == "reproduced"  # a cell of converged runs is judged as ever
    assert main(["report", "--store", str(store_path), "--out", str(tmp_path / "site")]) == 0
    page = (tmp_path / "site" / "suites" / f"{board.slug}.html").read_text()
    row = page[page.index('data-value="under"') : page.index("</tr>", page.index('data-value="under"'))]
    assert "under-trained: 2 of 2 seeds (dev_accuracy 0.39, 0.49 &lt; 0.95)" in row and "tag rank" not in row
    index = (tmp_path / "site" / "index.html").read_text()
    overview = index[index.index('data-value="under"') : index.index("</tr>", index.index('data-value="under"'))]
    assert "tag undertrained" in overview and "tag rank" not in overview


def test_a_convergence_report_is_checked_where_it_enters() -> None:
    assert checked_convergence({}) == (None, [])
    record, problems = checked_convergence({"criterion": {"statistic": "dev_accuracy"}, "reached": True})
    assert record is None and "exactly one of at_least, at_most or plateau" in problems[0]
    assert checked_convergence([1])[1] == ["convergence() returned a list, not a mapping"]
    plateau = Criterion(statistic="dev_loss", plateau=0.02)
    rising = Convergence(criterion=plateau, reached=False, value=1.19, change=0.032)
    assert under_trained([rising, rising.model_copy(update={"reached": True})]) == (
        "under-trained: 1 of 2 seeds (dev_loss 1.19, still improving 3.2% over 2 evaluations; plateau < 2%)"
    )
    shown = Convergence(criterion=RULE, reached=True, value=0.96, epochs=4, seconds=12.3).shown()
    assert shown == "converged: dev_accuracy 0.96 ≥ 0.95 in 4 epochs, 12 s"
