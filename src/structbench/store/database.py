"""Writing the results database: a `Store` is a `StoreReader` (one connection to one SQLite file of
runs, scores and predictions) that also claims, finishes and records runs.

Its tables are `structbench.store.schema`'s; values are encoded as `structbench.store.codec`
says; opening and transactions are `structbench.store.connection`'s (a v1 store is migrated on
open by `structbench.store.migration`); who holds a run is `structbench.store.ownership`'s.

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
  after re-reading the version, so two processes never migrate twice (`connection`).

An interrupted run (Ctrl-C, SIGTERM) is `release`d: it stays `running` with no owner, readers show
it as `interrupted` (so does a `running` row whose owner died without releasing it, SIGKILL:
`ownership.shown_status`), and the next ask, from any process, redoes it. The owner records its
process's start time, so that a dead owner's pid reused by an unrelated process is not mistaken for
it. Limit of the liveness check: a run held by a process on another host that died stays `busy`
until its row is marked `failed` by hand.
"""

from __future__ import annotations

import math
import secrets
import sqlite3
import time
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any, Literal

from structbench.convergence import Convergence
from structbench.errors import UserError
from structbench.specs import SuiteSpec
from structbench.store import published
from structbench.store.codec import SplitResult, pack_predictions, with_entries
from structbench.store.connection import transaction
from structbench.store.ownership import HELD, ClaimLost, RunClaim, owner_alive, owner_of
from structbench.store.reader import StoredRun, StoreReader
from structbench.store.schema import ROW_COLUMNS, RUN_FIELDS, RUN_KEY

__all__ = ["Store", "StoredRun"]


class Store(StoreReader):
    """A results database opened for running models into it: every read of `StoreReader`, and the
    writes, each one transaction; see the module docstring for their rules, `schema` for the tables."""

    def __init__(self, path: Path) -> None:
        super().__init__(path)
        self.owner = owner_of(secrets.token_hex(4))
        """How this Store signs the runs it claims."""

    @contextmanager
    def _transaction(self) -> Iterator[sqlite3.Connection]:
        with transaction(self._db, self.path) as db:
            yield db

    # suites

    def record_suite(self, spec: SuiteSpec, suite_hash: str) -> None:
        """Keep the spec of a suite whose runs are stored (split order, primary metric, citation)."""
        with self._transaction() as db:
            db.execute(
                "INSERT OR IGNORE INTO suites VALUES (?, ?, ?, ?)",
                (spec.id, spec.version, suite_hash, spec.model_dump_json()),
            )

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

    # published runs (structbench.store.published): tables of their own, never the runs table

    def add_published(self, runs: Sequence[published.PublishedRun]) -> None:
        """Store imported published runs in one transaction, each replacing a stored one of the same key."""
        with self._transaction() as db:
            published.write(db, runs)
