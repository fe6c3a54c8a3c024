"""SCAN (Lake & Baroni 2018): simple, length and add-primitive splits, with a SCAN interpreter.

Reproduces the four standard splits of the SCAN release (github.com/brendenlake/SCAN,
commit c4b756c; Korrel 2018, §1.3): commands such as `jump around left
twice after walk` translated into action sequences (`I_JUMP`, `I_TURN_LEFT`, ...). Train and
test are the published files, repeated primitive examples included. SCAN has no dev split,
and choosing a model on test is a known leak, so a dev split of 10% of the published train
lines (fixed seed, uniform) is carved out for model selection; `train` holds the rest, in
published order. Example ids are the line positions in the published files (`train-00042`),
so repeated lines stay distinct.

The interpreter (grammar and semantics of the paper's Tables 4.1-4.2) is the oracle of every
SCAN suite. How it was checked (tests/test_scan.py): it reproduces all 20,910 pairs of the
official `tasks.txt`; the length split equals the rule "every command with at most 22
actions in train, the rest in test" applied to `tasks.txt`; the add-primitive splits equal
"the primitive alone in train (repeated as published: `jump` 1,467 times, `turn left` 2,189
times, once in `tasks.txt` itself), every other command containing it in test, the rest in
train"; the simple split is an 80/20 partition of `tasks.txt`.

Scorers: exact match (`sequence_accuracy`, primary; the paper's accuracy), token accuracy,
and breakdowns by output length (`n_actions`) and by command template (`template`: the
command with every primitive replaced by `U`, every direction by `D`, repetitions dropped
and `turn` kept, e.g. `U around D after turn D`; 105 templates).

Test roles: `scan-simple` tests in distribution (a random split of one command
distribution); the length and add-primitive tests are generalisation splits (longer outputs, or
a primitive in compositions never seen in training).

Deviations: the dev split (train is 90% of the published train file); nothing else.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import ClassVar

import numpy as np

from structbench.sources import SourceFile
from structbench.specs import Example, Split, SplitSpec, SuiteSpec, TestRole, dev_split, scored_split, train_split
from structbench.suite import SourceFiles, Suite
from structbench.suites.common import PUBLISHED_FIX, RuleTransducer, malformed

SCAN_COMMIT = "c4b756cbc010d75c912f16c42c8f15dc6b7e6c8f"
SCAN_URL = f"https://raw.githubusercontent.com/brendenlake/SCAN/{SCAN_COMMIT}"
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
DEV_FRACTION = 0.1
DEV_SEED = 20180611

PRIMITIVES = {"walk": "I_WALK", "look": "I_LOOK", "run": "I_RUN", "jump": "I_JUMP"}
TURNS = {"left": "I_TURN_LEFT", "right": "I_TURN_RIGHT"}
REPEATS = {"twice": 2, "thrice": 3}
CITATION = (
    "Lake & Baroni 2018, Generalization without systematicity: On the compositional skills of "
    "sequence-to-sequence recurrent networks (ICML)"
)


class ScanSyntaxError(ValueError):
    """A command outside the SCAN grammar."""


def _verb_phrase(words: Sequence[str]) -> list[str]:
    """V -> U | D ; D -> U left|right | turn left|right ; V -> D opposite D | D around D."""
    if not words:
        raise ScanSyntaxError("empty phrase")
    action = words[0]
    if action != "turn" and action not in PRIMITIVES:
        raise ScanSyntaxError(f"unknown action {action!r}")
    core = [] if action == "turn" else [PRIMITIVES[action]]
    if len(words) == 1:
        if action == "turn":
            raise ScanSyntaxError("`turn` needs a direction")
        return core
    if len(words) == 2 and words[1] in TURNS:
        return [TURNS[words[1]], *core]
    if len(words) == 3 and words[2] in TURNS:
        turn = TURNS[words[2]]
        if words[1] == "opposite":
            return [turn, turn, *core]
        if words[1] == "around":
            return [turn, *core] * 4
    raise ScanSyntaxError(f"cannot parse {' '.join(words)!r}")


def _sentence(words: Sequence[str]) -> list[str]:
    """S -> V | V twice | V thrice."""
    if words and words[-1] in REPEATS:
        return _verb_phrase(words[:-1]) * REPEATS[words[-1]]
    return _verb_phrase(words)


def interpret(command: Sequence[str]) -> list[str]:
    """The action sequence of a SCAN command: C -> S | S and S | S after S."""
    words = list(command)
    for conjunction in ("and", "after"):
        if conjunction in words:
            i = words.index(conjunction)
            first, second = _sentence(words[:i]), _sentence(words[i + 1 :])
            return first + second if conjunction == "and" else second + first
    if not words:
        raise ScanSyntaxError("empty command")
    return _sentence(words)


def template(command: Sequence[str]) -> str:
    """The command's structure: primitives as `U`, directions as `D`, `twice`/`thrice` dropped.

    `jump around left twice after turn right` -> `U around D after turn D` (105 templates).
    """
    return " ".join("U" if w in PRIMITIVES else "D" if w in TURNS else w for w in command if w not in REPEATS)


def parse_scan_file(text: str, source: str) -> list[tuple[list[str], list[str]]]:
    """Lines `IN: <command> OUT: <actions>` as (command tokens, action tokens)."""
    pairs = []
    for number, line in enumerate(text.splitlines(), start=1):
        if not line.strip():
            continue
        head, sep, actions = line.partition(" OUT: ")
        if not sep or not head.startswith("IN: "):
            raise malformed(source, number, "`IN: <command> OUT: <actions>`", repr(line[:80]), PUBLISHED_FIX)
        pairs.append((head[4:].split(), actions.split()))
    return pairs


def _examples(pairs: Iterable[tuple[int, tuple[list[str], list[str]]]], prefix: str) -> list[Example]:
    return [
        Example(
            id=f"{prefix}-{i:05d}",
            input=command,
            target=actions,
            meta={"n_actions": len(actions), "template": template(command)},
        )
        for i, (command, actions) in pairs
    ]


class ScanSuite(Suite):
    """Common loading, dev carving and scoring of the SCAN splits; subclasses name the split."""

    split_name: ClassVar[str]
    breakdown_keys: ClassVar[tuple[str, ...]] = ("n_actions", "template")
    # github.com/brendenlake/SCAN, LICENSE at c4b756c: "BSD License", Copyright (c) 2016-present,
    # Facebook, Inc., with the three clauses of the BSD 3-clause licence.
    licence = "BSD 3-clause (the LICENSE of the SCAN repository, Copyright Facebook, Inc.)"

    def generate(self, draw: int, files: SourceFiles) -> dict[str, list[Example]]:
        train_file, test_file = f"scan/tasks_train_{self.split_name}.txt", f"scan/tasks_test_{self.split_name}.txt"
        train = parse_scan_file(files.read_text(train_file), train_file)
        test = parse_scan_file(files.read_text(test_file), test_file)
        rng = np.random.default_rng([DEV_SEED, draw])
        dev_positions = set(rng.choice(len(train), size=round(DEV_FRACTION * len(train)), replace=False).tolist())
        return {
            "train": _examples(((i, p) for i, p in enumerate(train) if i not in dev_positions), "train"),
            "dev": _examples(((i, p) for i, p in enumerate(train) if i in dev_positions), "train"),
            "test": _examples(enumerate(test), "test"),
        }

    def oracle(self, splits: Mapping[str, Split]) -> RuleTransducer:
        return RuleTransducer("scan-interpreter", interpret)


def _sources(split_name: str) -> tuple[SourceFile, ...]:
    folder = UPSTREAM_FOLDER[split_name.split("_")[0]]
    return tuple(
        SourceFile(path=f"scan/{name}", url=f"{SCAN_URL}/{folder}/{name}", sha256=SCAN_SHA256[name])
        for name in (f"tasks_train_{split_name}.txt", f"tasks_test_{split_name}.txt")
    )


SCAN = SuiteSpec(
    id="scan",
    version="1.0.0",
    family="systematicity",
    protocol="transduction",
    description="SCAN commands to action sequences.",
    citation=CITATION,
    primary_metric="sequence_accuracy",
    task="scan",
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


class ScanSimple(ScanSuite):
    """SCAN random 80/20 split."""

    split_name = "simple"
    spec = SCAN.variant(
        id="scan-simple",
        description="SCAN commands to actions, random 80/20 split.",
        splits=_splits(16728, 4182, "in-distribution"),
    )
    sources = _sources("simple")


class ScanLength(ScanSuite):
    """SCAN length split: train on outputs of at most 22 actions, test on 24 to 48."""

    split_name = "length"
    spec = SCAN.variant(
        id="scan-length",
        description="SCAN length split: trained on outputs of at most 22 actions, tested on longer ones.",
        splits=_splits(16990, 3920, "generalisation"),
    )
    sources = _sources("length")


class ScanAddPrimJump(ScanSuite):
    """SCAN add-primitive split: `jump` seen only alone, tested in every composition."""

    split_name = "addprim_jump"
    spec = SCAN.variant(
        id="scan-addprim-jump",
        description="SCAN add-primitive split: `jump` is seen only alone and tested in compositions.",
        splits=_splits(14670, 7706, "generalisation"),
    )
    sources = _sources("addprim_jump")


class ScanAddPrimTurnLeft(ScanSuite):
    """SCAN add-primitive split: `turn left` seen only alone, tested in every composition."""

    split_name = "addprim_turn_left"
    spec = SCAN.variant(
        id="scan-addprim-turn-left",
        description="SCAN add-primitive split: `turn left` is seen only alone and tested in compositions.",
        splits=_splits(21890, 1208, "generalisation"),
    )
    sources = _sources("addprim_turn_left")
