"""The results database: a `Store` is one connection to one SQLite file of runs, scores and predictions.

Its tables are `structbench.store.schema`'s; values are encoded as `structbench.store.codec`
says; a v1 store is migrated on open by `structbench.store.migration`; who holds a run is
`structbench.store.ownership`'s.

Concurrency. Any number of processes may evaluate into one store at once; none crashes,
no run is stored twice and none is lost, because:

- every write is one `BEGIN IMMEDIATE` transaction (one writer at a time, a 60 s busy
  timeout), and a finished run is stored wholly (scores, predictions, status) in one;
- `claim_run` decides atomically, in one transaction: a `done` or `n/a` run is answered from
  the store; a `running` one whose owner is alive (same host and its pid exists; another
  host always counts as alive) is `busy` and the caller waits for it; anything else
  (absent, `failed`, or `running` under a dead owner) is taken over by INSERT or by UPDATE of
  the same row in place: same id, new owner. No process ever deletes another's row;
- `finish_run`, `end_run`, `discard` and `release` touch a row only `WHERE id=? AND owner=?`;
  a process that lost its claim is told so (`ClaimLost`) instead of overwriting;
- opening, creating and migrating the schema happen in one `BEGIN IMMEDIATE` transaction
  after re-reading the version, so two processes never migrate twice.

An interrupted run (Ctrl-C) is `release`d: it stays `running` with no owner, and the next ask,
from any process, redoes it. Limits of the liveness check: a run held by a process on another
host that died stays `busy` until its row is marked `failed` by hand, and a dead owner whose
pid was reused by an unrelated process is waited for until that process exits.
"""

from __future__ import annotations

import json
import math
import os
import random
import secrets
import sqlite3
import time
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager, suppress
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

from structbench.convergence import Convergence
from structbench.errors import UserError
from structbench.specs import SuiteSpec
from structbench.store.codec import (
    JSON,
    DamagedBlock,
    SplitResult,
    pack_predictions,
    unpack_predictions,
    with_entries,
)
from structbench.store.failures import BUSY_TIMEOUT, is_the_stores, store_failure
from structbench.store.migration import migrate_v1
from structbench.store.ownership import HELD, HOST, ClaimLost, RunClaim, owner_alive
from structbench.store.schema import (
    ROW_COLUMNS,
    RUN_FIELDS,
    RUN_KEY,
    SCHEMA,
    SCHEMA_VERSION,
    schema_columns,
)

if TYPE_CHECKING:
    import pandas as pd


@dataclass(frozen=True)
class StoredRun:
    """One run as a store holds it, for moving it to another store (`Store.stored_run`, `Store.add_runs`)."""

    row: dict[str, Any]
    """Its columns but the id (`ROW_COLUMNS`)."""
    scores: list[tuple[Any, ...]]
    """(split, metric, breakdown, level, value, n, proportion) rows."""
    predictions: list[tuple[str, int, bytes]]
    """(split, number of examples, `pack_predictions` block), in split order."""


class Store:
    """A connection to one results database file; see the module docstring for its rules, `schema` for its tables."""

    def __init__(self, path: Path) -> None:
        self.path = Path(path)
        if self.path.is_dir():  # `--store ''` is the current folder
            raise UserError(
                f"the results store {self.path} is a folder; pass --store a file path, e.g. "
                f"--store {self.path / 'results.sqlite'}."
            )
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
        except OSError as error:  # a file where a folder of the path should be, or no right to create one
            raise UserError(
                f"cannot create the folder of the results store {self.path} ({error.strerror or error}); pass "
                "--store a path whose folders are folders you may write to."
            ) from None
        self.owner = f"{HOST}:{os.getpid()}:{secrets.token_hex(4)}"
        """How this Store signs the runs it claims."""
        self.migrated_from: Path | None = None
        """The backup of the v1 store this open migrated, if it did."""
        try:
            self._db = sqlite3.connect(self.path, timeout=BUSY_TIMEOUT, isolation_level=None)
        except sqlite3.Error as error:
            raise store_failure(self.path, error) from None
        try:
            deadline = time.monotonic() + BUSY_TIMEOUT
            while True:
                try:
                    self._db.execute("PRAGMA journal_mode=WAL")
                    self._db.execute("PRAGMA synchronous=NORMAL")
                    self._open_schema()  # its transaction raises sqlite's own errors, retried here
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
            self._db.execute("PRAGMA foreign_keys=ON")
            self._check_tables()
        except sqlite3.DatabaseError as error:
            self._db.close()
            raise store_failure(self.path, error) from None
        except UnicodeDecodeError:  # a damaged page inside a text value of the schema
            self._db.close()
            raise UserError(f"{self.path} is damaged (text that is not UTF-8); pass another --store.") from None
        except BaseException:
            self._db.close()
            raise

    def _check_tables(self) -> None:
        """Refuse a file whose tables are not those of this schema (a damaged or foreign schema that
        still carries our user_version), before any query fails on a missing column."""
        for table, columns in schema_columns().items():
            found = tuple(row[1] for row in self._db.execute(f"PRAGMA table_info({table})"))
            if found != columns:
                raise UserError(
                    f"{self.path} is not a structbench results database of schema {SCHEMA_VERSION} (its {table} "
                    f"table has the columns {', '.join(found) or 'none'}); pass another --store."
                )

    def _open_schema(self) -> None:
        """Create the schema in a new file, migrate a v1 store, refuse a newer one: one transaction.

        Foreign keys are still off here, so that the migration can rebuild the runs table."""
        if int(self._db.execute("PRAGMA user_version").fetchone()[0]) == SCHEMA_VERSION:
            return  # the common case needs no write lock (a read-only store opens too)
        with self._transaction(translated=False) as db:
            version = int(db.execute("PRAGMA user_version").fetchone()[0])
            if version > SCHEMA_VERSION:
                raise UserError(
                    f"{self.path} was written by a newer structbench (store schema {version}, this one "
                    f"reads {SCHEMA_VERSION}); upgrade structbench (pip install -U structbench) to open it."
                )
            if version == SCHEMA_VERSION:
                return
            tables = {row[0] for row in db.execute("SELECT name FROM sqlite_master WHERE type='table'")}
            if {"runs", "scores", "predictions"} <= tables:
                self.migrated_from = migrate_v1(db, self.path)
            elif tables - {"suites", "sqlite_sequence"}:
                raise UserError(
                    f"{self.path} is an SQLite file but not a structbench results database; pass another --store."
                )
            else:
                for statement in SCHEMA:
                    db.execute(statement)
            db.execute(f"PRAGMA user_version = {SCHEMA_VERSION}")
        if self.migrated_from is not None:
            # give the bytes of the unpacked predictions back to the file system; when another
            # process has the store open this fails, and later runs reuse the space instead
            with suppress(sqlite3.OperationalError):
                self._db.execute("VACUUM")

    def close(self) -> None:
        self._db.close()

    def __enter__(self) -> Store:
        return self

    def __exit__(self, *_: object) -> None:
        self.close()

    @contextmanager
    def _transaction(self, *, translated: bool = True) -> Iterator[sqlite3.Connection]:
        """One `BEGIN IMMEDIATE` transaction, committed whole or rolled back whole. An SQLite error
        (disk full, read-only, lock held past the busy timeout, damaged file) is raised as one
        sentence (`store_failure`), unless `translated` is False (the opening, which retries some)."""
        try:
            self._db.execute("BEGIN IMMEDIATE")
            try:
                yield self._db
                self._db.execute("COMMIT")
            except BaseException:
                if self._db.in_transaction:
                    with suppress(sqlite3.Error):  # a full disk may refuse the rollback's journal too
                        self._db.execute("ROLLBACK")
                raise
        except sqlite3.DatabaseError as error:
            if not translated or not is_the_stores(error):
                raise
            raise store_failure(self.path, error) from None

    # suites

    def record_suite(self, spec: SuiteSpec, suite_hash: str) -> None:
        """Keep the spec of a suite whose runs are stored (split order, primary metric, citation)."""
        with self._transaction() as db:
            db.execute(
                "INSERT OR IGNORE INTO suites VALUES (?, ?, ?, ?)",
                (spec.id, spec.version, suite_hash, spec.model_dump_json()),
            )

    def suite_specs(self) -> dict[tuple[str, str, str], SuiteSpec]:
        """(suite, version, suite_hash) -> spec of every suite with stored runs whose spec this
        structbench can read (a spec it cannot read leaves that suite out of reports, nothing else)."""
        specs = {}
        for suite, version, suite_hash, text in self._db.execute("SELECT suite, version, suite_hash, spec FROM suites"):
            with suppress(ValueError):  # pydantic's ValidationError is a ValueError
                specs[(suite, version, suite_hash)] = SuiteSpec.model_validate_json(text)
        return specs

    # claiming and storing runs

    def claim_run(self, fields: Mapping[str, Any], *, retry_failed: bool = True, force: bool = False) -> RunClaim:
        """Atomically answer a run key from the store, report it busy, or take it for this process.

        `fields` holds every name in `RUN_FIELDS`. A `done` or `n/a` row is `cached` (unless
        `force`: then it is claimed again, as a failed one is); so is a `failed` one when
        `retry_failed` is False (a caller that waited for another process
        reads its verdict instead of repeating its crash). A `running` row held by a live
        process is `busy`. Otherwise the run is `claimed`: inserted, or an earlier failed or
        abandoned attempt's row is updated in place (same id; that attempt's scores and
        predictions, if any, are deleted; `discard` would put the row back as it was)."""
        missing = [name for name in RUN_FIELDS if name not in fields]
        if missing:
            raise ValueError(f"claim_run needs the run fields {', '.join(missing)}")
        values = [int(bool(fields[name])) if name == "comparable" else fields[name] for name in RUN_FIELDS]
        key = (fields["suite"], fields["version"], fields["suite_hash"], fields["model_hash"], fields["seed"])
        with self._transaction() as db:
            row = db.execute(f"SELECT id, {', '.join(ROW_COLUMNS)} FROM runs WHERE {RUN_KEY}", key).fetchone()
            now = time.time()
            if row is None:
                cursor = db.execute(
                    f"INSERT INTO runs ({', '.join(RUN_FIELDS)}, status, owner, started_at) "
                    f"VALUES ({', '.join('?' * len(RUN_FIELDS))}, 'running', ?, ?)",
                    [*values, self.owner, now],
                )
                claim = RunClaim(int(cursor.lastrowid or 0), "claimed", "running", None, self.owner)
            else:
                run_id, previous = int(row[0]), tuple(row[1:])
                current = dict(zip(ROW_COLUMNS, previous, strict=True))
                status, error, owner = current["status"], current["error"], current["owner"]
                if not force and (status in ("done", "n/a") or (status == "failed" and not retry_failed)):
                    return RunClaim(run_id, "cached", status, error, owner)
                if status == "running" and owner_alive(owner, run_id):
                    return RunClaim(run_id, "busy", status, None, owner)
                db.execute("DELETE FROM scores WHERE run_id=?", (run_id,))
                db.execute("DELETE FROM predictions WHERE run_id=?", (run_id,))
                db.execute(
                    f"UPDATE runs SET {', '.join(f'{name}=?' for name in RUN_FIELDS)}, status='running', "
                    "error=NULL, owner=?, started_at=?, finished_at=NULL, fit_seconds=NULL, predict_seconds=NULL "
                    "WHERE id=?",
                    [*values, self.owner, now, run_id],
                )
                claim = RunClaim(run_id, "claimed", "running", None, self.owner, previous)
        HELD.add((self.owner, claim.run_id))
        return claim

    def label(self, run_id: int) -> str:
        """The label run `run_id` is shown under."""
        row = self._db.execute("SELECT model FROM runs WHERE id=?", (run_id,)).fetchone()
        if row is None:
            raise KeyError(run_id)
        return str(row[0])

    def relabel(self, run_id: int, label: str) -> int:
        """Show run `run_id`, and every other run of its configuration (suite data and model key),
        under `label` from now on; how many runs took it. The label is not part of the run key, so a
        finished run asked for under a new `--name` keeps its results and takes the name; and one
        configuration has one label, so that `--name` on some of its seeds never splits it into two
        rows of the leaderboard (the seeds not asked for are renamed too)."""
        with self._transaction() as db:
            changed = db.execute(
                "UPDATE runs SET model=? WHERE model != ? AND (suite, version, suite_hash, model_hash) = "
                "(SELECT suite, version, suite_hash, model_hash FROM runs WHERE id=?)",
                (label, label, run_id),
            ).rowcount
        return int(changed)

    def model_specs(self) -> list[tuple[str, str, str, str]]:
        """(suite, model_hash, model_spec, label) of every model configuration the store holds runs of,
        once each (one label where runs of it were shown under several)."""
        rows = self._db.execute(
            "SELECT suite, model_hash, model_spec, MIN(model) FROM runs GROUP BY suite, model_hash, model_spec"
        ).fetchall()
        return [(str(a), str(b), str(c), str(d)) for a, b, c, d in rows]

    def rekey(self, suite: str, old_hash: str, spec: str, new_hash: str, label: str | None) -> tuple[int, int]:
        """Move the runs of model `old_hash` on `suite` to the key `new_hash` (model spec `spec`, shown
        under `label` where given), in one transaction: a migration for a change in what keys a run,
        not in what it computed. A run whose new key the store already holds (the same run, made twice
        under two keys) is left as it was. Returns (moved, left)."""
        with self._transaction() as db:
            moved = db.execute(
                "UPDATE runs SET model_hash=?, model_spec=?, model=COALESCE(?, model) "
                "WHERE suite=? AND model_hash=? AND NOT EXISTS (SELECT 1 FROM runs AS other "
                "WHERE other.suite=runs.suite AND other.version=runs.version AND other.suite_hash=runs.suite_hash "
                "AND other.seed=runs.seed AND other.model_hash=?)",
                (new_hash, spec, label, suite, old_hash, new_hash),
            ).rowcount
            (left,) = db.execute(
                "SELECT COUNT(*) FROM runs WHERE suite=? AND model_hash=?", (suite, old_hash)
            ).fetchone()
        return moved, int(left)

    def _check_held(self, db: sqlite3.Connection, claim: RunClaim, cursor: sqlite3.Cursor) -> None:
        if cursor.rowcount != 1:
            row = db.execute("SELECT status, owner FROM runs WHERE id=?", (claim.run_id,)).fetchone()
            HELD.discard((self.owner, claim.run_id))
            raise ClaimLost(
                f"run {claim.run_id} is no longer held by this process ({self.owner}); "
                f"the store has it as {row[0] if row else 'deleted'} by {row[1] if row else 'nobody'}."
            )

    def finish_run(
        self,
        claim: RunClaim,
        results: Mapping[str, SplitResult],
        fit_seconds: float,
        predict_seconds: float,
        compute: Mapping[str, int | str] | None = None,
        statistics: Mapping[str, float] | None = None,
        *,
        environment: str | None = None,
        convergence: Convergence | None = None,
    ) -> None:
        """Store every split's scores and predictions and mark the claimed run done, in one transaction.

        `results` maps split name -> (scores, example ids, predictions), in split order. `compute`,
        the model's report (`parameters`, `device`), and `statistics` (e.g. `dev_perplexity`) are
        merged into the run's `environment` JSON under "compute" and "statistics" in the same
        transaction, as given: the run checked them where they entered (`structbench.runs.attempt`),
        and readers check them again (`run_compute`, `run_statistics`), since a store file is input too.
        `environment`, where given, replaces the environment JSON the claim recorded: that of the
        process that ran the model when it is not the claimant (a sweep's worker, maybe on another host).
        `convergence`, whether training reached its recipe's criterion, goes under "convergence"
        (read with `run_convergence`)."""
        entries: dict[str, Mapping[str, Any]] = {}
        if convergence is not None:
            entries["convergence"] = convergence.model_dump(mode="json")
        if compute:
            entries["compute"] = compute
        if statistics:
            entries["statistics"] = statistics
        score_rows: list[tuple[int, str, str, str, str, float | None, int, bool]] = []
        prediction_rows: list[tuple[int, str, int, bytes]] = []
        for split, (scores, ids, predictions) in results.items():
            for score in scores.scores:
                value = None if math.isnan(score.value) else float(score.value)
                score_rows.append(
                    (claim.run_id, split, score.metric, score.breakdown, score.level, value, score.n, score.proportion)
                )
            if len(predictions) != len(ids):
                raise ValueError(f"split {split}: {len(predictions)} predictions for {len(ids)} examples")
            correct = scores.correct or [None] * len(ids)
            block = pack_predictions(ids, predictions, correct)
            prediction_rows.append((claim.run_id, split, len(ids), block))
        with self._transaction() as db:
            cursor = db.execute(
                "UPDATE runs SET status='done', error=NULL, finished_at=?, fit_seconds=?, predict_seconds=? "
                "WHERE id=? AND owner=? AND status='running'",
                (time.time(), fit_seconds, predict_seconds, claim.run_id, self.owner),
            )
            self._check_held(db, claim, cursor)
            if environment is not None:
                db.execute("UPDATE runs SET environment=? WHERE id=?", (environment, claim.run_id))
            if entries:
                (stored,) = db.execute("SELECT environment FROM runs WHERE id=?", (claim.run_id,)).fetchone()
                db.execute("UPDATE runs SET environment=? WHERE id=?", (with_entries(stored, entries), claim.run_id))
            db.executemany("INSERT INTO scores VALUES (?, ?, ?, ?, ?, ?, ?, ?)", score_rows)
            db.executemany("INSERT INTO predictions VALUES (?, ?, ?, ?)", prediction_rows)
        HELD.discard((self.owner, claim.run_id))

    def end_run(self, claim: RunClaim, status: Literal["failed", "n/a"], error: str) -> None:
        """Mark the claimed run `failed` or `n/a` with its reason."""
        with self._transaction() as db:
            cursor = db.execute(
                "UPDATE runs SET status=?, error=?, finished_at=? WHERE id=? AND owner=? AND status='running'",
                (status, error, time.time(), claim.run_id, self.owner),
            )
            self._check_held(db, claim, cursor)
        HELD.discard((self.owner, claim.run_id))

    def discard(self, claim: RunClaim) -> None:
        """Give back a claim that never got to evaluate the model (a configuration error).

        A row this claim inserted is deleted; a row it took over is restored to what the earlier
        attempt left (its status, error, owner and times), so that attempt's history survives."""
        with self._transaction() as db:
            if claim.previous is None:
                cursor = db.execute("DELETE FROM runs WHERE id=? AND owner=?", (claim.run_id, self.owner))
            else:
                cursor = db.execute(
                    f"UPDATE runs SET {', '.join(f'{name}=?' for name in ROW_COLUMNS)} WHERE id=? AND owner=?",
                    [*claim.previous, claim.run_id, self.owner],
                )
            self._check_held(db, claim, cursor)
        HELD.discard((self.owner, claim.run_id))

    def release(self, claim: RunClaim) -> None:
        """Let go of a claim that was neither finished, ended nor discarded (an interrupt).

        The row stays `running` (resumable: the next ask redoes it) with no owner, so that no
        process waits for it. Never raises: it runs while an interrupt propagates."""
        if (self.owner, claim.run_id) not in HELD:
            return
        HELD.discard((self.owner, claim.run_id))
        try:
            with self._transaction() as db:
                db.execute(
                    "UPDATE runs SET owner=NULL WHERE id=? AND owner=? AND status='running'",
                    (claim.run_id, self.owner),
                )
        except (sqlite3.Error, UserError):  # the store's failure, as one sentence (`store_failure`)
            pass  # still running under this pid: stale to this process, awaited by others until it exits

    # moving whole runs between stores (the reference bundle)

    def stored_run(self, run_id: int) -> StoredRun:
        """Everything one run holds, as stored: its row, score rows and predictions blocks."""
        row = self.run_record(run_id)
        scores = self._db.execute(
            "SELECT split, metric, breakdown, level, value, n, proportion FROM scores WHERE run_id=? "
            "ORDER BY split, metric, breakdown, level",
            (run_id,),
        ).fetchall()
        blocks = self._db.execute(
            "SELECT split, n_examples, block FROM predictions WHERE run_id=? ORDER BY rowid", (run_id,)
        ).fetchall()
        return StoredRun(
            {name: row[name] for name in ROW_COLUMNS},
            [tuple(score) for score in scores],
            [(str(split), int(n), bytes(block)) for split, n, block in blocks],
        )

    def copy_to(self, target: Path) -> None:
        """Write a consistent copy of this store to `target` (SQLite's online backup: safe while other
        processes write; their transactions after it began are not in the copy)."""
        destination = sqlite3.connect(target)
        try:
            self._db.backup(destination)
        finally:
            destination.close()

    def add_runs(self, runs: Sequence[StoredRun]) -> int:
        """Insert finished runs made elsewhere (a reference bundle's), in one transaction, each with a
        new id and no owner; a run whose key the store holds already is left as the store has it.
        Returns how many were added."""
        added = 0
        with self._transaction() as db:
            for run in runs:
                row = {**run.row, "owner": None}
                key = [row["suite"], row["version"], row["suite_hash"], row["model_hash"], row["seed"]]
                if db.execute(f"SELECT 1 FROM runs WHERE {RUN_KEY}", key).fetchone() is not None:
                    continue
                cursor = db.execute(
                    f"INSERT INTO runs ({', '.join(ROW_COLUMNS)}) VALUES ({', '.join('?' * len(ROW_COLUMNS))})",
                    [row[name] for name in ROW_COLUMNS],
                )
                run_id = int(cursor.lastrowid or 0)
                db.executemany(
                    "INSERT INTO scores VALUES (?, ?, ?, ?, ?, ?, ?, ?)", [(run_id, *score) for score in run.scores]
                )
                db.executemany(
                    "INSERT INTO predictions VALUES (?, ?, ?, ?)",
                    [(run_id, split, n, block) for split, n, block in run.predictions],
                )
                added += 1
        return added

    # reading

    def run_status(self, run_id: int) -> tuple[str, str | None]:
        """(status, error) of one run."""
        status, error = self._db.execute("SELECT status, error FROM runs WHERE id=?", (run_id,)).fetchone()
        return str(status), error

    def run_record(self, run_id: int) -> dict[str, Any]:
        """Every column of one run, by name."""
        cursor = self._db.execute("SELECT * FROM runs WHERE id=?", (run_id,))
        row = cursor.fetchone()
        if row is None:
            raise KeyError(f"no run {run_id} in {self.path}")
        return {column[0]: value for column, value in zip(cursor.description, row, strict=True)}

    def runs(self) -> pd.DataFrame:
        """Every run, one row each, every column (whatever its status)."""
        import pandas as pd

        self._check_runs()
        return pd.read_sql_query("SELECT * FROM runs ORDER BY id", self._db)

    def run_timings(self) -> list[tuple[str, str, int, str, float | None]]:
        """(suite id, model label, seed, status, wall seconds from claim to finish or None) of every run
        that ended: what a command's estimate of its time left is made from (`structbench.progress.Timings`)."""
        rows = self._db.execute(
            "SELECT suite, model, seed, status, finished_at - started_at FROM runs WHERE status != 'running'"
        )
        return [
            (str(suite), str(model), int(seed), str(status), seconds) for suite, model, seed, status, seconds in rows
        ]

    def _check_runs(self, where: str = "", params: Sequence[Any] = ()) -> None:
        """Refuse a store whose runs table holds a value of the wrong kind (a seed that is not an
        integer, a time that is not a number, a model spec that is not a JSON object), in one
        sentence naming the run: SQLite keeps whatever a damaged or hand-edited file holds, and each
        reader of the table would otherwise fail on it in its own way. `where` (" AND column = ?"
        clauses, with their `params`) checks only the runs about to be read."""
        numbers = "('integer', 'real')"
        row = self._db.execute(
            "SELECT id, problem FROM (SELECT id, CASE "
            "WHEN typeof(seed) != 'integer' THEN 'seed' WHEN typeof(draw) != 'integer' THEN 'draw' "
            f"WHEN typeof(started_at) NOT IN {numbers} THEN 'started_at' "
            f"WHEN typeof(finished_at) NOT IN ('null', 'integer', 'real') THEN 'finished_at' "
            f"WHEN typeof(fit_seconds) NOT IN ('null', 'integer', 'real') THEN 'fit_seconds' "
            f"WHEN typeof(predict_seconds) NOT IN ('null', 'integer', 'real') THEN 'predict_seconds' "
            f"WHEN typeof(model_spec) != 'text' THEN 'model_spec' END AS problem FROM runs WHERE 1{where}) "
            "WHERE problem IS NOT NULL LIMIT 1",
            list(params),
        ).fetchone()
        if row is None:
            specs = self._db.execute(f"SELECT MIN(id), model_spec FROM runs WHERE 1{where} GROUP BY model_spec", params)
            for run_id, spec in specs:
                try:
                    record = json.loads(spec)
                except (TypeError, ValueError, RecursionError):
                    record = None
                if not isinstance(record, dict):
                    row = (run_id, "model_spec")
                    break
        if row is not None:
            run_id, column = row
            raise UserError(
                f"the results store {self.path} is damaged: run {run_id}'s {column} is not what a run stores; "
                f'delete that run (`sqlite3 {self.path} "DELETE FROM runs WHERE id={run_id}"`) and run it again, '
                "or pass another --store."
            )

    def finished_seeds(self, suite: str, version: str, suite_hash: str, model_hash: str, label: str) -> list[int]:
        """The seeds of the finished (`done`) runs of one model configuration, shown under `label`, on one
        suite's data, in order: the seeds its cells are computed over."""
        rows = self._db.execute(
            "SELECT seed FROM runs WHERE suite=? AND version=? AND suite_hash=? AND model_hash=? AND model=? "
            "AND status='done' ORDER BY seed",
            (suite, version, suite_hash, model_hash, label),
        )
        return [int(row[0]) for row in rows]

    def scores(
        self,
        *,
        suite: str | None = None,
        version: str | None = None,
        suite_hash: str | None = None,
        model_hash: str | None = None,
    ) -> pd.DataFrame:
        """Every score of a finished (`done`) run, with its run's identifying columns.

        Columns: suite, version, suite_hash, model, model_hash, config_hash, comparable (bool),
        seed, draw, split, metric, breakdown, level, value (NaN where undefined), n, proportion
        (bool); in run
        order, then as stored. The keyword filters are applied in SQL, so that one cell's rows
        are read without the rest of the store."""
        import pandas as pd

        filters = {"suite": suite, "version": version, "suite_hash": suite_hash, "model_hash": model_hash}
        where = "".join(f" AND {column} = ?" for column, value in filters.items() if value is not None)
        params = [value for value in filters.values() if value is not None]
        self._check_runs(where, params)
        self._check_scores(where, params)
        runs = pd.read_sql_query(
            "SELECT id, suite, version, suite_hash, model, model_hash, config_hash, comparable, seed, draw "
            f"FROM runs WHERE status = 'done'{where} ORDER BY id",
            self._db,
            params=params,
        )
        # the scores alone, then joined here: reading each run's columns once per score row costs
        # more than the join (a 10,000-run store has hundreds of thousands of score rows)
        in_runs = "" if not params else f" WHERE run_id IN (SELECT id FROM runs WHERE status = 'done'{where})"
        scores = pd.read_sql_query(
            f"SELECT run_id AS id, split, metric, breakdown, level, value, n, proportion FROM scores{in_runs}",
            self._db,
            params=params,
        )
        frame = runs.merge(scores, on="id", how="inner", sort=False).drop(columns="id")
        frame["comparable"] = frame["comparable"].astype(bool)
        frame["proportion"] = frame["proportion"].astype(bool)
        frame["value"] = frame["value"].astype(float)
        return frame

    def _check_scores(self, where: str = "", params: Sequence[Any] = ()) -> None:
        """Refuse a store holding a score that is not a number, or an item count that is not an
        integer, in one sentence naming the row: SQLite keeps whatever a damaged or hand-edited file
        holds, and one such row would otherwise end a report in a traceback. `where` (" AND column = ?"
        clauses on runs, with their `params`) checks only the runs about to be read."""
        runs = f" AND run_id IN (SELECT id FROM runs WHERE 1{where})" if where else ""
        row = self._db.execute(
            "SELECT run_id, split, metric, value, n FROM scores WHERE ((value IS NOT NULL AND typeof(value) NOT IN "
            f"('real', 'integer')) OR typeof(n) != 'integer'){runs} LIMIT 1",
            list(params),
        ).fetchone()
        if row is not None:
            run_id, split, metric, value, n = row
            what = f"the value {value!r}" if not isinstance(value, int | float) else f"the item count {n!r}"
            raise UserError(
                f"the results store {self.path} is damaged: run {run_id}'s {metric} on {split} has {what[:80]}, "
                "not a number; run that seed again with `structbench run ... --force`, or pass another --store."
            )

    def run_scores(self) -> pd.DataFrame:
        """One row per (run, split, metric) of the whole test splits, in run order (the Python API's
        `load_results`): suite, version, suite_hash, model, seed, status, split, metric, value, n.
        A run without scores (failed, n/a, interrupted) is one row with its status and NaN/None
        scores, so that no run goes missing from an analysis."""
        import pandas as pd

        self._check_scores()
        frame = pd.read_sql_query(
            "SELECT r.suite, r.version, r.suite_hash, r.model, r.seed, r.status, s.split, s.metric, s.value, s.n "
            "FROM runs r LEFT JOIN scores s ON s.run_id = r.id AND s.breakdown = '' ORDER BY r.id",
            self._db,
        )
        frame["value"] = frame["value"].astype(float)
        frame["n"] = frame["n"].astype("Int64")
        return frame

    def stored_predictions(self, run_id: int) -> dict[str, tuple[list[str], list[Any], list[bool | None]]]:
        """split -> (example ids, predictions, per-example correct) of one run, in split order."""
        rows = self._db.execute("SELECT split, block FROM predictions WHERE run_id=? ORDER BY rowid", (run_id,))
        out = {}
        for split, block in rows:
            try:
                out[str(split)] = unpack_predictions(block)
            except DamagedBlock as error:
                raise UserError(
                    f"the stored predictions of run {run_id} ({split}) in {self.path} are damaged ({error}); run "
                    "that seed again with `structbench run ... --force`, or pass another --store."
                ) from None
        return out

    def predictions(self, run_id: int) -> pd.DataFrame:
        """One row per example of one run: split, example_id, prediction (JSON text), correct (1/0/NaN)."""
        import pandas as pd

        columns: dict[str, list[Any]] = {"split": [], "example_id": [], "prediction": [], "correct": []}
        for split, (ids, predictions, correct) in self.stored_predictions(run_id).items():
            columns["split"] += [split] * len(ids)
            columns["example_id"] += ids
            columns["prediction"] += [JSON.encode(p) for p in predictions]
            columns["correct"] += [None if ok is None else int(ok) for ok in correct]
        return pd.DataFrame(columns)

    def prediction_blocks(self, run_ids: Sequence[int]) -> dict[int, dict[str, bytes]]:
        """run id -> split -> its compressed predictions block as stored (`pack_predictions`), in split
        order: for readers that pass blocks on without decoding them (the report's error browser)."""
        out: dict[int, dict[str, bytes]] = {}
        ids = sorted(set(map(int, run_ids)))
        for start in range(0, len(ids), 900):  # SQLite caps the number of bound parameters per statement
            chunk = ids[start : start + 900]
            rows = self._db.execute(
                f"SELECT run_id, split, block FROM predictions WHERE run_id IN ({','.join('?' * len(chunk))}) "
                "ORDER BY run_id, rowid",
                chunk,
            )
            for run_id, split, block in rows:
                out.setdefault(int(run_id), {})[str(split)] = bytes(block)
        return out
