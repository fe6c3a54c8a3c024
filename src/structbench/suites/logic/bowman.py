"""Propositional-logic inference on Bowman, Manning & Potts (2015)'s published data, as Tran (2018, §5.6) uses it.

Reproduces the logical-inference experiment of Tran's thesis (ch. 5, §5.6, "LSTM vs FAN",
Figure 5.5) on the pairs Bowman, Manning & Potts published with "Tree-structured composition
in neural networks without tree-structured architectures" (github.com/sleepinyourhat/
vector-entailment, commit 360abf1, folder `propositionallogic/`): two formulas over the
variables `a`…`f` with `and`, `or` and `not`, in Bowman's bracketing (`( a ( and b ) )`,
`( not a )`), labelled with one of the seven natural-logic relations between the sets of
truth assignments that satisfy them (`=`, `<`, `>`, `^`, `|`, `v`, `#`; the definitions of
`logic-inference-*`). The input is the left formula's tokens, `<sep>`, the right formula's.

The published files (from the upstream generator, `propositionallogic/generate_neg_set_data.py`,
and measured on the files): pairs over 4 of the 6 variables, tautologies and contradictions
discarded. The digit of `trainN`/`testN` is the pair's bin: the larger of the two formulas'
operator counts (`and`, `or` and `not` tokens), capped at 12, so bin 12 holds pairs of 12 to
19 operators (test12: 451 with 12, 402 with 13-18). Each bin was deduplicated, and its first
85% of lines written to `trainN`, the rest to `testN`: no pair occurs twice in any file or in
both files of a bin, and no file has blank lines; 249,069 pairs in all, bins peaking at 5
operators (40,179 pairs) and thinning to 5,684 in bin 12. Label shares over all files: `#`
53.1%, `<` 11.0%, `>` 11.0%, `|` 10.7%, `v` 10.6%, `=` 1.9%, `^` 1.7%. Bin 0 holds the 36
pairs of single variables. Bowman's `and-or-deep*` configurations (`config/AndOr.m`) train on
bins up to 3, 4, 6 or 10 of a second draw (`propositionallogic/longer2/`) and test on its
bins 1-12; these top-level files are the first draw, read by the older `and-or` setting.

Tran (§5.6.3): "the data is divided into 13 bins based on the number of logical operations.
Both FANs and LSTMs are trained on samples with at most n logical operations and tested on
all bins", n ∈ {3, 6, 9, 12}. His code (github.com/ketranm/fan_vs_rnn) regenerates data with
Bowman's generator (the thesis says 60,000 samples, the script draws 600,000) and splits each
bin 0.8/0.1/0.1 into train, valid and test; `logic.py` selects the checkpoint by valid
accuracy pooled over bins 1-12 and reports test accuracy per bin 1-12 and pooled over them:
bin 0 is trained on but never scored.

Four suites, `logic-bowman-le3`, `-le6`, `-le9` and `-le12`: train on `train0`…`trainK`
(K = 3, 6, 9, 12) less a dev split, and test on every published test file from 1 to 12, one
split per bin (`ops-01` … `ops-12`, exactly that file's lines) plus `pooled`, bins 1-12
together as Tran averages them. Dev: a tenth of each training file (rounded half up; seeded
per bin, so a bin's dev lines are the same in every suite), carved per bin so that dev
follows train's bin distribution; a tenth as for SCAN's dev and close to Tran's (his valid
is a ninth of train plus valid). Example ids are the file and 0-based line
(`train03-01234`, `test07-00012`; dev items keep their train ids); `n_ops` is the bin.

Scorers: accuracy (primary), broken down by bin (`n_ops`). Test roles: a bin's split is
in-distribution where the suite trains on that bin (b <= K), generalisation otherwise;
`pooled` is the union of the bin splits, shown but not ranked (it counts every item twice),
in-distribution for `-le12` only. The oracle parses both formulas into 64-bit truth tables
and computes the relation; always answering `#` (majority) scores 0.530 on `pooled`.

How the suites were checked, and where they deviate from the paper, are declared in their spec
(`CHECKED` and `DEVIATIONS` below: the spec's `how_checked` and `deviations`); the suite card shows both.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import ClassVar

import numpy as np

from structbench.data.sources import SourceFile
from structbench.specs import Example, Split, SplitSpec, SuiteSpec, TestRole, dev_split, scored_split, train_split
from structbench.suite import SourceFiles, Suite, SuiteSet, member
from structbench.suites.common import PUBLISHED_FIX, malformed
from structbench.suites.logic.common import ALL_WORLDS, LOGIC_RELATIONS, LOGIC_SEPARATOR, VARIABLE_MASKS, LogicSolver

CHECKED = """How it was checked: the pinned SHA-256 are those of the commit's blobs (`git show
360abf1:propositionallogic/FILE | sha256sum`, all 26 files). tests/suites/logic/test_bowman.py checks
the reference copy against them; that our relation of the two truth tables gives every label
of all 26 files (no disagreement among the 249,069; Bowman's relation function differs from
ours only for tautologies and contradictions, which his generator discards) and that each
pair's bin follows the rule above; that split sizes are the files' line counts and dev and
train partition the training files; and that the oracle scores 1.0 on every test split."""
"""How the suites of this module were checked against their paper (`SuiteSpec.how_checked`)."""
DEVIATIONS = """Deviations from Tran: the published files rather than a regeneration (Tran's are not
published, so bin sizes and the 85/15 train/test ratio are Bowman's); dev comes from the
training bins only, where Tran selects on valid items of every bin, the longer untrained
ones included (which leaks the generalisation condition into model selection); "at most n"
is read as bins 0..n inclusive, as the thesis says (Tran's code, `range(max_bin)`, trains
on bins below its `-max_bin` argument)."""
"""Where the suites of this module depart from their paper, and why (`SuiteSpec.deviations`)."""

LABELS = LOGIC_RELATIONS
SEPARATOR = LOGIC_SEPARATOR

COMMIT = "360abf10fcb09857948c9b33acf4bbaa8080ae32"
URL = f"https://raw.githubusercontent.com/sleepinyourhat/vector-entailment/{COMMIT}/propositionallogic"
FOLDER = "logic_bowman"
MAX_OPS = 12
TEST_BINS = range(1, MAX_OPS + 1)
"""The scored bins: Bowman and Tran both test on 1-12."""
DEV_SEED = 20150603
CITATION = (
    "Bowman, Manning & Potts 2015, Tree-structured composition in neural networks without tree-structured "
    "architectures; Tran 2018, Predicting and discovering linguistic structure with neural networks (thesis, §5.6)"
)

LINES = {
    "train": (30, 2319, 12451, 23252, 30373, 34152, 32952, 26671, 18962, 12634, 8181, 4894, 4831),
    "test": (6, 410, 2198, 4104, 5361, 6027, 5816, 4707, 3347, 2230, 1444, 864, 853),
}
"""Line counts of the published `train0`…`train12` and `test0`…`test12` (index = bin)."""
SHA256 = {
    "train": (
        "6b7679d24a5121e747bbb6e1606c33773ef2803d2f1e3e5961f396bfe6d5ead1",
        "b18140de23966481c20d6d4cac1f014322f760d6f891f643ff4beca48df1d347",
        "b08cfe4e89fa941d053b7ba229f3743d25d0a73235c628bf45da645336ecc22a",
        "ab0dd5694b97815ed29d2be7016790ba78b5173b68df5702ed4d0f9cad087041",
        "ca53b91edcb966330ca6a4241ca313932f3dd897ce7af18b2446e6c551bb63fc",
        "8c6db46c7527aea7f685400075c2cebad2a36acb4904371c052827f3769baa00",
        "ab507a99dcd2f7a2c4a3c81fbdbf0e55e1169d48f1be177ee8278778f34cf141",
        "939a58dfb0ca552eedf479c4db414e115da88d9a5e665cf101a35dfa735d1d51",
        "469f3e45b28a63ddc48f687d9b8a6813f431f8cd38366c90facf8ea6e677dc34",
        "b65a324de9862d74de4165696b5570342f5e323eb95ceccb679959a71978d769",
        "dd50e0c545773f84767c4ecde1a4d331217e7a8cc2ecfb487a80525d05b73e1a",
        "18012480bb981a6d03cb3225b0e5761b84df9e4e2a659b5fdf911e0d0b35993e",
        "cfeced4bcf2c4364fec121b1c97cbd59a535a377d6123bd280400d627da9ec4c",
    ),
    "test": (
        "0f0f47ea2699b52c8e49d84466afdae457111320669b328e752b690d21dab0ef",
        "d846fd8e2e10c44b95796cd31a3ea9056bd2ab7e510447e92172d252b5a4ebcf",
        "74d3b9346bbdff39e9f6bd81bb84446309b3918e4d6dbae820280958c935fb82",
        "c22eb4b2120fd2599eea1772ff2983e44b5e5501f17bfedc7f526ab6ddea9557",
        "171a5b9ff84c8c8972662d7ee84d9bae88a0b0caf121c779e1898d08ff23d056",
        "4456aab62f4189a95645822d7fd22b8b12ebadc15679fb37ed93921d1ee11004",
        "b99fa4c2b48db710213cbfcf948ab08fdaf327c07f5e7fa978747f1cf73c53d0",
        "9951b19945ea6b7b388118b05ac497b197aba7e24fbd501c5d9cf71f57433da5",
        "8b653190922c9b5902339714e79d22654e0f34e61d691e0d592589a92882bc30",
        "6d404315b4e0b15e70084f621f7e9677deebf7378016b0df95fbb63487851ed5",
        "bb3b3d312bb3223bdad030695d6004dc9d1d6131fe26a5531f2e54cc1bd1e780",
        "f6ee99fac9b1459448f6b2dc0a263fab7493d9a1e05ed1d32e0674031aa4fda5",
        "37d63e62b894cd2f25977d3092c71da23244cbadcfa12909183f57da938abb9f",
    ),
}
"""SHA-256 of each published file at the pinned commit (index = bin)."""
SOURCES = tuple(
    SourceFile(path=f"{FOLDER}/{part}{b}", url=f"{URL}/{part}{b}", sha256=SHA256[part][b])
    for part in ("train", "test")
    for b in range(MAX_OPS + 1)
)


def formula_mask(tokens: Sequence[str]) -> int:
    """Truth table (64-bit mask) of a formula in Bowman's bracketing: `( X ( and Y ) )`, `( X ( or Y ) )`,
    `( not X )` or a variable; one shift-reduce pass, reducing at every `)`."""
    stack: list[int | str | tuple[str, int]] = []
    for token in tokens:
        if token != ")":
            mask = VARIABLE_MASKS.get(token)
            stack.append(token if mask is None else mask)
            continue
        inner = stack.pop() if stack else None
        head = stack.pop() if stack else None
        if not stack or stack.pop() != "(":
            raise ValueError(f"{' '.join(tokens)!r} is not a formula in Bowman's bracketing.")
        if isinstance(inner, int) and head == "not":
            stack.append(~inner & ALL_WORLDS)
        elif isinstance(inner, int) and head in ("and", "or"):
            stack.append((str(head), inner))  # `( and Y )`, waiting for its left operand
        elif isinstance(head, int) and isinstance(inner, tuple):
            operator, right = inner
            stack.append(head & right if operator == "and" else head | right)
        else:
            raise ValueError(f"{' '.join(tokens)!r} is not a formula in Bowman's bracketing.")
    if len(stack) != 1 or not isinstance(stack[0], int):
        raise ValueError(f"{' '.join(tokens)!r} is not a formula in Bowman's bracketing.")
    return stack[0]


def parse_file(text: str, part: str, bin_ops: int) -> list[Example]:
    """The lines `relation<TAB>left<TAB>right` of one published file, ids `{part}{bin:02d}-{line:05d}`."""
    examples = []
    for number, line in enumerate(text.splitlines()):
        columns = line.split("\t")
        if len(columns) != 3 or columns[0] not in LABELS:
            expected = "`relation<TAB>left<TAB>right`"
            raise malformed(f"{FOLDER}/{part}{bin_ops}", number + 1, expected, repr(line[:80]), PUBLISHED_FIX)
        label, left, right = columns
        examples.append(
            Example(
                id=f"{part}{bin_ops:02d}-{number:05d}",
                input=[*left.split(), SEPARATOR, *right.split()],
                label=label,
                meta={"n_ops": bin_ops},
            )
        )
    return examples


def dev_size(lines: int) -> int:
    """A tenth of a training file, rounded half up."""
    return (lines + 5) // 10


def dev_positions(lines: int, bin_ops: int) -> set[int]:
    """Line indices of a training file held out for dev: seeded per bin, the same in every suite."""
    rng = np.random.default_rng([DEV_SEED, bin_ops])
    return {int(i) for i in rng.choice(lines, size=dev_size(lines), replace=False)}


class LogicBowman(Suite):
    """Train on the published bins 0..`max_train_ops` (less dev), test on bins 1-12."""

    max_train_ops: ClassVar[int]
    breakdown_keys: ClassVar[tuple[str, ...]] = ("n_ops",)
    sources = SOURCES
    # github.com/sleepinyourhat/vector-entailment at 360abf1 has no licence file, and its README
    # states no terms for `propositionallogic/`
    licence = "none stated by the authors (the vector-entailment repository has no licence)"

    def generate(self, draw: int, files: SourceFiles) -> dict[str, list[Example]]:
        train, dev = [], []
        for b in range(self.max_train_ops + 1):
            examples = parse_file(files.read_text(f"{FOLDER}/train{b}"), "train", b)
            held = dev_positions(len(examples), b)
            train += [e for i, e in enumerate(examples) if i not in held]
            dev += [e for i, e in enumerate(examples) if i in held]
        tests = {f"ops-{b:02d}": parse_file(files.read_text(f"{FOLDER}/test{b}"), "test", b) for b in TEST_BINS}
        return {"train": train, "dev": dev, **tests, "pooled": [e for split in tests.values() for e in split]}

    def oracle(self, splits: Mapping[str, Split]) -> LogicSolver:
        return LogicSolver(formula_mask)


def _splits(limit: int) -> list[SplitSpec]:
    """Sizes from the published line counts: train and dev from bins 0..limit, one test split per bin 1-12, `pooled`."""
    trained = LINES["train"][: limit + 1]
    tests = LINES["test"]

    def role(b: int) -> TestRole:
        return "in-distribution" if b <= limit else "generalisation"

    def plus(b: int) -> str:
        return " or more" if b == MAX_OPS else ""

    return [
        train_split(sum(n - dev_size(n) for n in trained), f"published train0..train{limit} less dev"),
        dev_split(sum(dev_size(n) for n in trained), f"a tenth of each of train0..train{limit} (model selection)"),
        *(
            scored_split(f"ops-{b:02d}", tests[b], role(b), f"the published test{b}: {b}{plus(b)} operators")
            for b in TEST_BINS
        ),
        scored_split("pooled", sum(tests[b] for b in TEST_BINS), role(MAX_OPS), "bins 1 to 12", ranked=False),
    ]


def _description(limit: int) -> str:
    return (
        "Natural-logic relation between two propositional formulas, on Bowman et al.'s published pairs; "
        f"trained on at most {limit} operators, tested on 1 to 12 (12: 12 or more)."
    )


LOGIC_BOWMAN = SuiteSpec(
    id="logic-bowman",
    version="1.0.0",
    family="systematicity",
    protocol="classification",
    description=_description(MAX_OPS),
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
"""The operator limits of the set's members, one suite each (`logic-bowman-leN`)."""
LOGIC_BOWMAN_SET = SuiteSet(
    member(
        LogicBowman,
        f"LogicBowmanLe{limit}",
        f"Bowman et al.'s published pairs, trained on at most {limit} operators.",
        max_train_ops=limit,
        spec=LOGIC_BOWMAN.variant(id=f"logic-bowman-le{limit}", description=_description(limit), splits=_splits(limit)),
    )
    for limit in TRAIN_LIMITS
)
"""`logic-bowman-le3` to `logic-bowman-le12`."""

__getattr__ = SuiteSet.module_getattr(LOGIC_BOWMAN_SET)
