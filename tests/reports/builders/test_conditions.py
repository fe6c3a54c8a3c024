"""A suite page's conditions: a numbered series of test splits, and each breakdown key of the primary metric."""

from __future__ import annotations

from structbench.reports.builders.boards import aggregate, boards
from structbench.reports.builders.conditions import conditions
from structbench.runs.runner import Runner
from structbench.specs import ModelSpec


def test_attractor_splits_become_one_condition_and_breakdown_keys_another(runner: Runner) -> None:
    runner.evaluate("agreement-attractors", ModelSpec(name="ngram"), [0])
    results = aggregate(runner.store)
    (board,) = boards(runner.store, results)
    mine = results[(results.breakdown != "") & (results.metric == "accuracy")]
    found = {c.axis: c for c in conditions(board, mine)}
    attractors = found["attractors"]
    assert attractors.levels == ["0", "1", "2", "3", "4"]
    ngram = dict(board.rows)["ngram"]
    assert attractors.cells["ngram"] == [ngram[f"attractors-{k}"] for k in range(5)]
    number = found["subject number"]
    assert number.levels == ["plural", "singular"] and number.plotted
    # `mixed` stacks constructions into over a hundred combinations: the plot takes the split of most
    # levels that a plot can still show, here the nine pairs of two intervening constructions
    construction = found["construction"]
    assert construction.plotted and construction.title.endswith("on test split attractors-2")
    kinds = ("orc", "pp", "src")
    assert construction.levels == [f"{a}+{b}" for a in kinds for b in kinds]
