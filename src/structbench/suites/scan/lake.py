"""SCAN (Lake & Baroni 2018): simple, length and add-primitive splits, with a SCAN interpreter.

Reproduces the four standard splits of the SCAN release (github.com/brendenlake/SCAN,
commit c4b756c; Korrel 2018, §1.3 and §4.3, SCAN experiments 1-3): commands such as `jump
around left twice after walk` translated into action sequences (`I_JUMP`, `I_TURN_LEFT`, ...).
Train and test are the published files, repeated primitive examples included. SCAN has no dev
split, and choosing a model on test is a known leak, so a dev split of 10% of the published
train lines (fixed seed, uniform) is carved out for model selection; `train` holds the rest, in
published order. Example ids are the line positions in the published files (`train-00042`),
so repeated lines stay distinct.

From version 2.0.0 every example carries the attention targets of Korrel 2018 §5.3.3 (each
action attends to the word that produced it, the end to `.`; `structbench.suites.scan.common`
states the rule and our choice between repeated words), so that `attentive-guidance` and
`attentive-guidance-oracle` run on SCAN, and every input ends with the end-of-sequence token
`.`, as in Korrel's annotated SCAN files, whose targets ours equal line for line; the tests
(tests/suites/scan/test_attention.py) check that every target points at the word it names. Experiments
4-6 (Loula, Baroni & Lake 2018) are in `structbench.suites.scan.loula`.

How the suites were checked, and where they deviate from the paper, are declared in their spec
(`CHECKED` and `DEVIATIONS` below: the spec's `how_checked` and `deviations`); the suite card shows both.

Scorers: exact match (`sequence_accuracy`, primary; the paper's accuracy), token accuracy,
and breakdowns by output length (`n_actions`), by command template (`template`: the command
with every primitive replaced by `U`, every direction by `D`, repetitions dropped and `turn`
kept, e.g. `U around D after turn D`; 105 templates), and from 2.0.0 by command length in
words (`n_words`, `.` not counted) and by the modifiers the command holds (`around_opposite`:
`around`, `opposite`, `around+opposite` or `neither`).

Test roles: `scan-simple` tests in distribution (a random split of one command
distribution); the length and add-primitive tests are generalisation splits (longer outputs, or
a primitive in compositions never seen in training).
"""

from __future__ import annotations

from typing import ClassVar

from structbench.data.sources import SourceFile
from structbench.specs import Example, SplitSpec, SuiteSpec, TestRole, dev_split, scored_split, train_split
from structbench.suite import SourceFiles
from structbench.suites.scan.common import (
    CITATION,
    DEV_FRACTION,
    ScanSuite,
    parse_scan_file,
    scan_source,
)

CHECKED = """The interpreter (grammar and semantics of the paper's Tables 4.1-4.2) is the oracle of every
SCAN suite. How it was checked (tests/suites/scan/test_lake.py): it reproduces all 20,910 pairs of the
official `tasks.txt`; the length split equals the rule "every command with at most 22
actions in train, the rest in test" applied to `tasks.txt`; the add-primitive splits equal
"the primitive alone in train (repeated as published: `jump` 1,467 times, `turn left` 2,189
times, once in `tasks.txt` itself), every other command containing it in test, the rest in
train"; the simple split is an 80/20 partition of `tasks.txt`."""
"""How the suites of this module were checked against their paper (`SuiteSpec.how_checked`)."""
DEVIATIONS = """Deviations: the dev split (train is 90% of the published train file); from 2.0.0 the `.` at the
end of every input (Korrel's input format; the published files have none)."""
"""Where the suites of this module depart from their paper, and why (`SuiteSpec.deviations`)."""

UPSTREAM_FOLDER = {"simple": "simple_split", "length": "length_split", "addprim": "add_prim_split"}
SCAN_SHA256 = {
    "tasks.txt": "d824c7d9e9149ba497e25f701981dac79954e04bf670d22e5c209f076ac6c89f",
    "tasks_train_simple.txt": "941bb8a088c5f53ceff12fde902dc008933cf0c4203cc672c47b5f79d73262dd",
    "tasks_test_simple.txt": "1fe1c8f5a19d0dc40e41bab94278f45f66f3dc415a978bd29855a23440610fc6",
    "tasks_train_length.txt": "b034212dc7cf87ce62f3a067dd6ad49c4d5cd18d51d615d13825516bcb1ebbc2",
    "tasks_test_length.txt": "0760752ed34a75116ae11dcc1ee17526b7500060da1366540730fa24894d7db3",
    "tasks_train_addprim_jump.txt": "e3c78485692e028eed4205e1b8b3fd0e785ef2c12d45b5b89204dadf5b239e23",
    "tasks_test_addprim_jump.txt": "8147ae2651422c701162e174d9d66158daa57858a26b30317ac61797118ac7a5",
    "tasks_train_addprim_turn_left.txt": "1b3fed86055dd7689d217f1b90cc8960aeb1cf200f4f209dc47935761b05304c",
    "tasks_test_addprim_turn_left.txt": "15a82c2d25ac7c3c1fff7e18051fb085974ef3617de895c520d02144396a10e2",
}
V1_BREAKDOWNS: tuple[str, ...] = ("n_actions", "template")
"""What 1.0.0 broke scores down by."""
ANNOTATED = (
    "2.0.0: every example carries Korrel's attention targets (2018 §5.3.3: each action attends to the word "
    "that produced it, the end to `.`), every input ends with `.`, and the breakdowns by command length "
    "(`n_words`) and by `around`/`opposite` are new; the train, dev and test commands are those of 1.0.0."
)


class StandardScanSuite(ScanSuite):
    """One of the four standard splits: the published train and test files named `split_name`."""

    split_name: ClassVar[str]

    def generate(self, draw: int, files: SourceFiles) -> dict[str, list[Example]]:
        train_file, test_file = f"scan/tasks_train_{self.split_name}.txt", f"scan/tasks_test_{self.split_name}.txt"
        train = parse_scan_file(files.read_text(train_file), train_file)
        test = parse_scan_file(files.read_text(test_file), test_file)
        return self.train_dev_test(train, test, draw)


def _sources(split_name: str) -> tuple[SourceFile, ...]:
    folder = UPSTREAM_FOLDER[split_name.split("_")[0]]
    return tuple(
        scan_source(name, f"{folder}/{name}", SCAN_SHA256[name])
        for name in (f"tasks_train_{split_name}.txt", f"tasks_test_{split_name}.txt")
    )


SCAN = SuiteSpec(
    id="scan",
    version="1.0.0",
    family="systematicity",
    protocol="transduction",
    description="SCAN commands to action sequences.",
    citation=CITATION,
    how_checked=CHECKED,
    deviations=DEVIATIONS,
    primary_metric="sequence_accuracy",
    recipe="scan",
    splits=[train_split(0), dev_split(0), scored_split("test", 0, "generalisation")],
)
"""What every SCAN suite shares; each member declares its id, description, sizes and test role."""


def _splits(train: int, test: int, role: TestRole) -> list[SplitSpec]:
    """A SCAN member's splits from the sizes of its published files."""
    dev = round(DEV_FRACTION * train)
    return [
        train_split(train - dev, "published train minus dev"),
        dev_split(dev, "10% of the published train lines (model selection)"),
        scored_split("test", test, role, "the published test file"),
    ]


class ScanSimpleV1(StandardScanSuite):
    """SCAN random 80/20 split, version 1.0.0 (superseded: no `.`, no attention targets)."""

    annotated = False
    breakdown_keys = V1_BREAKDOWNS
    split_name = "simple"
    spec = SCAN.variant(
        id="scan-simple",
        description="SCAN commands to actions, random 80/20 split.",
        splits=_splits(16728, 4182, "in-distribution"),
    )
    sources = _sources("simple")


class ScanLengthV1(StandardScanSuite):
    """SCAN length split, version 1.0.0 (superseded: no `.`, no attention targets)."""

    annotated = False
    breakdown_keys = V1_BREAKDOWNS
    split_name = "length"
    spec = SCAN.variant(
        id="scan-length",
        description="SCAN length split: trained on outputs of at most 22 actions, tested on longer ones.",
        splits=_splits(16990, 3920, "generalisation"),
    )
    sources = _sources("length")


class ScanAddPrimJumpV1(StandardScanSuite):
    """SCAN add-primitive jump split, version 1.0.0 (superseded: no `.`, no attention targets)."""

    annotated = False
    breakdown_keys = V1_BREAKDOWNS
    split_name = "addprim_jump"
    spec = SCAN.variant(
        id="scan-addprim-jump",
        description="SCAN add-primitive split: `jump` is seen only alone and tested in compositions.",
        splits=_splits(14670, 7706, "generalisation"),
    )
    sources = _sources("addprim_jump")


class ScanAddPrimTurnLeftV1(StandardScanSuite):
    """SCAN add-primitive turn-left split, version 1.0.0 (superseded: no `.`, no attention targets)."""

    annotated = False
    breakdown_keys = V1_BREAKDOWNS
    split_name = "addprim_turn_left"
    spec = SCAN.variant(
        id="scan-addprim-turn-left",
        description="SCAN add-primitive split: `turn left` is seen only alone and tested in compositions.",
        splits=_splits(21890, 1208, "generalisation"),
    )
    sources = _sources("addprim_turn_left")


class ScanSimple(ScanSimpleV1):
    """SCAN random 80/20 split (Korrel's SCAN experiment 1)."""

    annotated = True
    breakdown_keys = ScanSuite.breakdown_keys
    spec = ScanSimpleV1.spec.variant(version="2.0.0", changelog=[ANNOTATED])
    superseded = (ScanSimpleV1,)


class ScanLength(ScanLengthV1):
    """SCAN length split: train on outputs of at most 22 actions, test on 24 to 48 (experiment 2)."""

    annotated = True
    breakdown_keys = ScanSuite.breakdown_keys
    spec = ScanLengthV1.spec.variant(version="2.0.0", changelog=[ANNOTATED])
    superseded = (ScanLengthV1,)


class ScanAddPrimJump(ScanAddPrimJumpV1):
    """SCAN add-primitive split: `jump` seen only alone, tested in every composition (experiment 3)."""

    annotated = True
    breakdown_keys = ScanSuite.breakdown_keys
    spec = ScanAddPrimJumpV1.spec.variant(version="2.0.0", changelog=[ANNOTATED])
    superseded = (ScanAddPrimJumpV1,)


class ScanAddPrimTurnLeft(ScanAddPrimTurnLeftV1):
    """SCAN add-primitive split: `turn left` seen only alone, tested in every composition."""

    annotated = True
    breakdown_keys = ScanSuite.breakdown_keys
    spec = ScanAddPrimTurnLeftV1.spec.variant(version="2.0.0", changelog=[ANNOTATED])
    superseded = (ScanAddPrimTurnLeftV1,)
