"""The driver of `structbench sweep GRID.yaml`: plan, hand out, store; resumable.

The driver (this module) is the store's only writer in a sweep:

1. plan (`structbench.sweep.plan`): check the grid, build its suites, key every run as `run`
   would, leave out the runs the store holds finished (done or n/a), order the rest longest first;
2. hand out runs while the executor has room: each is claimed in the store first
   (`Store.claim_run`, the claim `run` makes), so that a run finished meanwhile by another process
   is skipped, and one that another live process holds is skipped and reported, never waited on;
3. as each result arrives, store it in one transaction through the runner's own path
   (`Runner.record`: `finish_run`, or `end_run` for a failure or n/a) and release the claim.
   Nothing is batched in memory: a result is on disk before the next one is read.

A run whose worker died or outlived `--timeout` is stored as failed with the reason, and the sweep
goes on. Ctrl-C (or SIGTERM, as a batch scheduler sends it) ends the workers and releases the
claims of the runs in flight; a driver killed outright (SIGKILL) leaves them `running` under a
dead owner. Either way the same command again redoes exactly the runs that did not finish: the
finished ones are skipped without being recomputed.
"""

from __future__ import annotations

import signal
import sys
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path

from pydantic import Field

from structbench.execution.executors import Executor, resources_of
from structbench.execution.worker import WorkOrder, WorkResult, order_for, outcome_of
from structbench.progress import Job, Step, mode_of
from structbench.runs.runner import Runner
from structbench.specs import Frozen, ResultRecord
from structbench.store import ClaimLost, RunClaim, Store
from structbench.sweep.grid import load_grid
from structbench.sweep.plan import Plan, PlannedRun, plan

POLL_SECONDS = 0.5
"""How long the driver waits for a result before it looks at time-outs and the progress bar again."""


class SweepFailure(Frozen):
    """A run of the sweep that failed or was refused, for the summary."""

    suite: str
    model: str
    seed: int
    error: str
    """One line: why."""


class SweepSummary(Frozen):
    """What `structbench sweep --json` prints."""

    grid: str
    store: str
    executor: str
    workers: int
    runs: int
    """Runs the grid names (each distinct run once)."""
    done: int
    """Runs this sweep finished."""
    failed: int
    """Runs that failed (the model crashed or answered wrongly, its worker died or timed out)."""
    not_applicable: int = Field(serialization_alias="n/a")
    """Runs of a model that does not speak the suite's protocol."""
    skipped: int
    """Runs the store already held finished (done or n/a): not run again."""
    busy: int
    """Runs another live process was making: skipped, not waited for."""
    refused: int
    """Runs not made for a configuration problem (e.g. a worker unlike the driver); nothing stored."""
    seconds: float
    """Wall time of the sweep, planning included."""
    problems: list[SweepFailure]
    """Every failed and refused run, with its reason."""
    records: list[ResultRecord]
    """One `run --json` record per suite x model configuration: per-seed status (`done`, `failed`,
    `n/a`, `busy`: held by another process, `not run`: refused) and the cells over every finished seed.
    Empty unless asked for (`sweep --json`)."""


class _Tally:
    """Counts and per-run statuses as the sweep goes."""

    def __init__(self) -> None:
        self.counts = {"done": 0, "failed": 0, "n/a": 0, "skipped": 0, "busy": 0, "refused": 0}
        self.status: dict[tuple[str, str, str, int], str] = {}
        self.labels: dict[tuple[str, str, str], str] = {}
        self.errors: dict[tuple[str, str, str, int], str] = {}
        self.problems: list[SweepFailure] = []

    def note(
        self, run: PlannedRun, count: str, status: str, error: str | None = None, label: str | None = None
    ) -> None:
        self.counts[count] += 1
        key = _run_key(run)
        self.status[key] = status
        if label is not None:
            self.labels[key[:3]] = label
        if error is not None:
            self.errors[key] = error
            if count in ("failed", "refused"):
                line = error.strip().splitlines()[-1] if error.strip() else error
                self.problems.append(
                    SweepFailure(suite=run.cell.suite.spec.key, model=run.cell.label, seed=run.seed, error=line)
                )

    def postfix(self) -> str:
        """`done=9, failed=0, skipped=42`: the counts so far, for the progress bar."""
        shown = {name: value for name, value in self.counts.items() if value or name in ("done", "failed")}
        return ", ".join(f"{name}={value}" for name, value in shown.items())


def _run_key(run: PlannedRun) -> tuple[str, str, str, int]:
    return (run.cell.suite.spec.key, run.cell.manifest.suite_hash, run.cell.model_hash, run.seed)


def work_order(key: int, run: PlannedRun, source_dir: Path | None) -> WorkOrder:
    """What a worker needs to make `run` (see `structbench.execution.worker.WorkOrder`)."""
    return order_for(key, run.cell.reference, run.seed_run, source_dir, name=run.cell.name)


@contextmanager
def _sigterm_interrupts() -> Iterator[None]:
    """SIGTERM (a batch scheduler's cancel) ends the sweep as Ctrl-C does: claims released, resumable."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return

    def interrupt(signum: int, frame: object) -> None:
        raise KeyboardInterrupt

    previous = signal.signal(signal.SIGTERM, interrupt)
    try:
        yield
    finally:
        signal.signal(signal.SIGTERM, previous)


def run_sweep(
    grid_path: Path,
    store: Store,
    make_executor: Callable[[], Executor],
    *,
    source_dir: Path | None = None,
    progress: bool = True,
    dry_run: bool = False,
    records: bool = True,
) -> SweepSummary:
    """Plan the grid against the store, hand its runs to the executor `make_executor` builds (only
    when there is something to run), store every result as it arrives; see the module docstring.
    `records`: add each cell's `run --json` record to the summary (one store query per cell)."""
    started = time.monotonic()
    job: Job | None = None

    def log(message: str) -> None:
        if job is not None:
            job.write(message)
        else:
            print(message, file=sys.stderr)

    grid = load_grid(grid_path)
    runner = Runner(store, source_dir=source_dir, progress=False)
    runner.log = log
    planned = plan(grid, store, source_dir=source_dir, log=log)
    tally = _Tally()
    for run in planned.finished:
        tally.note(run, "skipped", run.stored or "done")
    if planned.duplicates:
        log(f"the grid names {planned.duplicates} runs more than once; each is run once")
    if dry_run:
        _print_plan(planned)
        return _summary(grid_path, store, "dry run", 0, planned, tally, runner, started, records=False)
    if not planned.todo:
        log(f"all {planned.total} runs of {grid_path} are in the store; nothing to run")
        return _summary(grid_path, store, "none", 0, planned, tally, runner, started, records=records)
    executor = make_executor()
    steps = [Step(run.where) for run in planned.finished] + [Step(run.where, run.seconds) for run in planned.todo]
    mode = mode_of(sys.stderr, quiet=not progress)
    job = Job("sweep", steps, mode=mode, parallel=executor.capacity, initial=len(planned.finished))
    job.tally = tally.postfix()
    try:
        with _sigterm_interrupts():
            _drive(planned, executor, runner, tally, job, source_dir)
    finally:
        executor.stop()
        job.close()
    return _summary(
        grid_path, store, executor.name, executor.capacity, planned, tally, runner, started, records=records
    )


def _drive(planned: Plan, executor: Executor, runner: Runner, tally: _Tally, job: Job, source_dir: Path | None) -> None:
    """Claim, submit and record until every run has an outcome; on an interrupt, release the claims in flight.
    Each run's outcome is a finished step of `job` (its steps: the finished runs, then `planned.todo`)."""
    store = runner.store
    pending = list(reversed(planned.todo))  # popped from the end: longest first
    step_of = {id(run): index for index, run in enumerate(planned.todo, start=len(planned.finished))}
    in_flight: dict[int, tuple[PlannedRun, RunClaim]] = {}
    gpus = bool(getattr(executor, "gpus_available", False))
    key = 0
    try:
        while pending or in_flight:
            while pending and len(in_flight) < executor.capacity:
                run = pending.pop()
                claim = store.claim_run(run.claim_fields)
                if claim.state == "cached":  # finished by another process since the plan
                    tally.note(run, "skipped", claim.status)
                    job.finish(f"{claim.status} (from the store)", index=step_of[id(run)])
                    continue
                if claim.state == "busy":
                    runner.log(f"{run.where} is being run by {claim.holder}; skipped (the next sweep takes it up)")
                    tally.note(run, "busy", "busy")
                    job.finish("skipped: held by another process", index=step_of[id(run)])
                    continue
                key += 1
                in_flight[key] = (run, claim)
                try:
                    executor.submit(
                        work_order(key, run, source_dir),
                        resources_of(run.cell.request.spec, run.cell.model.threads, gpus_available=gpus),
                    )
                except BaseException:
                    del in_flight[key]
                    store.release(claim)
                    raise
            for result in executor.collect(POLL_SECONDS):
                run, claim = in_flight.pop(result.key)
                try:
                    status = _record(runner, run, claim, result, tally)
                finally:
                    store.release(claim)  # a no-op unless recording failed
                job.tally = tally.postfix()
                job.finish(status, index=step_of[id(run)])
    except BaseException:
        executor.stop()  # first, so that no worker is still at a run once its claim is let go
        for _, claim in in_flight.values():
            store.release(claim)  # `running` with no owner: the next sweep or run redoes it
        raise


def _record(runner: Runner, run: PlannedRun, claim: RunClaim, result: WorkResult, tally: _Tally) -> str:
    """Store one worker's result for its claimed run, in one transaction (see `Runner.record`); how it ended."""
    if result.status == "refused":
        runner.store.discard(claim)  # nothing was made: the store keeps no trace of the attempt
        error = result.error or "refused"
        runner.log(f"{run.where} was not run: {error}")
        tally.note(run, "refused", "not run", error)
        return "not run (refused)"
    try:
        outcome = runner.record(claim, run.seed_run, outcome_of(result))
    except ClaimLost as error:  # another process took the run over (e.g. `run --force`): its result stands
        runner.log(f"{run.where}: {error}")
        tally.note(run, "busy", "busy")
        return "taken over by another process"
    count = "n/a" if outcome.status == "n/a" else outcome.status
    tally.note(run, count, outcome.status, outcome.error if outcome.status != "n/a" else None, outcome.label)
    return outcome.status


def _print_plan(planned: Plan) -> None:
    """The runs a sweep would make, longest first, with their expected seconds: `sweep --dry-run`."""
    print(f"{len(planned.todo)} runs to make, {len(planned.finished)} already in the store; longest first:")
    for run in planned.todo:
        how = "measured" if run.measured else "estimated"
        print(f"{run.seconds:10.1f} s {how:<9}  {run.where}")


def _summary(
    grid_path: Path,
    store: Store,
    executor: str,
    workers: int,
    planned: Plan,
    tally: _Tally,
    runner: Runner,
    started: float,
    *,
    records: bool,
) -> SweepSummary:
    cells = []
    for cell in planned.cells if records else []:
        cell_key = (cell.suite.spec.key, cell.manifest.suite_hash, cell.model_hash)
        status = {str(seed): tally.status.get((*cell_key, seed), "not run") for seed in cell.seeds}
        errors = {
            str(seed): tally.errors[(*cell_key, seed)] for seed in cell.seeds if (*cell_key, seed) in tally.errors
        }
        errors = {seed: error.strip().splitlines()[-1] for seed, error in errors.items() if error.strip()}
        label = tally.labels.get(cell_key, cell.label)
        cells.append(runner.result_record(cell.model, cell.manifest.suite_hash, cell.seeds, status, errors, label))
    counts = tally.counts
    return SweepSummary(
        grid=str(grid_path),
        store=str(store.path),
        executor=executor,
        workers=workers,
        runs=planned.total,
        done=counts["done"],
        failed=counts["failed"],
        not_applicable=counts["n/a"],
        skipped=counts["skipped"],
        busy=counts["busy"],
        refused=counts["refused"],
        seconds=round(time.monotonic() - started, 3),
        problems=tally.problems,
        records=cells,
    )


def summary_line(summary: SweepSummary) -> str:
    """The sweep in one line, for the terminal."""
    parts = [f"{summary.done} done", f"{summary.failed} failed"]
    if summary.not_applicable:
        parts.append(f"{summary.not_applicable} n/a")
    parts.append(f"{summary.skipped} already in the store")
    if summary.busy:
        parts.append(f"{summary.busy} held by other processes (skipped)")
    if summary.refused:
        parts.append(f"{summary.refused} not run (refused)")
    where = f" on {summary.executor} with {summary.workers} workers" if summary.workers else ""
    return f"sweep {summary.grid}: {summary.runs} runs: {', '.join(parts)}; {summary.seconds:.1f} s{where}."
