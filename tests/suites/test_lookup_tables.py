"""The lookup-table suites agree with their definition and with the published samples."""

from __future__ import annotations

import itertools
import json
import re
from collections.abc import Mapping, Sequence
from pathlib import Path

import pytest

from structbench import registry
from structbench.cli import main
from structbench.data import freeze
from structbench.specs import Split
from structbench.suites.lookup_tables import BITS, SEEN, TABLES, UNSEEN, LookupSolver, apply_tables
from tests.conftest import REPO, SHARED_DATA

PAPER_SIZES = {
    "train": 232,
    "validation": 16,
    "heldout_inputs": 40,
    "heldout_compositions": 64,
    "heldout_tables": 192,
    "new_compositions": 32,
}
HEX64 = re.compile(r"[0-9a-f]{64}")
SUITES = ("lookup-tables", "lookup-tables-mt")


def splits(suite_id: str, draw: int) -> dict[str, Split]:
    suite = registry.suite(suite_id)
    manifest = freeze.ensure_built(suite)
    return {s.name: freeze.load_split(suite, manifest, draw, s.name) for s in suite.spec.splits}


def committed_manifest(suite_id: str) -> dict:  # type: ignore[type-arg]
    key = registry.suite(suite_id).spec.key
    return json.loads((REPO / "src" / "structbench" / "suites" / "manifests" / f"{key}.json").read_text())  # type: ignore[no-any-return]


def raw_rows(draw: int, name: str) -> list[tuple[list[str], list[str], list[int]]]:
    """Rows of a published file, read without the suite's loader."""
    path = SHARED_DATA / "lookup_tables" / f"sample{draw + 1}" / f"{name}.tsv"
    rows = []
    for line in path.read_text().splitlines():
        tokens, target, attention = line.split("\t")
        rows.append((tokens.split(), target.split(), [int(a) for a in attention.split()]))
    return rows


def compose(tables: Mapping[str, Mapping[str, str]], tokens: Sequence[str]) -> list[str]:
    """`x t_a t_b ... .` -> `x t_a(x) t_b(t_a(x)) ...`, written independently of apply_tables."""
    assert tokens[-1] == "."
    outputs = [tokens[0]]
    for table in tokens[1:-1]:
        outputs.append(tables[table][outputs[-1]])
    return outputs


def compositions(split: Split) -> set[tuple[str, ...]]:
    return {tuple(e.input[1:-1]) for e in split.examples}


def test_suites_json_lists_both_suites_with_the_paper_sizes(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["suites", "--json"]) == 0
    rows = {row["id"]: row for row in json.loads(capsys.readouterr().out)}
    for suite_id in SUITES:
        row = rows[suite_id]
        sizes = {name: split["size"] for name, split in row["splits"].items()}
        assert {name: sizes[name] for name in PAPER_SIZES} == PAPER_SIZES
        described = {key: row[key] for key in ("version", "protocol", "family", "n_draws")}
        assert described == {"version": "1.0.0", "protocol": "transduction", "family": "lookup", "n_draws": 5}
        assert row["suite_hash"] is not None and HEX64.fullmatch(row["suite_hash"])
        assert row["suite_hash"] == committed_manifest(suite_id)["suite_hash"]
        assert row["released"]
    assert rows["lookup-tables"]["suite_hash"] != rows["lookup-tables-mt"]["suite_hash"]


@pytest.mark.parametrize("draw", range(5))
def test_published_targets_follow_from_the_atomic_training_applications(draw: int) -> None:
    data = splits("lookup-tables-mt", draw)
    assert {name: len(data[name]) for name in PAPER_SIZES} == PAPER_SIZES
    solver = LookupSolver(data["train"])
    assert sorted(solver.tables) == list(TABLES)
    for table in solver.tables.values():  # every table is a bijection of the 3-bit strings
        assert sorted(table) == sorted(table.values()) == sorted(BITS)
    for split in data.values():
        for example in split.examples:
            assert apply_tables(solver.tables, example.input) == example.target, (split.name, example.id)
        assert solver.transduce([e.input for e in split.examples]) == [e.target for e in split.examples]

    # the same, straight from the published files: tables from sample{k}/train.tsv, every row of every file
    atomic = [(tokens, target) for tokens, target, _ in raw_rows(draw, "train") if len(tokens) == 3]
    assert len(atomic) == 64
    tables: dict[str, dict[str, str]] = {}
    for tokens, target in atomic:
        tables.setdefault(tokens[1], {})[tokens[0]] = target[1]
    assert tables == solver.tables
    for name, split in data.items():
        raw = raw_rows(draw, name)
        assert [(tokens, target) for tokens, target, _ in raw] == [(e.input, e.target) for e in split.examples]
        assert [attention for _, _, attention in raw] == [e.attention for e in split.examples]
        for tokens, target, _ in raw:
            assert compose(tables, tokens) == target, (name, tokens)


@pytest.mark.parametrize("draw", range(5))
def test_generated_splits_are_disjoint_and_hold_out_what_they_claim(draw: int) -> None:
    data = splits("lookup-tables", draw)
    inputs = {name: {tuple(e.input) for e in split.examples} for name, split in data.items()}
    assert all(len(inputs[name]) == len(data[name]) for name in data)  # no repeats inside a split
    for a, b in itertools.combinations(inputs, 2):
        assert not inputs[a] & inputs[b], (a, b)

    train = compositions(data["train"])
    # t7 and t8 are in train, on every input, but only as single applications
    for table in UNSEEN:
        atomic = {tuple(e.input) for e in data["train"].examples if e.input[1:-1] == [table]}
        assert atomic == {(bits, table, ".") for bits in BITS}
    assert [c for c in train if set(c) & set(UNSEEN) and len(c) != 1] == []
    # held-out compositions: 8 pairs of t1..t6 never seen in train, all 8 inputs each
    held_out = compositions(data["heldout_compositions"])
    assert len(held_out) == 8 and all(len(c) == 2 and set(c) <= set(SEEN) for c in held_out)
    assert not held_out & train
    # held-out inputs and validation: training pairs on inputs train does not show
    assert compositions(data["heldout_inputs"]) | compositions(data["validation"]) <= train
    assert all(sum(t in UNSEEN for t in c) == 1 for c in compositions(data["heldout_tables"]))
    assert compositions(data["new_compositions"]) == set(itertools.product(UNSEEN, repeat=2))
    for n in (3, 4, 5):
        assert {e.meta["n_tables"] for e in data[f"longer_{n}"].examples} == {n}
        assert all(set(c) <= set(SEEN) for c in compositions(data[f"longer_{n}"]))

    tables = LookupSolver(data["train"]).tables
    for split in data.values():
        for example in split.examples:
            assert example.target == compose(tables, example.input), (split.name, example.id)
            assert example.attention is not None
            assert len(example.attention) == len(example.target) + 1
            assert example.attention[-1] == example.input.index(".")
            assert example.attention == list(range(len(example.target) + 1))


@pytest.mark.parametrize("draw", range(5))
def test_published_test_sets_overlap_only_where_one_is_unranked(draw: int) -> None:
    data = splits("lookup-tables-mt", draw)
    tests = {
        s.name: {tuple(e.input) for e in data[s.name].examples}
        for s in registry.suite("lookup-tables-mt").spec.splits_with_role("test")
    }
    shared = {(a, b): len(tests[a] & tests[b]) for a, b in itertools.combinations(tests, 2) if tests[a] & tests[b]}
    assert list(shared) == [("longer_compositions_seen", "longer_compositions_incremental")]
    assert 184 <= shared[("longer_compositions_seen", "longer_compositions_incremental")] <= 196


@pytest.mark.parametrize("suite_id", SUITES)
def test_oracle_solves_every_split_and_the_spec_declares_roles(suite_id: str) -> None:
    suite = registry.suite(suite_id)
    assert (suite.spec.primary_metric, suite.spec.recipe, suite.spec.higher_is_better) == (
        "sequence_accuracy",
        "lookup",
        True,
    )
    tests = suite.spec.splits_with_role("test")
    assert {s.test_role for s in tests} == {"generalisation"}
    unranked = {s.name for s in tests if not s.ranked}
    assert unranked == (set() if suite_id == "lookup-tables" else {"longer_compositions_incremental"})
    data = splits(suite_id, 1)
    oracle = suite.oracle(data)
    for split in data.values():
        metrics = suite.score(split, oracle.transduce([e.input for e in split.examples])).metrics
        assert metrics["sequence_accuracy"] == metrics["final_target_accuracy"] == (1.0, len(split)), split.name


def test_final_target_accuracy_reads_the_last_target_position() -> None:
    suite = registry.suite("lookup-tables")
    split = splits("lookup-tables", 0)["heldout_compositions"]
    # right result, wrong intermediate step: final target right, sequence wrong
    predictions = [[e.target[0], "xxx", *e.target[2:]] for e in split.examples if e.target]
    metrics = suite.score(split, predictions).metrics
    assert metrics["final_target_accuracy"] == (1.0, len(split))
    assert metrics["sequence_accuracy"] == (0.0, len(split))
    # one step short: the result is missing
    metrics = suite.score(split, [(e.target or [])[:-1] for e in split.examples]).metrics
    assert metrics["final_target_accuracy"] == (0.0, len(split))


def test_every_draw_has_its_own_tables() -> None:
    tables = [LookupSolver(splits("lookup-tables", draw)["train"]).tables for draw in range(5)]

    def contents(draw: int) -> list[list[tuple[str, str]]]:
        """The eight tables of a draw, ignoring their names."""
        return sorted(sorted(table.items()) for table in tables[draw].values())

    for a, b in itertools.combinations(range(5), 2):
        assert tables[a] != tables[b], (a, b)
        assert contents(a) != contents(b), (a, b)  # not just the same tables renamed
    held_out = [compositions(splits("lookup-tables", draw)["heldout_compositions"]) for draw in range(5)]
    assert len({frozenset(c) for c in held_out}) > 1


@pytest.mark.parametrize("suite_id", SUITES)
def test_a_fresh_build_reproduces_the_committed_manifest(
    suite_id: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("STRUCTBENCH_HOME", str(tmp_path / "home"))
    suite = registry.suite(suite_id)
    committed = committed_manifest(suite_id)

    def files() -> dict[str, bytes]:
        folder = freeze.suite_dir(suite)
        return {str(p.relative_to(folder)): p.read_bytes() for p in sorted(folder.rglob(f"*{freeze.SPLIT_SUFFIX}"))}

    first = freeze.build(suite)
    first_files = files()
    second = freeze.build(suite)
    assert files() == first_files, "two builds wrote different bytes"
    assert len(first_files) == 5 * len(suite.spec.splits)
    assert first == second
    assert first.suite_hash == committed["suite_hash"]
    assert {k: v.sha256 for k, v in first.splits.items()} == {k: v["sha256"] for k, v in committed["splits"].items()}
    assert freeze.verify(suite) == []


def test_longer_compositions_are_sample_one_as_published_and_the_oracle_solves_them() -> None:
    suite = registry.suite("lookup-tables-mt-longer")
    data = splits("lookup-tables-mt-longer", 0)
    published = splits("lookup-tables-mt", 0)
    for name in ("train", "validation"):  # the same training data as lookup-tables-mt draw 0
        assert data[name].examples == published[name].examples
    longer = [s.name for s in suite.spec.splits_with_role("test")]
    assert len(longer) == 21 and {s.test_role for s in suite.spec.splits_with_role("test")} == {"generalisation"}
    folder = SHARED_DATA / "lookup_tables" / "longer_compositions_sample1"
    assert sorted(longer) == sorted(p.stem for p in folder.glob("*.tsv"))
    tables = LookupSolver(data["train"]).tables
    for name in longer:
        rows = (folder / f"{name}.tsv").read_text().splitlines()
        assert [row.split("\t")[0].split() for row in rows] == [e.input for e in data[name].examples], name
        length = int(
            name.removeprefix("heldout_compositions").removeprefix("heldout_tables").removeprefix("new_compositions")
        )
        assert {e.meta["n_tables"] for e in data[name].examples} == {length}
        for example in data[name].examples:  # the published targets follow from sample 1's tables
            assert compose(tables, example.input) == example.target, (name, example.id)
    oracle = suite.oracle(data)
    for name in longer:
        split = data[name]
        metrics = suite.score(split, oracle.transduce([e.input for e in split.examples])).metrics
        assert metrics["sequence_accuracy"] == (1.0, len(split)), name
    assert {"t7", "t8"} >= {t for e in data["new_compositions10"].examples for t in e.input[1:-1]}
