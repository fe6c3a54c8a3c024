"""The `structbench` parser and dispatch: every command family adds its commands, `main` runs one.

Errors a user can cause end in one sentence on stderr and exit status 2; a data verification
failure exits with status 1; an interrupt exits with 130.
"""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Sequence

from structbench import __version__
from structbench.cli import analysis, report, run, suites, sweep
from structbench.errors import UserError

DESCRIPTION = "The `structbench` command line: suites, models, build, run, sweep, report, quickstart."


START = """\
structbench: does a sequence model generalise structurally? Four commands to start:

  structbench quickstart                               build the suites (one per suite family), run the fast baselines, write the report
  structbench run --suite lookup-tables --model copy   evaluate one model on one suite (`suites`, `models` list them)
  structbench runs                                     what the results store holds, by label
  structbench report --out site                        the leaderboard site from the store

`structbench --help` lists every command, `structbench COMMAND --help` its options.
"""
"""What `structbench` alone prints: argparse's "the following arguments are required: command" tells a
new user nothing about where to begin."""


def build_parser() -> argparse.ArgumentParser:
    """Every command, in the order `structbench --help` lists them."""
    parser = argparse.ArgumentParser(prog="structbench", description=DESCRIPTION)
    parser.add_argument("--version", action="version", version=f"structbench {__version__}")
    commands = parser.add_subparsers(dest="command", required=True)
    suites.add_commands(commands)
    run.add_command(commands)
    analysis.add_runs(commands)
    analysis.add_compare(commands)
    analysis.add_samples(commands)
    analysis.add_check(commands)
    sweep.add_command(commands)
    analysis.add_claims(commands)
    report.add_report(commands)
    report.add_quickstart(commands)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Run the command `argv` (default: the process's arguments) names; its exit status. No
    arguments at all print the start guide (`START`)."""
    if not (sys.argv[1:] if argv is None else argv):
        print(START, end="")
        return 0
    args = build_parser().parse_args(argv)
    if os.getcwd() not in sys.path:  # `--model my_model:MyModel` from the model's folder, as `python -m` would
        sys.path.append(os.getcwd())
    try:
        return int(args.handler(args))
    except UserError as error:
        print(f"structbench: error: {error}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print("structbench: interrupted; finished runs are stored and the rest will be redone.", file=sys.stderr)
        return 130
