"""The Linzen corpus loader on a fixture written in the file's layout, and on damaged copies of it."""

from __future__ import annotations

import csv
import random
import re
from collections import Counter
from pathlib import Path

import pytest

from structbench import registry
from structbench.cli import main
from structbench.data import freeze
from structbench.errors import UserError
from structbench.protocols import ask
from structbench.runs.runner import Runner
from structbench.specs import ModelSpec
from structbench.store import Store

FIELDS = ["sentence", "orig_sentence", "pos_sentence", "subj", "verb", "subj_pos", "has_rel", "has_nsubj", "verb_pos",
          "subj_index", "verb_index", "n_intervening", "last_intervening", "n_diff_intervening", "distance",
          "max_depth", "all_nouns", "nouns_up_to_verb"]  # fmt: skip
PATH = "structbench.suites.agreement.linzen:AgreementLinzenNumber"


def write_fixture(folder: Path, rows: int = 400, long_rows: tuple[int, ...] = ()) -> Path:
    """Rows shaped like agr_50_mostcommon_10K.tsv: `the key(s) [to the cabinet(s)]* is/are here .`,
    then one row per entry of `long_rows` whose sentence has that many words."""
    rng = random.Random(0)
    path = folder / "linzen" / "agr_50_mostcommon_10K.tsv"
    path.parent.mkdir(parents=True)
    with path.open("w", newline="") as handle:
        writer = csv.DictWriter(handle, FIELDS, delimiter="\t")
        writer.writeheader()
        for n_words in long_rows:  # `the key is very very ... .`, no attractor
            sentence = " ".join(["the", "key", "is", *["very"] * (n_words - 4), "."])
            writer.writerow({
                **dict.fromkeys(FIELDS, ""), "sentence": sentence, "orig_sentence": sentence, "subj": "key",
                "verb": "is", "subj_pos": "NN", "has_rel": "False", "has_nsubj": "False", "verb_pos": "VBZ",
                "subj_index": "2", "verb_index": "3", "n_intervening": "0", "n_diff_intervening": "0",
                "distance": "1", "max_depth": "0",
            })  # fmt: skip
        for _ in range(rows):
            plural = rng.random() < 0.5
            n = rng.randint(0, 3)
            attractors = [rng.random() < 0.5 for _ in range(n)]
            words = ["the", "keys" if plural else "key"]
            for attract in attractors:
                words += ["to", "the", "cabinets" if plural != attract else "cabinet"]
            verb = "are" if plural else "is"
            sentence = [*words, verb, "here", "."]
            writer.writerow({
                "sentence": " ".join(sentence), "orig_sentence": " ".join(sentence), "pos_sentence": "",
                "subj": words[1], "verb": verb, "subj_pos": "NNS" if plural else "NN", "has_rel": "False",
                "has_nsubj": "False", "verb_pos": "VBP" if plural else "VBZ", "subj_index": "2",
                "verb_index": str(len(words) + 1), "n_intervening": str(n), "last_intervening": "NN",
                "n_diff_intervening": str(sum((w == "cabinets") != plural for w in words[4::3])),
                "distance": str(len(words) - 1), "max_depth": "0", "all_nouns": "", "nouns_up_to_verb": "",
            })  # fmt: skip
    return folder


@pytest.fixture
def source(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("STRUCTBENCH_HOME", str(tmp_path / "home"))
    return write_fixture(tmp_path / "data")


def test_loader_splits_and_labels(source: Path) -> None:
    suite = registry.suite(PATH)
    manifest = freeze.build(suite, source)
    splits = {s.name: freeze.load_split(suite, manifest, 0, s.name).examples for s in suite.spec.splits}
    assert (len(splits["train"]), len(splits["dev"]), len(splits["test"])) == (40, 4, 356)
    for example in splits["test"]:
        assert example.input[-1] in ("key", "keys", "cabinet", "cabinets")
        assert example.label == ("plural" if example.input[1] == "keys" else "singular")
    for k in range(5):
        assert all(e.meta["n_intervening"] == e.meta["n_diff_intervening"] == k for e in splits[f"attractors-{k}"])
        # each attractor split is exactly its subset of test, which is why it is not ranked
        subset = [e for e in splits["test"] if e.meta["n_intervening"] == e.meta["n_diff_intervening"] == k]
        assert splits[f"attractors-{k}"] == subset
    assert Counter(len(splits[f"attractors-{k}"]) > 0 for k in range(3)) == {True: 3}


def test_spec_ranks_test_and_reports_the_attractor_subsets() -> None:
    spec = registry.suite(PATH).spec
    assert (spec.primary_metric, spec.higher_is_better, spec.recipe) == ("accuracy", True, "default")
    assert [s.name for s in spec.ranked_splits] == ["test"]
    roles = {s.name: s.test_role for s in spec.splits_with_role("test")}
    assert roles == {
        "test": "in-distribution",
        "attractors-0": "in-distribution",
        **{f"attractors-{k}": "generalisation" for k in range(1, 5)},
    }


def test_oracle_answers_from_the_frozen_test_split(source: Path) -> None:
    suite = registry.suite(PATH)
    manifest = freeze.build(suite, source)
    splits = {s.name: freeze.load_split(suite, manifest, 0, s.name) for s in suite.spec.splits}
    oracle = suite.oracle({"test": splits["test"]})  # the oracle needs no other split
    for name in ["test", *(f"attractors-{k}" for k in range(4))]:  # the fixture has at most 3 attractors
        split = splits[name]
        metrics = suite.score(split, ask(oracle, suite.spec, split.examples)).metrics
        assert metrics["accuracy"] == (1.0, len(split)), name


def test_missing_file_names_where_to_get_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv("STRUCTBENCH_HOME", str(tmp_path / "home"))
    monkeypatch.setenv("STRUCTBENCH_SOURCE_DIR", str(tmp_path / "empty"))
    assert main(["build", PATH]) == 2
    err = capsys.readouterr().err
    assert "linzen/agr_50_mostcommon_10K.tsv" in err and "TalLinzen/rnn_agreement" in err


def test_oracle_and_majority_on_the_fixture(source: Path, tmp_path: Path) -> None:
    with Store(tmp_path / "r.sqlite") as store:
        runner = Runner(store, source_dir=source, progress=False)
        runner.log = lambda message: None
        assert runner.evaluate(PATH, ModelSpec(name="oracle"), [0]).scores["test"]["accuracy"].mean == 1.0
        majority = runner.evaluate(PATH, ModelSpec(name="majority"), [0]).scores["test"]["accuracy"].mean
        assert 0.3 < majority < 0.7


def test_version_2_drops_sentences_over_50_words_and_version_1_keeps_them(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Linzen et al. keep a sentence of at most 50 words (rnnagr/rnn_model.py: `len(tokens) > maxlen`)."""
    monkeypatch.setenv("STRUCTBENCH_HOME", str(tmp_path / "home"))
    source = write_fixture(tmp_path / "data", rows=40, long_rows=(51, 50))  # rows 0 and 1 of the file
    kept = {}
    for version in ("1.0.0", "2.0.0"):
        suite = registry.suite(f"agreement-linzen-number@{version}")
        assert suite.spec.version == version
        manifest = freeze.build(suite, source)
        kept[version] = {
            e.id for name in ("train", "dev", "test") for e in freeze.load_split(suite, manifest, 0, name).examples
        }
    assert len(kept["1.0.0"]) == 42 and {"row-0000000", "row-0000001"} <= kept["1.0.0"]
    assert kept["2.0.0"] == kept["1.0.0"] - {"row-0000000"}
    assert type(registry.suite("agreement-linzen-number@1.0.0")).__name__ == "AgreementLinzenNumberV1"
    assert registry.suite("agreement-linzen-number").spec.version == "2.0.0"


def test_the_oracle_scores_1_on_version_2(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("STRUCTBENCH_HOME", str(tmp_path / "home"))
    source = write_fixture(tmp_path / "data", long_rows=(51, 50))
    with Store(tmp_path / "r.sqlite") as store:
        runner = Runner(store, source_dir=source, progress=False)
        runner.log = lambda message: None
        record = runner.evaluate("agreement-linzen-number@2.0.0", ModelSpec(name="oracle"), [0])
        assert record.version == "2.0.0"
        scored = ["test", *(f"attractors-{k}" for k in range(4))]  # the fixture has at most 3 attractors
        assert {split: record.scores[split]["accuracy"].mean for split in scored} == dict.fromkeys(scored, 1.0)


def damage(path: Path, line: int, column: str | None, value: str) -> None:
    """Set `column` of file line `line` (1-based, the header is line 1) to `value`; with no column,
    drop the last field (empty value) or add `value` as an extra one."""
    lines = path.read_text().split("\n")
    fields = lines[line - 1].split("\t")
    if column is not None:
        fields[FIELDS.index(column)] = value
    else:
        fields = [*fields, value] if value else fields[:-1]
    lines[line - 1] = "\t".join(fields)
    path.write_text("\n".join(lines))


@pytest.mark.parametrize(
    ("line", "column", "value", "expected"),
    [
        (5, None, "", "expected 18 tab-separated fields as in the header, got 17"),
        (2, None, "extra", "expected 18 tab-separated fields as in the header, got 19"),
        (7, "verb_index", "x", "expected a whole number in column verb_index, got 'x'"),
        (3, "verb_index", "40", "expected a verb_index between 2 and the sentence's length"),
        (9, "verb_index", "1", "words), got 1;"),
        (4, "verb_pos", "VBD", "expected verb_pos VBZ or VBP, got 'VBD'"),
        (6, "n_diff_intervening", "two", "column n_diff_intervening, got 'two'"),
        (8, "distance", "", "column distance, got ''"),
        (2, "has_rel", "yes", "expected has_rel True or False, got 'yes'"),
        (4, "orig_sentence", "x" * 200_000, "expected a tab-separated row, got unreadable text"),
    ],
)
def test_a_malformed_row_is_refused_naming_the_file_and_line(
    source: Path, line: int, column: str | None, value: str, expected: str
) -> None:
    path = source / "linzen" / "agr_50_mostcommon_10K.tsv"
    damage(path, line, column, value)
    with pytest.raises(UserError) as error:
        freeze.build(registry.suite(PATH), source)
    message = str(error.value)
    assert message.startswith(f"{path} line {line}: ") and expected in message, message
    assert message.endswith("fix or remove that line.")


def test_an_out_of_range_verb_index_says_how_long_the_sentence_is(source: Path) -> None:
    path = source / "linzen" / "agr_50_mostcommon_10K.tsv"
    words = len(path.read_text().splitlines()[2].split("\t")[1].split())
    damage(path, 3, "verb_index", "40")
    with pytest.raises(
        UserError,
        match=rf"line 3: expected a verb_index between 2 and the sentence's length \({words} words\), got 40;",
    ):
        freeze.build(registry.suite(PATH), source)


@pytest.mark.parametrize(("version", "missing"), [("1.0.0", "verb_index"), ("2.0.0", "sentence")])
def test_a_header_without_a_needed_column_names_it(source: Path, version: str, missing: str) -> None:
    path = source / "linzen" / "agr_50_mostcommon_10K.tsv"
    path.write_text(path.read_text().replace(missing, "renamed", 1))
    with pytest.raises(UserError) as error:
        freeze.build(registry.suite(f"agreement-linzen-number@{version}"), source)
    assert str(error.value).startswith(f"{path} line 1: the header lacks the column(s) {missing};")


@pytest.mark.parametrize(
    ("content", "expected"),
    [
        ("", "holds no header or rows"),
        ("\n\n", "holds no header or rows"),
        ("\t".join(FIELDS) + "\n", "holds no rows below its header"),
    ],
)
def test_an_empty_or_header_only_file_is_refused(source: Path, content: str, expected: str) -> None:
    path = source / "linzen" / "agr_50_mostcommon_10K.tsv"
    path.write_text(content)
    with pytest.raises(UserError, match=f"^{re.escape(str(path))} {expected}; it should contain Linzen et al.'s"):
        freeze.build(registry.suite(PATH), source)


def test_a_file_of_only_long_sentences_leaves_version_2_nothing(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("STRUCTBENCH_HOME", str(tmp_path / "home"))
    source = write_fixture(tmp_path / "data", rows=0, long_rows=(51, 60))
    with pytest.raises(UserError, match="holds no row of at most 50 words"):
        freeze.build(registry.suite("agreement-linzen-number@2.0.0"), source)


def test_the_cli_reports_a_malformed_file_in_one_line_and_stores_no_run(
    source: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    damage(source / "linzen" / "agr_50_mostcommon_10K.tsv", 7, "verb_pos", "VBD")
    store = tmp_path / "r.sqlite"
    args = ["run", "--suite", "agreement-linzen-number", "--model", "majority", "--store", str(store)]
    assert main([*args, "--source-dir", str(source), "--no-progress"]) == 2
    announced, error = capsys.readouterr().err.splitlines()  # the new store's one line, then the error's
    assert announced == f"new results store at {store}"
    assert "Traceback" not in error and "line 7: expected verb_pos VBZ or VBP" in error
    with Store(store) as opened:
        assert opened.runs().empty
