"""Bowman et al.'s published logic pairs: every label agrees with our truth tables; splits, dev carving, roles, oracle."""

from __future__ import annotations

import itertools
from collections import Counter

import pytest

from structbench import registry
from structbench.data import freeze
from structbench.data.sources import sha256_file
from structbench.runs.runner import Runner
from structbench.specs import Example, ModelSpec
from structbench.suites.logic.bowman import (
    COMMIT,
    LABELS,
    LINES,
    SEPARATOR,
    SHA256,
    SOURCES,
    dev_size,
    formula_mask,
)
from structbench.suites.logic.common import ALL_WORLDS, VARIABLE_MASKS, relation
from tests.conftest import REPO, SHARED_DATA

SUITES = [f"structbench.suites.logic.bowman:LogicBowmanLe{n}" for n in (3, 6, 9, 12)]
FOLDER = SHARED_DATA / "logic_bowman"
Splits = dict[str, list[Example]]


def published(name: str) -> list[list[str]]:
    """The lines of one published file as [relation, left, right]."""
    return [line.split("\t") for line in (FOLDER / name).read_text().splitlines()]


def as_pair(example: Example) -> tuple[str, str, str]:
    cut = example.input.index(SEPARATOR)
    return example.label or "", " ".join(example.input[:cut]), " ".join(example.input[cut + 1 :])


def test_the_truth_tables_give_every_published_label_and_bin() -> None:
    disagreements, n_pairs = [], 0
    for part, b in itertools.product(("train", "test"), range(13)):
        assert sha256_file(FOLDER / f"{part}{b}") == SHA256[part][b]
        lines = published(f"{part}{b}")
        assert len(lines) == LINES[part][b]
        for label, left, right in lines:
            masks = formula_mask(left.split()), formula_mask(right.split())
            if relation(*masks) != label:
                disagreements.append((part, b, label, left, right))
            operators = max(sum(t in ("and", "or", "not") for t in side.split()) for side in (left, right))
            assert min(operators, 12) == b, (part, b, left, right)
        n_pairs += len(lines)
    assert n_pairs == 249_069
    assert not disagreements, disagreements[:3]
    assert all(COMMIT in source.url and source.url.endswith(source.path.split("/")[1]) for source in SOURCES)


def test_bowman_bracketing_and_malformed_formulas() -> None:
    a, b = VARIABLE_MASKS["a"], VARIABLE_MASKS["b"]
    assert formula_mask("( a ( and b ) )".split()) == a & b
    assert formula_mask("( ( not a ) ( or b ) )".split()) == (~a & ALL_WORLDS) | b
    assert relation(formula_mask(["a"]), formula_mask("( not a )".split())) == "^"
    for bad in ("( a and b )", "( a )", "a b", "( not a", "", "( a ( xor b ) )", "g"):
        with pytest.raises(ValueError, match="Bowman's bracketing"):
            formula_mask(bad.split())


def built(path: str) -> Splits:
    suite = registry.suite(path)
    manifest = freeze.ensure_built(suite)
    return {s.name: freeze.load_split(suite, manifest, 0, s.name).examples for s in suite.spec.splits}


@pytest.fixture(scope="module")
def le6() -> Splits:
    return built(SUITES[1])


def test_each_test_split_is_its_published_file_and_pooled_is_bins_1_to_12(le6: Splits) -> None:
    for b in range(1, 13):
        split = le6[f"ops-{b:02d}"]
        assert [as_pair(e) for e in split] == [tuple(line) for line in published(f"test{b}")]
        assert {e.meta["n_ops"] for e in split} == {b}
        assert split[0].id == f"test{b:02d}-00000"
    assert "ops-00" not in le6
    assert [e.id for e in le6["pooled"]] == [e.id for b in range(1, 13) for e in le6[f"ops-{b:02d}"]]
    assert len(le6["pooled"]) == sum(LINES["test"][1:]) == 37_361


def test_train_and_dev_partition_the_training_files_bin_by_bin(le6: Splits) -> None:
    train, dev = le6["train"], le6["dev"]
    assert not {e.id for e in train} & {e.id for e in dev}
    assert not {tuple(e.input) for e in train} & {tuple(e.input) for e in dev}
    union = Counter(as_pair(e) for e in train + dev)
    assert union == Counter(tuple(line) for b in range(7) for line in published(f"train{b}"))
    dev_per_bin = Counter(e.meta["n_ops"] for e in dev)
    assert dev_per_bin == {b: dev_size(LINES["train"][b]) for b in range(7)}
    assert dev_per_bin[5] == 3415  # a tenth of 34,152, rounded half up


def test_a_bins_dev_lines_are_the_same_in_every_suite(le6: Splits) -> None:
    le3 = built(SUITES[0])
    assert [e.id for e in le3["dev"]] == [e.id for e in le6["dev"] if int(e.meta["n_ops"]) <= 3]


@pytest.mark.long_running
def test_suites_share_their_test_items_and_match_their_committed_manifests() -> None:
    pooled = set()
    for path in SUITES:
        suite = registry.suite(path)
        manifest = freeze.ensure_built(suite)
        committed = (REPO / "src" / "structbench" / "suites" / "manifests" / f"{suite.spec.key}.json").read_text()
        assert manifest.suite_hash in committed
        pooled.add(manifest.splits["draw0/pooled"].sha256)
    assert len(pooled) == 1


@pytest.mark.parametrize("limit", [3, 6, 9, 12])
def test_bins_up_to_the_training_limit_are_in_distribution_and_pooled_is_unranked(limit: int) -> None:
    spec = registry.suite(f"logic-bowman-le{limit}").spec
    assert (spec.version, spec.primary_metric, spec.protocol, spec.labels) == (
        "1.0.0",
        "accuracy",
        "classification",
        LABELS,
    )
    trained = LINES["train"][: limit + 1]
    assert spec.split("train").size == sum(trained) - sum(dev_size(n) for n in trained)
    for b in range(1, 13):
        split = spec.split(f"ops-{b:02d}")
        assert split.ranked and split.size == LINES["test"][b]
        assert split.test_role == ("in-distribution" if b <= limit else "generalisation")
    pooled = spec.split("pooled")
    assert not pooled.ranked
    assert pooled.test_role == ("in-distribution" if limit == 12 else "generalisation")
    assert [s.name for s in spec.ranked_splits] == [f"ops-{b:02d}" for b in range(1, 13)]


def test_oracle_solves_every_bin_and_majority_answers_independence(runner: Runner) -> None:
    oracle = runner.evaluate(SUITES[0], ModelSpec(name="oracle"), [0])
    assert oracle.status == {"0": "done"}
    assert len(oracle.scores) == 13
    assert all(scores["accuracy"].mean == 1.0 for scores in oracle.scores.values())
    majority = runner.evaluate(SUITES[0], ModelSpec(name="majority"), [0])
    independent = sum(line[0] == "#" for b in range(1, 13) for line in published(f"test{b}"))
    assert majority.scores["pooled"]["accuracy"].mean == pytest.approx(independent / 37_361)
