"""The v1 store layout (structbench 0.1, no schema version) and its migration to schema v2.

v1 kept one `predictions` row per example (JSON text), encoded breakdown conditions in metric
names (`accuracy[n_attractors=2]`) and `comparable` and the configuration only inside the
`model_spec` JSON. `migrate_v1` rewrites such a store in place into the v2 layout of
`structbench.store`, within the caller's `BEGIN IMMEDIATE` transaction, after saving a copy
of the file beside it (`PATH.v1-backup`), so that nothing is ever lost. The v1 schema and
`write_v1_run` stay here so that tests and benchmarks can write a genuine v1 store.
"""

from __future__ import annotations

import json
import math
import re
import sqlite3
import time
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from structbench.errors import UserError
from structbench.specs import SuiteSpec
from structbench.store.codec import SplitResult, config_hash, pack_predictions
from structbench.store.schema import SCHEMA

V1_SCHEMA = """
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

V1_RUN_COLUMNS = (
    "suite", "version", "suite_hash", "model", "model_spec", "model_hash", "seed", "draw",
    "harness_version", "git_commit", "environment",
)  # fmt: skip
"""The columns v1's `start_run` wrote."""

_V1_JSON = json.JSONEncoder(separators=(",", ":"))
_BREAKDOWN = re.compile(r"^(?P<metric>[^\[]+)\[(?P<breakdown>[^=\]]+)=(?P<level>.*)\]$")


def create_v1_store(path: Path) -> sqlite3.Connection:
    """Open (creating) a store in the v1 layout, as structbench 0.1 did: WAL, no user_version."""
    db = sqlite3.connect(path, timeout=30, isolation_level=None)
    db.execute("PRAGMA journal_mode=WAL")
    db.execute("PRAGMA synchronous=NORMAL")
    db.execute("PRAGMA foreign_keys=ON")
    db.executescript(V1_SCHEMA)
    return db


def write_v1_run(
    db: sqlite3.Connection,
    fields: Mapping[str, Any],
    results: Mapping[str, SplitResult],
    fit_seconds: float = 0.0,
    predict_seconds: float = 0.0,
) -> int:
    """Store one finished run the way v1's `start_run` and `finish_run` did; return its id.

    `fields` holds at least `V1_RUN_COLUMNS`; `results` is what the runner hands `finish_run`."""
    cursor = db.execute(
        f"INSERT INTO runs ({', '.join(V1_RUN_COLUMNS)}, status, started_at) "
        f"VALUES ({', '.join('?' * len(V1_RUN_COLUMNS))}, 'running', ?)",
        [*(fields[c] for c in V1_RUN_COLUMNS), time.time()],
    )
    run_id = int(cursor.lastrowid or 0)
    score_rows: list[tuple[int, str, str, float | None, int]] = []
    prediction_rows: list[tuple[int, str, str, str, int | None]] = []
    for split, (scores, ids, predictions) in results.items():
        for name, (value, n) in scores.metrics.items():
            score_rows.append((run_id, split, name, None if value != value else value, n))
        correct = scores.correct or [None] * len(ids)
        prediction_rows.extend(
            (run_id, split, example_id, _V1_JSON.encode(p), None if ok is None else int(ok))
            for example_id, p, ok in zip(ids, predictions, correct, strict=True)
        )
    db.execute("BEGIN IMMEDIATE")
    db.executemany("INSERT INTO scores VALUES (?, ?, ?, ?, ?)", score_rows)
    db.executemany("INSERT INTO predictions VALUES (?, ?, ?, ?, ?)", prediction_rows)
    db.execute(
        "UPDATE runs SET status='done', finished_at=?, fit_seconds=?, predict_seconds=? WHERE id=?",
        (time.time(), fit_seconds, predict_seconds, run_id),
    )
    db.execute("COMMIT")
    return run_id


def parse_metric_name(name: str) -> tuple[str, str, str]:
    """(metric, breakdown, level) of a v1 metric name: `accuracy[n_attractors=2]` or `accuracy`."""
    match = _BREAKDOWN.match(name)
    if match is None:
        return name, "", ""
    return match["metric"], match["breakdown"], match["level"]


def backup_path(path: Path) -> Path:
    """`PATH.v1-backup`, or `PATH.v1-backup.2`, ... when an earlier backup is there (never overwritten)."""
    candidate = path.with_name(f"{path.name}.v1-backup")
    number = 1
    while candidate.exists():
        number += 1
        candidate = path.with_name(f"{path.name}.v1-backup.{number}")
    return candidate


def _copy(path: Path) -> Path:
    """Copy the committed store (WAL included) to a fresh backup file with SQLite's backup API.

    Read through a second connection: the caller's transaction holds the write lock but has
    written nothing yet, so the copy is exactly the data about to be migrated."""
    target = backup_path(path)
    source = sqlite3.connect(path, timeout=60)
    try:
        copy = sqlite3.connect(target)
        try:
            source.backup(copy)
            copy.execute("PRAGMA journal_mode=DELETE")  # one self-contained file, whatever the store used
        finally:
            copy.close()
    finally:
        source.close()
    return target


def _columns(db: sqlite3.Connection, table: str) -> set[str]:
    return {row[1] for row in db.execute(f"PRAGMA table_info({table})")}


def _model_facts(model_spec: str) -> tuple[int, str | None]:
    """(comparable 0/1, config_hash) from a v1 `model_spec` JSON."""
    try:
        record = json.loads(model_spec)
    except json.JSONDecodeError:
        return 1, None
    if not isinstance(record, dict):
        return 1, None
    configuration = record.get("configuration")
    return int(record.get("comparable", True) is not False), config_hash(
        configuration if isinstance(configuration, dict) else None
    )


def migrate_v1(db: sqlite3.Connection, path: Path) -> Path:
    """Rewrite the v1 store open in `db` (inside its BEGIN IMMEDIATE, foreign keys off) as v2.

    Saves the backup first and returns its path. Runs keep their ids; breakdown names become
    `breakdown` and `level` columns; `comparable` and `config_hash` come from `model_spec`;
    per-example predictions become one block per run and split, in their original order; a
    run left `running` keeps that status with no owner, so that the next ask redoes it. The
    caller sets the schema version and commits (or rolls everything back on an error)."""
    expected = {"runs": set(V1_RUN_COLUMNS), "scores": {"run_id", "split", "metric", "value", "n"}}
    expected["predictions"] = {"run_id", "split", "example_id", "prediction", "correct"}
    for table, columns in expected.items():
        if not columns <= _columns(db, table):
            raise UserError(
                f"{path} has a {table} table without the columns of a structbench results database; pass another --store."
            )
    backup = _copy(path)
    db.execute("PRAGMA legacy_alter_table=ON")  # rename without rewriting the other tables' references
    for table in ("runs", "scores", "predictions"):
        db.execute(f"ALTER TABLE {table} RENAME TO v1_{table}")
    db.execute("PRAGMA legacy_alter_table=OFF")
    for statement in SCHEMA:
        db.execute(statement)

    moved = (
        "id", "suite", "version", "suite_hash", "model", "model_spec", "model_hash", "seed", "draw", "status",
        "error", "started_at", "finished_at", "fit_seconds", "predict_seconds", "harness_version", "git_commit",
        "environment",
    )  # fmt: skip
    runs = []
    for row in db.execute(f"SELECT {', '.join(moved)} FROM v1_runs ORDER BY id"):
        comparable, hashed = _model_facts(row[moved.index("model_spec")])
        runs.append((*row, comparable, hashed))
    db.executemany(
        f"INSERT INTO runs ({', '.join(moved)}, comparable, config_hash) VALUES ({', '.join('?' * (len(moved) + 2))})",
        runs,
    )

    scores = (
        (run_id, split, *parse_metric_name(metric), value, n)
        for run_id, split, metric, value, n in db.execute(
            "SELECT run_id, split, metric, value, n FROM v1_scores ORDER BY run_id, rowid"
        ).fetchall()
    )
    db.executemany(
        "INSERT INTO scores (run_id, split, metric, breakdown, level, value, n, proportion) "
        "VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
        ((*row, v1_proportion(row[2])) for row in scores),
    )

    def flush(run_id: int, splits: dict[str, tuple[list[str], list[Any], list[bool | None]]]) -> None:
        db.executemany(
            "INSERT INTO predictions (run_id, split, n_examples, block) VALUES (?, ?, ?, ?)",
            [(run_id, split, len(ids), pack_predictions(ids, p, ok)) for split, (ids, p, ok) in splits.items()],
        )

    current: int | None = None
    splits: dict[str, tuple[list[str], list[Any], list[bool | None]]] = {}
    reader = db.cursor()  # a second cursor: inserting through `db` must not reset this one
    for run_id, split, example_id, prediction, correct in reader.execute(
        "SELECT run_id, split, example_id, prediction, correct FROM v1_predictions ORDER BY run_id, rowid"
    ):
        if run_id != current:
            if current is not None:
                flush(current, splits)
            current, splits = run_id, {}
        ids, predictions, verdicts = splits.setdefault(split, ([], [], []))
        ids.append(example_id)
        predictions.append(json.loads(prediction))
        verdicts.append(None if correct is None else bool(correct))
    if current is not None:
        flush(current, splits)

    for suite, version, suite_hash, spec in db.execute(
        "SELECT suite, version, suite_hash, spec FROM suites"
    ).fetchall():
        db.execute(
            "UPDATE suites SET spec=? WHERE suite=? AND version=? AND suite_hash=?",
            (upgrade_spec(spec), suite, version, suite_hash),
        )
    for table in ("predictions", "scores", "runs"):
        db.execute(f"DROP TABLE v1_{table}")
    return backup


def upgrade_spec(text: str) -> str:
    """A v1 stored SuiteSpec as the v2 record: the installed spec of the same suite version where
    there is one (contract v2 changed no suite's data), else the v1 fields plus what v2 requires:
    the v1 default primary metric, the `default` recipe task, and every test split counted as a
    ranked generalisation split (v1 did not say)."""
    from structbench import registry

    try:
        fields = json.loads(text)
        return registry.suite(f"{fields['id']}@{fields['version']}").spec.model_dump_json()
    except ValueError:
        return text  # not JSON: nothing to upgrade
    except (UserError, KeyError, TypeError):
        pass  # not installed (or not this version): upgrade the stored fields
    try:
        fields.setdefault("primary_metric", "sequence_accuracy")
        fields.setdefault("task", "default")
        for split in fields.get("splits", []):
            if split.get("role") == "test":
                split.setdefault("test_role", "generalisation")
        return SuiteSpec.model_validate(fields).model_dump_json()
    except (AttributeError, TypeError, ValueError):  # not a v1 spec either: keep it as it was
        return text


def v1_proportion(metric: str) -> bool:
    """Whether a v1 score is a fraction of 0/1 items: v1 stored no such flag, but of the metrics
    it wrote exactly those named `accuracy`, `*_accuracy` or `first_word_*` (question formation's
    shares of first words) were (token precision and recall, and the clustering metrics, are not)."""
    return metric == "accuracy" or metric.endswith("_accuracy") or metric.startswith("first_word_")


def _finite(value: float | None) -> bool:
    return value is not None and not math.isnan(value)


def score_values(db: sqlite3.Connection) -> dict[tuple[int, str, str], float | None]:
    """(run id, split, display name) -> value of every stored score, read from either layout.

    Lets a caller (the tests, a migration check) compare a store before and after migrating."""
    if "breakdown" in _columns(db, "scores"):
        query = (
            "SELECT run_id, split, CASE WHEN breakdown = '' THEN metric "
            "ELSE metric || '[' || breakdown || '=' || level || ']' END, value FROM scores"
        )
    else:
        query = "SELECT run_id, split, metric, value FROM scores"
    return {(r, s, m): (v if _finite(v) else None) for r, s, m, v in db.execute(query)}
