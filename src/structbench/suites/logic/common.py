"""What both sets of logic suites share (`logic-inference-*`, generated; `logic-bowman-*`, Bowman et
al.'s published pairs): the seven natural-logic relations, the truth tables of the six variables
over their 64 assignments, the relation between two formulas' sets of worlds, and the oracle that
computes it. Both must label a pair alike, whatever bracketing their formulas use.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

LOGIC_RELATIONS = ["=", "<", ">", "^", "|", "v", "#"]
"""The seven natural-logic relations of Bowman et al. (2015), in their symbols."""
LOGIC_SEPARATOR = "<sep>"
"""Between the two formulas of a logic input."""
LOGIC_VARIABLES = ("a", "b", "c", "d", "e", "f")
ALL_WORLDS = (1 << 64) - 1
"""The 64 truth assignments of the six variables, as a bit mask."""
VARIABLE_MASKS = {v: sum(1 << world for world in range(64) if world >> i & 1) for i, v in enumerate(LOGIC_VARIABLES)}
"""Truth table of each variable over the 64 assignments (bit w set when assignment w makes it true)."""


def relation(premise: int, hypothesis: int) -> str:
    """The natural-logic relation between two sets of worlds given as 64-bit masks (shared by
    `logic-inference-*` and `logic-bowman-*`, which must label pairs alike)."""
    if premise == hypothesis:
        return "="
    if premise & ~hypothesis & ALL_WORLDS == 0:
        return "<"
    if hypothesis & ~premise & ALL_WORLDS == 0:
        return ">"
    disjoint = premise & hypothesis == 0
    exhaustive = premise | hypothesis == ALL_WORLDS
    if disjoint:
        return "^" if exhaustive else "|"
    return "v" if exhaustive else "#"


class LogicSolver:
    """Classifies each `premise <sep> hypothesis` pair from the truth tables of its two formulas:
    the oracle of both sets of logic suites, which differ only in how a formula is bracketed."""

    name = "logic-oracle"
    protocols = ("classification",)

    def __init__(self, truth_table: Callable[[Sequence[str]], int]) -> None:
        self.truth_table = truth_table

    def classify(self, inputs: list[list[str]], labels: list[str]) -> list[str]:
        answers = []
        for tokens in inputs:
            cut = tokens.index(LOGIC_SEPARATOR)
            answers.append(relation(self.truth_table(tokens[:cut]), self.truth_table(tokens[cut + 1 :])))
        return answers
