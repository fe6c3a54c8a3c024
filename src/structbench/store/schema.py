"""The results database's schema, version 2: its tables, their columns and the run key.

`PRAGMA user_version = 2`:

- `runs`: one row per (suite, version, suite_hash, model_hash, seed), the run key. `model_hash`
  covers the model's name, `--set` values and resolved configuration; `config_hash` is the
  SHA-256 of the configuration alone (NULL for a model without one) and `comparable` (0/1) is
  False for a model that sees test-time information, both as columns so that readers never
  parse `model_spec`. `status` is `running`, `done`, `failed` or `n/a`; `owner`
  (`host:pid:start:token`, `host:pid:token` before start times were kept) names the process that
  last claimed the run, NULL once it released it. Readers show a `running` row whose owner is gone
  as `interrupted` (`structbench.store.ownership.shown_status`), a status never stored. Ids come from
  AUTOINCREMENT and are never reused.
- `runs.environment` is a JSON object: python, platform and package versions, and for a done
  run whose model reported it, `compute` (`parameters`, `device`; read with `run_compute`).
- `suites`: the spec of every suite with stored runs, so that reports need only the store.
- `scores`: one row per (run, split, metric, breakdown, level). `breakdown` is an
  `Example.meta` key and `level` its value, both '' for the whole split; `value` is NULL
  where undefined; `proportion` is 1 where the value is the fraction of `n` items scored 0 or
  1 (a binomial interval over the items applies; see `structbench.cells`). The table is clustered on its key (WITHOUT ROWID), which halves its size.
- `predictions`: one row per (run, split): `block` is the zlib-compressed JSON array
  `[[example ids], [predictions], [correct: 1, 0 or null]]`, in split order, and
  `n_examples` its length. Packed, a run takes about a tenth of the bytes of one row per example.

A store written before schema versions existed (user_version 0, the v1 layout) is migrated
in place on first open, after a copy is saved beside it (see `structbench.store.migration`);
a store from a newer structbench is refused.
"""

from __future__ import annotations

import sqlite3
from functools import cache

SCHEMA_VERSION = 2
"""The `PRAGMA user_version` this code writes; 0 is the unversioned v1 layout."""

SCHEMA = (
    """
    CREATE TABLE IF NOT EXISTS runs (
        id INTEGER PRIMARY KEY AUTOINCREMENT,  -- never reused, even after a discarded claim
        suite TEXT NOT NULL,            -- suite id
        version TEXT NOT NULL,          -- suite version
        suite_hash TEXT NOT NULL,       -- SHA-256 over the frozen splits
        model TEXT NOT NULL,            -- model label (name plus settings)
        model_spec TEXT NOT NULL,       -- model spec and facts as JSON
        model_hash TEXT NOT NULL,       -- SHA-256 of the canonical model spec JSON: the run key
        config_hash TEXT,               -- SHA-256 of the canonical configuration JSON; NULL without one
        comparable INTEGER NOT NULL CHECK (comparable IN (0, 1)),  -- 0: never ranked (sees test-time information, or partial)
        seed INTEGER NOT NULL,
        draw INTEGER NOT NULL,          -- data draw evaluated (seed mod n_draws)
        status TEXT NOT NULL CHECK (status IN ('running', 'done', 'failed', 'n/a')),
        error TEXT,                     -- failure message or n/a reason
        owner TEXT,                     -- host:pid:token of the process that claimed it; NULL once released
        started_at REAL NOT NULL,       -- unix time
        finished_at REAL,
        fit_seconds REAL,
        predict_seconds REAL,
        harness_version TEXT NOT NULL,
        git_commit TEXT,
        environment TEXT NOT NULL,      -- JSON object: python, platform, package versions; "compute": the
                                        -- model's report of a done run (see run_compute); no column of its own
        UNIQUE (suite, version, suite_hash, model_hash, seed)
    )
    """,
    """
    CREATE TABLE IF NOT EXISTS suites (
        suite TEXT NOT NULL,
        version TEXT NOT NULL,
        suite_hash TEXT NOT NULL,
        spec TEXT NOT NULL,             -- SuiteSpec as JSON, so that reports need only the store
        PRIMARY KEY (suite, version, suite_hash)
    )
    """,
    """
    CREATE TABLE IF NOT EXISTS scores (
        run_id INTEGER NOT NULL REFERENCES runs(id) ON DELETE CASCADE,
        split TEXT NOT NULL,
        metric TEXT NOT NULL,
        breakdown TEXT NOT NULL DEFAULT '',  -- Example.meta key of a condition; '' for the whole split
        level TEXT NOT NULL DEFAULT '',      -- that key's value
        value REAL,                     -- NULL when undefined (e.g. no items)
        n INTEGER NOT NULL,             -- number of items the value is computed over
        proportion INTEGER NOT NULL DEFAULT 0 CHECK (proportion IN (0, 1)),  -- 1: the fraction of n 0/1 items
        PRIMARY KEY (run_id, split, metric, breakdown, level)
    ) WITHOUT ROWID                     -- clustered on the key: no second copy of it in an index
    """,
    """
    CREATE TABLE IF NOT EXISTS predictions (
        run_id INTEGER NOT NULL REFERENCES runs(id) ON DELETE CASCADE,
        split TEXT NOT NULL,
        n_examples INTEGER NOT NULL,
        block BLOB NOT NULL,            -- zlib(JSON [[example ids], [predictions], [correct 1/0/null]])
        PRIMARY KEY (run_id, split)
    )
    """,
)


@cache
def schema_columns() -> dict[str, tuple[str, ...]]:
    """table -> its columns in order, as `SCHEMA` creates them."""
    memory = sqlite3.connect(":memory:")
    for statement in SCHEMA:
        memory.execute(statement)
    tables = [row[0] for row in memory.execute("SELECT name FROM sqlite_master WHERE type = 'table' ORDER BY name")]
    columns = {
        t: tuple(row[1] for row in memory.execute(f"PRAGMA table_info({t})")) for t in tables if t != "sqlite_sequence"
    }
    memory.close()
    return columns


RUN_FIELDS = (
    "suite", "version", "suite_hash", "model", "model_spec", "model_hash", "config_hash", "comparable",
    "seed", "draw", "harness_version", "git_commit", "environment",
)  # fmt: skip
"""What `claim_run` needs to know of a run; the rest of a row is the store's bookkeeping."""


ATTEMPT_COLUMNS = ("status", "error", "owner", "started_at", "finished_at", "fit_seconds", "predict_seconds")
"""What one attempt at a run writes: its outcome, holder and times."""

ROW_COLUMNS = RUN_FIELDS + ATTEMPT_COLUMNS
"""Every column of a run's row but its id, in the order a taken-over claim keeps them to restore."""

RUN_KEY = "suite=? AND version=? AND suite_hash=? AND model_hash=? AND seed=?"
"""The WHERE clause that finds one run by its key."""
