"""The store: schema v2, migration of a v1 store, atomic claims under concurrent writers, re-scoring."""

from __future__ import annotations

import json
import math
import multiprocessing
import os
import queue
import sqlite3
import subprocess
import sys
import time
import traceback
from contextlib import closing
from pathlib import Path
from typing import Any

import pandas as pd
import pytest

from structbench import __version__, registry
from structbench.analysis.rescore import rescore
from structbench.data import freeze
from structbench.errors import UserError
from structbench.runs.runner import Runner
from structbench.scoring import Score, SplitScores
from structbench.specs import ModelSpec, Split
from structbench.store import RUN_FIELDS, SCHEMA_VERSION, ClaimLost, Store, config_hash
from structbench.store.migration import create_v1_store, score_values, write_v1_run
from structbench.store.ownership import HELD, HOST, process_start

SCORE_COLUMNS = [
    "suite", "version", "suite_hash", "model", "model_hash", "config_hash", "comparable", "seed", "draw",
    "split", "metric", "breakdown", "level", "value", "n", "proportion",
]  # fmt: skip


def run_fields(seed: int = 0, **changes: Any) -> dict[str, Any]:
    """Everything `claim_run` needs for one synthetic run."""
    fields: dict[str, Any] = {
        "suite": "toy", "version": "1.0.0", "suite_hash": "a" * 64, "model": "m",
        "model_spec": '{"name": "m", "params": {}}', "model_hash": "b" * 64, "config_hash": None,
        "comparable": True, "seed": seed, "draw": seed, "harness_version": __version__, "git_commit": None,
        "environment": "{}",
    }  # fmt: skip
    fields.update(changes)
    assert set(fields) == set(RUN_FIELDS)
    return fields


def toy_results(value: float = 0.5) -> dict[str, tuple[SplitScores, list[str], list[Any]]]:
    scores = SplitScores(
        scores=[
            Score("accuracy", value, 2, proportion=True),
            Score("coverage", math.nan, 0),
            Score("accuracy", 1.0, 1, "n_attractors", "1", proportion=True),
            Score("accuracy", 0.0, 1, "n_attractors", "2", proportion=True),
        ],
        correct=[True, None],
    )
    return {"test": (scores, ["e1", "e2"], [["x", "y"], []])}


# schema and migration


def test_a_new_store_has_the_versioned_schema(store: Store) -> None:
    assert store._db.execute("PRAGMA user_version").fetchone() == (SCHEMA_VERSION,)
    claim = store.claim_run(run_fields(comparable=False, config_hash=config_hash({"epochs": 2})))
    store.finish_run(claim, toy_results(), 1.0, 2.0)
    frame = store.scores()
    assert list(frame.columns) == SCORE_COLUMNS
    whole = frame[(frame.metric == "accuracy") & (frame.breakdown == "")]
    assert whole.value.tolist() == [0.5] and whole.n.tolist() == [2]
    assert dict(zip(frame.metric + frame.level, frame.proportion, strict=True)) == {
        "accuracy": True,
        "accuracy1": True,
        "accuracy2": True,
        "coverage": False,
    }
    assert frame.comparable.tolist() == [False] * 4
    assert set(frame.config_hash) == {config_hash({"epochs": 2})}
    assert math.isnan(frame[frame.metric == "coverage"].value.iloc[0])  # NULL in the store, NaN here
    levels = frame[frame.breakdown == "n_attractors"]
    assert dict(zip(levels.level, levels.value, strict=True)) == {"1": 1.0, "2": 0.0}
    runs = store.runs()
    assert runs.status.tolist() == ["done"] and runs.owner.tolist() == [store.owner]
    predictions = store.predictions(claim.run_id)
    assert list(predictions.columns) == ["split", "example_id", "prediction", "correct"]
    assert predictions[["split", "example_id", "prediction"]].values.tolist() == [
        ["test", "e1", '["x","y"]'],
        ["test", "e2", "[]"],
    ]
    assert predictions.correct.iloc[0] == 1 and predictions.correct.isna().iloc[1]
    assert store.stored_predictions(claim.run_id) == {"test": (["e1", "e2"], [["x", "y"], []], [True, None])}


def test_scores_filters_select_in_sql(store: Store) -> None:
    for suite in ("toy", "other"):
        for model_hash in ("b" * 64, "c" * 64):
            claim = store.claim_run(run_fields(suite=suite, model_hash=model_hash))
            store.finish_run(claim, toy_results(), 0.0, 0.0)
    failed = store.claim_run(run_fields(suite="toy", seed=1))
    store.end_run(failed, "failed", "boom")
    assert len(store.scores()) == 16  # four finished runs; never the failed one
    chosen = store.scores(suite="toy", version="1.0.0", suite_hash="a" * 64, model_hash="c" * 64)
    assert len(chosen) == 4 and set(chosen.suite) == {"toy"} and set(chosen.model_hash) == {"c" * 64}
    assert store.scores(version="2.0.0").empty and list(store.scores(version="2.0.0").columns) == SCORE_COLUMNS


def write_v1(path: Path) -> dict[str, int]:
    """A store as structbench 0.1 wrote it: a finished run with breakdowns, a non-comparable
    configured one, a failed one and one left `running` by a killed process."""
    db = create_v1_store(path)
    configured = {"name": "guided", "params": {}, "configuration": {"epochs": 3}, "comparable": False}
    ids = {
        "plain": write_v1_run(db, run_fields(0), toy_results(0.5), 1.5, 2.5),
        "configured": write_v1_run(
            db, run_fields(0, model="guided", model_spec=json.dumps(configured), model_hash="c" * 64), toy_results(1.0)
        ),
    }
    for name, seed in (("failed", 1), ("running", 2)):
        cursor = db.execute(
            "INSERT INTO runs (suite, version, suite_hash, model, model_spec, model_hash, seed, draw, status, error, "
            "started_at, harness_version, git_commit, environment) VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?)",
            ("toy", "1.0.0", "a" * 64, "m", '{"name": "m", "params": {}}', "b" * 64, seed, seed,
             "failed" if name == "failed" else "running", "boom" if name == "failed" else None, 1.0, "0.1.0", None, "{}"),
        )  # fmt: skip
        ids[name] = int(cursor.lastrowid or 0)
    db.execute("INSERT INTO suites VALUES ('toy', '1.0.0', ?, '{}')", ("a" * 64,))
    db.close()
    return ids


def test_a_v1_store_is_migrated_in_place_after_a_backup(tmp_path: Path) -> None:
    path = tmp_path / "results.sqlite"
    ids = write_v1(path)
    with closing(sqlite3.connect(path)) as db:
        before = score_values(db)
        v1_predictions = db.execute("SELECT run_id, split, example_id, prediction, correct FROM predictions").fetchall()
    assert before[(ids["plain"], "test", "accuracy[n_attractors=2]")] == 0.0

    with Store(path) as store:
        assert store.migrated_from == tmp_path / "results.sqlite.v1-backup"
        assert store._db.execute("PRAGMA user_version").fetchone() == (SCHEMA_VERSION,)
        assert score_values(store._db) == before  # every value, NaN included, under the same run id
        runs = store.runs().set_index("id")
        assert runs.loc[ids["configured"], "comparable"] == 0 and runs.loc[ids["plain"], "comparable"] == 1
        assert runs.loc[ids["configured"], "config_hash"] == config_hash({"epochs": 3})
        assert pd.isna(runs.loc[ids["plain"], "config_hash"])
        assert runs.loc[ids["failed"], ["status", "error"]].tolist() == ["failed", "boom"]
        frame = store.scores()
        assert sorted(zip(frame.metric, frame.breakdown, frame.level, strict=True))[:3] == [
            ("accuracy", "", ""), ("accuracy", "", ""), ("accuracy", "n_attractors", "1"),
        ]  # fmt: skip
        migrated = store.predictions(ids["plain"])
        expected = [(e, p, c) for r, _, e, p, c in v1_predictions if r == ids["plain"]]
        assert [
            (e, p, None if c != c else c) for e, p, c in migrated[["example_id", "prediction", "correct"]].values
        ] == expected
        assert store.stored_predictions(ids["plain"]) == {"test": (["e1", "e2"], [["x", "y"], []], [True, None])}
        # the run a killed v1 process left `running` has no owner: the next ask redoes it in place
        claim = store.claim_run(run_fields(2))
        assert (claim.state, claim.run_id) == ("claimed", ids["running"])
        assert store.claim_run(run_fields(0)).state == "cached"

    with closing(sqlite3.connect(tmp_path / "results.sqlite.v1-backup")) as backup:  # the v1 store, intact
        assert backup.execute("PRAGMA user_version").fetchone() == (0,)
        assert score_values(backup) == before
        assert backup.execute("SELECT count(*) FROM predictions").fetchone() == (len(v1_predictions),)
    with Store(path) as again:  # migrated once: no second backup
        assert again.migrated_from is None
    assert sorted(p.name for p in tmp_path.iterdir() if "backup" in p.name) == ["results.sqlite.v1-backup"]


def test_processes_opening_a_v1_store_at_once_migrate_it_once(tmp_path: Path) -> None:
    path = tmp_path / "results.sqlite"
    write_v1(path)
    with closing(sqlite3.connect(path)) as db:
        before = score_values(db)
    code = (
        "import sys, time; from pathlib import Path; from structbench.store import Store\n"
        "start = float(sys.argv[1])\n"
        "while time.time() < start: time.sleep(0.001)\n"
        "with Store(Path(sys.argv[2])) as store: print(store.migrated_from is not None)"
    )
    start = time.time() + 2.0
    openers = [
        subprocess.Popen([sys.executable, "-c", code, str(start), str(path)], stdout=subprocess.PIPE, text=True)
        for _ in range(4)
    ]
    migrated = [opener.communicate(timeout=60)[0].strip() for opener in openers]
    assert [opener.returncode for opener in openers] == [0] * 4
    assert sorted(migrated) == ["False", "False", "False", "True"]
    assert sorted(p.name for p in tmp_path.iterdir() if "backup" in p.name) == ["results.sqlite.v1-backup"]
    with Store(path) as store:
        assert score_values(store._db) == before


def test_a_store_from_a_newer_structbench_is_refused_in_one_sentence(store_path: Path) -> None:
    Store(store_path).close()
    with sqlite3.connect(store_path) as db:
        db.execute(f"PRAGMA user_version = {SCHEMA_VERSION + 1}")
    with pytest.raises(UserError) as raised:
        Store(store_path)
    message = str(raised.value)
    assert "newer structbench" in message and "upgrade structbench" in message
    assert message.endswith(".") and message.count(". ") == 0 and "\n" not in message


def test_a_file_that_is_not_a_store_is_refused_in_one_sentence(tmp_path: Path) -> None:
    path = tmp_path / "notes.sqlite"
    path.write_bytes(b"these are my notes, not a database" * 100)
    with pytest.raises(UserError, match=r"is not a structbench results database .*; pass another --store\.$"):
        Store(path)
    other = tmp_path / "other.sqlite"
    with sqlite3.connect(other) as db:
        db.execute("CREATE TABLE recipes (name TEXT)")
    with pytest.raises(UserError, match="is an SQLite file but not a structbench results database"):
        Store(other)


# claims


def claim_and_die(path: Path, fields: dict[str, Any]) -> None:
    """What a process killed while evaluating a run leaves behind: a `running` row it owns."""
    code = (
        "import json, os, sys; from pathlib import Path; from structbench.store import Store; "
        "Store(Path(sys.argv[1])).claim_run(json.loads(sys.argv[2])); os._exit(0)"
    )
    subprocess.run([sys.executable, "-c", code, str(path), json.dumps(fields)], check=True)


def test_a_run_held_by_a_dead_process_is_taken_over_in_place(store: Store, store_path: Path) -> None:
    claim_and_die(store_path, run_fields(0))
    (stale,) = store.runs().itertuples()
    assert stale.status == "interrupted" and stale.owner != store.owner  # the store keeps `running`, its owner dead
    claim = store.claim_run(run_fields(0))
    assert (claim.state, claim.run_id) == ("claimed", stale.id)
    (taken,) = store.runs().itertuples()
    assert taken.owner == store.owner and taken.started_at > stale.started_at


def test_a_run_held_by_a_live_process_is_busy_until_it_finishes(store: Store, store_path: Path) -> None:
    code = (
        "import json, sys, time; from pathlib import Path; from structbench.store import Store; "
        "from tests.store.test_store import toy_results; store = Store(Path(sys.argv[1])); "
        "claim = store.claim_run(json.loads(sys.argv[2])); print('claimed', flush=True); time.sleep(1.5); "
        "store.finish_run(claim, toy_results(0.25), 0.0, 0.0)"
    )
    holder = subprocess.Popen(
        [sys.executable, "-c", code, str(store_path), json.dumps(run_fields(0))],
        stdout=subprocess.PIPE,
        text=True,
        cwd=Path(__file__).resolve().parents[2],
    )
    try:
        assert holder.stdout is not None and holder.stdout.readline().strip() == "claimed"
        busy = store.claim_run(run_fields(0))
        assert busy.state == "busy" and busy.holder == f"pid {holder.pid} on {busy.owner.split(':')[0]}"  # type: ignore[union-attr]
        with pytest.raises(ClaimLost):  # never write to a row another process holds
            store.finish_run(busy, toy_results(), 0.0, 0.0)
        while (claim := store.claim_run(run_fields(0))).state == "busy":
            time.sleep(0.1)
    finally:
        assert holder.wait(timeout=30) == 0
    assert (claim.state, claim.status) == ("cached", "done")
    assert store.scores().value.iloc[0] == 0.25


def test_discarding_a_taken_over_claim_restores_the_earlier_attempt(store: Store, store_path: Path) -> None:
    first = store.claim_run(run_fields(0))
    store.end_run(first, "failed", "the earlier attempt's traceback")
    before = store.runs()
    with Store(store_path) as other:  # another process asks again, then hits a configuration error
        retry = other.claim_run(run_fields(0))
        assert (retry.state, retry.run_id) == ("claimed", first.run_id)
        other.discard(retry)
    assert store.runs().equals(before)  # the failed attempt's row, error and owner as they were
    fresh = store.claim_run(run_fields(1))
    store.discard(fresh)  # a row this claim inserted is deleted ...
    again = store.claim_run(run_fields(1))
    assert again.run_id > fresh.run_id  # ... and its id is never handed out again
    assert store.claim_run(run_fields(0), retry_failed=False).status == "failed"


def test_a_released_claim_stays_running_and_is_redone(store: Store, store_path: Path) -> None:
    claim = store.claim_run(run_fields(0))
    store.release(claim)  # what an interrupt leaves: `running`, no owner, shown as interrupted
    assert store.runs().status.tolist() == ["interrupted"] and store.runs().owner.tolist() == [None]
    assert store.run_status(claim.run_id) == ("interrupted", None)
    assert store._db.execute("SELECT status FROM runs").fetchall() == [("running",)]
    with Store(store_path) as other:  # nobody waits for it, whichever process asks
        assert other.claim_run(run_fields(0)).state == "claimed"


def _hand_over(store: Store, run_id: int, owner: str | None) -> None:
    """Sign a claimed row as another process would have (a test's stand-in for that process)."""
    HELD.discard((store.owner, run_id))
    with store._transaction() as db:
        db.execute("UPDATE runs SET owner=? WHERE id=?", (owner, run_id))


@pytest.mark.skipif(not Path("/proc/self/stat").is_file(), reason="process start times come from /proc")
def test_a_live_pid_that_started_after_the_claim_is_not_its_owner(store: Store, store_path: Path) -> None:
    """A claim records its process's start time: a dead owner's pid, reused by a later process, is not
    mistaken for it (the row is interrupted and taken over), while the owner itself is still waited for."""
    parent = os.getppid()  # alive for the whole test, and not this process
    started = process_start(parent)
    assert started.isdigit() and store.owner.split(":")[2] == process_start(os.getpid())
    claim = store.claim_run(run_fields(0))
    _hand_over(store, claim.run_id, f"{HOST}:{parent}:{started}:feedcafe")
    assert store.runs().status.tolist() == ["running"]  # its owner runs
    with Store(store_path) as other:
        assert other.claim_run(run_fields(0)).state == "busy"
    _hand_over(store, claim.run_id, f"{HOST}:{parent}:{int(started) - 1}:feedcafe")  # the pid, another process
    assert store.runs().status.tolist() == ["interrupted"]
    with Store(store_path) as other:
        taken = other.claim_run(run_fields(0))
        assert (taken.state, taken.run_id) == ("claimed", claim.run_id)
        other.release(taken)


def test_an_owner_signed_before_start_times_were_recorded_is_still_read(store: Store) -> None:
    """Stores hold `host:pid:token` owners from before: a live pid is their owner, a dead one is not."""
    claim = store.claim_run(run_fields(0))
    _hand_over(store, claim.run_id, f"{HOST}:{os.getppid()}:feedcafe")
    assert store.runs().status.tolist() == ["running"]
    assert store.claim_run(run_fields(0)).holder == f"pid {os.getppid()} on {HOST}"
    dead = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"], capture_output=True, text=True)
    _hand_over(store, claim.run_id, f"{HOST}:{int(dead.stdout)}:feedcafe")
    assert store.runs().status.tolist() == ["interrupted"]
    assert store.claim_run(run_fields(0)).state == "claimed"


# re-scoring


def test_stored_predictions_rescore_to_the_stored_scores(runner: Runner) -> None:
    runner.evaluate("lookup-tables", ModelSpec(name="random"), [1])
    suite = registry.suite("lookup-tables")
    (run_id,) = runner.store.runs().id.tolist()
    rescored = rescore(runner.store, int(run_id), suite)
    assert list(rescored) == [s.name for s in suite.spec.splits_with_role("test")]
    stored = runner.store.scores()
    assert len(stored) == sum(len(s.scores) for s in rescored.values())
    for row in stored.itertuples():
        (score,) = [
            s
            for s in rescored[row.split].scores
            if (s.metric, s.breakdown, s.level) == (row.metric, row.breakdown, row.level)
        ]
        assert (score.n, score.value) == (row.n, pytest.approx(row.value, nan_ok=True))
    assert any(0 < row.value < 1 for row in stored.itertuples())  # a random model: the numbers say something
    correct = {split: ok for split, (_, _, ok) in runner.store.stored_predictions(int(run_id)).items()}
    assert correct == {split: scores.correct for split, scores in rescored.items()}


# concurrent writers


class SlowCopy:
    """Copies its input after a slow fit, logging each fit to a file: proves no run is computed twice."""

    name = "slow-copy"
    protocols = ("transduction",)

    def fit(self, train: Split, dev: Split | None, *, seed: int) -> None:
        time.sleep(0.3)
        with open(os.environ["STRUCTBENCH_TEST_FIT_LOG"], "a") as log:
            log.write(f"{seed} {os.getpid()}\n")

    def transduce(self, inputs: list[list[str]]) -> list[list[str]]:
        return [list(tokens) for tokens in inputs]


Job = tuple[str, str, str, list[int]]
"""(store path, suite, model, seeds)"""


def _evaluate_worker(jobs: list[Job], barrier: Any, results: Any, worker: int) -> None:
    """One of the concurrent processes: for each job, wait for the others, then evaluate."""
    for index, (path, suite, model, seeds) in enumerate(jobs):
        try:
            barrier.wait(timeout=120)
            with Store(Path(path)) as store:
                runner = Runner(store, progress=False)
                logs: list[str] = []
                runner.log = logs.append
                record = runner.evaluate(suite, ModelSpec(name=model), seeds)
            results.put((index, worker, "ok", record.model_dump(mode="json"), logs))
        except BaseException:
            results.put((index, worker, "crash", traceback.format_exc(), []))


def run_concurrently(jobs_per_worker: list[list[Job]]) -> dict[int, list[tuple[str, Any, list[str]]]]:
    """Start one spawned process per worker; every job index starts in all of them at the same moment."""
    context = multiprocessing.get_context("spawn")
    barrier, results = context.Barrier(len(jobs_per_worker)), context.Queue()
    processes = [
        context.Process(target=_evaluate_worker, args=(jobs, barrier, results, worker))
        for worker, jobs in enumerate(jobs_per_worker)
    ]
    for process in processes:
        process.start()
    out: dict[int, list[tuple[str, Any, list[str]]]] = {}
    try:
        for _ in range(sum(len(jobs) for jobs in jobs_per_worker)):
            index, _worker, outcome, payload, logs = results.get(timeout=180)
            out.setdefault(index, []).append((outcome, payload, logs))
    except queue.Empty:
        pytest.fail("a concurrent worker hung")
    finally:
        for process in processes:
            process.join(timeout=60)
            if process.is_alive():
                process.kill()
    assert all(process.exitcode == 0 for process in processes)
    return out


SAME_CELLS = [("random", [0, 1, 2])] * 3 + [("tests.store.test_store:SlowCopy", [0, 1, 2])]
"""Jobs every worker runs at the same moment (one fresh store each)."""
DIFFERENT_CELLS = [("random", [0, 1]), ("copy", [0, 1]), ("random", [2, 3]), ("oracle", [0])]
"""One job per worker, all into one store at the same moment."""


@pytest.fixture(scope="module")
def concurrent_runs(
    tmp_path_factory: pytest.TempPathFactory,
) -> tuple[Path, dict[int, list[tuple[str, Any, list[str]]]]]:
    """Four spawned processes: the same cells (three repetitions, then a slow model), then different cells."""
    folder = tmp_path_factory.mktemp("concurrent")
    freeze.ensure_built(registry.suite("lookup-tables"))  # once, before the workers race
    os.environ["STRUCTBENCH_TEST_FIT_LOG"] = str(folder / "fits.log")  # inherited by the spawned workers
    try:
        jobs = [
            [
                (str(folder / f"same{i}.sqlite"), "lookup-tables", model, seeds)
                for i, (model, seeds) in enumerate(SAME_CELLS)
            ]
            + [(str(folder / "shared.sqlite"), "lookup-tables", *DIFFERENT_CELLS[worker])]
            for worker in range(4)
        ]
        return folder, run_concurrently(jobs)
    finally:
        del os.environ["STRUCTBENCH_TEST_FIT_LOG"]


def test_processes_running_the_same_cells_at_once_never_crash_or_duplicate(
    concurrent_runs: tuple[Path, dict[int, list[tuple[str, Any, list[str]]]]],
) -> None:
    folder, outcomes = concurrent_runs
    for index, (model, seeds) in enumerate(SAME_CELLS):
        crashes = [payload for outcome, payload, _ in outcomes[index] if outcome != "ok"]
        assert not crashes, crashes[0]
        records = [payload for _, payload, _ in outcomes[index]]
        assert len(records) == 4
        assert all(r["status"] == {str(s): "done" for s in seeds} for r in records)
        assert all(r["scores"] == records[0]["scores"] for r in records)  # every process reads the same numbers
        with Store(folder / f"same{index}.sqlite") as store:
            runs = store.runs()
        assert sorted(runs.seed) == seeds and set(runs.status) == {"done"}, runs
        assert set(runs.model) == {"slow-copy" if model.endswith(":SlowCopy") else model} and runs.id.is_unique
    # the slow model: each seed was fitted once in all; the other processes waited and read it
    fits = (folder / "fits.log").read_text().split()
    assert sorted(fits[0::2]) == ["0", "1", "2"]
    logs = [line for _, _, logs in outcomes[len(SAME_CELLS) - 1] for line in logs]
    assert any("waiting for it" in line for line in logs)


def test_processes_running_different_cells_into_one_store(
    concurrent_runs: tuple[Path, dict[int, list[tuple[str, Any, list[str]]]]],
) -> None:
    folder, outcomes = concurrent_runs
    results = outcomes[len(SAME_CELLS)]
    assert [outcome for outcome, _, _ in results] == ["ok"] * 4, results
    with Store(folder / "shared.sqlite") as store:
        runs = store.runs()
        assert sorted(zip(runs.model, runs.seed, strict=True)) == sorted(
            (model, seed) for model, seeds in DIFFERENT_CELLS for seed in seeds
        )
        assert set(runs.status) == {"done"} and runs.id.is_unique
        random_runs = runs[runs.model == "random"]
        assert sorted(store.scores(model_hash=random_runs.model_hash.iloc[0]).seed.unique()) == [0, 1, 2, 3]


def test_migrated_suite_specs_are_readable_by_this_structbench(tmp_path: Path) -> None:
    """v1 stored specs lacked `task` and test roles: an installed suite gets its installed spec,
    another one the v1 defaults, so the report of a migrated store shows both."""
    path = tmp_path / "results.sqlite"
    installed = registry.suite("lookup-tables").spec
    v1_fields = installed.model_dump(exclude={"recipe", "higher_is_better"})  # stored as `task`: absent in v1
    for split in v1_fields["splits"]:
        del split["test_role"], split["ranked"]
    plugin = {**v1_fields, "id": "gone-plugin", "primary_metric": "token_accuracy"}
    db = create_v1_store(path)
    for fields in (v1_fields, plugin):
        db.execute("INSERT INTO suites VALUES (?, '1.0.0', ?, ?)", (fields["id"], "a" * 64, json.dumps(fields)))
    db.close()
    with Store(path) as store:
        specs = store.suite_specs()
    assert specs[("lookup-tables", "1.0.0", "a" * 64)] == installed
    gone = specs[("gone-plugin", "1.0.0", "a" * 64)]
    assert (gone.primary_metric, gone.recipe) == ("token_accuracy", "default")
    assert {s.test_role for s in gone.splits if s.role == "test"} == {"generalisation"}
