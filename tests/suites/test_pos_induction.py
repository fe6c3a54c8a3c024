"""POS induction: metrics against scikit-learn, speed, and the UD English-EWT suites."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from sklearn import metrics

from structbench import registry
from structbench.data import freeze
from structbench.errors import UserError
from structbench.protocols import ask
from structbench.runs.runner import Runner
from structbench.scoring import induction_metrics
from structbench.specs import ModelSpec
from structbench.suites.pos_induction import read_word_tag


@pytest.mark.parametrize("seed", range(6))
def test_metrics_agree_with_scikit_learn(seed: int) -> None:
    rng = np.random.default_rng(seed)
    n_tags, n_clusters = int(rng.integers(1, 50)), int(rng.integers(1, 60))
    gold = rng.integers(n_tags, size=5000).astype(str).tolist()
    induced = rng.integers(n_clusters, size=5000).tolist()
    ours = induction_metrics(gold, induced)
    homogeneity, completeness, v_measure = metrics.homogeneity_completeness_v_measure(gold, induced)
    assert abs(ours["homogeneity"] - homogeneity) < 1e-9
    assert abs(ours["completeness"] - completeness) < 1e-9
    assert abs(ours["v_measure"] - v_measure) < 1e-9
    table = metrics.cluster.contingency_matrix(gold, induced)
    entropy = [-(p * np.log(p)).sum() for p in (table.sum(1) / 5000, table.sum(0) / 5000)]
    vi = sum(entropy) - 2 * metrics.mutual_info_score(gold, induced)
    assert abs(ours["variation_of_information"] - vi) < 1e-9
    assert abs(ours["many_to_one"] - table.max(axis=0).sum() / 5000) < 1e-12
    assert ours["one_to_one_greedy"] <= ours["one_to_one"] + 1e-12 <= ours["many_to_one"] + 1e-12


def test_one_to_one_optimal_beats_greedy_on_a_hand_example() -> None:
    # greedy takes (cluster 0, tag A) = 5 first and is left with 0; the optimum pairs 0-B and 1-A
    gold = ["A"] * 5 + ["B"] * 4 + ["A"] * 4
    induced = [0] * 5 + [0] * 4 + [1] * 4
    scores = induction_metrics(gold, induced)
    assert scores["one_to_one_greedy"] == 5 / 13
    assert scores["one_to_one"] == 8 / 13
    assert scores["many_to_one"] == 9 / 13


@pytest.mark.parametrize(
    ("path", "k", "n_tags"),
    [("structbench.suites.pos_induction:UdXpos", 49, 49), ("structbench.suites.pos_induction:UdUpos", 17, 17)],
)
def test_ud_suites_hold_the_published_tokens(path: str, k: int, n_tags: int) -> None:
    suite = registry.suite(path)
    manifest = freeze.ensure_built(suite)
    train = freeze.load_split(suite, manifest, 0, "train").examples
    test = freeze.load_split(suite, manifest, 0, "test").examples
    assert suite.spec.n_clusters == k
    assert sum(len(e.input) for e in test) == 50241
    assert len({t for e in test for t in e.tags or []}) == n_tags
    assert all(e.tags is None for e in train) and [e.input for e in train] == [e.input for e in test]
    assert not any(ch.isdigit() and ch != "0" for e in test for w in e.input for ch in w)


SUITES = [
    "structbench.suites.pos_induction:UdXpos",
    "structbench.suites.pos_induction:UdUpos",
    "structbench.suites.pos_induction:PosSynthetic",
    "structbench.suites.pos_induction:PosWsj",
]


@pytest.mark.parametrize("path", SUITES)
def test_spec_ranks_v_measure_on_the_training_sentences(path: str) -> None:
    spec = registry.suite(path).spec
    assert (spec.primary_metric, spec.higher_is_better, spec.recipe) == ("v_measure", True, "default")
    assert [(s.name, s.test_role, s.ranked) for s in spec.splits_with_role("test")] == [
        ("test", "in-distribution", True)
    ]


@pytest.mark.parametrize("path", SUITES[:3])
def test_oracle_tags_the_frozen_test_split_perfectly(path: str) -> None:
    suite = registry.suite(path)
    manifest = freeze.ensure_built(suite)
    test = freeze.load_split(suite, manifest, 0, "test")
    metrics = suite.score(test, ask(suite.oracle({"test": test}), suite.spec, test.examples)).metrics
    n_tokens = sum(len(e.input) for e in test.examples)
    for metric in ("many_to_one", "one_to_one", "one_to_one_greedy", "v_measure", "homogeneity", "completeness"):
        assert metrics[metric] == (1.0, n_tokens), metric
    assert abs(metrics["variation_of_information"][0]) < 1e-12


def test_oracle_is_perfect_and_random_is_not(runner: Runner) -> None:
    oracle = runner.evaluate("structbench.suites.pos_induction:UdXpos", ModelSpec(name="oracle"), [0]).scores["test"]
    assert {m: oracle[m].mean for m in ("many_to_one", "one_to_one", "one_to_one_greedy", "v_measure")} == {
        "many_to_one": 1.0,
        "one_to_one": 1.0,
        "one_to_one_greedy": 1.0,
        "v_measure": 1.0,
    }
    assert abs(oracle["variation_of_information"].mean) < 1e-12
    random = runner.evaluate("structbench.suites.pos_induction:UdXpos", ModelSpec(name="random"), [0]).scores["test"]
    assert random["many_to_one"].mean < 0.25 and random["v_measure"].mean < 0.1


def test_synthetic_corpus_is_ambiguous_and_the_oracle_solves_it(runner: Runner) -> None:
    suite = registry.suite("structbench.suites.pos_induction:PosSynthetic")
    manifest = freeze.ensure_built(suite)
    test = freeze.load_split(suite, manifest, 0, "test").examples
    tags_of: dict[str, set[str]] = {}
    for example in test:
        for word, tag in zip(example.input, example.tags or [], strict=True):
            tags_of.setdefault(word, set()).add(tag)
    assert sum(len(t) > 1 for t in tags_of.values()) == 12
    assert suite.spec.n_clusters == len({t for e in test for t in e.tags or []}) == 11
    assert (len(test), sum(len(e.input) for e in test)) == (3000, 19853)  # as the module docstring says
    # the best a one-cluster-per-word-type tagger can reach stays below 1
    by_type = induction_metrics([t for e in test for t in e.tags or []], [hash(w) for e in test for w in e.input])
    assert by_type["many_to_one"] < 0.95
    oracle = runner.evaluate("structbench.suites.pos_induction:PosSynthetic", ModelSpec(name="oracle"), [0])
    assert oracle.scores["test"]["one_to_one"].mean == 1.0


WSJ_SAMPLE = "Pierre\tNNP\nVinken\tNNP\n,\t,\n61\tCD\nyears\tNNS\nold\tJJ\n\nMr.\tNNP\nVinken\tNNP\nis\tVBZ\nchairman\tNN\n.\t.\n"
"""Two sentences in `word<TAB>tag` lines; line 8 starts the second."""


def write_wsj(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, text: str) -> Path:
    """A source folder holding `text` as penn_wsj/wsj.conll (bytes that are not UTF-8 kept as surrogates),
    and a STRUCTBENCH_HOME of its own to build it in: not `tmp_path / "home"`, which `fresh_home` links
    to the session's built suites, where a built pos-wsj would show up in every later test's report."""
    monkeypatch.setenv("STRUCTBENCH_HOME", str(tmp_path / "wsj-home"))
    folder = tmp_path / "data" / "penn_wsj"
    folder.mkdir(parents=True)
    (folder / "wsj.conll").write_bytes(text.encode("utf-8", "surrogateescape"))
    return tmp_path / "data"


def test_wsj_loader_reads_word_tag_files(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    suite = registry.suite("structbench.suites.pos_induction:PosWsj")
    manifest = freeze.build(suite, write_wsj(tmp_path, monkeypatch, WSJ_SAMPLE))
    test = freeze.load_split(suite, manifest, 0, "test").examples
    assert [e.input for e in test] == [
        ["Pierre", "Vinken", ",", "00", "years", "old"],
        ["Mr.", "Vinken", "is", "chairman", "."],
    ]
    assert test[0].tags == ["NNP", "NNP", ",", "CD", "NNS", "JJ"]
    assert suite.spec.n_clusters == 45
    with pytest.raises(UserError, match=r"^the tagged text line 1: expected `word<TAB>tag`"):
        read_word_tag("just-one-column\n")


def test_the_pound_sign_is_a_wsj_token_from_version_2(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    text = "# a comment line\nThe\tDT\tprice\tNN\n".replace("\tprice", "\nprice") + "is\tVBZ\n#\t#\n200\tCD\n"
    source = write_wsj(tmp_path, monkeypatch, text)
    inputs = {}
    for version in ("1.0.0", "2.0.0"):
        suite = registry.suite(f"pos-wsj@{version}")
        manifest = freeze.build(suite, source)
        (example,) = freeze.load_split(suite, manifest, 0, "test").examples
        inputs[version] = (example.input, example.tags)
    assert inputs["2.0.0"] == (["The", "price", "is", "#", "000"], ["DT", "NN", "VBZ", "#", "CD"])
    assert inputs["1.0.0"] == (["The", "price", "is", "000"], ["DT", "NN", "VBZ", "CD"])  # as 1.0.0 read it


CONLLU_TOKEN = "1\tMr.\tMr.\tPROPN\tNNP\t_\t2\tcompound\t_\t_"


@pytest.mark.parametrize(
    ("line", "damaged", "expected"),
    [
        (2, "Vinken", "expected `word<TAB>tag` or a CoNLL-U token line (10 tab-separated fields), got 1 field(s)"),
        (3, ", ,", "got 1 field(s) in ', ,'"),
        (9, "Vinken\tNNP\tB-NP", "got 3 field(s)"),
        (4, "61\t", "expected a word and its tag, got '61\\t'"),
        (12, "\t.", "expected a word and its tag"),
        (8, CONLLU_TOKEN.replace("\tNNP\t", "\t\t"), "expected a word and its tag"),
        (5, "years\tNNS\udcff", "expected UTF-8 text, got the byte 0xff; save the file as UTF-8."),
    ],
)
def test_a_malformed_wsj_line_is_refused_naming_the_file_and_line(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, line: int, damaged: str, expected: str
) -> None:
    lines = WSJ_SAMPLE.splitlines()
    lines[line - 1] = damaged
    source = write_wsj(tmp_path, monkeypatch, "\n".join(lines) + "\n")
    with pytest.raises(UserError) as error:
        freeze.build(registry.suite("structbench.suites.pos_induction:PosWsj"), source)
    message = str(error.value)
    assert message.startswith(f"{source / 'penn_wsj' / 'wsj.conll'} line {line}: ") and expected in message, message


@pytest.mark.parametrize("text", ["", "\n\n", "# sent_id = 1\n# text = nothing\n\n"])
def test_an_empty_wsj_file_is_refused(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, text: str) -> None:
    source = write_wsj(tmp_path, monkeypatch, text)
    with pytest.raises(
        UserError, match="holds no tagged sentences; it should contain the WSJ as `word<TAB>tag`"
    ) as error:
        freeze.build(registry.suite("structbench.suites.pos_induction:PosWsj"), source)
    assert str(error.value).startswith(str(source / "penn_wsj" / "wsj.conll"))
