"""The Linzen corpus loader on a fixture written in the file's layout."""

from __future__ import annotations

import csv
import random
from collections import Counter
from pathlib import Path

import pytest

from structbench import freeze, registry
from structbench.cli import main
from structbench.protocols import ask
from structbench.runner import Runner
from structbench.specs import ModelSpec
from structbench.store import Store

FIELDS = ["sentence", "orig_sentence", "pos_sentence", "subj", "verb", "subj_pos", "has_rel", "has_nsubj", "verb_pos",
          "subj_index", "verb_index", "n_intervening", "last_intervening", "n_diff_intervening", "distance",
          "max_depth", "all_nouns", "nouns_up_to_verb"]  # fmt: skip
PATH = "structbench.suites.linzen:AgreementLinzenNumber"


def write_fixture(folder: Path, rows: int = 400) -> Path:
    """Rows shaped like agr_50_mostcommon_10K.tsv: `the key(s) [to the cabinet(s)]* is/are here .`"""
    rng = random.Random(0)
    path = folder / "linzen" / "agr_50_mostcommon_10K.tsv"
    path.parent.mkdir(parents=True)
    with path.open("w", newline="") as handle:
        writer = csv.DictWriter(handle, FIELDS, delimiter="\t")
        writer.writeheader()
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
    assert (spec.primary_metric, spec.higher_is_better, spec.task) == ("accuracy", True, "default")
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
