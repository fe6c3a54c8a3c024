"""The MSR Sentence Completion loader on fixture files in the challenge's layout."""

from __future__ import annotations

from pathlib import Path

import pytest

from structbench import freeze, registry
from structbench.protocols import ask
from structbench.runner import Runner
from structbench.specs import ModelSpec
from structbench.store import Store
from structbench.suites.msr_completion import parse_questions

QUESTIONS = """1a) I have it from the same source that you are both an orphan and a [crying] bachelor.
1b) I have it from the same source that you are both an orphan and a [bachelor] bachelor.
1c) I have it from the same source that you are both an orphan and a [lonely] bachelor.
1d) I have it from the same source that you are both an orphan and a [green] bachelor.
1e) I have it from the same source that you are both an orphan and a [tall] bachelor.
2a) The dog [barked] at the moon.
2b) The dog [read] at the moon.
2c) The dog [wrote] at the moon.
2d) The dog [sang] at the moon.
2e) The dog [sold] at the moon.
"""
PATH = "structbench.suites.msr_completion:MsrSentenceCompletion"
ANSWERS = """1c) I have it from the same source that you are both an orphan and a [lonely] bachelor.
2a) The dog [barked] at the moon.
"""


@pytest.fixture
def source(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("STRUCTBENCH_HOME", str(tmp_path / "home"))
    folder = tmp_path / "data" / "msr_sentence_completion"
    folder.mkdir(parents=True)
    (folder / "Holmes.machine_format.questions.txt").write_text(QUESTIONS)
    (folder / "Holmes.machine_format.answers.txt").write_text(ANSWERS)
    (folder / "train.txt").write_text("The dog barked at the moon.\nA lonely bachelor and an orphan.\n" * 20)
    return tmp_path / "data"


def test_items_follow_the_answers_file(source: Path) -> None:
    suite = registry.suite(PATH)
    manifest = freeze.build(suite, source)
    test = freeze.load_split(suite, manifest, 0, "test").examples
    assert [e.answer for e in test] == [2, 0]
    assert test[1].candidates and test[1].candidates[0] == ["the", "dog", "barked", "at", "the", "moon", "."]
    assert "_" in test[0].input
    assert len(freeze.load_split(suite, manifest, 0, "train")) == 40


def test_spec_and_oracle_from_the_frozen_test_split(source: Path) -> None:
    suite = registry.suite(PATH)
    assert (suite.spec.primary_metric, suite.spec.higher_is_better, suite.spec.task) == ("accuracy", True, "default")
    assert [(s.name, s.test_role, s.ranked) for s in suite.spec.splits_with_role("test")] == [
        ("test", "in-distribution", True)
    ]
    manifest = freeze.build(suite, source)
    test = freeze.load_split(suite, manifest, 0, "test")
    predictions = ask(suite.oracle({"test": test}), suite.spec, test.examples)
    assert suite.score(test, predictions).metrics["accuracy"] == (1.0, 2)


def test_incomplete_questions_are_refused() -> None:
    with pytest.raises(ValueError, match="five candidates"):
        parse_questions(QUESTIONS.replace("2e) The dog [sold] at the moon.\n", ""), ANSWERS)


def test_oracle_and_ngram_run_on_the_fixture(source: Path, tmp_path: Path) -> None:
    with Store(tmp_path / "r.sqlite") as store:
        runner = Runner(store, source_dir=source, progress=False)
        runner.log = lambda message: None
        assert runner.evaluate(PATH, ModelSpec(name="oracle"), [0]).scores["test"]["accuracy"].mean == 1.0
        # "the dog barked at the moon ." is in the training text; the other candidates are not
        assert runner.evaluate(PATH, ModelSpec(name="ngram"), [0]).scores["test"]["accuracy"].mean >= 0.5
