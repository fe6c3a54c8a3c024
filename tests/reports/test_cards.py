"""Suite cards and overlap audits: licences, how each suite was checked, what dev and test share with train."""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from pathlib import Path

import pytest

from structbench import registry
from structbench.data import freeze
from structbench.reports.cards import NOT_DECLARED, module_docstring, suite_card
from structbench.reports.overlap import OverlapAudit, SplitOverlap, audit, cache_path, cached_audit
from structbench.specs import Example, SuiteSpec, dev_split, scored_split, train_split
from structbench.suite import SourceFiles, Suite
from tests.conftest import REPO, SHARED_DATA


def built_in_suites() -> list[Suite]:
    """Every suite this distribution registers (plugins installed elsewhere left out)."""
    suites = [registry.suite(name) for name in registry.suite_names()]
    return [s for s in suites if type(s).__module__.startswith("structbench.suites.")]


@pytest.fixture
def private_home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """An empty STRUCTBENCH_HOME of this test's own: nothing built, no cached audit."""
    home = tmp_path / "home"
    monkeypatch.setenv("STRUCTBENCH_HOME", str(home))
    return home


# --- a tiny suite defined here, with overlaps chosen by hand ---------------------------------


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
        task="default",
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
        task="default",
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


# --- SCAN add-primitive, recomputed from the published files ---------------------------------


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


# --- licences ----------------------------------------------------------------------------------


def test_licences_of_published_data_are_the_ones_their_repositories_state() -> None:
    for name in ("scan-simple", "scan-length", "scan-addprim-jump", "scan-addprim-turn-left"):
        assert registry.suite(name).licence.startswith("BSD 3-clause"), name
    assert registry.suite("agreement-gulordava").licence.startswith("CC BY-NC 4.0")
    for name in ("pos-ud-ewt-xpos", "pos-ud-ewt-upos"):
        assert registry.suite(name).licence.startswith("CC BY-SA 4.0"), name
    for name in ("lookup-tables-mt", "lookup-tables-mt-longer", "symbol-rewriting-mt", "logic-bowman-le3"):
        assert registry.suite(name).licence.startswith("none stated by the authors"), name
    for name in ("lookup-tables", "logic-inference-le3", "grounded-weak", "pos-synthetic", "sentence-completion"):
        assert registry.suite(name).licence == "generated by structbench (MIT, the project's licence)", name


def test_every_built_in_suite_version_states_a_licence_and_user_supplied_ones_say_so() -> None:
    for suite in built_in_suites():
        for version in (type(suite), *type(suite).superseded):
            assert version.licence, f"{version.spec.key} states no licence"
            user_supplied = any(not source.pinned for source in version.sources)
            assert version.licence.startswith("user-supplied") == user_supplied, version.spec.key
    assert registry.suite("agreement-linzen-number@1.0.0").licence.startswith("user-supplied")


def test_a_licence_changes_no_spec_and_the_card_shows_it() -> None:
    suite = registry.suite("scan-simple")
    assert "licence" not in SuiteSpec.model_fields
    card = suite_card(suite.spec, "0" * 64)
    assert card.licence == suite.licence
    assert [source.path for source in card.sources] == [
        "scan/tasks_train_simple.txt",
        "scan/tasks_test_simple.txt",
    ]


# --- how it was checked ------------------------------------------------------------------------


def test_every_built_in_suite_declares_how_it_was_checked_and_the_card_shows_it() -> None:
    suites = built_in_suites()
    assert len(suites) == len(registry.suite_names())  # no plugin installed here: every suite is built in
    for suite in suites:
        for version in (type(suite), *type(suite).superseded):
            assert "How it was checked" in version.spec.checked, version.spec.key
        card = suite_card(suite.spec, "0" * 64)
        assert card.how_checked == suite.spec.checked, suite.spec.id
        assert card.deviations == (suite.spec.deviations or NOT_DECLARED), suite.spec.id
    assert {s.spec.id for s in suites if not s.spec.deviations} == {"dsr", "miniscan"}  # their modules name none


def test_test_paths_in_declared_checks_and_suite_modules_exist() -> None:
    named = set()
    for suite in built_in_suites():
        for text in (suite.spec.checked, suite.spec.deviations, module_docstring(type(suite))):
            named |= set(re.findall(r"tests/[\w/]+\.py", text))
    assert named and all(path.startswith("tests/suites/") for path in named), named
    assert [path for path in sorted(named) if not (REPO / path).is_file()] == []


def test_declared_checks_stop_where_the_checks_end() -> None:
    bowman = registry.suite("logic-bowman-le3").spec
    assert bowman.checked.startswith("How it was checked: the pinned SHA-256 are those of the commit's blobs")
    assert bowman.checked.endswith("and that the oracle scores 1.0 on every test split.")
    assert "Deviations" not in bowman.checked
    assert bowman.deviations.startswith("Deviations from Tran: the published files rather than a regeneration")

    gulordava = registry.suite("agreement-gulordava").spec
    assert gulordava.checked.endswith("the oracle (the gold forms read from the frozen test split) scores 1.0.")
    assert "Deviation" not in gulordava.checked  # the deviation sentence is declared on its own
    assert gulordava.deviations.startswith("Deviation: none; the verb forms are scored as continuations")
    first = registry.suite("agreement-gulordava@1.0.0").spec
    assert first.deviations.startswith("Deviation: none in the data; the whole sequence is scored")

    scan = registry.suite("scan-simple").spec
    assert scan.checked.startswith("The interpreter (grammar and semantics")  # the sentence that says what "it" is
    assert scan.checked.endswith("the simple split is an 80/20 partition of `tasks.txt`.")
    assert "Scorers" not in scan.checked


def test_declared_deviations_keep_their_lists() -> None:
    loula = registry.suite("scan-fewshot-1").spec.deviations
    assert loula.startswith("What deviates, and what upstream does that the experiments' wording does not say:\n- dev:")
    assert loula.endswith("Both are\n  kept as published.")
    generated = registry.suite("logic-inference-le3").spec.deviations
    assert "\n- Bracketing:" in generated and generated.endswith("exactly their bin's operator count.")


def test_a_spec_stored_before_the_declared_fields_loads_and_its_card_says_what_is_declared() -> None:
    installed = registry.suite("miniscan").spec
    old = json.loads(installed.model_dump_json())
    del old["checked"], old["deviations"]
    stored = SuiteSpec.model_validate_json(json.dumps(old))  # what Store.suite_specs reads from an older store
    assert (stored.checked, stored.deviations) == ("", "")
    card = suite_card(stored, "a" * 64)  # this structbench has miniscan@1.0.0: its declaration is shown
    assert (card.how_checked, card.deviations) == (installed.checked, NOT_DECLARED)
    unknown = suite_card(stored.variant(version="9.9.9"), "a" * 64)
    assert not unknown.installed
    assert (unknown.how_checked, unknown.deviations) == (NOT_DECLARED, NOT_DECLARED)


# --- cards of versions this structbench does not have, and of data not built here -----------


def test_an_uninstalled_version_gets_a_card_from_its_stored_spec_alone() -> None:
    stored = registry.suite("miniscan").spec.variant(version="9.9.9", changelog=["9.9.9: from the future"])
    card = suite_card(stored, "a" * 64)
    assert not card.installed
    assert "9.9.9" in card.installed_note
    assert (card.licence, card.sources, card.about) == ("", [], "")
    assert (card.how_checked, card.deviations) == (stored.checked, NOT_DECLARED)  # as the stored spec declares
    assert (card.description, card.splits, card.changelog) == (stored.description, stored.splits, stored.changelog)
    assert card.audit is None
    assert card.audit_note.startswith("not audited") and "miniscan@9.9.9" in card.audit_note

    unknown = suite_card(stored.variant(id="no-such-suite"), "a" * 64)
    assert not unknown.installed and unknown.audit is None and unknown.audit_note


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


# --- the cache ---------------------------------------------------------------------------------


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
