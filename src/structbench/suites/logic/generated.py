"""Propositional-logic inference (Bowman, Manning & Potts 2015; as used by Tran 2018, §5.6).

Pairs of formulas over six variables `a`…`f` with `and`, `or` and `not`, each labelled with
one of the seven relations of natural logic between the sets of truth assignments that make
them true: `=` equivalence, `<` forward entailment (strict subset), `>` backward entailment,
`^` negation (disjoint and exhaustive), `|` alternation (disjoint, not exhaustive), `v` cover
(exhaustive, not disjoint) and `#` independence (the generator's label symbols, Tran's
`fan_vs_rnn`). Relations are computed exactly from truth tables over all 64 assignments,
as 64-bit masks. Formulas are fully bracketed token sequences, e.g. `( ( not a ) and b )`;
the input is premise, `<sep>`, hypothesis.

A pair's bin is the larger of its two formulas' operator counts (`and`, `or` and `not` each
count one), 0 to 12, as in the generator Tran used. Four suites, `logic-inference-le3`,
`-le6`, `-le9` and `-le12`, train (and select, on dev) on bins up to n and test on every bin,
one test split per bin (`ops-00` … `ops-12`) plus `pooled`, all bins together. They share one
pool of pairs, so every suite's test splits are the same items.

Scorers: accuracy of the predicted relation (`accuracy`, primary), broken down by bin
(`n_ops`), as Tran plots it per bin (Figure 5.5).

Test roles: a bin's test split is in-distribution where the suite trains on that bin (b <= n)
and a generalisation split where its formulas are longer than any in training (b > n).
`pooled` is the union of the bin splits, so it is not ranked (ranking it would count every
item twice); its role is generalisation where it holds longer bins, in-distribution for
`-le12`.

Pool: per pair, 4 of the 6 variables are drawn (as in the generator); the premise gets exactly
b operators and the hypothesis a uniform count from 0 to b (sides swapped with probability
1/2), each formula built top-down with a negation at a node with probability 1/3 and an even
choice of `and`/`or` otherwise. Tautologies and contradictions are discarded, as are repeated
pairs. Bins 1-12 hold 4,600 pairs each and bin 0 all 36 pairs of two variables; each bin is
split 0.8/0.1/0.1 into train, dev and test (Tran: 60,000 samples, ratios 0.8/0.1/0.1; ours:
55,236). Label shares over the pool (measured): `#` 49.7%, `>` 13.6%, `<` 13.4%, `|` 10.5%,
`v` 10.4%, `=` 1.4%, `^` 1.0%, so always answering `#` scores about 0.5.

How the suites were checked, and where they deviate from the paper, are declared in their spec
(`CHECKED` and `DEVIATIONS` below: the spec's `how_checked` and `deviations`); the suite card shows both.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from functools import cache
from typing import ClassVar

import numpy as np

from structbench.specs import Example, Split, SplitSpec, SuiteSpec, TestRole, dev_split, scored_split, train_split
from structbench.suite import SourceFiles, Suite, SuiteSet, member
from structbench.suites.common import GENERATED_LICENCE
from structbench.suites.logic.common import (
    ALL_WORLDS,
    LOGIC_RELATIONS,
    LOGIC_SEPARATOR,
    LOGIC_VARIABLES,
    VARIABLE_MASKS,
    LogicSolver,
    relation,
)

CHECKED = """How it was checked (tests/suites/logic/test_generated.py): relations agree with a brute-force set computation
over the 64 assignments on random pairs; every relation label occurs; the splits are
disjoint; the oracle (which parses the tokens back and compares truth tables) scores 1.0.
The same relation function gives every label of Bowman et al.'s published pairs
(tests/suites/logic/test_bowman.py, 249,069 pairs)."""
"""How the suites of this module were checked against their paper (`SuiteSpec.how_checked`)."""
DEVIATIONS = """Deviations: these suites are a generated variant with balanced bins. Bowman et al.'s
published data (github.com/sleepinyourhat/vector-entailment, `propositionallogic/`) exist
and are served as published by `logic-bowman-le3` … `-le12`; measured against them:
- Bracketing: ours puts the operator between its operands in one bracket, `( ( not a ) and b )`,
  `( a and b )`; Bowman's brackets the operator with its right operand, `( a ( and b ) )`
  (`( not a )` in both), so the token sequences differ.
- Bins: Bowman's generator (which Tran reran) grows trees by random draws and puts pairs of
  more than 12 operators into bin 12 too (it holds 12 to 19 in the published files), so its bins
  are unbalanced (40,179 pairs in bin 5, 5,684 in bin 12) and its seed is not fixed; ours
  fills each bin with exactly b operators to the same size from a fixed seed.
- Labels: `#` is 45.9%, 46.8%, 45.8% and 45.7% of bins 9-12 in ours (whole bins; 42.6%,
  43.0%, 46.1% and 44.3% of their test splits) against 51.3%, 50.0%, 49.6% and 49.2% in
  Bowman's (train and test files together; test files alone 51.4%, 51.3%, 50.6% and 48.2%).
- Scoring: our `pooled` includes bin 0 (`ops-00`), whereas Tran scores (and averages) bins
  1-12 only, as `logic-bowman-*` does.
The generated suites keep their version and data (1.0.0): a variant whose bins are equally
precise and whose formulas have exactly their bin's operator count."""
"""Where the suites of this module depart from their paper, and why (`SuiteSpec.deviations`)."""

LABELS = LOGIC_RELATIONS
SEPARATOR = LOGIC_SEPARATOR
VARIABLES = LOGIC_VARIABLES

MAX_OPS = 12
PER_BIN = 4600
GENERATOR_SEED = 20150601
CITATION = (
    "Bowman, Manning & Potts 2015, Tree-structured composition in neural networks without tree-structured "
    "architectures; Tran 2018, Predicting and discovering linguistic structure with neural networks (thesis, §5.6)"
)


def evaluate(tokens: Sequence[str]) -> int:
    """Truth-table mask of a fully bracketed formula."""
    value, end = _parse(tokens, 0)
    if end != len(tokens):
        raise ValueError(f"trailing tokens in {' '.join(tokens)!r}")
    return value


def _parse(tokens: Sequence[str], i: int) -> tuple[int, int]:
    token = tokens[i]
    if token in VARIABLE_MASKS:
        return VARIABLE_MASKS[token], i + 1
    if token != "(":
        raise ValueError(f"unexpected {token!r}")
    if tokens[i + 1] == "not":
        inner, i = _parse(tokens, i + 2)
        value = ~inner & ALL_WORLDS
    else:
        left, i = _parse(tokens, i + 1)
        operator = tokens[i]
        right, i = _parse(tokens, i + 1)
        value = left & right if operator == "and" else left | right if operator == "or" else -1
        if value < 0:
            raise ValueError(f"unknown operator {operator!r}")
    if tokens[i] != ")":
        raise ValueError("missing )")
    return value, i + 1


class FormulaGenerator:
    """Random formulas with an exact number of operators."""

    def __init__(self, seed: int) -> None:
        self.rng = np.random.default_rng(seed)

    def formula(self, ops: int, variables: Sequence[str]) -> list[str]:
        if ops == 0:
            return [variables[int(self.rng.integers(len(variables)))]]
        if self.rng.random() < 1 / 3:
            return ["(", "not", *self.formula(ops - 1, variables), ")"]
        left = int(self.rng.integers(ops))
        operator = "and" if self.rng.random() < 0.5 else "or"
        return ["(", *self.formula(left, variables), operator, *self.formula(ops - 1 - left, variables), ")"]

    def pair(self, bin_ops: int) -> tuple[list[str], list[str]]:
        variables = [VARIABLES[i] for i in self.rng.choice(len(VARIABLES), size=4, replace=False)]
        first = self.formula(bin_ops, variables)
        second = self.formula(int(self.rng.integers(bin_ops + 1)), variables)
        return (first, second) if self.rng.random() < 0.5 else (second, first)


def _example(example_id: str, premise: list[str], hypothesis: list[str], bin_ops: int) -> Example:
    return Example(
        id=example_id,
        input=[*premise, SEPARATOR, *hypothesis],
        label=relation(evaluate(premise), evaluate(hypothesis)),
        meta={"n_ops": bin_ops},
    )


def bin_sizes(bin_ops: int) -> tuple[int, int, int]:
    """(train, dev, test) sizes of one bin."""
    total = len(VARIABLES) ** 2 if bin_ops == 0 else PER_BIN
    tenth = round(0.1 * total)
    return total - 2 * tenth, tenth, tenth


@cache
def pool() -> dict[int, tuple[list[Example], list[Example], list[Example]]]:
    """Every bin's (train, dev, test) examples; identical for every suite."""
    generator = FormulaGenerator(GENERATOR_SEED)
    out = {}
    for bin_ops in range(MAX_OPS + 1):
        if bin_ops == 0:
            pairs = [([p], [h]) for p in VARIABLES for h in VARIABLES]
            order = generator.rng.permutation(len(pairs))
            pairs = [pairs[i] for i in order]
        else:
            pairs, seen = [], set()
            while len(pairs) < PER_BIN:
                premise, hypothesis = generator.pair(bin_ops)
                masks = evaluate(premise), evaluate(hypothesis)
                key = (" ".join(premise), " ".join(hypothesis))
                if key in seen or any(m in (0, ALL_WORLDS) for m in masks):
                    continue
                seen.add(key)
                pairs.append((premise, hypothesis))
        train, dev, _ = bin_sizes(bin_ops)
        examples = [_example(f"ops{bin_ops:02d}-{i:04d}", p, h, bin_ops) for i, (p, h) in enumerate(pairs)]
        out[bin_ops] = (examples[:train], examples[train : train + dev], examples[train + dev :])
    return out


class LogicInference(Suite):
    """Train on bins up to `max_train_ops`, test on every bin."""

    max_train_ops: ClassVar[int]
    breakdown_keys: ClassVar[tuple[str, ...]] = ("n_ops",)
    licence = GENERATED_LICENCE

    def generate(self, draw: int, files: SourceFiles) -> dict[str, list[Example]]:
        bins = pool()
        limit = self.max_train_ops
        splits = {
            "train": [e for b in range(limit + 1) for e in bins[b][0]],
            "dev": [e for b in range(limit + 1) for e in bins[b][1]],
            **{f"ops-{b:02d}": bins[b][2] for b in bins},
        }
        splits["pooled"] = [e for b in bins for e in bins[b][2]]
        return splits

    def oracle(self, splits: Mapping[str, Split]) -> LogicSolver:
        return LogicSolver(evaluate)


def _splits(limit: int) -> list[SplitSpec]:
    """Train and dev on bins 0..limit; one test split per bin, in-distribution up to the limit; `pooled`."""
    sizes = {b: bin_sizes(b) for b in range(MAX_OPS + 1)}

    def role(b: int) -> TestRole:
        return "in-distribution" if b <= limit else "generalisation"

    return [
        train_split(sum(sizes[b][0] for b in range(limit + 1))),
        dev_split(sum(sizes[b][1] for b in range(limit + 1))),
        *(scored_split(f"ops-{b:02d}", sizes[b][2], role(b), f"pairs whose bin is {b}") for b in sizes),
        scored_split("pooled", sum(s[2] for s in sizes.values()), role(MAX_OPS), "every bin", ranked=False),
    ]


LOGIC = SuiteSpec(
    id="logic-inference",
    version="1.0.0",
    family="systematicity",
    protocol="classification",
    description="Natural-logic relation between two propositional formulas.",
    citation=CITATION,
    how_checked=CHECKED,
    deviations=DEVIATIONS,
    primary_metric="accuracy",
    higher_is_better=True,
    labels=LABELS,
    splits=_splits(MAX_OPS),
)
"""What the four suites share; each declares its id, description and the bins it trains on."""


TRAIN_LIMITS = (3, 6, 9, 12)
"""The operator limits of the set's members, one suite each (`logic-inference-leN`)."""
LOGIC_INFERENCE = SuiteSet(
    member(
        LogicInference,
        f"LogicLe{limit}",
        f"Logical inference trained on at most {limit} operators.",
        max_train_ops=limit,
        spec=LOGIC.variant(
            id=f"logic-inference-le{limit}",
            description="Natural-logic relation between two propositional formulas; trained on at most "
            f"{limit} operators, tested on 0 to 12.",
            splits=_splits(limit),
        ),
    )
    for limit in TRAIN_LIMITS
)
"""`logic-inference-le3` to `logic-inference-le12`."""

__getattr__ = SuiteSet.module_getattr(LOGIC_INFERENCE)
