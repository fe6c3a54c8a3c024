"""A run whose training never reached its criterion is kept, flagged under-trained on its board, never
marked best, and makes a claim resting on it undecided rather than tested."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

import pytest

import structbench
from structbench import registry
from structbench.analysis.claims import CellRef, Claim, check_all, claim_cells, under_trained_cells
from structbench.baselines.neural.classifier.model import LstmLogic
from structbench.baselines.neural.lstm_g.model import LstmG
from structbench.baselines.neural.nhmm.model import NeuralHmm
from structbench.cli import main
from structbench.convergence import Convergence, Criterion, checked_convergence, under_trained
from structbench.reports.builders.boards import aggregate, boards
from structbench.runs.runner import Runner
from structbench.specs import ModelSpec, Split
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


class ShortGuesser(Guesser):
    """A guesser whose class says what its stored configuration lacks to reach the criterion."""

    @classmethod
    def budget_shortfall(cls, suite_id: str, configuration: Mapping[str, Any]) -> str | None:
        return f"needs the paper budget on {suite_id} ({dict(configuration)})"


def test_an_undecided_claim_says_what_reaching_the_criterion_takes(runner: Runner) -> None:
    """A model states, per stored configuration, what its budget lacks (a recipe's measured estimate);
    the claim it leaves undecided shows it, so the user knows which budget decides the claim."""
    short = ModelSpec(name="tests.analysis.test_under_trained:ShortGuesser", params={"label": "plural"})
    runner.evaluate(SUITE, short, [0])
    runner.evaluate(SUITE, ModelSpec(name="tests.analysis.test_under_trained:Guesser"), [0])
    cells = claim_cells(aggregate(runner.store), runner.store.runs())
    claim = Claim(
        id="short-beats-plain", statement="s", source="p", suite=SUITE, metric="accuracy",
        greater=CellRef(model='ShortGuesser[label="plural"]', split="mixed"),
        than=[CellRef(model="Guesser", split="mixed")],
    )  # fmt: skip
    (verdict,) = check_all(cells, [claim])
    assert verdict.status == "undecided (under-trained)"
    assert verdict.evidence.endswith(
        'ShortGuesser[label="plural"]: under-trained: 1 of 1 seeds (dev_accuracy 0.39 < 0.95); '
        f"needs the paper budget on {SUITE} ({{}})"
    ), verdict.evidence
    # the plain guesser states nothing: its reason ends at the values
    assert any(
        part.startswith("Guesser: under-trained: 1 of 1 seeds (dev_accuracy 0.39 < 0.95)")
        for part in verdict.evidence.split("; ")
    )


def test_the_cpu_budgets_that_cannot_converge_say_what_it_takes() -> None:
    """The recipes whose cpu-small budget cannot reach the criterion in 30 minutes per seed on one CPU
    thread say so for that budget only; a converging family says nothing."""
    logic = LstmLogic.budget_shortfall("logic-bowman-le6", {"budget": "cpu-small"})
    assert logic is not None and logic.startswith("needs the paper budget on a GPU") and "41 min" in logic
    assert LstmLogic.budget_shortfall("logic-bowman-le6", {"budget": "paper"}) is None
    assert "3 hours per seed" in (LstmG.budget_shortfall("grounded-weak", {"budget": "cpu-small"}) or "")
    assert LstmG.budget_shortfall("dsr", {"budget": "cpu-small"}) is None  # DSR converges on cpu-small
    conv = NeuralHmm.configuration("pos-ud-ewt-xpos")
    assert "45-55 min per seed" in (NeuralHmm.budget_shortfall("pos-ud-ewt-xpos", conv) or "")
    linear = NeuralHmm.configuration("pos-ud-ewt-xpos", emission="linear")
    assert NeuralHmm.budget_shortfall("pos-ud-ewt-xpos", linear) is None  # linear emissions reach it in 20 epochs


def test_an_under_trained_neural_run_on_a_suite_not_installed_here_is_flagged_without_a_recipe(
    runner: Runner, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A neural baseline's shortfall comes from its recipe for the suite, which a suite this structbench
    does not have (a user's, given by module path, reported in another process) has none of: the report
    flags the run as under-trained and says nothing more, instead of failing."""
    runner.evaluate(
        "tests.support.fixtures.plugin.reverse_suite:ReverseWords",
        ModelSpec(name="seq2seq-gru-attn", params={"epochs": 1, "hidden": 8, "embedding": 8}),
        [0],
    )
    monkeypatch.setattr(registry, "_LOADED_BY_PATH", {})  # what a later `report` process knows
    registry.clear_cache()
    under = under_trained_cells(runner.store.runs())
    ((suite, _, _, model), why), *rest = under.items()
    assert not rest and (suite, model) == ("reverse-words", "seq2seq-gru-attn[embedding=8,epochs=1,hidden=8]")
    assert why.startswith("under-trained: 1 of 1 seeds (dev_accuracy ")
    assert main(["report", "--store", str(runner.store.path), "--out", str(tmp_path / "site"), "--no-progress"]) == 0
