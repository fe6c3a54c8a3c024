"""Reading a results database: a `StoreReader` answers every question about stored suites, runs,
scores and predictions, and writes nothing but what opening a store may write (a new file's
schema, a v1 store's migration: `structbench.store.connection`).

Reports, analyses and every command that only reads results take a `StoreReader`; a `Store`
(`structbench.store.database`) is one, with the writes of running models added. Every reader
checks what it reads, since a store file is input too: a value of the wrong kind is one sentence
naming the run and the fix (`_check_runs`, `_check_scores`), a damaged predictions block too.
"""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Collection, Sequence
from contextlib import suppress
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, NoReturn, Self

from structbench.convergence import Convergence
from structbench.errors import UserError
from structbench.specs import SuiteSpec
from structbench.store import published
from structbench.store.codec import JSON, DamagedBlock, run_convergence, unpack_predictions
from structbench.store.connection import open_database
from structbench.store.ownership import shown_status
from structbench.store.schema import ROW_COLUMNS

if TYPE_CHECKING:
    import pandas as pd

    from structbench.cells import ScoreColumns


@dataclass(frozen=True)
class StoredRun:
    """One run as a store holds it, for moving it to another store (`StoreReader.stored_run`, `Store.add_runs`)."""

    row: dict[str, Any]
    """Its columns but the id (`ROW_COLUMNS`)."""
    scores: list[tuple[Any, ...]]
    """(split, metric, breakdown, level, value, n, proportion) rows."""
    predictions: list[tuple[str, int, bytes]]
    """(split, number of examples, `pack_predictions` block), in split order."""


def _shown(frame: pd.DataFrame) -> pd.DataFrame:
    """`frame` (rows of runs with their `id`, `owner` and `status`) with each `running` row whose holder
    is gone shown as `interrupted`."""
    running = frame["status"] == "running"
    if running.any():
        owners = [owner if isinstance(owner, str) else None for owner in frame.loc[running, "owner"]]
        ids = [int(run_id) for run_id in frame.loc[running, "id"]]
        frame.loc[running, "status"] = [
            shown_status("running", owner, run_id) for owner, run_id in zip(owners, ids, strict=True)
        ]
    return frame


class StoreReader:
    """A connection to one results database file, for reading it; see `structbench.store.schema` for its tables."""

    def __init__(self, path: Path) -> None:
        self.path = Path(path)
        self._db: sqlite3.Connection
        self._db, migrated_from = open_database(self.path)
        self.migrated_from: Path | None = migrated_from
        """The backup of the v1 store this open migrated, if it did."""

    def close(self) -> None:
        self._db.close()

    def __enter__(self) -> Self:
        return self

    def __exit__(self, *_: object) -> None:
        self.close()

    # suites

    def suite_specs(self) -> dict[tuple[str, str, str], SuiteSpec]:
        """(suite, version, suite_hash) -> spec of every suite with stored runs whose spec this
        structbench can read (a spec it cannot read leaves that suite out of reports, nothing else)."""
        specs = {}
        for suite, version, suite_hash, text in self._db.execute("SELECT suite, version, suite_hash, spec FROM suites"):
            with suppress(ValueError):  # pydantic's ValidationError is a ValueError
                specs[(suite, version, suite_hash)] = SuiteSpec.model_validate_json(text)
        return specs

    # runs

    def label(self, run_id: int) -> str:
        """The label run `run_id` is shown under."""
        row = self._db.execute("SELECT model FROM runs WHERE id=?", (run_id,)).fetchone()
        if row is None:
            raise KeyError(run_id)
        return str(row[0])

    def model_specs(self) -> list[tuple[str, str, str, str]]:
        """(suite, model_hash, model_spec, label) of every model configuration the store holds runs of,
        once each (one label where runs of it were shown under several)."""
        rows = self._db.execute(
            "SELECT suite, model_hash, model_spec, MIN(model) FROM runs GROUP BY suite, model_hash, model_spec"
        ).fetchall()
        return [(str(a), str(b), str(c), str(d)) for a, b, c, d in rows]

    def run_status(self, run_id: int) -> tuple[str, str | None]:
        """(status, error) of one run, `interrupted` for a `running` one whose holder is gone (`shown_status`)."""
        status, error, owner = self._db.execute(
            "SELECT status, error, owner FROM runs WHERE id=?", (run_id,)
        ).fetchone()
        return shown_status(str(status), owner, run_id), error

    def run_record(self, run_id: int) -> dict[str, Any]:
        """Every column of one run, by name."""
        cursor = self._db.execute("SELECT * FROM runs WHERE id=?", (run_id,))
        row = cursor.fetchone()
        if row is None:
            raise KeyError(f"no run {run_id} in {self.path}")
        return {column[0]: value for column, value in zip(cursor.description, row, strict=True)}

    def runs(self) -> pd.DataFrame:
        """Every run, one row each, every column (whatever its status). A `running` row whose holder is
        gone (released by an interrupt, or its process dead) has the status `interrupted` here, as in
        every reader: it is no run in progress, and the next ask redoes it (`ownership.shown_status`)."""
        import pandas as pd

        self._check_runs()
        frame = pd.read_sql_query("SELECT * FROM runs ORDER BY id", self._db)
        return _shown(frame)

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

    def finished_convergence(
        self, suite: str, version: str, suite_hash: str, model_hash: str, label: str
    ) -> dict[int, Convergence]:
        """seed -> how training went against its criterion, of each finished (`done`) run of one model
        configuration shown under `label` on one suite's data that reported it (`run_convergence`)."""
        rows = self._db.execute(
            "SELECT seed, environment FROM runs WHERE suite=? AND version=? AND suite_hash=? AND model_hash=? "
            "AND model=? AND status='done' ORDER BY seed",
            (suite, version, suite_hash, model_hash, label),
        )
        found = {}
        for seed, environment in rows:
            judged = run_convergence(environment) if isinstance(environment, str) else None
            if judged is not None:
                found[int(seed)] = judged
        return found

    # scores

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
        are read without the rest of the store. A value no metric takes (infinite, outside its
        metric's range: `structbench.cells.value_problem`) or a negative item count is refused in
        one sentence naming the run: no such value reaches a cell, a claim or a page."""
        import pandas as pd

        from structbench.cells import first_impossible  # numpy and scipy's quantiles: only where scores are read

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
        if (impossible := first_impossible(frame)) is not None:
            row = frame.iloc[impossible[0]]
            self._refuse_impossible(
                row["model"], row["seed"], row["suite"], row["version"], row["split"], row["metric"], impossible[1]
            )
        return frame

    def configuration_scores(self, suite: str, version: str, suite_hash: str, model_hash: str) -> ScoreColumns:
        """The defined scores of every finished (`done`) run of one model configuration on one suite's
        data, as columns: what `run` aggregates into the cells it prints after each command. The
        same rows, checked the same way, as `scores(...)` with these filters, without a data frame:
        building and joining frames took most of the harness's time per run of a fast model."""
        import numpy as np

        from structbench.cells import ScoreColumns, first_impossible_of

        where = " AND suite = ? AND version = ? AND suite_hash = ? AND model_hash = ?"
        params = [suite, version, suite_hash, model_hash]
        self._check_runs(where, params)
        self._check_scores(where, params)
        rows = self._db.execute(
            "SELECT r.model, r.seed, s.split, s.metric, s.breakdown, s.level, s.value, s.n, s.proportion "
            "FROM runs r JOIN scores s ON s.run_id = r.id WHERE r.status = 'done' AND r.suite = ? AND r.version = ? "
            "AND r.suite_hash = ? AND r.model_hash = ? ORDER BY r.id",
            params,
        ).fetchall()
        models, seeds, splits, metrics, breakdowns, levels, values, items, proportion = (
            (list(column) for column in zip(*rows, strict=True)) if rows else ([] for _ in range(9))
        )
        value = np.array([np.nan if v is None else float(v) for v in values], dtype=float)
        found = ScoreColumns(
            keys=list(zip(models, splits, metrics, breakdowns, levels, strict=True)),
            seeds=np.array(seeds, dtype=np.int64),
            values=value,
            items=np.array(items, dtype=np.int64),
            proportion=np.array(proportion, dtype=bool),
            metrics=np.array(metrics, dtype=object),
        )
        if (impossible := first_impossible_of(found.metrics, value, found.items, found.proportion)) is not None:
            at = impossible[0]
            self._refuse_impossible(models[at], seeds[at], suite, version, splits[at], metrics[at], impossible[1])
        return found.defined()

    def _refuse_impossible(
        self, model: object, seed: object, suite: object, version: object, split: object, metric: object, problem: str
    ) -> NoReturn:
        """Refuse a score no metric takes (`structbench.cells.value_problem`), naming the run and the fix."""
        raise UserError(
            f"the results store {self.path} holds a score no metric takes: {model} seed {seed} on "
            f"{suite}@{version}, {split} {metric}, has {problem}; run that "
            "seed again with `structbench run ... --force`, or pass another --store."
        )

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
            "SELECT r.id, r.owner, r.suite, r.version, r.suite_hash, r.model, r.seed, r.status, s.split, s.metric, "
            "s.value, s.n "
            "FROM runs r LEFT JOIN scores s ON s.run_id = r.id AND s.breakdown = '' ORDER BY r.id",
            self._db,
        )
        frame["value"] = frame["value"].astype(float)
        frame["n"] = frame["n"].astype("Int64")
        return _shown(frame).drop(columns=["id", "owner"])

    # published runs (structbench.store.published)

    def published_labels(self, suite: str | None = None) -> list[tuple[str, str, str, int]]:
        """(suite, version, label, seeds) of every published model stored, on `suite` only if given."""
        return published.labels(self._db, suite)

    def published_runs(self, suite: str, version: str, label: str) -> list[published.PublishedRun]:
        """Every seed of the published model `label` on `suite@version`; [] where none is stored."""
        return published.read(self._db, suite, version, label)

    # predictions

    def stored_predictions(
        self, run_id: int, splits: Collection[str] | None = None
    ) -> dict[str, tuple[list[str], list[Any], list[bool | None]]]:
        """split -> (example ids, predictions, per-example correct) of one run, in split order: of every
        split it stored, or of those among `splits`."""
        query = "SELECT split, block FROM predictions WHERE run_id=?"
        parameters: list[object] = [run_id]
        if splits is not None:
            query += f" AND split IN ({', '.join('?' * len(splits))})"
            parameters += list(splits)
        rows = self._db.execute(query + " ORDER BY rowid", parameters)
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
        ids = sorted(set(map(int, run_ids)))
        found: list[tuple[int, int, str, bytes]] = []
        for start in range(0, len(ids), 900):  # SQLite caps the number of bound parameters per statement
            chunk = ids[start : start + 900]
            # ordered here, not by SQL: where the reference runs are read beside the store (`with_reference`),
            # SQLite would sort every block (hundreds of megabytes) in a temporary b-tree to order them
            rows = self._db.execute(
                f"SELECT run_id, rowid, split, block FROM predictions WHERE run_id IN ({','.join('?' * len(chunk))})",
                chunk,
            )
            found += [(int(run_id), int(row_id), str(split), bytes(block)) for run_id, row_id, split, block in rows]
        found.sort(key=lambda row: row[:2])
        out: dict[int, dict[str, bytes]] = {}
        for run_id, _, split, block in found:
            out.setdefault(run_id, {})[split] = block
        return out

    # whole runs and the whole store, for copying them (the reference bundle)

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
