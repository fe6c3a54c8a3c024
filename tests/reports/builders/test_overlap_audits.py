"""Overlap audits as a suite card shows them: what dev and test share with train, read where the build
stored them, cached, or made from data built before that; never made from data of another hash."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path

import pytest

from structbench import registry
from structbench.data import freeze
from structbench.reports.builders.cards import suite_card
from structbench.reports.builders.overlap_audits import OverlapAudit, SplitOverlap, audit, cache_path, cached_audit
from structbench.specs import Example, SuiteSpec, dev_split, scored_split, train_split
from structbench.suite import SourceFiles, Suite
from tests.conftest import SHARED_DATA


@pytest.fixture
def private_home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """An empty STRUCTBENCH_HOME of this test's own: nothing built, no cached audit."""
    home = tmp_path / "home"
    monkeypatch.setenv("STRUCTBENCH_HOME", str(home))
    return home


def example(id: str, words: str, target: str | None = None, **fields: object) -> Example:
    return Example.model_validate(
        {"id": id, "input": words.split(), "target": None if target is None else target.split(), **fields}
    )


class Handmade(Suite):
    """Train a→x, b→y, c→z; dev and test repeat some of it exactly, some only in their input."""

    spec = SuiteSpec(
        id="handmade-overlap",
        version="1.0.0",
        family="systematicity",
        protocol="transduction",
        description="Hand-made overlaps.",
        citation="none",
        primary_metric="sequence_accuracy",
        splits=[train_split(3), dev_split(3), scored_split("test", 4, "generalisation")],
    )

    def generate(self, draw: int, files: SourceFiles) -> Mapping[str, list[Example]]:
        return {
            "train": [example("t0", "a", "x"), example("t1", "b", "y"), example("t2", "c", "z")],
            "dev": [
                example("d0", "a", "x"),  # exact duplicate
                example("d1", "b", "q"),  # same input, other answer
                example("d2", "d", "x"),  # new input, known answer
            ],
            "test": [
                example("e0", "a", "x", meta={"n": 1}),  # exact duplicate: id and meta do not count
                example("e1", "c", "z", attention=[0, 1]),  # exact duplicate: attention is no answer
                example("e2", "a x", "x"),  # new input
                example("e3", "c", "z z"),  # same input, other answer
            ],
        }


class HandmadePairs(Suite):
    """Minimal pairs over language-model text: the correct sentence may or may not be in train."""

    spec = SuiteSpec(
        id="handmade-pairs",
        version="1.0.0",
        family="agreement",
        protocol="minimal-pair",
        description="Hand-made minimal pairs.",
        citation="none",
        primary_metric="accuracy",
        splits=[train_split(2), scored_split("test", 3, "generalisation")],
    )
    train_text: tuple[str, ...] = ("the dog runs", "the dogs run")

    def generate(self, draw: int, files: SourceFiles) -> Mapping[str, list[Example]]:
        def pair(id: str, good: str, bad: str) -> Example:
            return Example(id=id, input=good.split()[:2], candidates=[good.split(), bad.split()], answer=0)

        return {
            "train": [Example(id=f"t{i}", input=line.split()) for i, line in enumerate(self.train_text)],
            "test": [
                pair("p0", "the dog runs", "the dog run"),
                pair("p1", "the dogs run", "the dogs runs"),
                pair("p2", "the cat runs", "the cat run"),
            ],
        }


class HandmadePairsNoTrain(HandmadePairs):
    spec = HandmadePairs.spec.variant(
        id="handmade-pairs-no-train", splits=[train_split(0), *HandmadePairs.spec.splits[1:]]
    )
    train_text = ()


@pytest.mark.usefixtures("private_home")
def test_the_audit_counts_exact_duplicates_and_repeated_inputs_of_a_handmade_suite() -> None:
    suite = Handmade()
    result = audit(suite, freeze.build(suite))
    assert (result.draw, result.train_split, result.train_size, result.note) == (0, "train", 3, "")
    assert result.splits == [
        SplitOverlap(
            name="dev", role="dev", n_examples=3, exact_duplicates=1, input_in_train=2, gold_sequence_in_train=None
        ),
        SplitOverlap(
            name="test", role="test", n_examples=4, exact_duplicates=2, input_in_train=3, gold_sequence_in_train=None
        ),
    ]


@pytest.mark.usefixtures("private_home")
def test_minimal_pairs_are_audited_on_their_correct_sentence_and_an_empty_train_is_noted() -> None:
    pairs = audit(HandmadePairs(), freeze.build(HandmadePairs()))
    assert [(s.exact_duplicates, s.input_in_train, s.gold_sequence_in_train) for s in pairs.splits] == [(0, 0, 2)]
    assert pairs.note == ""
    empty = audit(HandmadePairsNoTrain(), freeze.build(HandmadePairsNoTrain()))
    assert empty.train_size == 0
    assert [(s.n_examples, s.exact_duplicates, s.input_in_train, s.gold_sequence_in_train) for s in empty.splits] == [
        (3, 0, 0, 0)
    ]
    assert "train split is empty" in empty.note


def published_pairs(name: str) -> list[tuple[str, str]]:
    """(command, actions) per line of a published SCAN file, read without the suite's parser."""
    lines = (SHARED_DATA / "scan" / name).read_text(encoding="utf-8").splitlines()
    pairs = []
    for line in lines:
        command, actions = line.removeprefix("IN: ").split(" OUT: ")
        pairs.append((command.strip(), actions.strip()))
    return pairs


def expected_overlap(name: str, role: str, pairs: list[tuple[str, str]], train: list[tuple[str, str]]) -> SplitOverlap:
    train_pairs, train_commands = set(train), {command for command, _ in train}
    return SplitOverlap.model_validate(
        {
            "name": name,
            "role": role,
            "n_examples": len(pairs),
            "exact_duplicates": sum(pair in train_pairs for pair in pairs),
            "input_in_train": sum(command in train_commands for command, _ in pairs),
            "gold_sequence_in_train": None,
        }
    )


def test_scan_addprim_jump_audit_matches_the_published_files() -> None:
    suite = registry.suite("scan-addprim-jump")
    manifest = freeze.ensure_built(suite)
    card = suite_card(suite.spec, manifest.suite_hash)
    assert card.audit is not None, card.audit_note
    assert (card.audit.suite, card.audit.suite_hash, card.audit.draw) == ("scan-addprim-jump", manifest.suite_hash, 0)

    published_train = published_pairs("tasks_train_addprim_jump.txt")
    published_test = published_pairs("tasks_test_addprim_jump.txt")
    # which published train lines the suite set aside for dev is its own seeded choice; the ids say which
    dev_lines = {int(e.id.removeprefix("train-")) for e in freeze.load_split(suite, manifest, 0, "dev").examples}
    train = [pair for i, pair in enumerate(published_train) if i not in dev_lines]
    dev = [pair for i, pair in enumerate(published_train) if i in dev_lines]

    assert card.audit.train_size == len(train) == 13203
    assert card.audit.splits == [
        expected_overlap("dev", "dev", dev, train),
        expected_overlap("test", "test", published_test, train),
    ]
    test_record = card.audit.splits[1]
    assert (test_record.n_examples, test_record.exact_duplicates, test_record.input_in_train) == (7706, 0, 0)
    # the published train file repeats the lone primitive; those repeats are dev's only duplicates
    dev_record = card.audit.splits[0]
    assert dev_record.exact_duplicates > 0
    assert {pair for pair in dev if pair in set(train)} == {("jump", "I_JUMP")}


def test_a_card_of_data_not_built_here_says_how_to_audit_it_and_builds_nothing(private_home: Path) -> None:
    suite = registry.suite("scan-simple")
    released = freeze.expected_manifest(suite)  # the committed manifest; nothing is built in this home
    assert released is not None
    card = suite_card(suite.spec, released.suite_hash)
    assert card.installed and card.audit is None
    assert card.audit_note == "not built here: run `structbench build scan-simple` to audit its splits."
    assert not (private_home / "suites" / suite.spec.key).exists()
    assert not cache_path(suite.spec, released.suite_hash).exists()


@pytest.mark.usefixtures("private_home")
def test_data_built_with_another_hash_is_not_audited() -> None:
    suite = registry.suite("miniscan")
    manifest = freeze.build(suite)
    audited, note = cached_audit(suite.spec, "f" * 64)
    assert audited is None
    assert manifest.suite_hash[:12] in note and "ffffffffffff" in note
    assert not cache_path(suite.spec, "f" * 64).exists()


@pytest.mark.usefixtures("private_home")
def test_a_built_suite_carries_its_audit_and_the_report_reads_it_without_reading_a_split(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    suite = registry.suite("scan-addprim-jump")
    manifest = freeze.build(suite)
    stored = freeze.built_audit(suite, manifest.suite_hash)
    assert stored is not None and stored.splits[0].exact_duplicates > 0
    assert stored == audit(suite, manifest)  # counted at build time == counted from the frozen files

    def no_split_read(*args: object, **kwargs: object) -> None:
        raise AssertionError("the report read a split")

    monkeypatch.setattr(freeze, "load_split", no_split_read)
    monkeypatch.setattr(freeze, "read_frozen", no_split_read)
    assert cached_audit(suite.spec, manifest.suite_hash) == (stored, "")
    assert not cache_path(suite.spec, manifest.suite_hash).exists()  # nothing computed, nothing cached


@pytest.mark.usefixtures("private_home")
def test_a_damaged_stored_audit_is_recomputed_from_the_data() -> None:
    suite = registry.suite("miniscan")
    manifest = freeze.build(suite)
    stored = freeze.built_audit(suite, manifest.suite_hash)
    assert stored is not None
    (freeze.suite_dir(suite) / freeze.AUDIT).write_text(stored.model_dump_json()[:40])
    assert freeze.built_audit(suite, manifest.suite_hash) is None
    assert cached_audit(suite.spec, manifest.suite_hash) == (stored, "")
    assert cache_path(suite.spec, manifest.suite_hash).is_file()


@pytest.mark.usefixtures("private_home")
def test_a_cached_audit_is_served_and_a_corrupt_one_is_recomputed() -> None:
    suite = registry.suite("miniscan")
    suite_hash = freeze.build(suite).suite_hash
    (freeze.suite_dir(suite) / freeze.AUDIT).unlink()  # as built by a structbench that stored no audit
    first, note = cached_audit(suite.spec, suite_hash)
    assert first is not None and note == ""
    assert [(s.name, s.n_examples, s.exact_duplicates, s.input_in_train) for s in first.splits] == [("test", 10, 0, 0)]
    path = cache_path(suite.spec, suite_hash)
    assert OverlapAudit.model_validate_json(path.read_bytes()) == first

    # the cache is what is served: an edited record comes back as it is
    path.write_text(first.model_copy(update={"train_size": 999}).model_dump_json())
    assert cached_audit(suite.spec, suite_hash)[0] == first.model_copy(update={"train_size": 999})

    for damage in (
        b"{not json",
        b'{"suite": "miniscan"}',
        first.model_copy(update={"audit_version": 0}).model_dump_json().encode(),
    ):
        path.write_bytes(damage)
        assert cached_audit(suite.spec, suite_hash) == (first, "")
        assert OverlapAudit.model_validate_json(path.read_bytes()) == first  # and replaced
    assert [p.name for p in path.parent.iterdir()] == [path.name]  # no temporary file left behind


def test_an_audit_is_never_asked_for_a_path_outside_the_cache() -> None:
    suite = registry.suite("miniscan")
    assert cached_audit(suite.spec, "../../x") == (None, "not audited: '../../x' is not the hash of a built suite.")
