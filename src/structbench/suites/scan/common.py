"""What every SCAN suite shares: the grammar and its interpreter, the attention targets of
attentive guidance, the published file format, dev carving, and the family's base class.

The interpreter follows the grammar and semantics of Lake & Baroni 2018 (Korrel 2018, Tables
4.1-4.2) and is the oracle of every SCAN suite. It interprets a command into its actions *with*
the input word each action comes from, which gives the attention targets of Korrel 2018 §5.3.3
(after Hupkes et al. 2018): an action attends to the input word that produced it,

- `I_TURN_LEFT` to `left` and `I_TURN_RIGHT` to `right`,
- `I_WALK`, `I_LOOK`, `I_RUN`, `I_JUMP` to their verb (`walk`, `look`, `run`, `jump`),
- the output's end of sequence to the input's end-of-sequence token `.`.

The thesis does not say which occurrence of a word to choose when a command repeats it
(`walk left and run left`); ours is the occurrence in the same sub-command (the part before or
after `and`/`after`) as the action, i.e. the word that produced it in the interpretation:
`walk left and run left .` -> `I_TURN_LEFT I_WALK I_TURN_LEFT I_RUN` attends `1 0 4 3`, then `5`.
A sub-command holds each word at most once, so this choice is unique. It is the choice of
Korrel's own annotated SCAN files (github.com/i-machine-think/machine-tasks, `SCAN/hard_attention/`,
commit 467a283): our targets equal theirs on all 65,404 lines of their simple, length and
add-primitive files (checked once against that commit; tests/suites/scan/test_attention.py keeps some
of their lines as cases, and checks the rule on 100 random official commands and that every
target points at the word it names). As in those files and in
Korrel's other tasks, inputs end with `.`, which the published SCAN files do not have; from
version 2.0.0 every SCAN suite's inputs carry it.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from functools import lru_cache
from typing import ClassVar

import numpy as np

from structbench.data.sources import SourceFile
from structbench.specs import Example, Split
from structbench.suite import Suite
from structbench.suites.common import PUBLISHED_FIX, RuleTransducer, malformed

SCAN_COMMIT = "c4b756cbc010d75c912f16c42c8f15dc6b7e6c8f"
SCAN_URL = f"https://raw.githubusercontent.com/brendenlake/SCAN/{SCAN_COMMIT}"
EOS = "."
"""The end-of-sequence token that ends every input from version 2.0.0 (Korrel 2018 §5.3.3)."""
DEV_FRACTION = 0.1
DEV_SEED = 20180611

PRIMITIVES = {"walk": "I_WALK", "look": "I_LOOK", "run": "I_RUN", "jump": "I_JUMP"}
TURNS = {"left": "I_TURN_LEFT", "right": "I_TURN_RIGHT"}
REPEATS = {"twice": 2, "thrice": 3}
CITATION = (
    "Lake & Baroni 2018, Generalization without systematicity: On the compositional skills of "
    "sequence-to-sequence recurrent networks (ICML)"
)
# github.com/brendenlake/SCAN, LICENSE at c4b756c: "BSD License", Copyright (c) 2016-present,
# Facebook, Inc., with the three clauses of the BSD 3-clause licence.
LICENCE = "BSD 3-clause (the LICENSE of the SCAN repository, Copyright Facebook, Inc.)"

Aligned = list[tuple[str, int]]
"""Actions, each with the position of the input word it comes from."""


class ScanSyntaxError(ValueError):
    """A command outside the SCAN grammar."""


def _verb_phrase(words: Sequence[str], at: int) -> Aligned:
    """V -> U | D ; D -> U left|right | turn left|right ; V -> D opposite D | D around D.

    `at` is the position of `words[0]` in the command."""
    if not words:
        raise ScanSyntaxError("empty phrase")
    action = words[0]
    if action != "turn" and action not in PRIMITIVES:
        raise ScanSyntaxError(f"unknown action {action!r}")
    core = [] if action == "turn" else [(PRIMITIVES[action], at)]
    if len(words) == 1:
        if action == "turn":
            raise ScanSyntaxError("`turn` needs a direction")
        return core
    if len(words) == 2 and words[1] in TURNS:
        return [(TURNS[words[1]], at + 1), *core]
    if len(words) == 3 and words[2] in TURNS:
        turn = (TURNS[words[2]], at + 2)
        if words[1] == "opposite":
            return [turn, turn, *core]
        if words[1] == "around":
            return [turn, *core] * 4
    raise ScanSyntaxError(f"cannot parse {' '.join(words)!r}")


def _sentence(words: Sequence[str], at: int) -> Aligned:
    """S -> V | V twice | V thrice."""
    if words and words[-1] in REPEATS:
        return _verb_phrase(words[:-1], at) * REPEATS[words[-1]]
    return _verb_phrase(words, at)


def command_words(command: Sequence[str]) -> list[str]:
    """The command without its final end-of-sequence token, if it has one."""
    words = list(command)
    return words[:-1] if words and words[-1] == EOS else words


def align(command: Sequence[str]) -> Aligned:
    """The actions of a command (C -> S | S and S | S after S), each with the input position it
    comes from; a final `.` is allowed and ignored."""
    words = command_words(command)
    for conjunction in ("and", "after"):
        if conjunction in words:
            i = words.index(conjunction)
            first, second = _sentence(words[:i], 0), _sentence(words[i + 1 :], i + 1)
            return first + second if conjunction == "and" else second + first
    if not words:
        raise ScanSyntaxError("empty command")
    return _sentence(words, 0)


def interpret(command: Sequence[str]) -> list[str]:
    """The action sequence of a SCAN command (a final `.` is ignored)."""
    return [action for action, _ in align(command)]


def attention_targets(command: Sequence[str]) -> list[int]:
    """One input position per output step, the output's end included: each action attends to the
    word that produced it, the end to the `.` that follows the command (Korrel 2018 §5.3.3)."""
    words = command_words(command)
    return [position for _, position in align(words)] + [len(words)]


@lru_cache(maxsize=1 << 15)
def annotated_example(example_id: str, command: tuple[str, ...], actions: tuple[str, ...]) -> Example:
    """The example of a published line, its input ending with `.`, with attention targets and the four
    breakdowns. Remembered (examples are frozen, so one may serve several draws): the five draws of a
    few-shot suite are five train files that hold most lines at the same positions, and making each example
    five times was more than half of such a build; 2**15 examples hold one draw of the largest."""
    return Example(
        id=example_id,
        input=[*command, EOS],
        target=list(actions),
        attention=attention_targets(command),
        meta={
            "n_actions": len(actions),
            "template": template(command),
            "n_words": len(command),
            "around_opposite": around_opposite(command),
        },
    )


def template(command: Sequence[str]) -> str:
    """The command's structure: primitives as `U`, directions as `D`, `twice`/`thrice` dropped.

    `jump around left twice after turn right` -> `U around D after turn D` (105 templates).
    """
    return " ".join(
        "U" if w in PRIMITIVES else "D" if w in TURNS else w for w in command_words(command) if w not in REPEATS
    )


def around_opposite(command: Sequence[str]) -> str:
    """Which of the modifiers `around` and `opposite` the command holds: `around`, `opposite`,
    `around+opposite` or `neither`."""
    held = [word for word in ("around", "opposite") if word in command]
    return "+".join(held) or "neither"


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


def scan_source(path: str, upstream: str, sha256: str) -> SourceFile:
    """A published SCAN file: `path` under `scan/` locally, `upstream` in the repository at the pinned commit."""
    return SourceFile(path=f"scan/{path}", url=f"{SCAN_URL}/{upstream}", sha256=sha256)


def dev_positions(n_lines: int, draw: int, eligible: Sequence[int] | None = None) -> set[int]:
    """The line positions carved out as dev: 10% of the published train lines (of `eligible` ones,
    when given), uniform, from a fixed seed per draw."""
    pool = np.arange(n_lines) if eligible is None else np.asarray(eligible)
    rng = np.random.default_rng([DEV_SEED, draw])
    return set(pool[rng.choice(len(pool), size=round(DEV_FRACTION * len(pool)), replace=False)].tolist())


class ScanSuite(Suite):
    """How every SCAN suite turns published lines into examples, and its oracle (the interpreter)."""

    breakdown_keys: ClassVar[tuple[str, ...]] = ("n_actions", "template", "n_words", "around_opposite")
    licence = LICENCE
    annotated: ClassVar[bool] = True
    """Inputs end with `.` and examples carry attention targets and the four breakdowns (2.0.0 on);
    False for the 1.0.0 suites (no `.`, no attention, breakdowns by `n_actions` and `template` only)."""

    def example(self, example_id: str, command: list[str], actions: list[str]) -> Example:
        if not self.annotated:
            return Example(
                id=example_id,
                input=command,
                target=actions,
                meta={"n_actions": len(actions), "template": template(command)},
            )
        return annotated_example(example_id, tuple(command), tuple(actions))

    def examples(self, pairs: Iterable[tuple[int, tuple[list[str], list[str]]]], prefix: str) -> list[Example]:
        """Examples of (line position, pair); ids are the positions in the published file (`train-00042`)."""
        return [self.example(f"{prefix}-{i:05d}", command, actions) for i, (command, actions) in pairs]

    def train_dev_test(
        self,
        train: list[tuple[list[str], list[str]]],
        test: list[tuple[list[str], list[str]]],
        draw: int,
        eligible: Sequence[int] | None = None,
    ) -> dict[str, list[Example]]:
        """The published train lines less a dev split carved from them (of the `eligible` positions,
        when given), and the published test lines, all in published order."""
        dev = dev_positions(len(train), draw, eligible)
        return {
            "train": self.examples(((i, p) for i, p in enumerate(train) if i not in dev), "train"),
            "dev": self.examples(((i, p) for i, p in enumerate(train) if i in dev), "train"),
            "test": self.examples(enumerate(test), "test"),
        }

    def oracle(self, splits: Mapping[str, Split]) -> RuleTransducer:
        return RuleTransducer("scan-interpreter", interpret)
