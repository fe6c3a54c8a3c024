"""Symbol rewriting: the validity scorer against the published data, and the generated splits."""

from __future__ import annotations

import itertools
from collections import Counter

import pytest

from structbench import registry
from structbench.data import freeze
from structbench.runs.runner import Runner
from structbench.specs import ModelSpec, Split
from structbench.suites.symbol_rewriting import INDEX, SYMBOLS, attention_targets, is_valid
from tests.conftest import REPO, SHARED_DATA

FILES = ["grammar_std.train.small.tsv", "grammar.val.tsv", "grammar_std.tst.full.tsv", "grammar_repeat.tst.full.tsv",
         "grammar_short.tst.full.tsv", "grammar_long.tst.full.tsv"]  # fmt: skip
SUITES = [
    "structbench.suites.symbol_rewriting:SymbolRewriting",
    "structbench.suites.symbol_rewriting:SymbolRewritingMachineTasks",
]


def rows(name: str) -> list[tuple[list[str], list[str], list[int]]]:
    out = []
    for line in (SHARED_DATA / "symbol_rewriting" / name).read_text().splitlines():
        source, target, attention = line.split("\t")
        out.append((source.split()[:-1], target.split(), [int(a) for a in attention.split()]))
    return out


def test_published_targets_are_valid_except_the_b_quirk() -> None:
    published = [row for name in FILES for row in rows(name)]
    assert {s for symbols, _, _ in published for s in symbols} == set(SYMBOLS)
    invalid = [(symbols, target) for symbols, target, _ in published if not is_valid(symbols, target)]
    assert (len(published), len(invalid)) == (23000, 653)
    for symbols, target in invalid:  # every one rewrites some B with A's index 1
        repaired = list(target)
        for i, symbol in enumerate(symbols):
            if symbol == "B":
                repaired[3 * i : 3 * i + 3] = [
                    t[0] + "2" + t[2:] if t[1:3] == "1_" else t for t in target[3 * i : 3 * i + 3]
                ]
        assert is_valid(symbols, repaired)


def test_validity_rules() -> None:
    assert INDEX["A"] == 1 and INDEX["Z"] == 25 and INDEX["OS"] == 40
    assert is_valid(["A", "C"], ["C1_2", "A1_1", "B1_1", "A3_1", "B3_2", "C3_2"])
    assert not is_valid(["A", "C"], ["C1_2", "A1_1", "B1_1", "A3_1", "B3_2"])  # a token short
    assert not is_valid(["A"], ["A1_1", "A1_2", "B1_1"])  # C missing
    assert not is_valid(["A"], ["A1_1", "B1_1", "C1_3"])  # no variant 3
    assert not is_valid(["A", "C"], ["A3_1", "B3_1", "C3_1", "A1_1", "B1_1", "C1_1"])  # order of symbols


@pytest.mark.parametrize(
    "name", ["grammar_std.tst.full.tsv", "grammar_repeat.tst.full.tsv", "grammar_short.tst.full.tsv"]
)
def test_published_test_attention_is_what_we_generate(name: str) -> None:
    assert all(attention_targets(symbols) == attention for symbols, _, attention in rows(name))


@pytest.fixture(scope="module")
def generated() -> dict[str, Split]:
    suite = registry.suite(SUITES[0])
    manifest = freeze.ensure_built(suite)
    committed = (REPO / "src" / "structbench" / "suites" / "manifests" / f"{suite.spec.key}.json").read_text()
    assert manifest.suite_hash in committed
    return {s.name: freeze.load_split(suite, manifest, 0, s.name) for s in suite.spec.splits}


def test_generated_splits_have_the_papers_lengths(generated: dict[str, Split]) -> None:
    lengths = {name: Counter(len(e.input) - 1 for e in split.examples) for name, split in generated.items()}
    assert set(lengths["train"]) == set(lengths["standard"]) == set(lengths["repeat"]) == set(range(5, 11))
    assert set(lengths["short"]) == set(range(1, 5)) and set(lengths["long"]) == set(range(11, 16))
    for name, split in generated.items():
        for example in split.examples[:500]:
            symbols = example.input[:-1]
            assert is_valid(symbols, example.target or [])
            assert (len(set(symbols)) < len(symbols)) == (name == "repeat")


@pytest.mark.parametrize("path", SUITES)
def test_oracle_is_always_valid_and_copy_never(runner: Runner, path: str) -> None:
    oracle = runner.evaluate(path, ModelSpec(name="oracle"), [0])
    copy = runner.evaluate(path, ModelSpec(name="copy"), [0])
    for split in ("standard", "repeat", "short", "long"):
        assert oracle.scores[split]["valid_accuracy"].mean == 1.0
        assert oracle.scores[split]["sequence_accuracy"].mean < 0.05
        assert copy.scores[split]["valid_accuracy"].mean == 0.0


@pytest.mark.parametrize("path", SUITES)
def test_spec_ranks_valid_accuracy_and_declares_roles(path: str) -> None:
    spec = registry.suite(path).spec
    assert (spec.primary_metric, spec.recipe, spec.higher_is_better) == ("valid_accuracy", "symbol-rewriting", True)
    roles = {s.name: s.test_role for s in spec.splits_with_role("test")}
    assert roles == {
        "standard": "in-distribution",
        "repeat": "generalisation",
        "short": "generalisation",
        "long": "generalisation",
    }
    assert all(s.ranked for s in spec.splits_with_role("test"))


def test_valid_accuracy_is_primary_per_example_and_by_length(generated: dict[str, Split]) -> None:
    suite = registry.suite(SUITES[0])
    split = generated["short"]
    predictions = suite.oracle(generated).transduce([e.input for e in split.examples])
    predictions = [p if i % 2 else p[:-1] for i, p in enumerate(predictions)]  # every other one a token short
    scores = suite.score(split, predictions)
    assert scores.scores[0].name == "valid_accuracy"
    assert scores.correct == [bool(i % 2) for i in range(len(split))]
    metrics = scores.metrics
    assert metrics["valid_accuracy"] == (0.5, len(split))
    by_length = {k: v for k, v in metrics.items() if k.startswith("valid_accuracy[n_symbols=")}
    assert set(by_length) == {f"valid_accuracy[n_symbols={n}]" for n in range(1, 5)}
    assert sum(n for _, n in by_length.values()) == len(split)


@pytest.mark.parametrize("path", SUITES)
def test_test_splits_share_no_input(path: str) -> None:
    suite = registry.suite(path)
    manifest = freeze.ensure_built(suite)
    inputs = {
        s.name: {tuple(e.input) for e in freeze.load_split(suite, manifest, 0, s.name).examples}
        for s in suite.spec.splits_with_role("test")
    }
    for a, b in itertools.combinations(inputs, 2):
        assert not inputs[a] & inputs[b], (a, b)
