"""The command line explains itself: `structbench` alone is a start guide, and every option of every
command says what it is for in `--help`."""

from __future__ import annotations

import argparse
import shlex

import pytest

from structbench.cli import main
from structbench.cli.main import START, build_parser


def subcommands(parser: argparse.ArgumentParser) -> dict[str, argparse.ArgumentParser]:
    """name -> parser of each command."""
    found = [a for a in parser._actions if isinstance(a, argparse._SubParsersAction)]
    return {name: sub for action in found for name, sub in action.choices.items()}


def test_structbench_alone_prints_a_start_guide_and_exits_0(capsys: pytest.CaptureFixture[str]) -> None:
    assert main([]) == 0
    out = capsys.readouterr().out
    assert out == START
    guided = [shlex.split(line.strip().split("  ")[0]) for line in out.splitlines() if line.startswith("  structbench")]
    assert 3 <= len(guided) <= 5
    commands = subcommands(build_parser())
    for words in guided:  # each one a command the parser takes
        assert words[1] in commands
        commands[words[1]].parse_args(words[2:])


def test_every_option_of_every_command_has_help() -> None:
    parser = build_parser()
    missing = [
        f"{name} {action.option_strings[0] if action.option_strings else action.dest}"
        for name, sub in {"structbench": parser, **subcommands(parser)}.items()
        for action in sub._actions
        if not isinstance(action, argparse._SubParsersAction) and not action.help
    ]
    assert missing == []
