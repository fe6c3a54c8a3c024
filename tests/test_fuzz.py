"""Fuzzing what reads the outside world: every source loader, the command line's argument parsers,
the command adapter's reading of a model's answers and the store's open path. Each gets arbitrary
text and near-valid mutations of real input (the published files under STRUCTBENCH_SOURCE_DIR);
the property a user relies on is that it either succeeds or ends in one sentence naming the
problem (`UserError`, or `CommandModelError` for a model's answer), never another exception.

The example counts here keep tox fast; `FUZZ_EXAMPLES=2000 pytest tests/test_fuzz.py` runs a
longer campaign with the same properties.
"""

from __future__ import annotations

import os
import sqlite3
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from structbench.adapters.command import CommandModel, CommandModelError
from structbench.errors import UserError
from structbench.runs.arguments import parse_seeds, parse_settings
from structbench.store import Store
from structbench.suites import lookup_tables, pos_induction, question_formation, symbol_rewriting
from structbench.suites.agreement import gulordava as agreement
from structbench.suites.agreement import linzen
from structbench.suites.completion import msr as msr_completion
from structbench.suites.logic import bowman as logic_bowman
from structbench.suites.scan import common as scan
from tests.conftest import REPO, SHARED_DATA
from tests.suites.agreement.test_linzen import write_fixture
from tests.suites.completion.test_msr import ANSWERS as MSR_ANSWERS
from tests.suites.completion.test_msr import QUESTIONS as MSR_QUESTIONS

EXAMPLES = int(os.environ.get("FUZZ_EXAMPLES", "60"))
FUZZ = settings(max_examples=EXAMPLES, deadline=None, suppress_health_check=[HealthCheck.too_slow])


def head(path: str, lines: int = 12) -> str:
    """The first `lines` lines of a published file: the near-valid seed of its mutations."""
    with (SHARED_DATA / path).open(encoding="utf-8") as handle:
        return "".join(next(handle, "") for _ in range(lines))


def linzen_seed(tmp: Path) -> str:
    """A few rows shaped like Linzen et al.'s file (which users supply; the tests' fixture writes it)."""
    return (write_fixture(tmp, rows=8) / "linzen" / "agr_50_mostcommon_10K.tsv").read_text()


def msr(text: str) -> object:
    """The questions and answers files, fuzzed together: the text up to a line `--` is the questions."""
    questions, _, answers = text.partition("--\n")
    return msr_completion.parse_questions(questions, answers)


LOADERS: dict[str, tuple[Callable[[str], object], str]] = {
    "scan": (lambda text: scan.parse_scan_file(text, "scan.txt"), head("scan/tasks_train_simple.txt")),
    "machine-tasks": (
        lambda text: lookup_tables.parse_machine_tasks(text, "train.tsv"),
        head("lookup_tables/sample1/train.tsv"),
    ),
    "symbol-rewriting": (
        lambda text: symbol_rewriting.parse_machine_tasks(text, "train"),
        head("symbol_rewriting/grammar_std.train.small.tsv"),
    ),
    "question-formation": (
        lambda text: question_formation.parse_published(text, "train"),
        head("question_formation/question.dev"),
    ),
    "question-formation-grammar": (question_formation.parse_grammar, head("question_formation/question.gr", 30)),
    "gulordava": (agreement.parse_gulordava, head("agreement_gulordava/generated.tab", 41)),
    "conll-u": (lambda text: pos_induction.read_word_tag(text, 4), head("ud_english_ewt/en_ewt-ud-dev.conllu", 40)),
    "word-tag": (lambda text: pos_induction.read_word_tag(text), "The\tDT\ndog\tNN\nruns\tVBZ\n\n#\t#\n0\tCD\n"),
    "linzen": (linzen.parse_linzen, ""),
    "msr": (msr, f"{MSR_QUESTIONS}--\n{MSR_ANSWERS}"),
    "bowman-logic": (
        lambda text: logic_bowman.parse_file(text, "train", 3),
        head("logic_bowman/train3"),
    ),
}


def mutated(seed: str) -> st.SearchStrategy[str]:
    """`seed` with a few characters deleted, inserted (tabs, newlines, brackets, odd unicode) or
    whole lines repeated or dropped: input one typo or truncation away from a valid file."""
    alphabet = st.sampled_from(["\t", "\n", " ", "[", "]", "(", ")", "#", "-", "0", "é", "\x00", "\ufeff", "\r"])

    @st.composite
    def build(draw: st.DrawFn) -> str:
        text = seed
        for _ in range(draw(st.integers(1, 4))):
            if not text:
                break
            at = draw(st.integers(0, len(text) - 1))
            action = draw(st.sampled_from(["delete", "insert", "cut", "repeat-line"]))
            if action == "delete":
                text = text[:at] + text[at + draw(st.integers(1, 20)) :]
            elif action == "insert":
                text = text[:at] + draw(alphabet) + text[at:]
            elif action == "cut":
                text = text[:at]
            else:
                lines = text.splitlines(keepends=True)
                line = draw(st.integers(0, len(lines) - 1))
                text = "".join(lines[: line + 1] + lines[line:])
        return text

    return build()


def must_succeed_or_say_why(parse: Callable[[str], object], text: str) -> None:
    try:
        parse(text)
    except UserError as error:
        assert str(error).strip() and "\n" not in str(error).strip(), f"not one sentence: {error!r}"


@pytest.mark.parametrize("target", sorted(LOADERS))
def test_a_loader_reads_arbitrary_text_or_names_the_problem(target: str) -> None:
    parse, _ = LOADERS[target]

    @FUZZ
    @given(st.text(max_size=400))
    def arbitrary(text: str) -> None:
        must_succeed_or_say_why(parse, text)

    arbitrary()


@pytest.mark.parametrize("target", sorted(LOADERS))
def test_a_loader_reads_near_valid_files_or_names_the_problem(target: str, tmp_path: Path) -> None:
    parse, seed = LOADERS[target]
    seed = seed or linzen_seed(tmp_path)
    parse(seed)  # the unmutated seed is valid

    @FUZZ
    @given(mutated(seed))
    def near_valid(text: str) -> None:
        must_succeed_or_say_why(parse, text)

    near_valid()


@FUZZ
@given(st.text(max_size=40))
def test_seeds_parse_or_say_how_to_write_them(text: str) -> None:
    try:
        seeds = parse_seeds(text)
    except UserError:
        return
    assert seeds and len(set(seeds)) == len(seeds)


@FUZZ
@given(st.lists(st.text(max_size=30), max_size=4))
def test_settings_parse_or_say_how_to_write_them(pairs: list[str]) -> None:
    try:
        parsed = parse_settings(pairs)
    except UserError:
        return
    assert len(parsed) <= len(pairs)


@pytest.fixture(scope="module")
def command_model() -> Any:
    """One live command model (the Python example of docs/examples), whose answers the tests replace."""
    model = CommandModel(command=f"python {REPO / 'docs' / 'examples' / 'memorise.py'}", timeout=30.0)
    yield model
    model.close()


@FUZZ
@given(st.one_of(st.text(max_size=200), st.sampled_from(['{"type": "predictions"}', "[]", '{"type": 1}', "null"])))
def test_a_models_answer_is_accepted_or_fails_its_run_in_one_sentence(command_model: Any, line: str) -> None:
    command_model._next_line = lambda deadline: line
    try:
        answer = command_model._receive("predictions", 0.0, "timeout")
    except CommandModelError as error:
        assert "\n" not in str(error).strip()
        return
    assert isinstance(answer, dict) and answer["type"] == "predictions"


@pytest.fixture(scope="module")
def valid_store(tmp_path_factory: pytest.TempPathFactory) -> bytes:
    path = tmp_path_factory.mktemp("store") / "results.sqlite"
    with Store(path):
        pass
    sqlite3.connect(path).execute("PRAGMA wal_checkpoint(TRUNCATE)").connection.close()
    return path.read_bytes()


@FUZZ
@given(data=st.data())
def test_a_store_file_opens_or_is_refused_in_one_sentence(
    tmp_path_factory: pytest.TempPathFactory, valid_store: bytes, data: st.DataObject
) -> None:
    blob = data.draw(
        st.one_of(
            st.binary(max_size=2000),
            st.builds(
                lambda at, junk: valid_store[:at] + junk + valid_store[at + len(junk) :],
                st.integers(0, len(valid_store) - 1),
                st.binary(min_size=1, max_size=64),
            ),
            st.integers(0, len(valid_store)).map(lambda at: valid_store[:at]),
        )
    )
    path = tmp_path_factory.mktemp("fuzz") / "results.sqlite"
    path.write_bytes(blob)
    try:
        with Store(path):  # opened: the schema is this version's, table by table
            pass
    except UserError as error:
        assert "\n" not in str(error).strip()
