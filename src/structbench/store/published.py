"""Published runs: a model's per-item results as its authors released them, kept apart from the runs made here.

A published run is (suite, version, model, seed) with one right/wrong verdict (and optionally a
score) per test item, and where it came from (`source`: paper, file, its SHA-256, URL or commit). It
lives in two tables of its own, `published_runs` and `published_items`, created on the first import,
so that nothing that reads the `runs` table (the runner answering a key, cells, boards, `reference
verify`, the bundle) ever sees one: a published run is never answered as a user's run, never re-run
and never verified. Its label is always `published:NAME` (`LABEL_PREFIX`), which no registered model
can take, so it is never shown as a run made here either. Importing the same (suite, version, model,
seed) again replaces its items.
"""

from __future__ import annotations

import json
import sqlite3
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

LABEL_PREFIX = "published:"
"""Every published run's label starts with this."""

TABLES = (
    """
    CREATE TABLE IF NOT EXISTS published_runs (
        id INTEGER PRIMARY KEY AUTOINCREMENT,
        suite TEXT NOT NULL,
        version TEXT NOT NULL,
        suite_hash TEXT NOT NULL,       -- the data whose example ids the items were checked against
        model TEXT NOT NULL,            -- the label, always published:NAME
        seed INTEGER NOT NULL,
        source TEXT NOT NULL,           -- JSON object: paper, file, sha256, url or commit
        imported_at REAL NOT NULL,
        UNIQUE (suite, version, model, seed)
    )
    """,
    """
    CREATE TABLE IF NOT EXISTS published_items (
        run_id INTEGER NOT NULL REFERENCES published_runs(id) ON DELETE CASCADE,
        split TEXT NOT NULL,
        example_id TEXT NOT NULL,
        correct INTEGER NOT NULL CHECK (correct IN (0, 1)),
        score REAL,
        PRIMARY KEY (run_id, split, example_id)
    ) WITHOUT ROWID
    """,
)


@dataclass(frozen=True)
class PublishedRun:
    """One seed of one published model on one suite, with its verdict on each item it reports."""

    suite: str
    version: str
    suite_hash: str
    model: str
    """The label, `published:NAME`."""
    seed: int
    source: Mapping[str, str]
    items: Mapping[str, Mapping[str, tuple[bool, float | None]]] = field(default_factory=dict)
    """split -> example id -> (correct, score or None)."""


def is_published(label: str) -> bool:
    """Whether `label` names a published run rather than one made here."""
    return label.startswith(LABEL_PREFIX)


def write(db: sqlite3.Connection, runs: Sequence[PublishedRun]) -> None:
    """Store `runs` (inside the caller's transaction), each replacing a stored one of the same key."""
    for statement in TABLES:
        db.execute(statement)
    for run in runs:
        if not is_published(run.model):
            raise ValueError(f"a published run's label must start with {LABEL_PREFIX!r}, not {run.model!r}")
        db.execute(
            "DELETE FROM published_runs WHERE suite=? AND version=? AND model=? AND seed=?",
            (run.suite, run.version, run.model, run.seed),
        )
        cursor = db.execute(
            "INSERT INTO published_runs (suite, version, suite_hash, model, seed, source, imported_at) "
            "VALUES (?, ?, ?, ?, ?, ?, ?)",
            (run.suite, run.version, run.suite_hash, run.model, run.seed, json.dumps(dict(run.source)), time.time()),
        )
        run_id = cursor.lastrowid
        db.executemany(
            "INSERT INTO published_items VALUES (?, ?, ?, ?, ?)",
            [
                (run_id, split, example_id, int(correct), score)
                for split, items in run.items.items()
                for example_id, (correct, score) in items.items()
            ],
        )


def _has_tables(db: sqlite3.Connection) -> bool:
    found = {row[0] for row in db.execute("SELECT name FROM sqlite_master WHERE type='table'")}
    return {"published_runs", "published_items"} <= found


def labels(db: sqlite3.Connection, suite: str | None = None) -> list[tuple[str, str, str, int]]:
    """(suite, version, label, number of seeds) of every published model stored (on `suite` only, if given)."""
    if not _has_tables(db):
        return []
    rows = db.execute(
        "SELECT suite, version, model, COUNT(*) FROM published_runs WHERE ? IS NULL OR suite = ? "
        "GROUP BY suite, version, model ORDER BY suite, version, model",
        (suite, suite),
    )
    return [(str(s), str(v), str(m), int(n)) for s, v, m, n in rows]


def read(db: sqlite3.Connection, suite: str, version: str, label: str) -> list[PublishedRun]:
    """Every seed of the published model `label` on `suite@version`, with its items; [] where none is stored."""
    if not _has_tables(db):
        return []
    runs = []
    rows = db.execute(
        "SELECT id, suite_hash, seed, source FROM published_runs WHERE suite=? AND version=? AND model=? ORDER BY seed",
        (suite, version, label),
    ).fetchall()
    for run_id, suite_hash, seed, source in rows:
        items: dict[str, dict[str, tuple[bool, float | None]]] = {}
        for split, example_id, correct, score in db.execute(
            "SELECT split, example_id, correct, score FROM published_items WHERE run_id=?", (run_id,)
        ):
            items.setdefault(str(split), {})[str(example_id)] = (bool(correct), None if score is None else float(score))
        parsed: Any = json.loads(source)
        runs.append(
            PublishedRun(
                suite=suite,
                version=version,
                suite_hash=str(suite_hash),
                model=label,
                seed=int(seed),
                source={str(k): str(v) for k, v in (parsed.items() if isinstance(parsed, dict) else [])},
                items=items,
            )
        )
    return runs
