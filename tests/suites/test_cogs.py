"""COGS: the three stored files, the gen loader on a fixture in the gen file's format (the real gen file
is not among the reference data), the git-blob pin, the skip without the file, and exact match."""

from __future__ import annotations

import json
import os
import urllib.error
import urllib.request
from pathlib import Path

import pytest

from structbench import registry
from structbench.cli.main import main
from structbench.data import freeze
from structbench.data.sources import git_blob_bytes, sha256_bytes
from structbench.errors import SourceUnavailable, UserError
from structbench.runs.runner import Runner
from structbench.scoring import score_split
from structbench.specs import Example, ModelSpec, Split, scored_split
from structbench.suite import SourceFiles
from structbench.suites.cogs import CASES, GEN_BLOB, SOURCES, Cogs, examples_of
from structbench.suites.common import GoldTransducer, exact_match
from tests.conftest import REPO

DIGESTS = {
    "train": "ddd93a02111a9cebf31fa0d760405db21024bfbb49d318f112eff4a080aba9b3",
    "dev": "e7db3df8ebf4698ffeb0c57640712eebdf86aeb50e963eea4a2351bc02a78f20",
    "test": "5967ae369cbeca533d61795cd2c3f36991b90d24380abb3904a42d6499103743",
}
"""The SHA-256 of each stored split's JSON lines: what the manifest will say of them (cogs@1.0.0 has no
released manifest until a build with the gen file writes one; see the suite's docstring)."""
SIZES = {"train": 24_155, "dev": 3_000, "test": 3_000}
STRUCTURAL = {"cp_recursion", "pp_recursion", "obj_pp_to_subj_pp"}


def stored(split: str) -> list[Example]:
    return examples_of(split, SourceFiles(SOURCES, None).read_text(f"cogs/{split}.tsv"), f"cogs/{split}.tsv")


@pytest.mark.parametrize("split", ["train", "dev", "test"])
def test_the_stored_files_load_with_the_published_sizes_tokens_and_digests(split: str) -> None:
    examples = stored(split)
    assert len(examples) == SIZES[split]
    assert sha256_bytes(freeze.serialise(examples)) == DIGESTS[split]
    lines = (Path(os.environ["STRUCTBENCH_SOURCE_DIR"]) / "cogs" / f"{split}.tsv").read_text().splitlines()
    sentence, logical_form, case = lines[0].split("\t")
    assert examples[0].input == sentence.split() and examples[0].target == logical_form.split()
    assert examples[0].id == f"{split}-00000" and examples[0].meta == {"case": case}
    if split != "train":
        assert {e.meta["case"] for e in examples} == {"in_distribution"}
    else:  # train holds the exposure examples of the primitives gen asks about
        assert sum(str(e.meta["case"]).startswith("exposure_example_") for e in examples) == 12


def test_the_cases_and_their_sections_are_the_published_case_table() -> None:
    table = json.loads(
        (Path(os.environ["STRUCTBENCH_SOURCE_DIR"]) / "cogs" / "gen_cases_to_paper_sections.json").read_text()
    )
    gen_cases = {case for case in table if case != "in_distribution" and not case.startswith("exposure_example_")}
    assert set(CASES) == gen_cases and len(CASES) == 21
    for case, (section, _) in CASES.items():
        assert table[case].startswith(f"{section}. ")
    assert {case for case, (_, kind) in CASES.items() if kind == "structural"} == STRUCTURAL
    assert Cogs.spec.split("gen").size == 21_000


def fixture_gen(per_case: int) -> str:
    """A gen file in the published format (`sentence<TAB>logical form<TAB>case`): stored test lines
    relabelled with each case in turn."""
    lines = (Path(os.environ["STRUCTBENCH_SOURCE_DIR"]) / "cogs" / "test.tsv").read_text().splitlines()
    rows = []
    for index, case in enumerate(case for case in CASES for _ in range(per_case)):
        sentence, logical_form, _ = lines[index].split("\t")
        rows.append(f"{sentence}\t{logical_form}\t{case}\n")
    return "".join(rows)


def source_folder(tmp_path: Path, gen: str) -> Path:
    """A source folder with the stored train, dev and test files and `gen` as cogs/gen.tsv."""
    folder = tmp_path / "sources" / "cogs"
    folder.mkdir(parents=True)
    for name in ("train", "dev", "test"):
        (folder / f"{name}.tsv").symlink_to(Path(os.environ["STRUCTBENCH_SOURCE_DIR"]) / "cogs" / f"{name}.tsv")
    (folder / "gen.tsv").write_text(gen)
    return folder.parent


def test_a_gen_file_in_the_published_format_builds_with_case_and_kind(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("STRUCTBENCH_HOME", str(tmp_path / "home"))
    gen = fixture_gen(per_case=2)
    pinned = SOURCES[3].model_copy(update={"git_blob": git_blob_bytes(gen.encode())})

    class CogsFixture(Cogs):
        spec = Cogs.spec.variant(
            id="cogs-fixture",
            splits=[*Cogs.spec.splits[:3], scored_split("gen", 42, "generalisation")],
        )
        sources = (*SOURCES[:3], pinned)
        case_size = 2

    suite = CogsFixture()
    manifest = freeze.build(suite, source_folder(tmp_path, gen))
    assert {key: digest.n_examples for key, digest in manifest.splits.items()} == {
        "draw0/train": 24_155,
        "draw0/dev": 3_000,
        "draw0/test": 3_000,
        "draw0/gen": 42,
    }
    assert all(manifest.splits[f"draw0/{split}"].sha256 == digest for split, digest in DIGESTS.items())
    split = freeze.load_split(suite, manifest, 0, "gen")
    assert [e.meta["case"] for e in split.examples[:4]] == ["subj_to_obj_common"] * 2 + ["subj_to_obj_proper"] * 2
    assert {e.meta["kind"] for e in split.examples if e.meta["case"] in STRUCTURAL} == {"structural"}
    assert sum(e.meta["kind"] == "lexical" for e in split.examples) == 36
    # the oracle answers every gold form; exact match is broken down by kind and case
    solver = suite.oracle({"gen": split})
    scores = suite.score(split, solver.transduce([list(e.input) for e in split.examples]))
    values = {score.name: (score.value, score.n) for score in scores.scores}
    assert values["exact_match"] == (1.0, 42)
    assert values["exact_match[kind=structural]"] == (1.0, 6)
    assert values["exact_match[kind=lexical]"] == (1.0, 36)
    assert values["exact_match[case=pp_recursion]"] == (1.0, 2)


def test_a_gen_copy_other_than_the_pinned_blob_is_refused_naming_the_blob_id(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("STRUCTBENCH_HOME", str(tmp_path / "home"))
    folder = source_folder(tmp_path, fixture_gen(per_case=1))
    with pytest.raises(UserError) as caught:
        freeze.build(Cogs(), folder)
    message = str(caught.value)
    assert "git blob id" in message and GEN_BLOB[:12] in message and "cogs/gen.tsv" in message
    assert len(message.splitlines()) == 1


def test_a_gen_file_with_a_case_too_few_is_refused(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("STRUCTBENCH_HOME", str(tmp_path / "home"))
    gen = fixture_gen(per_case=2)
    gen = gen.replace("\tpp_recursion\n", "\tcp_recursion\n", 1)
    pinned = SOURCES[3].model_copy(update={"git_blob": git_blob_bytes(gen.encode())})

    class CogsFixture(Cogs):
        spec = Cogs.spec.variant(
            id="cogs-fixture", splits=[*Cogs.spec.splits[:3], scored_split("gen", 42, "generalisation")]
        )
        sources = (*SOURCES[:3], pinned)
        case_size = 2

    with pytest.raises(UserError, match=r"cogs/gen.tsv holds 3 lines of case 'cp_recursion', not 2"):
        freeze.build(CogsFixture(), source_folder(tmp_path, gen))


def test_an_unknown_case_or_a_malformed_line_is_refused_with_its_line() -> None:
    good = "A cat ran .\trun . agent ( x _ 2 , x _ 1 ) AND cat ( x _ 1 )\tpp_recursion\n"
    assert examples_of("gen", good, "gen.tsv")[0].meta == {"case": "pp_recursion", "kind": "structural"}
    with pytest.raises(UserError, match=r"^gen.tsv line 2: the case 'in_distribution' is none of COGS's 21"):
        examples_of("gen", good + good.replace("pp_recursion", "in_distribution"), "gen.tsv")
    with pytest.raises(UserError, match=r"^gen.tsv line 1: expected `sentence<TAB>logical form<TAB>case`"):
        examples_of("gen", "A cat ran .\tpp_recursion\n", "gen.tsv")
    with pytest.raises(UserError, match=r"^test.tsv line 1: a test line of case 'pp_recursion'"):
        examples_of("test", good, "test.tsv")


def test_without_the_gen_file_the_suite_is_skipped_with_a_one_line_reason(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv("STRUCTBENCH_HOME", str(tmp_path / "home"))  # the reference data: no cogs/gen.tsv

    def unreachable(*_: object, **__: object) -> None:
        raise urllib.error.URLError("no network")

    monkeypatch.setattr(urllib.request, "urlopen", unreachable)
    with pytest.raises(SourceUnavailable) as caught:
        freeze.build(Cogs())
    assert caught.value.short == "cogs/gen.tsv was not found locally and could not be downloaded (no network)"
    monkeypatch.setattr(registry, "suite_names", lambda: ["cogs"])
    assert main(["build", "--no-progress"]) == 0
    err = capsys.readouterr().err
    assert "skipped cogs@1.0.0: cogs/gen.tsv was not found locally and could not be downloaded (no network)" in err
    assert (
        f"skipped 1, whose source files are not in {os.environ['STRUCTBENCH_SOURCE_DIR']} (STRUCTBENCH_SOURCE_DIR) "
        f"or {tmp_path / 'home' / 'sources'} (the cache) and could not be downloaded (reasons above): cogs."
    ) in err
    assert not freeze.is_built(Cogs())
    assert Cogs.released_manifest() is None  # written by the first build that has the file


def test_exact_match_compares_the_joined_strings_as_the_authors_do() -> None:
    examples = [Example(id=f"e{i}", input=["x"], target=["a", "(", "b", ")"]) for i in range(4)]
    predictions = [["a", "(", "b", ")"], ["a", "(", "b"], ["a (", "b", ")"], []]
    assert exact_match(examples, predictions) == [1.0, 0.0, 1.0, 0.0]
    scores = score_split(
        "transduction", "exact_match", examples, predictions, {"exact_match": exact_match(examples, predictions)}
    )
    values = {score.name: score.value for score in scores.scores}
    # a token holding a space is the one place the authors' string comparison and token lists part
    assert values["exact_match"] == 0.5 and values["sequence_accuracy"] == 0.25


def test_the_oracle_answers_every_stored_test_example() -> None:
    test = Split(suite=Cogs.spec.key, name="test", role="test", draw=0, examples=stored("test"))
    solver = Cogs().oracle({"test": test})
    assert isinstance(solver, GoldTransducer)
    scores = Cogs().score(test, solver.transduce([list(e.input) for e in test.examples]))
    assert scores.metrics["exact_match"] == (1.0, 3_000)
    assert solver.transduce([["an", "unknown", "sentence"]]) == [[]]


def test_the_in_distribution_example_suite_builds_cogs_three_files_without_gen_and_its_oracle_is_exact(
    runner: Runner, monkeypatch: pytest.MonkeyPatch
) -> None:
    """docs/examples/cogs_in_distribution.py, what a machine without gen.tsv can measure: the published
    train, dev and test under an id of its own, ranked on test."""
    monkeypatch.syspath_prepend(str(REPO / "docs" / "examples"))
    record = runner.evaluate("cogs_in_distribution:CogsInDistribution", ModelSpec(name="oracle"), [0])
    assert (record.suite, record.status) == ("cogs-in-distribution", {"0": "done"})
    assert set(record.scores) == {"test"}
    assert record.scores["test"]["exact_match"].mean == 1.0
    suite = registry.suite("cogs-in-distribution")
    assert [(s.name, s.size) for s in suite.spec.splits] == [("train", 24_155), ("dev", 3_000), ("test", 3_000)]
    assert [s.path for s in suite.sources] == ["cogs/train.tsv", "cogs/dev.tsv", "cogs/test.tsv"]
