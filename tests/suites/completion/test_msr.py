"""The MSR Sentence Completion loader on fixture files in the challenge's layout, and on damaged copies."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from structbench import registry
from structbench.data import freeze
from structbench.errors import UserError
from structbench.protocols import ask
from structbench.runs.runner import Runner
from structbench.specs import ModelSpec
from structbench.store import Store

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
PATH = "structbench.suites.completion.msr:MsrSentenceCompletion"
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
    assert (suite.spec.primary_metric, suite.spec.higher_is_better, suite.spec.recipe) == (
        "accuracy",
        True,
        "sentence-completion",
    )
    assert [(s.name, s.test_role, s.ranked) for s in suite.spec.splits_with_role("test")] == [
        ("test", "in-distribution", True)
    ]
    manifest = freeze.build(suite, source)
    test = freeze.load_split(suite, manifest, 0, "test")
    predictions = ask(suite.oracle({"test": test}), suite.spec, test.examples)
    assert suite.score(test, predictions).metrics["accuracy"] == (1.0, 2)


def replace_line(text: str, line: int, new: str | None) -> str:
    """`text` with its 1-based `line` replaced by `new`, or removed if `new` is None."""
    lines = text.splitlines()
    lines[line - 1 : line] = [] if new is None else [new]
    return "\n".join(lines) + "\n"


QUESTIONS_FILE = "Holmes.machine_format.questions.txt"
ANSWERS_FILE = "Holmes.machine_format.answers.txt"


@pytest.mark.parametrize(
    ("damaged", "text", "named", "line", "expected"),
    [
        (QUESTIONS_FILE, replace_line(QUESTIONS, 3, "1c I have it from the same source."), QUESTIONS_FILE, 3, "`<number><a-e>) sentence"),
        (QUESTIONS_FILE, replace_line(QUESTIONS, 7, "2b) The dog read at the moon."), QUESTIONS_FILE, 7, "[candidate] word`, got '2b)"),
        (QUESTIONS_FILE, replace_line(QUESTIONS, 8, "2f) The dog [ran] at the moon."), QUESTIONS_FILE, 8, "`<number><a-e>) sentence"),
        (QUESTIONS_FILE, replace_line(QUESTIONS, 10, "2d) The dog [sold] at the moon."), QUESTIONS_FILE, 10, "expected one line 2d), got a second one"),
        (QUESTIONS_FILE, replace_line(QUESTIONS, 10, None), QUESTIONS_FILE, 6, "question 2 to have the five candidates a) to e), got a), b), c), d);"),
        (QUESTIONS_FILE, replace_line(QUESTIONS, 4, "1d) The \udcff [green] bachelor."), QUESTIONS_FILE, 4, "expected UTF-8 text, got the byte 0xff"),
        (ANSWERS_FILE, replace_line(ANSWERS, 2, None), QUESTIONS_FILE, 6, "expected question 2 to have an answer in "),
        (ANSWERS_FILE, replace_line(ANSWERS, 2, "3a) The dog [barked] at the moon."), ANSWERS_FILE, 2, "expected the number of a question in "),
        (ANSWERS_FILE, replace_line(ANSWERS, 2, "2) [a] The dog barked at the moon."), ANSWERS_FILE, 2, "`<number><a-e>) sentence"),
        (ANSWERS_FILE, replace_line(ANSWERS, 2, ANSWERS.splitlines()[0]), ANSWERS_FILE, 2, "expected one answer to question 1, got a second one"),
    ],
)  # fmt: skip
def test_a_malformed_file_is_refused_naming_the_file_and_line(
    source: Path, damaged: str, text: str, named: str, line: int, expected: str
) -> None:
    folder = source / "msr_sentence_completion"
    (folder / damaged).write_bytes(text.encode("utf-8", "surrogateescape"))
    with pytest.raises(UserError) as error:
        freeze.build(registry.suite(PATH), source)
    message = str(error.value)
    assert message.startswith(f"{folder / named} line {line}: expected ") and expected in message, message
    if damaged != named:  # a question without an answer names the answers file too
        assert str(folder / damaged) in message


@pytest.mark.parametrize(
    ("damaged", "expected"),
    [
        (QUESTIONS_FILE, "holds no questions; it should contain five lines"),
        (ANSWERS_FILE, "holds no answers; it should contain the right line"),
        ("train.txt", "holds no sentences; it should contain your training corpus, one sentence per line."),
    ],
)
@pytest.mark.parametrize("content", ["", "\n \n"])
def test_an_empty_file_is_refused(source: Path, damaged: str, content: str, expected: str) -> None:
    path = source / "msr_sentence_completion" / damaged
    path.write_text(content)
    with pytest.raises(UserError, match=f"^{re.escape(f'{path} {expected}')}"):
        freeze.build(registry.suite(PATH), source)


def test_oracle_and_ngram_run_on_the_fixture(source: Path, tmp_path: Path) -> None:
    with Store(tmp_path / "r.sqlite") as store:
        runner = Runner(store, source_dir=source, progress=False)
        runner.log = lambda message: None
        assert runner.evaluate(PATH, ModelSpec(name="oracle"), [0]).scores["test"]["accuracy"].mean == 1.0
        # "the dog barked at the moon ." is in the training text; the other candidates are not
        assert runner.evaluate(PATH, ModelSpec(name="ngram"), [0]).scores["test"]["accuracy"].mean >= 0.5


@pytest.mark.parametrize("model", ["lstm-lm", "rmn"])
def test_a_neural_language_model_learns_the_fixtures_training_text(source: Path, tmp_path: Path, model: str) -> None:
    """Tran's LMs on the user's copy of the challenge (here the fixture): trained on its train.txt, with no
    dev split to select on (the last epoch is kept), they complete the sentence that training repeats."""
    tiny = {"layers": 1, "embedding": 16, "hidden": 16, "epochs": 15, "batch_size": 8, "lr": 0.01, "threads": 1}
    with Store(tmp_path / "r.sqlite") as store:
        runner = Runner(store, source_dir=source, progress=False)
        runner.log = lambda message: None
        record = runner.evaluate(PATH, ModelSpec(name=model, params=tiny), [0])
        (predictions,) = [p for _, (ids, p, _) in store.stored_predictions(int(store.runs()["id"].max())).items()]
    assert record.status == {"0": "done"}
    barked = predictions[1]  # "the dog [barked] at the moon ." against four words never seen there
    assert barked[0] > max(barked[1:]), barked  # strictly: a tie would count wrong
