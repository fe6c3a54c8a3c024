"""What a results store's SQLite error means to the person at the terminal: one sentence each.

A store is a file on someone's disk, so that most of what SQLite can fail with is something the
user can fix: the disk is full, the file or its folder is read-only, another process has held the
write lock past the busy timeout, the file is damaged or is not a store at all. `store_failure`
turns an `sqlite3` error into a `UserError` naming the store, what went wrong and the fix; the
`Store` raises it from its opening and its writes, and the command line from any read
(`structbench.cli.main`). Finished runs are never lost by any of these: each is stored in one
transaction, which either committed before the failure or rolls back whole.
"""

from __future__ import annotations

import os
import sqlite3
from pathlib import Path

from structbench.errors import UserError

BUSY_TIMEOUT = 60.0
"""Seconds a `Store`'s write waits for another process's transaction before giving up."""


def _reason(error: BaseException) -> str:
    """SQLite's own words, on one line and short (it may quote a whole multi-line schema)."""
    return " ".join(str(error).split())[:200]


def is_the_stores(error: BaseException) -> bool:
    """Whether `error` is SQLite saying something about the file or the disk (`OperationalError`,
    or `DatabaseError` itself: a damaged file), not about the statement (`IntegrityError`,
    `ProgrammingError`: structbench's bug, which stays a traceback)."""
    return type(error) in (sqlite3.OperationalError, sqlite3.DatabaseError)


def sqlite_error_in(error: BaseException) -> sqlite3.Error | None:
    """The file's or disk's `sqlite3` error (`is_the_stores`) that `error` is or was raised from
    (pandas wraps one in its own `DatabaseError`)."""
    seen: set[int] = set()
    current: BaseException | None = error
    while current is not None and id(current) not in seen:
        if isinstance(current, sqlite3.Error) and is_the_stores(current):
            return current
        seen.add(id(current))
        current = current.__cause__ or current.__context__
    return None


def _writable(path: Path) -> bool:
    """Whether this process may write `path`, or create it in its folder (False on a read-only mount,
    even for root)."""
    target = path if path.exists() else path.parent
    return os.access(target, os.W_OK)


def store_failure(path: Path, error: sqlite3.Error) -> UserError:
    """One sentence for `error`, raised while opening, reading or writing the results store at `path`."""
    name = str(getattr(error, "sqlite_errorname", "") or "")
    reason = _reason(error)
    if name == "SQLITE_FULL":
        return UserError(
            f"the disk holding the results store {path} is full ({reason}); free some space and run again "
            "(every finished run is kept), or pass --store on another disk."
        )
    if name.startswith("SQLITE_READONLY") or (name == "SQLITE_CANTOPEN" and not _writable(Path(path))):
        return UserError(
            f"the results store {path} is read-only here ({reason}); a store is written to even when read "
            "(its journal), so copy it to a folder you can write to and pass that --store."
        )
    if name.startswith(("SQLITE_BUSY", "SQLITE_LOCKED")):
        return UserError(
            f"another process has held the write lock of the results store {path} for over {BUSY_TIMEOUT:g} s "
            f"({reason}); wait for it to finish or stop it, then run again (finished runs are kept)."
        )
    if name == "SQLITE_NOTADB":
        return UserError(f"{path} is not a structbench results database ({reason}); pass another --store.")
    if name.startswith("SQLITE_CORRUPT"):
        return UserError(
            f"the results store {path} is damaged ({reason}); restore it from a copy, or save what is readable "
            f"with `sqlite3 {path} .recover`, or pass another --store."
        )
    if name.startswith("SQLITE_IOERR"):
        return UserError(
            f"the results store {path} could not be read or written ({reason}); check the disk it is on "
            "(full, removed, a network mount that dropped), or pass another --store."
        )
    return UserError(
        f"{path} could not be opened as a results database ({reason}); check that it is one, on a disk you may "
        "write to, or pass another --store."
    )
