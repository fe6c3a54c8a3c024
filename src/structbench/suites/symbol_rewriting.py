"""Symbol rewriting (Weber, Shekhar & Balasubramanian 2018; Korrel 2018 §4.2).

Each of 40 input symbols (`A`…`Z` without `S`, then `AS`…`OS`; symbol k counts from 1)
must be rewritten, in input order, as the three symbols `A{k}_v`, `B{k}_v`, `C{k}_v` in any
order, each in either variant v ∈ {1, 2}: many outputs are correct for one input, so that a
model cannot memorise. Inputs end with the end-of-sequence token `.`; attention targets send
each output triple to its input symbol and the output end to `.` (as in the published test
files; the published `grammar.val.tsv` instead points a repeated symbol's triples at its
first occurrence, and is loaded as published).

- `symbol-rewriting` generates the data: train 90,000 and dev 10,000 (the paper's 100,000
  inputs of 5-10 distinct symbols, 10% kept for validation as Korrel did), and four tests of
  2,000: standard (5-10 distinct symbols), repeat (5-10 symbols in runs of one symbol, at
  least one run longer than 1, as in the published repeat set), short (1-4 distinct) and long
  (11-15 distinct). The listed targets choose order and variants uniformly at random.
- `symbol-rewriting-mt` loads the published files of the machine-tasks repository
  (github.com/i-machine-think/machine-tasks, commit 467a283): train = the small train file
  (10,000; the full 100,000-line file is not in our reference copy), dev = `grammar.val.tsv`
  (5,000) and the four test files. That dev set is Weber et al.'s mixed validation set, which
  mixes all test distributions (it even shares 62 inputs with the repeat test file):
  selecting models on it leaks the test conditions, which is why the generated suite has a
  dev split drawn from the train distribution only.

Scorers: `valid_accuracy` (primary), the paper's accuracy: an output is right when it is any
valid rewriting, i.e. exactly three tokens per input symbol and each triple made of the
`A`, `B` and `C` of that symbol's index, each once, in either variant (Weber et al.'s
SymbolRewritingAccuracy, without its end-of-sequence bookkeeping since our outputs carry no
EOS); `sequence_accuracy`, exact match to the listed target; token accuracy; breakdown of
`valid_accuracy` by input length (`n_symbols`). The oracle writes `A{k}_1 B{k}_1 C{k}_1` per
symbol: valid everywhere, rarely equal to the listed target.

Test roles: `standard` is in-distribution (5-10 distinct symbols, as in train); `repeat`,
`short` and `long` are generalisation splits (repeated symbols, or input lengths training
never shows), in both suites. The four test sets hold no input in common.

How the suites were checked, and where they deviate from the paper, are declared in their spec
(`CHECKED` and `DEVIATIONS` below: the spec's `how_checked` and `deviations`); the suite card shows both.
"""

from __future__ import annotations

import itertools
from collections.abc import Callable, Mapping, Sequence
from typing import Any, ClassVar

import numpy as np

from structbench.data.sources import SourceFile
from structbench.scoring import PerExample
from structbench.specs import Example, Split, SplitSpec, SuiteSpec, dev_split, scored_split, train_split
from structbench.suite import SourceFiles, Suite
from structbench.suites.common import GENERATED_LICENCE, parse_machine_tasks

CHECKED = """How it was checked (tests/suites/test_symbol_rewriting.py): over the six published files (23,000
targets) the symbol inventory and index of every symbol are the ones above, and 22,347
targets are valid rewritings; all 653 others rewrite `B` with index 1 (A's) instead of 2, in
699 of the 4,213 published occurrences of `B`: a quirk of the published data, which the
paper's definition of a correct output does not allow, so we do not either. The published
test files' attention targets are the ones we generate."""
"""How the suites of this module were checked against their paper (`SuiteSpec.how_checked`)."""
DEVIATIONS = """Deviation: the repeat generator is
our reading of the published repeat set's shape."""
"""Where the suites of this module depart from their paper, and why (`SuiteSpec.deviations`)."""

SYMBOLS = tuple([c for c in "ABCDEFGHIJKLMNOPQRTUVWXYZ"] + [f"{c}S" for c in "ABCDEFGHIJKLMNO"])
INDEX = {symbol: i + 1 for i, symbol in enumerate(SYMBOLS)}
EOS = "."
ORDERS = tuple(itertools.permutations("ABC"))
GENERATOR_SEED = 20180724
GENERATED_SIZES = {"train": 90_000, "dev": 10_000, "standard": 2_000, "repeat": 2_000, "short": 2_000, "long": 2_000}
CITATION = (
    "Weber, Shekhar & Balasubramanian 2018, The fine line between linguistic generalization and failure in "
    "seq2seq-attention models; Korrel 2018, From Sequence to Attention (MSc thesis, §4.2)"
)
MT_COMMIT = "467a283a970fa74d34b581988f7fd7519da168f0"
MT_URL = f"https://raw.githubusercontent.com/i-machine-think/machine-tasks/{MT_COMMIT}/SymbolRewriting/data"
MT_FILES = {
    "train": ("grammar_std.train.small.tsv", "52dae2d23a946ae04a84c482abda3dbf58b76353d393f6eb2576703202b66aab"),
    "dev": ("grammar.val.tsv", "eeff5b5a2179c8dcc869f7cf92bb0f5b354c4e5b9409a58f4b3a91ce1827c7ff"),
    "standard": ("grammar_std.tst.full.tsv", "766ad0b3f09113de2f6d6ef208db319c656ad9863dc9aee2bef5f57542ab7640"),
    "repeat": ("grammar_repeat.tst.full.tsv", "ceb88f99fdbe61ca0474c9905cee13cc6cd08afdfd7fd17711d2e800d3202443"),
    "short": ("grammar_short.tst.full.tsv", "f47a82c30713fc2a965d989f755677aedf26b9cbba3cf53261a607ee2653d180"),
    "long": ("grammar_long.tst.full.tsv", "80e6d9867a002ce4d85cf104d68b340dde7c56842afc406773ff7d4e186e5982"),
}


def attention_targets(symbols: Sequence[str]) -> list[int]:
    """Each output triple attends to its own input symbol; the end attends to `.`."""
    return [i for i in range(len(symbols)) for _ in range(3)] + [len(symbols)]


def is_valid(symbols: Sequence[str], output: Sequence[str]) -> bool:
    """Whether `output` is a correct rewriting of `symbols` (any order, any variants)."""
    if len(output) != 3 * len(symbols):
        return False
    for i, symbol in enumerate(symbols):
        k = INDEX.get(symbol)
        triple = output[3 * i : 3 * i + 3]
        letters = set()
        for token in triple:
            head, _, variant = token.partition("_")
            if variant not in ("1", "2") or head[1:] != str(k):
                return False
            letters.add(head[0])
        if letters != {"A", "B", "C"}:
            return False
    return True


def make_example(example_id: str, symbols: Sequence[str], target: Sequence[str], attention: Sequence[int]) -> Example:
    return Example(
        id=example_id,
        input=[*symbols, EOS],
        target=list(target),
        attention=list(attention),
        meta={"n_symbols": len(symbols)},
    )


class SymbolRewritingSolver:
    """Writes `A{k}_1 B{k}_1 C{k}_1` for every symbol: always a valid rewriting."""

    name = "symbol-rewriting-oracle"
    protocols = ("transduction",)

    def transduce(self, inputs: list[list[str]]) -> list[list[str]]:
        return [[f"{letter}{INDEX.get(s, 0)}_1" for s in tokens if s != EOS for letter in "ABC"] for tokens in inputs]


class SymbolRewritingBase(Suite):
    """Valid-rewriting accuracy (the primary metric) and the oracle, shared by both suites."""

    breakdown_keys: ClassVar[tuple[str, ...]] = ("n_symbols",)

    def extra_metrics(
        self, split: str, examples: Sequence[Example], predictions: Sequence[Any]
    ) -> Mapping[str, PerExample]:
        return {
            "valid_accuracy": [float(is_valid(e.input[:-1], p)) for e, p in zip(examples, predictions, strict=True)]
        }

    def oracle(self, splits: Mapping[str, Split]) -> SymbolRewritingSolver:
        return SymbolRewritingSolver()


def _splits(train: int, dev: int, test: int, dev_description: str) -> list[SplitSpec]:
    """A member's splits: train, dev, the in-distribution standard test and three generalisation tests."""
    return [
        train_split(train, "inputs of 5-10 distinct symbols"),
        dev_split(dev, dev_description),
        scored_split("standard", test, "in-distribution", "5-10 distinct symbols, as in train"),
        scored_split("repeat", test, "generalisation", "5-10 symbols in runs of one symbol"),
        scored_split("short", test, "generalisation", "1-4 distinct symbols"),
        scored_split("long", test, "generalisation", "11-15 distinct symbols"),
    ]


SYMBOL_REWRITING = SuiteSpec(
    id="symbol-rewriting",
    version="1.0.0",
    family="systematicity",
    protocol="transduction",
    description="Rewrite each input symbol as an unordered triple of its three output symbols; tests on standard, "
    "repeated, shorter and longer inputs.",
    citation=CITATION,
    how_checked=CHECKED,
    deviations=DEVIATIONS,
    primary_metric="valid_accuracy",
    higher_is_better=True,
    recipe="symbol-rewriting",
    splits=_splits(
        GENERATED_SIZES["train"],
        GENERATED_SIZES["dev"],
        GENERATED_SIZES["standard"],
        "10% of the generated inputs, train distribution (model selection)",
    ),
)
"""The generated suite; the published files (`symbol-rewriting-mt`) are a variant of it."""


class Generator:
    """Random inputs and one random valid target each."""

    def __init__(self, seed: int) -> None:
        self.rng = np.random.default_rng(seed)

    def distinct(self, low: int, high: int) -> list[str]:
        n = int(self.rng.integers(low, high + 1))
        return [SYMBOLS[i] for i in self.rng.choice(len(SYMBOLS), size=n, replace=False)]

    def runs(self, low: int, high: int) -> list[str]:
        while True:
            n = int(self.rng.integers(low, high + 1))
            symbols: list[str] = []
            longest = 0
            while len(symbols) < n:
                symbol = SYMBOLS[int(self.rng.integers(len(SYMBOLS)))]
                run = int(self.rng.integers(1, n - len(symbols) + 1))
                symbols.extend([symbol] * run)
                longest = max(longest, run)
            if longest > 1:
                return symbols

    def target(self, symbols: Sequence[str]) -> list[str]:
        orders = self.rng.integers(len(ORDERS), size=len(symbols)).tolist()
        variants = self.rng.integers(1, 3, size=3 * len(symbols)).tolist()
        letters = [letter for order in orders for letter in ORDERS[order]]
        return [
            f"{letter}{INDEX[symbols[i // 3]]}_{variant}"
            for i, (letter, variant) in enumerate(zip(letters, variants, strict=True))
        ]

    def split(self, prefix: str, size: int, draw_symbols: Callable[[], list[str]]) -> list[Example]:
        examples = []
        for i in range(size):
            symbols = draw_symbols()
            examples.append(
                make_example(f"{prefix}-{i:05d}", symbols, self.target(symbols), attention_targets(symbols))
            )
        return examples


class SymbolRewriting(SymbolRewritingBase):
    """Generated symbol rewriting: train 90,000, dev 10,000, four tests of 2,000."""

    spec = SYMBOL_REWRITING
    licence = GENERATED_LICENCE

    def generate(self, draw: int, files: SourceFiles) -> dict[str, list[Example]]:
        g = Generator(GENERATOR_SEED + draw)
        return {
            "train": g.split("train", GENERATED_SIZES["train"], lambda: g.distinct(5, 10)),
            "dev": g.split("dev", GENERATED_SIZES["dev"], lambda: g.distinct(5, 10)),
            "standard": g.split("standard", GENERATED_SIZES["standard"], lambda: g.distinct(5, 10)),
            "repeat": g.split("repeat", GENERATED_SIZES["repeat"], lambda: g.runs(5, 10)),
            "short": g.split("short", GENERATED_SIZES["short"], lambda: g.distinct(1, 4)),
            "long": g.split("long", GENERATED_SIZES["long"], lambda: g.distinct(11, 15)),
        }


def published_examples(text: str, source: str, split: str) -> list[Example]:
    """The examples of a published symbol-rewriting file (`source`, its path) as split `split`, ids
    `{split}-{line:05d}` (the line's 0-based number); its inputs end in `.`, our `EOS`, as ours do."""
    return [
        make_example(f"{split}-{row.line:05d}", row.input[:-1], row.target, row.attention)
        for row in parse_machine_tasks(text, source)
    ]


class SymbolRewritingMachineTasks(SymbolRewritingBase):
    """The published symbol-rewriting files (small train set, mixed validation set, four tests)."""

    spec = SYMBOL_REWRITING.variant(
        id="symbol-rewriting-mt",
        description="The published symbol-rewriting data of Weber et al. 2018 (machine-tasks): small train set, the "
        "mixed validation set and the four test sets.",
        splits=_splits(10_000, 5_000, 2_000, "Weber et al.'s mixed validation set (every test distribution)"),
    )
    sources = tuple(
        SourceFile(path=f"symbol_rewriting/{name}", url=f"{MT_URL}/{name}", sha256=sha)
        for name, sha in MT_FILES.values()
    )
    # github.com/i-machine-think/machine-tasks at 467a283 states no licence for its own data: its only
    # licence file, SCAN/LICENSE, is the copy of SCAN's that covers the SCAN folder
    licence = "none stated by the authors (the machine-tasks repository has no licence for these files)"

    def generate(self, draw: int, files: SourceFiles) -> dict[str, list[Example]]:
        return {
            split: published_examples(files.read_text(f"symbol_rewriting/{name}"), f"symbol_rewriting/{name}", split)
            for split, (name, _) in MT_FILES.items()
        }
