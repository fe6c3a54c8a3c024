"""Options several commands share, each defined once: --store (and --make-dirs), --source-dir, --json,
--seeds, --no-progress.

Also the small readings of option values that more than one command makes: an existing store, a store
to write (`store_to_write`: a new file is announced, and its folder made only where asked), comma lists
of patterns, and numbers (`number`, `whole`: every numeric option of every command is
read by one of them, so that `nan`, `inf` or `1e400` is refused where it is given, never taken as
a time-out that never ends or a tolerance that passes every change).
"""

from __future__ import annotations

import argparse
import math
import re
import sys
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TypeAlias

from structbench.errors import UserError
from structbench.paths import default_store_path
from structbench.store import Store

Commands: TypeAlias = "argparse._SubParsersAction[argparse.ArgumentParser]"
"""What each command family adds its commands to (`add_subparsers`' answer)."""

LARGEST_INTEGER = 2**63 - 1
"""The largest whole number an option takes: what a store's integer column and numpy's seeds hold."""

SOURCE_HELP = "folder laid out like the published reference data (overrides STRUCTBENCH_SOURCE_DIR)"


def add_store(parser: argparse.ArgumentParser, *, writes: bool = False) -> None:
    """`--store PATH`: the results database, by default the home's; for a command that `writes` runs
    into it (and so may create it), `--make-dirs` too (see `store_to_write`)."""
    parser.add_argument(
        "--store", type=Path, default=default_store_path(), help=f"results database (default {default_store_path()})"
    )
    if writes:
        parser.add_argument(
            "--make-dirs",
            action="store_true",
            help="make the folders of a new --store that do not exist yet (by default they must exist, so that a "
            "typo in the path is an error, not a new empty store)",
        )


def add_source_dir(parser: argparse.ArgumentParser) -> None:
    """`--source-dir DIR`: where the published source files are, before STRUCTBENCH_SOURCE_DIR."""
    parser.add_argument("--source-dir", type=Path, help=SOURCE_HELP)


def add_json(parser: argparse.ArgumentParser, help: str) -> None:
    """`--json`: print what the command answers as JSON instead of a table."""
    parser.add_argument("--json", action="store_true", help=help)


def add_seeds(parser: argparse.ArgumentParser, default: str | None, help: str) -> None:
    """`--seeds LIST`: seeds as `structbench.runs.arguments.parse_seeds` reads them (`0,1,2`, `0-9`)."""
    parser.add_argument("--seeds", default=default, help=help)


def add_no_progress(parser: argparse.ArgumentParser) -> None:
    """`--no-progress`: no progress bar."""
    parser.add_argument("--no-progress", action="store_true", help="no progress bar")


def existing_store(path: Path) -> Path:
    """`path`, which commands that only read results need to exist (opening it would create it)."""
    if not Path(path).is_file():
        raise UserError(f"no results store at {path}; run `structbench run` first or pass --store.")
    return path


def store_to_write(args: argparse.Namespace, *, announce: bool = True) -> Store:
    """The store `--store` names, opened for writing runs into it. A store that does not exist yet is
    created and, where `announce`, told in one line on stderr (`new results store at PATH`), so that a
    typo in `--store` is seen before its empty leaderboard is; its folder must exist unless it is the
    home's (the default store) or `--make-dirs` is given, else one sentence names the missing folder."""
    path = Path(args.store)
    new = not path.exists()
    if new and not path.parent.exists() and path != default_store_path() and not getattr(args, "make_dirs", False):
        missing = path.parent
        while not missing.parent.exists() and missing.parent != missing:
            missing = missing.parent
        if missing.parent.is_dir():  # else a file stands where a folder should: the store says so as it opens
            raise UserError(
                f"the folder of --store {path} does not exist ({missing} is missing); give a path in an existing "
                "folder, or add --make-dirs to make it."
            )
    store = Store(path)
    if new and announce:
        print(f"new results store at {path}", file=sys.stderr, flush=True)
    return store


def patterns(values: Sequence[str] | None) -> list[str] | None:
    """Comma lists and repeated options as one list of patterns; None when none was given. A label's
    settings are not split at their commas (`seq2attn[embedding_values=false,gumbel=false]` is one)."""
    if not values:
        return None
    return [part.strip() for value in values for part in re.split(r",(?![^\[]*\])", value) if part.strip()]


def number(*, above: float | None = None, at_least: float | None = None, example: str = "") -> Callable[[str], float]:
    """The argparse `type` of an option that takes a finite number greater than `above` or at least
    `at_least`: anything else (`nan`, `inf`, `1e400`, a word) is refused in one line naming the option."""
    bound = f" above {above:g}" if above is not None else f" of at least {at_least:g}" if at_least is not None else ""
    hint = f", e.g. {example}" if example else ""

    def parse(text: str) -> float:
        try:
            value = float(text)
        except ValueError:
            value = math.nan
        if (
            not math.isfinite(value)
            or (above is not None and value <= above)
            or (at_least is not None and value < at_least)
        ):
            raise argparse.ArgumentTypeError(f"{text!r} is not a finite number{bound}{hint}")
        return value

    return parse


def whole(minimum: int, maximum: int = LARGEST_INTEGER, example: str = "") -> Callable[[str], int]:
    """The argparse `type` of an option that takes a whole number from `minimum` to `maximum`: anything
    else is refused in one line naming the option."""
    hint = f", e.g. {example}" if example else ""

    def parse(text: str) -> int:
        try:
            value = int(text.strip())
        except ValueError:
            raise argparse.ArgumentTypeError(f"{text[:40]!r} is not a whole number{hint}") from None
        if not minimum <= value <= maximum:
            shown = f"at least {minimum}" if maximum == LARGEST_INTEGER else f"from {minimum} to {maximum}"
            raise argparse.ArgumentTypeError(f"{text[:40]!r} is not a whole number {shown}{hint}")
        return value

    return parse
