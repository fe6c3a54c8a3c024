"""The lookup-table suites agree with their definition and with the published samples."""

from __future__ import annotations

import itertools
import json

import pytest

from harness import freeze, registry
from harness.cli import main
from harness.specs import Split
from suites.lookup_tables import BITS, UNSEEN, LookupSolver, apply_tables
from tests.conftest import REPO, SHARED_DATA

PAPER_SIZES = {
    "train": 232,
    "validation": 16,
    "heldout_inputs": 40,
    "heldout_compositions": 64,
    "heldout_tables": 192,
    "new_compositions": 32,
}


def splits(suite_id: str, draw: int) -> dict[str, Split]:
    suite = registry.suite(suite_id)
    manifest = freeze.ensure_built(suite)
    return {s.name: freeze.load_split(suite, manifest, draw, s.name) for s in suite.spec.splits}


def test_suites_json_lists_both_suites_with_the_paper_sizes(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["suites", "--json"]) == 0
    rows = {row["id"]: row for row in json.loads(capsys.readouterr().out)}
    for suite_id in ("lookup-tables", "lookup-tables-mt"):
        sizes = {name: split["size"] for name, split in rows[suite_id]["splits"].items()}
        assert {name: sizes[name] for name in PAPER_SIZES} == PAPER_SIZES
        assert len(rows[suite_id]["suite_hash"]) == 64
        assert rows[suite_id]["released"]


@pytest.mark.parametrize("draw", range(5))
def test_published_targets_follow_from_the_atomic_training_applications(draw: int) -> None:
    data = splits("lookup-tables-mt", draw)
    solver = LookupSolver(data["train"])
    assert sorted(solver.tables) == [f"t{i}" for i in range(1, 9)]
    assert all(sorted(table) == sorted(BITS) for table in solver.tables.values())
    for split in data.values():
        for example in split.examples:
            assert apply_tables(solver.tables, example.input) == example.target, (split.name, example.id)
    # and the loader kept every row of the published file
    for name, split in data.items():
        raw = (SHARED_DATA / "lookup_tables" / f"sample{draw + 1}" / f"{name}.tsv").read_text().splitlines()
        assert [line.split("\t")[1].split() for line in raw] == [e.target for e in split.examples]


@pytest.mark.parametrize("draw", range(5))
def test_generated_splits_are_disjoint_and_hold_out_what_they_claim(draw: int) -> None:
    data = splits("lookup-tables", draw)
    inputs = {name: {tuple(e.input) for e in split.examples} for name, split in data.items()}
    for a, b in itertools.combinations(inputs, 2):
        assert not inputs[a] & inputs[b], (a, b)
    train_compositions = {tuple(e.input[1:-1]) for e in data["train"].examples}
    assert all(len(c) == 1 for c in train_compositions if set(c) & set(UNSEEN))
    assert not {tuple(e.input[1:-1]) for e in data["heldout_compositions"].examples} & train_compositions
    for split in data.values():
        for example in split.examples:
            assert example.target is not None and example.attention is not None
            assert len(example.attention) == len(example.target) + 1
            assert example.input[example.attention[-1]] == "."
    for n in (3, 4, 5):
        assert {e.meta["n_tables"] for e in data[f"longer_{n}"].examples} == {n}


def test_every_draw_has_its_own_tables() -> None:
    tables = [
        tuple(
            sorted(
                (name, tuple(sorted(t.items())))
                for name, t in LookupSolver(splits("lookup-tables", d)["train"]).tables.items()
            )
        )
        for d in range(5)
    ]
    assert len(set(tables)) == 5


@pytest.mark.parametrize("suite_id", ["lookup-tables", "lookup-tables-mt"])
def test_a_fresh_build_reproduces_the_committed_manifest(suite_id: str) -> None:
    suite = registry.suite(suite_id)
    committed = json.loads((REPO / "suites" / "manifests" / f"{suite.spec.key}.json").read_text())
    first = freeze.build(suite)
    second = freeze.build(suite)
    assert first == second
    assert first.suite_hash == committed["suite_hash"]
    assert {k: v.sha256 for k, v in first.splits.items()} == {k: v["sha256"] for k, v in committed["splits"].items()}
