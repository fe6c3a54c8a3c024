"""Opening a results database file, and its transactions: what a `StoreReader` and a `Store` share.

Opening creates the schema in a new file, migrates a v1 store in place
(`structbench.store.migration`) and refuses a newer schema or a file that is not a store, in one
`BEGIN IMMEDIATE` transaction after re-reading the version, so that two processes never migrate
twice. Every write is one `transaction`: committed whole or rolled back whole, an SQLite failure
raised as one sentence (`structbench.store.failures`).
"""

from __future__ import annotations

import random
import sqlite3
import time
from collections.abc import Iterator
from contextlib import contextmanager, suppress
from pathlib import Path

from structbench.errors import UserError
from structbench.store.failures import BUSY_TIMEOUT, is_the_stores, store_failure
from structbench.store.migration import migrate_v1
from structbench.store.schema import SCHEMA, SCHEMA_VERSION, schema_columns


def open_database(path: Path) -> tuple[sqlite3.Connection, Path | None]:
    """A connection to the results database `path` (created where it does not exist, in WAL mode,
    foreign keys on), and the backup of the v1 store this open migrated, if it did."""
    if path.is_dir():  # `--store ''` is the current folder
        raise UserError(
            f"the results store {path} is a folder; pass --store a file path, e.g. --store {path / 'results.sqlite'}."
        )
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
    except OSError as error:  # a file where a folder of the path should be, or no right to create one
        raise UserError(
            f"cannot create the folder of the results store {path} ({error.strerror or error}); pass "
            "--store a path whose folders are folders you may write to."
        ) from None
    try:
        db = sqlite3.connect(path, timeout=BUSY_TIMEOUT, isolation_level=None)
    except sqlite3.Error as error:
        raise store_failure(path, error) from None
    try:
        deadline = time.monotonic() + BUSY_TIMEOUT
        while True:
            try:
                db.execute("PRAGMA journal_mode=WAL")
                db.execute("PRAGMA synchronous=NORMAL")
                migrated_from = _open_schema(db, path)  # its transaction raises sqlite's own errors, retried here
                break
            except sqlite3.OperationalError as error:
                # switching a new file to WAL, or reading it while another process does, can
                # fail at once without waiting for the busy timeout: retry (every step is atomic)
                if (
                    getattr(error, "sqlite_errorname", None) not in ("SQLITE_BUSY", "SQLITE_LOCKED")
                    or time.monotonic() > deadline
                ):
                    raise
                time.sleep(0.02 + 0.08 * random.random())
        db.execute("PRAGMA foreign_keys=ON")
        _check_tables(db, path)
    except sqlite3.DatabaseError as error:
        db.close()
        raise store_failure(path, error) from None
    except UnicodeDecodeError:  # a damaged page inside a text value of the schema
        db.close()
        raise UserError(f"{path} is damaged (text that is not UTF-8); pass another --store.") from None
    except BaseException:
        db.close()
        raise
    return db, migrated_from


def _check_tables(db: sqlite3.Connection, path: Path) -> None:
    """Refuse a file whose tables are not those of this schema (a damaged or foreign schema that
    still carries our user_version), before any query fails on a missing column."""
    for table, columns in schema_columns().items():
        found = tuple(row[1] for row in db.execute(f"PRAGMA table_info({table})"))
        if found != columns:
            raise UserError(
                f"{path} is not a structbench results database of schema {SCHEMA_VERSION} (its {table} "
                f"table has the columns {', '.join(found) or 'none'}); pass another --store."
            )


def _open_schema(db: sqlite3.Connection, path: Path) -> Path | None:
    """Create the schema in a new file, migrate a v1 store, refuse a newer one: one transaction.
    Returns the backup of the v1 store it migrated, if it did.

    Foreign keys are still off here, so that the migration can rebuild the runs table."""
    if int(db.execute("PRAGMA user_version").fetchone()[0]) == SCHEMA_VERSION:
        return None  # the common case needs no write lock (a read-only store opens too)
    migrated_from = None
    with transaction(db, path, translated=False):
        version = int(db.execute("PRAGMA user_version").fetchone()[0])
        if version > SCHEMA_VERSION:
            raise UserError(
                f"{path} was written by a newer structbench (store schema {version}, this one "
                f"reads {SCHEMA_VERSION}); upgrade structbench (pip install -U structbench) to open it."
            )
        if version == SCHEMA_VERSION:
            return None
        tables = {row[0] for row in db.execute("SELECT name FROM sqlite_master WHERE type='table'")}
        if {"runs", "scores", "predictions"} <= tables:
            migrated_from = migrate_v1(db, path)
        elif tables - {"suites", "sqlite_sequence"}:
            raise UserError(f"{path} is an SQLite file but not a structbench results database; pass another --store.")
        else:
            for statement in SCHEMA:
                db.execute(statement)
        db.execute(f"PRAGMA user_version = {SCHEMA_VERSION}")
    if migrated_from is not None:
        # give the bytes of the unpacked predictions back to the file system; when another
        # process has the store open this fails, and later runs reuse the space instead
        with suppress(sqlite3.OperationalError):
            db.execute("VACUUM")
    return migrated_from


@contextmanager
def transaction(db: sqlite3.Connection, path: Path, *, translated: bool = True) -> Iterator[sqlite3.Connection]:
    """One `BEGIN IMMEDIATE` transaction on `db` (the store at `path`), committed whole or rolled back
    whole. An SQLite error (disk full, read-only, lock held past the busy timeout, damaged file) is
    raised as one sentence (`store_failure`), unless `translated` is False (the opening, which
    retries some)."""
    try:
        db.execute("BEGIN IMMEDIATE")
        try:
            yield db
            db.execute("COMMIT")
        except BaseException:
            if db.in_transaction:
                with suppress(sqlite3.Error):  # a full disk may refuse the rollback's journal too
                    db.execute("ROLLBACK")
            raise
    except sqlite3.DatabaseError as error:
        if not translated or not is_the_stores(error):
            raise
        raise store_failure(path, error) from None
