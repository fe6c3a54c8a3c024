"""A suite page's conditions: a numbered series of test splits, and each breakdown key of the primary metric."""

from __future__ import annotations

from structbench.reports.builders.boards import aggregate, boards
from structbench.reports.builders.conditions import conditions
from structbench.runs.runner import Runner
from structbench.specs import Example, ModelSpec
from structbench.suite import SourceFiles
from tests.support.fixtures.plugin.reverse_suite import ReverseWords


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


class CasesOnGen(ReverseWords):
    """Reverse words, with COGS's shape of conditions: every `test_short` example of one case, `test`'s
    (generalisation) of more cases than a plot shows (13; COGS's gen has 21)."""

    spec = ReverseWords.spec.variant(id="cases-on-gen")
    breakdown_keys = ("length", "case")

    def generate(self, draw: int, files: SourceFiles) -> dict[str, list[Example]]:
        splits = super().generate(draw, files)
        cases = {"test_short": ["in_distribution"], "test": [f"case{n:02d}" for n in range(13)]}
        return {
            name: [
                e.model_copy(update={"meta": {**e.meta, "case": cases[name][i % len(cases[name])]}})
                for i, e in enumerate(examples)
            ]
            if name in cases
            else examples
            for name, examples in splits.items()
        }


def test_a_key_of_one_level_on_an_in_distribution_split_is_shown_on_the_split_where_it_varies(runner: Runner) -> None:
    """COGS's `case` is `in_distribution` on all of test and one of 21 cases on gen: the condition is gen's."""
    runner.evaluate(f"{__name__}:CasesOnGen", ModelSpec(name="copy"), [0])
    results = aggregate(runner.store)
    (board,) = boards(runner.store, results)
    mine = results[(results.breakdown != "") & (results.metric == board.spec.primary_metric)]
    (case,) = [c for c in conditions(board, mine) if c.key == "case"]
    assert (case.split, case.levels, case.plotted) == ("test", [f"case{n:02d}" for n in range(13)], False)
