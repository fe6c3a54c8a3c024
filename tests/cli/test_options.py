"""Options several commands share (`structbench.cli.options`), and the one rule for option lists: a
list of labels or suites is read by `patterns` alone, so that a label's settings
(`seq2attn[embedding_values=false,gumbel=false]`) are never split at their commas by one command
while every other keeps them whole."""

from __future__ import annotations

import argparse
import ast
import importlib
import inspect
import re
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

import structbench.cli
from structbench.cli.main import build_parser
from structbench.cli.options import number, patterns, whole

CLI = Path(structbench.cli.__file__).parent
PARSERS = {"seeds": "parse_seeds", "set": "parse_settings"}
"""The lists that are not labels, each with its own one reader: seeds (`0,1,2`, `0-9`) and `KEY=VALUE` settings."""
WHOLE_WORDS = {("build", "suites"), ("quickstart", "suites")}
"""Positional lists of suite names, one shell word each, read as given: no command splits them."""


def test_patterns_keeps_a_labels_settings_whole() -> None:
    given = ["seq2attn[embedding_values=false,gumbel=false],seq2attn", " ngram* , ", "a,b[c=1,d=2]"]
    assert patterns(given) == [
        "seq2attn[embedding_values=false,gumbel=false]",
        "seq2attn",
        "ngram*",
        "a",
        "b[c=1,d=2]",
    ]
    assert patterns([]) is None and patterns(None) is None


def commands(
    parser: argparse.ArgumentParser, prefix: tuple[str, ...] = ()
) -> Iterator[tuple[str, argparse.ArgumentParser]]:
    """(command, its parser) of every command that has a handler (`reference verify` as one)."""
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for name, sub in action.choices.items():
                if sub.get_default("handler") is not None:
                    yield " ".join((*prefix, name)), sub
                yield from commands(sub, (*prefix, name))


def list_options(parser: argparse.ArgumentParser) -> Iterator[str]:
    """The dests of the options of `parser` that take a list: repeatable, several words, or a comma list."""
    for action in parser._actions:
        repeated = isinstance(action, argparse._AppendAction) or action.nargs in ("+", "*")
        comma = "," in str(action.metavar or "") or re.search(r"\bcomma\b", action.help or "") is not None
        if repeated or comma or action.dest in PARSERS:
            yield action.dest


def read_by(module: str) -> dict[str, set[str]]:
    """reader function name -> the `args.X` it is called with, anywhere in `module` (`patterns([args.X])` too)."""
    tree = ast.parse(inspect.getsource(importlib.import_module(module)))
    found: dict[str, set[str]] = {}
    for node in ast.walk(tree):
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Name):
            for argument in node.args:
                for part in argument.elts if isinstance(argument, ast.List) else [argument]:
                    if isinstance(part, ast.Attribute) and isinstance(part.value, ast.Name) and part.value.id == "args":
                        found.setdefault(node.func.id, set()).add(part.attr)
    return found


def test_every_list_option_of_every_command_goes_through_its_one_reader() -> None:
    checked = []
    for command, parser in commands(build_parser()):
        module = parser.get_default("handler").__module__
        reads = read_by(module)
        for dest in list_options(parser):
            if (command, dest) in WHOLE_WORDS:
                continue
            reader = PARSERS.get(dest, "patterns")
            assert dest in reads.get(reader, set()), f"`{command}`'s --{dest} is not read by {reader} in {module}"
            checked.append((command, dest))
    assert {("compare", "models"), ("run", "suite"), ("run", "model"), ("report", "models")} <= set(checked)
    assert ("reference verify", "model") in checked


def test_no_command_splits_an_option_at_commas_by_hand() -> None:
    """A comma split anywhere in the command line's modules but `patterns` is how `compare --models`
    once cut `seq2attn[embedding_values=false,gumbel=false]` in two."""
    splits = []
    for path in sorted(CLI.glob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if not (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)):
                continue
            if node.func.attr not in ("split", "rsplit", "partition", "rpartition"):
                continue
            separator = next((arg for arg in node.args if isinstance(arg, ast.Constant)), None)
            if separator is not None and "," in str(separator.value):
                splits.append(f"{path.name}:{node.lineno}")
    assert splits == [f"options.py:{patterns_line()}"]


def patterns_line() -> int:
    """The line of `re.split` in `patterns`, the one comma split the command line has."""
    source, first = inspect.getsourcelines(patterns)
    return first + next(number for number, line in enumerate(source) if "re.split(" in line)


def test_every_numeric_option_is_read_by_number_or_whole() -> None:
    """No option is read by `float` or `int` alone, which take `nan`, `inf` and `1e400`: each is read by
    `number` or `whole`, which take only finite numbers in the option's range."""
    plain = [
        f"{command} {action.option_strings[-1]}"
        for command, parser in commands(build_parser())
        for action in parser._actions
        if action.type in (float, int)
    ]
    assert plain == []
    numeric = [
        action.type.__qualname__
        for _, parser in commands(build_parser())
        for action in parser._actions
        if callable(action.type) and action.type.__qualname__.startswith(("number.", "whole."))
    ]
    assert len(numeric) >= 9  # run/sweep/verify time-outs, --max-memory, --limit, --workers, --tolerance, --sample...


@pytest.mark.parametrize(
    ("reader", "text", "value"),
    [(number(above=0), "2.5", 2.5), (number(at_least=0), "0", 0.0), (whole(1), " 3 ", 3), (whole(0, 9), "9", 9)],
)
def test_a_number_in_range_is_read(reader: Callable[[str], float], text: str, value: float) -> None:
    assert reader(text) == value


@pytest.mark.parametrize(
    ("reader", "text"),
    [
        (number(above=0), "nan"),
        (number(above=0), "-inf"),
        (number(above=0), "1e400"),
        (number(above=0), "0"),
        (number(at_least=0), "-1e-9"),
        (number(at_least=0), "many"),
        (whole(1), "0"),
        (whole(0), "1e3"),
        (whole(0), "99999999999999999999"),
        (whole(0, 9), "10"),
    ],
)
def test_a_number_out_of_range_is_refused(reader: Callable[[str], float], text: str) -> None:
    with pytest.raises(argparse.ArgumentTypeError, match=re.escape(repr(text))):
        reader(text)
