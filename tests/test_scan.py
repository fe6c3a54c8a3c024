"""SCAN: the interpreter reproduces the official pairs, and our rules rebuild the published splits."""

from __future__ import annotations

import json
from collections import Counter

import pytest

from harness import freeze, registry
from harness.runner import Runner
from harness.specs import ModelSpec, Split
from suites.scan import ScanSolver, ScanSuite, ScanSyntaxError, interpret, parse_scan_file, template
from tests.conftest import REPO, SHARED_DATA

SCAN_SUITES = {
    "suites.scan:ScanSimple": "simple",
    "suites.scan:ScanLength": "length",
    "suites.scan:ScanAddPrimJump": "addprim_jump",
    "suites.scan:ScanAddPrimTurnLeft": "addprim_turn_left",
}
# (published train, published test), and our (train, dev, test) sizes
SIZES = {
    "simple": ((16728, 4182), (15055, 1673, 4182)),
    "length": ((16990, 3920), (15291, 1699, 3920)),
    "addprim_jump": ((14670, 7706), (13203, 1467, 7706)),
    "addprim_turn_left": ((21890, 1208), (19701, 2189, 1208)),
}
Pair = tuple[list[str], list[str]]
L, R = "I_TURN_LEFT", "I_TURN_RIGHT"


def published(name: str) -> list[Pair]:
    return parse_scan_file((SHARED_DATA / "scan" / name).read_text(), name)


def multiset(pairs: list[Pair]) -> Counter[tuple[str, str]]:
    return Counter((" ".join(c), " ".join(a)) for c, a in pairs)


@pytest.fixture(scope="module")
def every_command() -> list[Pair]:
    return published("tasks.txt")


@pytest.fixture(scope="module")
def built() -> dict[str, tuple[ScanSuite, freeze.Manifest, dict[str, Split]]]:
    """Every SCAN suite built fresh once (the build refuses data that differs from the committed manifest)."""
    out = {}
    for path, name in SCAN_SUITES.items():
        suite = registry.suite(path)
        assert isinstance(suite, ScanSuite)
        manifest = freeze.build(suite)
        out[name] = (suite, manifest, {s.name: freeze.load_split(suite, manifest, 0, s.name) for s in suite.spec.splits})
    return out


def test_the_interpreter_reproduces_all_official_pairs(every_command: list[Pair]) -> None:
    assert len(every_command) == 20910
    assert len({" ".join(c) for c, _ in every_command}) == 20910
    wrong = [(c, a) for c, a in every_command if interpret(c) != a]
    assert not wrong, wrong[:3]
    assert ScanSolver().transduce([c for c, _ in every_command]) == [a for _, a in every_command]


@pytest.mark.parametrize(
    ("command", "actions"),
    [
        ("walk", ["I_WALK"]),
        ("turn left", [L]),
        ("look right", [R, "I_LOOK"]),
        ("turn opposite left", [L, L]),
        ("run opposite right", [R, R, "I_RUN"]),
        ("turn around right", [R] * 4),
        ("jump around left", [L, "I_JUMP"] * 4),
        ("jump thrice", ["I_JUMP"] * 3),
        ("walk left twice", [L, "I_WALK"] * 2),
        ("walk and look", ["I_WALK", "I_LOOK"]),
        ("walk twice after turn opposite right", [R, R, "I_WALK", "I_WALK"]),
        ("look around right thrice and jump", [R, "I_LOOK"] * 12 + ["I_JUMP"]),
    ],
)
def test_interpreter_follows_the_semantics_table(command: str, actions: list[str]) -> None:
    assert interpret(command.split()) == actions


@pytest.mark.parametrize(
    "command",
    ["", "dance", "dance left", "turn", "turn twice", "walk opposite", "walk up", "walk around left right"]
    + ["walk twice twice", "and walk", "walk after", "walk and run after jump", "left walk"],
)
def test_commands_outside_the_grammar_are_rejected(command: str) -> None:
    with pytest.raises(ScanSyntaxError):
        interpret(command.split())
    assert ScanSolver().transduce([command.split()]) == [[]]


def test_template_abstracts_exactly_the_primitives(every_command: list[Pair]) -> None:
    assert template("jump around left after walk twice".split()) == "U around left after U twice"
    assert template("turn opposite right and run".split()) == "turn opposite right and U"
    groups = Counter(template(c) for c, _ in every_command)
    assert len(groups) == 3081
    assert max(groups.values()) == 16 and min(groups.values()) == 1  # `U ... and U ...` / `turn left`


def test_length_split_is_the_22_action_rule(every_command: list[Pair]) -> None:
    assert multiset([p for p in every_command if len(p[1]) <= 22]) == multiset(published("tasks_train_length.txt"))
    assert multiset([p for p in every_command if len(p[1]) > 22]) == multiset(published("tasks_test_length.txt"))
    assert {len(a) for _, a in published("tasks_test_length.txt")} == set(range(24, 49)) - {27, 29, 31, 34} - {
        n for n in range(35, 48) if n not in {a for a in map(len, (a for _, a in every_command))}
    }


@pytest.mark.parametrize(("primitive", "repeats"), [("jump", 1467), ("turn left", 2189)])
def test_add_primitive_split_is_the_rule(every_command: list[Pair], primitive: str, repeats: int) -> None:
    name = primitive.replace(" ", "_")
    train, test = published(f"tasks_train_addprim_{name}.txt"), published(f"tasks_test_addprim_{name}.txt")
    alone = [p for p in train if " ".join(p[0]) == primitive]
    assert len(alone) == repeats and repeats * 10 == len(train)
    assert multiset(alone) == Counter({(primitive, " ".join(interpret(primitive.split()))): repeats})
    assert sum(" ".join(c) == primitive for c, _ in every_command) == 1

    def contains(command: list[str]) -> bool:
        return f" {primitive} " in f" {' '.join(command)} "

    composed = [p for p in train if " ".join(p[0]) != primitive]
    assert multiset(composed) == multiset([p for p in every_command if not contains(p[0])])
    assert multiset(test) == multiset([p for p in every_command if contains(p[0]) and " ".join(p[0]) != primitive])


def test_simple_split_partitions_the_commands(every_command: list[Pair]) -> None:
    train, test = published("tasks_train_simple.txt"), published("tasks_test_simple.txt")
    assert multiset(train) + multiset(test) == multiset(every_command)
    assert max((multiset(train) + multiset(test)).values()) == 1


@pytest.mark.parametrize("name", SIZES)
def test_declared_sizes_are_the_measured_ones(name: str) -> None:
    (published_train, published_test), ours = SIZES[name]
    assert (len(published(f"tasks_train_{name}.txt")), len(published(f"tasks_test_{name}.txt"))) == (
        published_train,
        published_test,
    )
    suite = registry.suite(next(p for p, n in SCAN_SUITES.items() if n == name))
    assert tuple(s.size for s in suite.spec.splits) == ours
    assert [(s.name, s.role) for s in suite.spec.splits] == [("train", "train"), ("dev", "dev"), ("test", "test")]
    assert ours[1] == round(0.1 * published_train) and ours[0] + ours[1] == published_train


@pytest.mark.parametrize("name", SIZES)
def test_a_fresh_build_reproduces_the_committed_manifest(
    built: dict[str, tuple[ScanSuite, freeze.Manifest, dict[str, Split]]], name: str
) -> None:
    suite, manifest, _ = built[name]
    committed = json.loads((REPO / "suites" / "manifests" / f"{suite.spec.key}.json").read_text())
    assert manifest.suite_hash == committed["suite_hash"]
    assert {k: v.sha256 for k, v in manifest.splits.items()} == {k: v["sha256"] for k, v in committed["splits"].items()}
    assert freeze.build(suite) == manifest


@pytest.mark.parametrize("name", SIZES)
def test_test_is_published_and_train_plus_dev_is_the_published_train_by_position(
    built: dict[str, tuple[ScanSuite, freeze.Manifest, dict[str, Split]]], name: str
) -> None:
    _, _, splits = built[name]
    train_lines, test_lines = published(f"tasks_train_{name}.txt"), published(f"tasks_test_{name}.txt")
    assert [(e.id, e.input, e.target) for e in splits["test"].examples] == [
        (f"test-{i:05d}", c, a) for i, (c, a) in enumerate(test_lines)
    ]
    carved = splits["train"].examples + splits["dev"].examples
    by_id = {e.id: (e.input, e.target) for e in carved}
    assert len(by_id) == len(carved) == len(train_lines)
    assert by_id == {f"train-{i:05d}": pair for i, pair in enumerate(train_lines)}
    for split in ("train", "dev"):
        ids = [e.id for e in splits[split].examples]
        assert ids == sorted(ids)  # published order kept
    for split in splits.values():
        for example in split.examples:
            assert example.meta == {"n_actions": len(example.target or []), "template": template(example.input)}


@pytest.mark.parametrize(("name", "primitive"), [("addprim_jump", "jump"), ("addprim_turn_left", "turn left")])
def test_add_primitive_train_keeps_the_primitive_and_dev_never_composes_it(
    built: dict[str, tuple[ScanSuite, freeze.Manifest, dict[str, Split]]], name: str, primitive: str
) -> None:
    _, _, splits = built[name]
    commands = {split: Counter(" ".join(e.input) for e in splits[split].examples) for split in ("train", "dev")}
    assert commands["train"][primitive] > 1000 and commands["dev"][primitive] > 100
    assert commands["train"][primitive] + commands["dev"][primitive] == (1467 if primitive == "jump" else 2189)
    for counts in commands.values():
        assert not [c for c in counts if c != primitive and f" {primitive} " in f" {c} "]


def test_scores_break_down_by_output_length_and_template(
    built: dict[str, tuple[ScanSuite, freeze.Manifest, dict[str, Split]]],
) -> None:
    suite, _, splits = built["length"]
    test = splits["test"]
    # right on every output shorter than 30 actions, the first 10 actions of the others
    predictions = [e.target if len(e.target or []) < 30 else (e.target or [])[:10] for e in test.examples]
    scores = suite.score(test, predictions).metrics
    short = sum(len(e.target or []) < 30 for e in test.examples)
    assert scores["sequence_accuracy"] == (short / len(test), len(test))
    total = sum(len(e.target or []) for e in test.examples)
    long_missing = sum(len(e.target or []) - 10 for e in test.examples if len(e.target or []) >= 30)
    assert scores["token_accuracy"] == ((total - long_missing) / total, total)
    assert scores["sequence_accuracy[n_actions=24]"][0] == 1.0
    assert scores["sequence_accuracy[n_actions=48]"] == (0.0, 64)
    by_template = {k: v for k, v in scores.items() if k.startswith("sequence_accuracy[template=")}
    assert sum(n for _, n in by_template.values()) == len(test)
    assert by_template["sequence_accuracy[template=U around left thrice and U around left thrice]"][0] == 0.0


@pytest.mark.parametrize("path", SCAN_SUITES)
@pytest.mark.parametrize(("model", "expected"), [("oracle", 1.0), ("copy", 0.0)])
def test_oracle_solves_and_copy_fails(runner: Runner, path: str, model: str, expected: float) -> None:
    record = runner.evaluate(path, ModelSpec(name=model), [0])
    assert record.status == {"0": "done"}
    assert list(record.scores) == ["test"]
    for metric in ("sequence_accuracy", "token_accuracy"):
        assert record.scores["test"][metric].mean == expected
