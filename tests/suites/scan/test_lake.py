"""SCAN: the interpreter reproduces the official pairs, and our rules rebuild the published splits."""

from __future__ import annotations

from collections import Counter

import pytest

from structbench import registry
from structbench.data import freeze
from structbench.runs.runner import Runner
from structbench.specs import ModelSpec, Split
from structbench.suites.scan.common import EOS, ScanSyntaxError, interpret, parse_scan_file, template
from tests.conftest import REPO, SHARED_DATA

SCAN_SUITES = {
    "structbench.suites.scan.lake:ScanSimple": "scan-simple",
    "structbench.suites.scan.lake:ScanLength": "scan-length",
    "structbench.suites.scan.lake:ScanAddPrimJump": "scan-addprim-jump",
    "structbench.suites.scan.lake:ScanAddPrimTurnLeft": "scan-addprim-turn-left",
}
Pair = tuple[list[str], list[str]]


def published(name: str) -> list[Pair]:
    return parse_scan_file((SHARED_DATA / "scan" / name).read_text(), name)


def multiset(pairs: list[Pair]) -> Counter[tuple[str, str]]:
    return Counter((" ".join(c), " ".join(a)) for c, a in pairs)


@pytest.fixture(scope="module")
def every_command() -> list[Pair]:
    return published("tasks.txt")


def test_the_interpreter_reproduces_all_official_pairs(every_command: list[Pair]) -> None:
    assert len(every_command) == 20910
    wrong = [(c, a) for c, a in every_command if interpret(c) != a]
    assert not wrong, wrong[:3]


def test_interpreter_semantics_and_errors() -> None:
    assert interpret(["jump", "around", "left"]) == ["I_TURN_LEFT", "I_JUMP"] * 4
    assert interpret(["walk", "twice", "after", "turn", "opposite", "right"]) == ["I_TURN_RIGHT"] * 2 + ["I_WALK"] * 2
    for bad in (["dance", "left"], ["walk", "and"], ["turn"], []):
        with pytest.raises(ScanSyntaxError):
            interpret(bad)
    assert template(["jump", "around", "left", "twice", "after", "turn", "right"]) == "U around D after turn D"
    assert interpret(["jump", "twice", EOS]) == ["I_JUMP"] * 2  # the end-of-sequence token of 2.0.0 inputs
    assert template(["jump", "twice", EOS]) == "U"
    with pytest.raises(ScanSyntaxError):
        interpret([EOS])


def test_length_split_is_the_22_action_rule(every_command: list[Pair]) -> None:
    assert multiset([p for p in every_command if len(p[1]) <= 22]) == multiset(published("tasks_train_length.txt"))
    assert multiset([p for p in every_command if len(p[1]) > 22]) == multiset(published("tasks_test_length.txt"))


@pytest.mark.parametrize(("primitive", "repeats"), [("jump", 1467), ("turn left", 2189)])
def test_add_primitive_split_is_the_rule(every_command: list[Pair], primitive: str, repeats: int) -> None:
    name = primitive.replace(" ", "_")
    train, test = published(f"tasks_train_addprim_{name}.txt"), published(f"tasks_test_addprim_{name}.txt")
    alone = [p for p in train if " ".join(p[0]) == primitive]
    assert len(alone) == repeats and len({" ".join(a) for _, a in alone}) == 1

    def contains(command: list[str]) -> bool:
        return f" {primitive} " in f" {' '.join(command)} "

    composed = [p for p in train if " ".join(p[0]) != primitive]
    assert multiset(composed) == multiset([p for p in every_command if not contains(p[0])])
    assert multiset(test) == multiset([p for p in every_command if contains(p[0]) and " ".join(p[0]) != primitive])


def test_simple_split_partitions_the_commands(every_command: list[Pair]) -> None:
    train, test = published("tasks_train_simple.txt"), published("tasks_test_simple.txt")
    assert multiset(train) + multiset(test) == multiset(every_command)
    assert (len(train), len(test)) == (16728, 4182)


@pytest.mark.parametrize("path", SCAN_SUITES)
def test_suite_keeps_published_test_and_carves_dev_from_train(path: str) -> None:
    suite = registry.suite(path)
    manifest = freeze.ensure_built(suite)
    splits = {s.name: freeze.load_split(suite, manifest, 0, s.name) for s in suite.spec.splits}
    name = suite.split_name  # type: ignore[attr-defined]
    train_lines = published(f"tasks_train_{name}.txt")
    examples = [e for split in splits.values() for e in split.examples]
    assert all(e.input[-1] == EOS and EOS not in e.input[:-1] for e in examples)
    rebuilt = multiset([(e.input[:-1], e.target) for e in splits["train"].examples + splits["dev"].examples])  # type: ignore[misc]
    assert rebuilt == multiset(train_lines)
    assert [(e.input[:-1], e.target) for e in splits["test"].examples] == published(f"tasks_test_{name}.txt")
    assert len(splits["dev"]) == round(0.1 * len(train_lines))
    committed = (REPO / "src" / "structbench" / "suites" / "manifests" / f"{suite.spec.key}.json").read_text()
    assert manifest.suite_hash in committed


@pytest.mark.parametrize("path", SCAN_SUITES)
@pytest.mark.parametrize(("model", "expected"), [("oracle", 1.0), ("copy", 0.0)])
def test_oracle_solves_and_copy_fails(runner: Runner, path: str, model: str, expected: float) -> None:
    record = runner.evaluate(path, ModelSpec(name=model), [0])
    assert record.status == {"0": "done"}
    assert record.scores["test"]["sequence_accuracy"].mean == expected


def built_splits(path: str) -> dict[str, Split]:
    suite = registry.suite(path)
    manifest = freeze.ensure_built(suite)
    return {s.name: freeze.load_split(suite, manifest, 0, s.name) for s in suite.spec.splits}


@pytest.mark.parametrize(
    ("path", "primitive", "repeats"),
    [
        ("structbench.suites.scan.lake:ScanAddPrimJump", "jump", 1467),
        ("structbench.suites.scan.lake:ScanAddPrimTurnLeft", "turn left", 2189),
    ],
)
def test_add_primitive_train_and_dev_hold_the_primitive_only_alone(path: str, primitive: str, repeats: int) -> None:
    splits = built_splits(path)
    commands = {name: Counter(" ".join(e.input[:-1]) for e in splits[name].examples) for name in ("train", "dev")}
    assert commands["train"][primitive] + commands["dev"][primitive] == repeats
    assert commands["dev"][primitive] > 0
    for counts in commands.values():
        assert not [c for c in counts if c != primitive and f" {primitive} " in f" {c} "]


def test_scores_break_down_by_output_length_and_template() -> None:
    suite = registry.suite("structbench.suites.scan.lake:ScanLength")
    test = built_splits("structbench.suites.scan.lake:ScanLength")["test"]
    # right on every output shorter than 30 actions, only the first 10 actions of the others
    predictions = [e.target if len(e.target or []) < 30 else (e.target or [])[:10] for e in test.examples]
    scores = suite.score(test, predictions).metrics
    short = sum(len(e.target or []) < 30 for e in test.examples)
    assert scores["sequence_accuracy"] == (short / len(test), len(test))
    total = sum(len(e.target or []) for e in test.examples)
    missing = sum(len(e.target or []) - 10 for e in test.examples if len(e.target or []) >= 30)
    assert scores["token_accuracy"] == ((total - missing) / total, total)
    assert scores["sequence_accuracy[n_actions=24]"][0] == 1.0
    assert scores["sequence_accuracy[n_actions=48]"][0] == 0.0
    by_template = {k: v for k, v in scores.items() if k.startswith("sequence_accuracy[template=")}
    assert sum(n for _, n in by_template.values()) == len(test)


@pytest.mark.parametrize("path", SCAN_SUITES)
def test_version_1_stays_loadable_as_released(path: str) -> None:
    """2.0.0 added `.` and attention targets; 1.0.0 still builds the data of its committed manifest."""
    current = registry.suite(path)
    old = registry.suite(f"{current.spec.id}@1.0.0")
    assert (current.spec.version, old.spec.version) == ("2.0.0", "1.0.0")
    manifest = freeze.ensure_built(old)
    committed = (REPO / "src" / "structbench" / "suites" / "manifests" / f"{old.spec.key}.json").read_text()
    assert manifest.suite_hash in committed
    test = freeze.load_split(old, manifest, 0, "test").examples
    assert all(e.attention is None and e.input[-1] != EOS for e in test)
    assert set(test[0].meta) == {"n_actions", "template"}


def test_scores_break_down_by_command_length_and_modifiers() -> None:
    suite = registry.suite("structbench.suites.scan.lake:ScanSimple")
    test = built_splits("structbench.suites.scan.lake:ScanSimple")["test"]
    # right exactly on the commands without `opposite`
    predictions = [[] if "opposite" in e.input else e.target for e in test.examples]
    scores = suite.score(test, predictions).metrics
    modifiers = {k: v[0] for k, v in scores.items() if k.startswith("sequence_accuracy[around_opposite=")}
    assert modifiers == {
        "sequence_accuracy[around_opposite=around]": 1.0,
        "sequence_accuracy[around_opposite=neither]": 1.0,
        "sequence_accuracy[around_opposite=opposite]": 0.0,
        "sequence_accuracy[around_opposite=around+opposite]": 0.0,
    }
    by_length = {k: v for k, v in scores.items() if k.startswith("sequence_accuracy[n_words=")}
    assert set(by_length) == {f"sequence_accuracy[n_words={n}]" for n in range(1, 10)}
    for n in range(1, 10):  # the command's words, `.` not counted
        commands = [e.input for e in test.examples if len(e.input) == n + 1]
        right = sum("opposite" not in c for c in commands) / len(commands)
        assert by_length[f"sequence_accuracy[n_words={n}]"] == (right, len(commands))
    assert by_length["sequence_accuracy[n_words=1]"][0] == 1.0  # `walk`, `jump`, ...: no modifier
