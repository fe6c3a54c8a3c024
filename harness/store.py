"""The results database: runs, scores and per-example predictions in SQLite.

WAL mode, and one transaction per finished run: a run is either wholly stored or marked
`running` (interrupted, redone next time). A run is identified by suite id, version and
data hash, model spec hash and seed; asking for a finished one again reads it back.
"""

from __future__ import annotations

import json
import sqlite3
import time
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Any

from structbench.errors import UserError
from structbench.scoring import SplitScores
from structbench.specs import SuiteSpec

if TYPE_CHECKING:
    import pandas as pd

SCHEMA = """
CREATE TABLE IF NOT EXISTS runs (
    id INTEGER PRIMARY KEY,
    suite TEXT NOT NULL,            -- suite id
    version TEXT NOT NULL,          -- suite version
    suite_hash TEXT NOT NULL,       -- SHA-256 over the frozen splits
    model TEXT NOT NULL,            -- model label (name plus settings)
    model_spec TEXT NOT NULL,       -- model spec as JSON
    model_hash TEXT NOT NULL,       -- SHA-256 of the canonical model spec JSON
    seed INTEGER NOT NULL,
    draw INTEGER NOT NULL,          -- data draw evaluated (seed mod n_draws)
    status TEXT NOT NULL CHECK (status IN ('running', 'done', 'failed', 'n/a')),
    error TEXT,                     -- failure message or n/a reason
    started_at REAL NOT NULL,       -- unix time
    finished_at REAL,
    fit_seconds REAL,
    predict_seconds REAL,
    harness_version TEXT NOT NULL,
    git_commit TEXT,
    environment TEXT NOT NULL,      -- JSON: python, platform, package versions
    UNIQUE (suite, version, suite_hash, model_hash, seed)
);
CREATE TABLE IF NOT EXISTS suites (
    suite TEXT NOT NULL,
    version TEXT NOT NULL,
    suite_hash TEXT NOT NULL,
    spec TEXT NOT NULL,             -- SuiteSpec as JSON, so that reports need only the store
    PRIMARY KEY (suite, version, suite_hash)
);
CREATE TABLE IF NOT EXISTS scores (
    run_id INTEGER NOT NULL REFERENCES runs(id) ON DELETE CASCADE,
    split TEXT NOT NULL,
    metric TEXT NOT NULL,
    value REAL,                     -- NULL when undefined (e.g. no items)
    n INTEGER NOT NULL,             -- number of items the value is computed over
    PRIMARY KEY (run_id, split, metric)
);
CREATE TABLE IF NOT EXISTS predictions (
    run_id INTEGER NOT NULL REFERENCES runs(id) ON DELETE CASCADE,
    split TEXT NOT NULL,
    example_id TEXT NOT NULL,
    prediction TEXT NOT NULL,       -- JSON as returned by the protocol
    correct INTEGER,                -- 1/0, NULL where undefined per example
    PRIMARY KEY (run_id, split, example_id)
);
"""

_JSON = json.JSONEncoder(separators=(",", ":"))

RUN_COLUMNS = (
    "suite", "version", "suite_hash", "model", "model_spec", "model_hash", "seed", "draw",
    "harness_version", "git_commit", "environment",
)  # fmt: skip


class Store:
    """A connection to one results database file."""

    def __init__(self, path: Path) -> None:
        self.path = Path(path)
        self.path.parent.mkdir(parents=True, exist_ok=True)
        try:
            self._db = sqlite3.connect(self.path, timeout=30, isolation_level=None)
            self._db.execute("PRAGMA journal_mode=WAL")
            self._db.execute("PRAGMA synchronous=NORMAL")
            self._db.execute("PRAGMA foreign_keys=ON")
            self._db.executescript(SCHEMA)
        except sqlite3.DatabaseError as error:
            raise UserError(
                f"{self.path} is not a structbench results database ({error}); pass another --store."
            ) from None

    def close(self) -> None:
        self._db.close()

    def __enter__(self) -> Store:
        return self

    def __exit__(self, *_: object) -> None:
        self.close()

    @contextmanager
    def _transaction(self) -> Iterator[sqlite3.Connection]:
        self._db.execute("BEGIN IMMEDIATE")
        try:
            yield self._db
        except BaseException:
            self._db.execute("ROLLBACK")
            raise
        self._db.execute("COMMIT")

    def record_suite(self, spec: SuiteSpec, suite_hash: str) -> None:
        """Keep the spec of a suite whose runs are stored (split order, primary metric, citation)."""
        with self._transaction() as db:
            db.execute(
                "INSERT OR IGNORE INTO suites VALUES (?, ?, ?, ?)",
                (spec.id, spec.version, suite_hash, spec.model_dump_json()),
            )

    def suite_specs(self) -> dict[tuple[str, str, str], SuiteSpec]:
        """(suite, version, suite_hash) -> spec of every suite with stored runs."""
        rows = self._db.execute("SELECT suite, version, suite_hash, spec FROM suites").fetchall()
        return {(s, v, h): SuiteSpec.model_validate_json(spec) for s, v, h, spec in rows}

    def find_run(self, suite: str, version: str, suite_hash: str, model_hash: str, seed: int) -> tuple[int, str] | None:
        """(run id, status) of a stored run, or None."""
        row = self._db.execute(
            "SELECT id, status FROM runs WHERE suite=? AND version=? AND suite_hash=? AND model_hash=? AND seed=?",
            (suite, version, suite_hash, model_hash, seed),
        ).fetchone()
        return (int(row[0]), str(row[1])) if row else None

    def start_run(self, fields: dict[str, Any]) -> int:
        """Record a run as `running`, replacing an earlier interrupted or failed attempt."""
        values = [fields[c] for c in RUN_COLUMNS]
        with self._transaction() as db:
            db.execute(
                "DELETE FROM runs WHERE suite=? AND version=? AND suite_hash=? AND model_hash=? AND seed=?",
                (fields["suite"], fields["version"], fields["suite_hash"], fields["model_hash"], fields["seed"]),
            )
            cursor = db.execute(
                f"INSERT INTO runs ({', '.join(RUN_COLUMNS)}, status, started_at) "
                f"VALUES ({', '.join('?' * len(RUN_COLUMNS))}, 'running', ?)",
                [*values, time.time()],
            )
            return int(cursor.lastrowid or 0)

    def finish_run(
        self,
        run_id: int,
        results: dict[str, tuple[SplitScores, Sequence[str], Sequence[Any]]],
        fit_seconds: float,
        predict_seconds: float,
    ) -> None:
        """Store every split's scores and predictions and mark the run done, in one transaction.

        `results` maps split name -> (scores, example ids, predictions).
        """
        score_rows: list[tuple[int, str, str, float | None, int]] = []
        prediction_rows: list[tuple[int, str, str, str, int | None]] = []
        for split, (scores, ids, predictions) in results.items():
            for metric, (value, n) in scores.metrics.items():
                score_rows.append((run_id, split, metric, None if value != value else value, n))
            correct = scores.correct or [None] * len(ids)
            prediction_rows.extend(
                (run_id, split, example_id, _JSON.encode(p), None if ok is None else int(ok))
                for example_id, p, ok in zip(ids, predictions, correct, strict=True)
            )
        with self._transaction() as db:
            db.executemany("INSERT INTO scores VALUES (?, ?, ?, ?, ?)", score_rows)
            db.executemany("INSERT INTO predictions VALUES (?, ?, ?, ?, ?)", prediction_rows)
            db.execute(
                "UPDATE runs SET status='done', finished_at=?, fit_seconds=?, predict_seconds=? WHERE id=?",
                (time.time(), fit_seconds, predict_seconds, run_id),
            )

    def end_run(self, run_id: int, status: str, error: str) -> None:
        """Mark a run `failed` or `n/a` with its reason."""
        with self._transaction() as db:
            db.execute(
                "UPDATE runs SET status=?, error=?, finished_at=? WHERE id=?", (status, error, time.time(), run_id)
            )

    def discard_run(self, run_id: int) -> None:
        """Forget a run that never got to evaluate the model."""
        with self._transaction() as db:
            db.execute("DELETE FROM runs WHERE id=?", (run_id,))

    def run_status(self, run_id: int) -> tuple[str, str | None]:
        status, error = self._db.execute("SELECT status, error FROM runs WHERE id=?", (run_id,)).fetchone()
        return str(status), error

    def run_scores(self, run_id: int) -> dict[str, dict[str, float | None]]:
        """split -> metric -> value of one run."""
        out: dict[str, dict[str, float | None]] = {}
        for split, metric, value in self._db.execute(
            "SELECT split, metric, value FROM scores WHERE run_id=? ORDER BY rowid", (run_id,)
        ):
            out.setdefault(split, {})[metric] = value
        return out

    def runs(self) -> pd.DataFrame:
        """Every run, one row each."""
        import pandas as pd

        return pd.read_sql_query("SELECT * FROM runs ORDER BY id", self._db)

    def scores(self) -> pd.DataFrame:
        """Every score of a finished run, joined with its run's identifying columns."""
        import pandas as pd

        return pd.read_sql_query(
            "SELECT r.suite, r.version, r.suite_hash, r.model, r.model_hash, r.seed, r.draw, "
            "s.split, s.metric, s.value, s.n FROM scores s JOIN runs r ON r.id = s.run_id "
            "WHERE r.status = 'done' ORDER BY r.suite, r.model, s.split, s.metric, r.seed",
            self._db,
        )

    def predictions(self, run_id: int) -> pd.DataFrame:
        import pandas as pd

        return pd.read_sql_query(
            "SELECT split, example_id, prediction, correct FROM predictions WHERE run_id=? ORDER BY rowid",
            self._db,
            params=(run_id,),
        )

    def export(self, out_dir: Path) -> dict[str, Path]:
        """Write runs and scores as CSV and JSON; return the paths written."""
        out_dir.mkdir(parents=True, exist_ok=True)
        written = {}
        for name, frame in (("runs", self.runs()), ("scores", self.scores())):
            csv_path, json_path = out_dir / f"{name}.csv", out_dir / f"{name}.json"
            frame.to_csv(csv_path, index=False)
            frame.to_json(json_path, orient="records", indent=1)
            written[f"{name}.csv"], written[f"{name}.json"] = csv_path, json_path
        return written
