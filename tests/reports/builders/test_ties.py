"""The ≈best marks: the models a paired bootstrap cannot tell from a split's best, or why none were compared."""

from __future__ import annotations

from pathlib import Path

from structbench.reports.builders.boards import aggregate, boards
from structbench.reports.render import write_report
from structbench.runs.runner import Runner
from structbench.specs import ModelSpec
from tests.reports.support import suite_page


def test_the_report_marks_the_best_and_the_models_a_paired_bootstrap_cannot_tell_from_it(
    runner: Runner, tmp_path: Path
) -> None:
    for order in (2, 4, 5):
        runner.evaluate("agreement-attractors@1.0.0", ModelSpec(name="ngram", params={"order": order}), [0])
    (board,) = boards(runner.store, aggregate(runner.store))
    assert board.ties_note == ""
    # attractors-1: order 2 is best (18.0); order 5 (17.4) cannot be told from it; order 4 (13.4)
    # can, although its Wilson interval overlaps the best's: the paired comparison is sharper (order 4 is
    # ngram's default, so its label is the bare name)
    cells = {model: row["attractors-1"] for model, row in board.rows}
    assert board.best["attractors-1"] == "ngram[order=2]"
    assert board.ties["attractors-1"] == {"ngram[order=5]"}
    best, excluded = cells["ngram[order=2]"], cells["ngram"]
    assert best is not None and excluded is not None and excluded.ci_high > best.ci_low  # type: ignore[operator]
    markdown = (write_report(runner.store, tmp_path / "out").parent / "leaderboard.md").read_text()
    assert "17.4 [14.3, 21.0] (1 seed, Wilson) ≈best" in markdown and "≈best" in markdown
    html = suite_page(tmp_path / "out" / "index.html", "agreement-attractors@1.0.0")
    assert html.count('<td class="best"') == sum(1 for split in board.ranked if split in board.best)


def test_a_board_whose_metric_has_no_verdict_per_example_says_why_it_is_not_compared(runner: Runner) -> None:
    # two models above the trivial floor (`random`'s V-measure), which a paired comparison would be asked about
    runner.evaluate("pos-synthetic", ModelSpec(name="hmm", params={"iterations": 1}), [0])
    runner.evaluate("pos-synthetic", ModelSpec(name="hmm", params={"iterations": 2}), [0])
    (board,) = boards(runner.store, aggregate(runner.store))
    assert "not a right/wrong verdict per example" in board.ties_note
    assert board.ties == {split: set() for split in board.best}
