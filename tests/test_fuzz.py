"""Fuzzing what reads the outside world: every source loader, the sweep's grid reader, every option
of the command line, the command adapter's reading of a model's answers and the store's open path.
Each gets arbitrary text and near-valid mutations of real input (the published files under
STRUCTBENCH_SOURCE_DIR, a complete grid, values a shell can pass); the property a user relies on is
that it either succeeds or ends in one sentence naming the problem (`UserError`, or
`CommandModelError` for a model's answer), never another exception (issue 34).

The example counts here keep tox fast; `FUZZ_EXAMPLES=2000 pytest tests/test_fuzz.py` runs a
longer campaign with the same properties.
"""

from __future__ import annotations

import argparse
import os
import sqlite3
import subprocess
import sys
import tempfile
import zipfile
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from structbench.adapters.command import CommandModel, CommandModelError
from structbench.cli.main import build_parser, main
from structbench.errors import UserError
from structbench.runs.arguments import parse_seeds, parse_settings
from structbench.runs.runner import Runner
from structbench.specs import ModelSpec
from structbench.store import Store
from structbench.suites import (
    blimp,
    cogs,
    lookup_tables,
    pos_induction,
    question_formation,
    slog,
    symbol_rewriting,
)
from structbench.suites.agreement import gulordava as agreement
from structbench.suites.agreement import linzen
from structbench.suites.completion import msr as msr_completion
from structbench.suites.logic import bowman as logic_bowman
from structbench.suites.scan import common as scan
from structbench.sweep.grid import load_grid
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


def blimp_seed() -> str:
    """One paradigm's file in the published BLiMP zip, whole: a paradigm is valid with its 1,000 pairs only."""
    with zipfile.ZipFile(SHARED_DATA / "blimp" / "BLiMP.zip") as archive:
        return archive.read("data/adjunct_island.jsonl").decode("utf-8")


def linzen_seed(tmp: Path) -> str:
    """A few rows shaped like Linzen et al.'s file (which users supply; the tests' fixture writes it)."""
    return (write_fixture(tmp, rows=8) / "linzen" / "agr_50_mostcommon_10K.tsv").read_text()


def grid(text: str | bytes) -> object:
    """`load_grid` of a file holding `text` (a str is written as UTF-8, a lone surrogate as its bytes)."""
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "grid.yaml"
        path.write_bytes(text if isinstance(text, bytes) else text.encode("utf-8", "surrogatepass"))
        return load_grid(path)


GRID = (
    "suites: [lookup-tables, miniscan]\nmodels:\n  - name: copy\n    set: {a: [1, 2], b: x}\n"
    "  - {name: random, label: r, seeds: '0-4', suites: [miniscan]}\nseeds: [0, 1]\nlimit: 5\n"
)
"""A complete grid using every key: the seed of the grid reader's mutations."""


def msr(text: str) -> object:
    """The questions and answers files, fuzzed together: the text up to a line `--` is the questions."""
    questions, _, answers = text.partition("--\n")
    return msr_completion.parse_questions(questions, answers)


LOADERS: dict[str, tuple[Callable[[str], object], str]] = {
    "scan": (lambda text: scan.parse_scan_file(text, "scan.txt"), head("scan/tasks_train_simple.txt")),
    "machine-tasks": (
        lambda text: lookup_tables.machine_tasks_examples(text, "train.tsv"),
        head("lookup_tables/sample1/train.tsv"),
    ),
    "symbol-rewriting": (
        lambda text: symbol_rewriting.published_examples(text, "train.tsv", "train"),
        head("symbol_rewriting/grammar_std.train.small.tsv"),
    ),
    "question-formation": (
        lambda text: question_formation.parse_published(text, "train"),
        head("question_formation/question.dev"),
    ),
    "question-formation-grammar": (question_formation.parse_grammar, head("question_formation/question.gr", 30)),
    "gulordava": (agreement.parse_gulordava, head("agreement_gulordava/generated.tab", 41)),
    "blimp": (lambda text: blimp.parse_paradigm("adjunct_island", text), blimp_seed()),
    "conll-u": (lambda text: pos_induction.read_word_tag(text, 4), head("ud_english_ewt/en_ewt-ud-dev.conllu", 40)),
    "word-tag": (lambda text: pos_induction.read_word_tag(text), "The\tDT\ndog\tNN\nruns\tVBZ\n\n#\t#\n0\tCD\n"),
    "linzen": (linzen.parse_linzen, ""),
    "msr": (msr, f"{MSR_QUESTIONS}--\n{MSR_ANSWERS}"),
    "bowman-logic": (
        lambda text: logic_bowman.parse_file(text, "train", 3),
        head("logic_bowman/train3"),
    ),
    "cogs": (lambda text: cogs.examples_of("test", text, "test.tsv"), head("cogs/test.tsv")),
    "slog": (lambda text: slog.examples_of("test", text, "test.tsv"), head("slog/varfree_LF/test.tsv")),
    "sweep-grid": (grid, GRID),
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


# the grid reader, beyond text: bytes, and YAML documents of any shape under the grid's keys

VALUES = st.recursive(
    st.one_of(st.none(), st.booleans(), st.integers(), st.floats(), st.text(max_size=12)),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=8), inner, max_size=4),
    max_leaves=12,
)


@FUZZ
@given(st.binary(max_size=400))
def test_a_grid_file_of_any_bytes_is_read_or_refused_in_one_sentence(data: bytes) -> None:
    must_succeed_or_say_why(lambda _: grid(data), "")


@FUZZ
@given(
    st.fixed_dictionaries(
        {},
        optional={
            "suites": VALUES | st.just(["lookup-tables"]),
            "models": VALUES
            | st.lists(
                st.sampled_from(["copy", "random", "no-such"])
                | st.fixed_dictionaries(
                    {"name": st.sampled_from(["copy", "seq2seq"])},
                    optional={"set": VALUES, "label": VALUES, "seeds": VALUES, "suites": VALUES},
                ),
                max_size=3,
            ),
            "seeds": VALUES | st.text(alphabet="0123456789-, ", max_size=30),
            "limit": VALUES,
        },
    )
)
def test_a_grid_of_any_shape_is_read_or_refused_in_one_sentence(document: dict[str, Any]) -> None:
    must_succeed_or_say_why(grid, yaml.safe_dump(document))


# every option of the command line, given what a shell can pass

SHELL_TEXT = st.text(alphabet=st.characters(blacklist_characters="\x00", blacklist_categories=("Cs",)), max_size=30)
HOSTILE = st.one_of(
    SHELL_TEXT,
    st.sampled_from(
        ["", " ", "-1", "0", "1e400", "nan", "99999999999999999999", "0-99999999999999999999", "0-9999", "1,1",
         "*", "[", "'", ".", "..", "/", "/dev/null", "/dev/zero", "/proc/self", "copy", "lookup-tables",
         "scan-*,typo", "a=b", "=", ",", "x" * 300, "séed", "notes.txt/inside"]
    ),
)  # fmt: skip
"""Option values: any text an argument can hold (no NUL), and values that once broke a command. A
byte that is not UTF-8 (a lone surrogate to Python) cannot pass through pytest's capture: the
subprocess test below gives one."""

SKIPPED_COMMANDS = {"build", "quickstart"}
"""Commands whose valid values start minutes of work (building every suite, running every baseline)."""
BASES = {
    "run": ["--suite", "lookup-tables", "--model", "no-such-model", "--seeds", "0", "--limit", "2", "--no-progress"],
    "compare": ["--suite", "lookup-tables", "--models", "copy,oracle"],
    "import": ["--suite", "lookup-tables", "--file", "{folder}/notes.txt", "--paper", "Someone 2020"],
    "samples": ["--suite", "lookup-tables", "--model", "copy", "--split", "heldout_inputs"],
    "check": ["{folder}/golden.json"],
    "sweep": ["{folder}/grid.yaml", "--dry-run", "--no-progress"],
    "report": ["--out", "{folder}/site"],
}
"""Each command's arguments, complete, before one of them is replaced by a hostile value: a model
that does not exist keeps `run` from running anything unless the fuzzed value names one."""


def value_options() -> list[tuple[str, str]]:
    """(command, option) of every option that takes a value, read from the parser itself, and the
    positional file arguments of `sweep` and `check`."""
    commands = next(a for a in build_parser()._actions if isinstance(a, argparse._SubParsersAction))
    pairs = []
    for name, parser in sorted(commands.choices.items()):
        if name in SKIPPED_COMMANDS:
            continue
        for action in parser._actions:
            if action.option_strings and action.nargs != 0 and not isinstance(action, argparse._HelpAction):
                pairs.append((name, action.option_strings[-1]))
        if name in ("sweep", "check"):
            pairs.append((name, "FILE"))
    return pairs


@pytest.fixture(scope="module")
def cli_folder(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    """A folder holding a store with copy and oracle on lookup-tables, a grid and the current folder's
    place: a fuzzed path that names a new file makes it here."""
    folder = tmp_path_factory.mktemp("cli")
    with Store(folder / "results.sqlite") as store:
        runner = Runner(store, progress=False)
        for model in ("copy", "oracle"):
            runner.evaluate("lookup-tables", ModelSpec(name=model), [0])
    (folder / "grid.yaml").write_text("suites: [lookup-tables]\nmodels: [copy]\nseeds: [0]\n")
    (folder / "notes.txt").write_text("a file where a folder might be asked for\n")
    cwd = Path.cwd()
    os.chdir(folder)
    yield folder
    os.chdir(cwd)


@pytest.mark.parametrize(("command", "option"), value_options())
def test_every_option_takes_any_value_or_refuses_it_in_one_sentence(
    command: str, option: str, cli_folder: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    base = [part.format(folder=cli_folder) for part in BASES.get(command, [])]

    @settings(
        max_examples=max(8, EXAMPLES // 8),
        deadline=None,
        suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture],
    )
    @given(HOSTILE)
    def any_value(value: str) -> None:
        argv = [command, *base]
        if option == "FILE":
            argv[1] = value
        elif option in argv:
            argv[argv.index(option) + 1] = value
        else:
            argv += [option, value]
        if option != "--store" and command not in ("suites", "models"):
            argv += ["--store", str(cli_folder / "results.sqlite")]
        ends_in_one_sentence(argv, capsys)

    any_value()


def ends_in_one_sentence(argv: list[str], capsys: pytest.CaptureFixture[str]) -> None:
    """`main(argv)` returns, or argparse refuses a value with its usage line and one error line;
    whatever it prints on stderr is no traceback, and a refusal ends in one line naming the problem."""
    try:
        code = main(argv)
    except SystemExit as refused:  # argparse: a value of the wrong type, a choice not offered
        assert refused.code == 2, argv
        assert capsys.readouterr().err.strip().splitlines()[-1].startswith(f"structbench {argv[0]}: error: ")
        return
    err = capsys.readouterr().err
    assert "Traceback" not in err, (argv, err)
    assert code in (0, 1, 2), argv
    if code == 2:
        assert err.strip().splitlines()[-1].startswith("structbench: error: "), (argv, err)


def test_an_argument_that_is_not_utf8_is_named_in_one_sentence(tmp_path: Path) -> None:
    store = bytes(tmp_path) + b"/\xff.sqlite"
    command = [sys.executable, "-m", "structbench.cli", "runs", "--store", store]
    done = subprocess.run(command, cwd=REPO, capture_output=True, timeout=120, check=False)
    assert done.returncode == 2
    (line,) = done.stderr.decode("utf-8", "replace").strip().splitlines()
    assert (
        line
        == f"structbench: error: no results store at {tmp_path}/\\udcff.sqlite; run `structbench run` first or pass --store."
    )
