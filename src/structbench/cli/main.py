"""The `structbench` parser and dispatch: every command family adds its commands, `main` runs one.

Errors a user can cause end in one sentence on stderr and exit status 2; a data verification
failure exits with status 1; an interrupt exits with 130. SIGTERM (a batch scheduler's cancel,
`kill`) and SIGHUP (a closed terminal) are raised as an interrupt, unless the process was started
ignoring them (`nohup`), so that a command ends as after Ctrl-C: the runs it claimed and did not
finish are released, shown as `interrupted` until the next ask redoes them, and its worker ends.
An SQLite error that reaches here (a damaged page met while a report reads the store, a disk that
fills up) is the results store's, and is told as one sentence naming it
(`structbench.store.failures`); an OS error on a named file (a path too long, a folder that cannot
be read) is one sentence naming the file.
"""

from __future__ import annotations

import argparse
import os
import signal
import sys
import threading
import unicodedata
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from types import FrameType

from structbench import __version__
from structbench.cli import analysis, published, reference, report, run, suites, sweep
from structbench.errors import UserError
from structbench.execution.collector import set_thresholds
from structbench.paths import default_store_path
from structbench.store.failures import sqlite_error_in, store_failure

DESCRIPTION = "The `structbench` command line: suites, models, build, run, sweep, report, quickstart."


START = """\
structbench: does a sequence model generalise structurally? Four commands to start:

  structbench quickstart                               build the suites (one per suite set), run the fast baselines, write the report
  structbench run --suite lookup-tables --model copy   evaluate one model on one suite (`suites`, `models` list them)
  structbench runs                                     what the results store holds, by label
  structbench report --out site                        the leaderboard site from the store

`structbench --help` lists every command, `structbench COMMAND --help` its options.
"""
"""What `structbench` alone prints: argparse's "the following arguments are required: command" tells a
new user nothing about where to begin."""


def one_line(message: str) -> str:
    """`message` on one line: control characters (a newline or carriage return in a path the user gave)
    and Unicode line separators shown as escapes, so that an error is always the one line it says."""
    return "".join(
        char.encode("unicode_escape").decode("ascii") if unicodedata.category(char) in ("Cc", "Zl", "Zp") else char
        for char in message
    )


def _terminate(signal_number: int, _frame: FrameType | None) -> None:
    """SIGTERM or SIGHUP, raised where the command is, so that it ends as after Ctrl-C."""
    raise KeyboardInterrupt(signal.Signals(signal_number).name)


@contextmanager
def _terminations_interrupt() -> Iterator[None]:
    """While the block runs, SIGTERM and SIGHUP raise KeyboardInterrupt (where they would otherwise end the
    process at once, leaving its claims for readers to find stale); the handlers before are restored."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    signals = [signal.SIGTERM] + ([signal.SIGHUP] if hasattr(signal, "SIGHUP") else [])
    before = {number: signal.getsignal(number) for number in signals}
    for number, handler in before.items():
        if handler == signal.SIG_DFL:  # a process started to ignore it (nohup) keeps ignoring it
            signal.signal(number, _terminate)
    try:
        yield
    finally:
        for number, handler in before.items():
            if handler is not None:
                signal.signal(number, handler)


def build_parser() -> argparse.ArgumentParser:
    """Every command, in the order `structbench --help` lists them."""
    parser = argparse.ArgumentParser(prog="structbench", description=DESCRIPTION)
    parser.add_argument("--version", action="version", version=f"structbench {__version__}")
    commands = parser.add_subparsers(dest="command", required=True)
    suites.add_commands(commands)
    run.add_command(commands)
    analysis.add_runs(commands)
    analysis.add_compare(commands)
    published.add_command(commands)
    analysis.add_samples(commands)
    analysis.add_check(commands)
    sweep.add_command(commands)
    analysis.add_claims(commands)
    reference.add_command(commands)
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
    set_thresholds()
    if os.getcwd() not in sys.path:  # `--model my_model:MyModel` from the model's folder, as `python -m` would
        sys.path.append(os.getcwd())
    try:
        try:
            with _terminations_interrupt():
                return int(args.handler(args))
        except UserError:  # its sentence names the file at fault already (an SQLite error may be its context)
            raise
        except Exception as error:
            cause = sqlite_error_in(error)
            if cause is not None:
                raise store_failure(getattr(args, "store", None) or default_store_path(), cause) from None
            if isinstance(error, OSError) and error.filename is not None:  # a path given that cannot be used
                raise UserError(
                    f"cannot use {error.filename} ({error.strerror or error}); check the path given, or the disk."
                ) from None
            raise
    except UserError as error:
        print(f"structbench: error: {one_line(str(error))}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print("structbench: interrupted; finished runs are stored and the rest will be redone.", file=sys.stderr)
        return 130
