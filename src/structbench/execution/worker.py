"""The worker side of `sweep` and `run`: fit and predict one run in a worker process, away from the store.

A sweep's driver claims each run in the store and sends a worker a `WorkOrder`; the worker
builds the suite's data where it is (or checks it), builds the model, fits and asks it exactly as
`structbench run` does (`structbench.runs.attempt`), and answers a `WorkResult`: scores,
predictions, timings, compute, statistics and its environment, or how the run ended without
them. Only the driver writes the store. Both are JSON text, so that the local executor (a process
speaking JSON lines over pipes) and the Ray executor (a task taking and returning a string) share
one encoding, and nothing is ever unpickled.

Before it runs anything a worker checks that it would make the run the driver claimed: the same
structbench version and git revision, the same suite data (hash) and the same model key
(settings, resolved recipe, code fingerprint). A worker whose files differ (another checkout on
a cluster node) refuses the run in one sentence instead of storing its numbers under the
driver's key.

`main` is the local executor's worker (`python -m structbench.execution.local_worker`): it reads one order per line
on stdin and writes, on the stdout it started with, `{"started": KEY}` when it begins an order and
then its result, one line each; what the model prints goes to stderr. It dies with the driver (Linux: `PR_SET_PDEATHSIG`; elsewhere a thread that
watches its parent), so that a driver killed with SIGKILL leaves no worker training on. It adopts
the orphans of what its models start (a subreaper, `structbench.execution.processes`), so that the
driver finds a daemon among its descendants and ends it with its run; it reaps them before the
next order. A Ray task runs its order `contained` in its worker process, to the same end.
"""

from __future__ import annotations

import ctypes
import io
import json
import math
import os
import re
import signal
import sys
import threading
import time
from pathlib import Path
from typing import Any, Literal, TextIO

from pydantic import Field

from structbench import __version__, registry
from structbench.convergence import Convergence
from structbench.data import freeze
from structbench.errors import UserError
from structbench.execution.collector import set_thresholds
from structbench.execution.processes import contained, reap, subreaper
from structbench.runs.attempt import Ended, Evaluated, Outcome, attempt
from structbench.runs.context import ModelOnSuite, SeedRun
from structbench.runs.provenance import git_commit
from structbench.runs.request import ModelRequest
from structbench.scoring import Score, SplitScores
from structbench.specs import Frozen, ModelSpec

PARENT_VARIABLE = "STRUCTBENCH_SWEEP_PARENT"
"""The driver's pid, set for a local worker: it exits at once when its parent is already another."""
STARTED = "started"
"""A local worker's line `{"started": KEY}`: it has read order KEY and starts on it (after its own start-up)."""
PROGRESS = "progress"
"""A local worker's line `{"progress": TEXT}`: the latest redraw of a progress bar of its run (an
order with `progress`), for the driver to show."""


class WorkOrder(Frozen):
    """One run as the driver hands it to a worker."""

    key: int
    """The driver's number for the run, echoed in the result."""
    suite: str
    """The suite as the grid names it (`ID`, `ID@VERSION` or `module:Class`)."""
    suite_hash: str
    """The hash of the suite data the run was claimed for; the worker's must be the same."""
    model: ModelSpec
    """The model's name and every `--set` value (also those that do not key the run, e.g. `device`)."""
    name: str | None = None
    """The grid's label for the model (`run --name`)."""
    limit: int | None = None
    """`run --limit`: only the first N examples of each test split."""
    model_hash: str
    """The run key's model hash the driver claimed; the worker's must be the same."""
    seed: int
    source_dir: str | None = None
    """Where the suite's published source files are (`--source-dir`), if the driver was told."""
    harness_version: str
    git_commit: str | None = None
    import_path: list[str] = Field(default_factory=list)
    """Folders the driver imports from (its working directory first): a `module:Class` model is found
    there by the worker too, where they exist."""
    progress: bool = False
    """Relay the run's progress bars to the driver (`structbench run` on a terminal); a sweep shows its own."""


class ScoreRow(Frozen):
    """One `structbench.scoring.Score` as JSON: NaN (undefined) travels as null."""

    metric: str
    value: float | None
    n: int
    breakdown: str = ""
    level: str = ""
    proportion: bool = False


class SplitOutcome(Frozen):
    """One test split of a finished run: its scores, per-example verdicts, example ids and predictions."""

    name: str
    scores: list[ScoreRow]
    correct: list[bool | None]
    ids: list[str]
    predictions: list[Any]
    """The model's answers, as the store keeps them (JSON values)."""


class WorkResult(Frozen):
    """What a worker answers for one order."""

    key: int
    status: Literal["done", "failed", "n/a", "refused"]
    """`refused`: the run was not made (a configuration problem, or a worker unlike the driver);
    the driver gives its claim back and the store keeps no trace of it."""
    error: str | None = None
    """`failed`: the traceback tail or the worker's fate; `n/a`: the reason; `refused`: the sentence."""
    message: str | None = None
    """One line for the terminal."""
    splits: list[SplitOutcome] = Field(default_factory=list)
    fit_seconds: float = 0.0
    predict_seconds: float = 0.0
    compute: dict[str, int | str] | None = None
    statistics: dict[str, float] | None = None
    convergence: Convergence | None = None
    label: str | None = None
    """What the built model calls itself (a command model's hello name)."""
    environment: str | None = None
    """The environment JSON of the worker that ran the model (`structbench.runs.provenance`), stored
    with a done run."""


def order_for(
    key: int,
    suite: str,
    context: SeedRun,
    source_dir: Path | None,
    *,
    name: str | None,
    progress: bool = False,
) -> WorkOrder:
    """What a worker needs to make the claimed run of `context` (`suite` as the grid or `--suite` named
    it, `name` the `--name` label): a sweep's driver and `run`'s supervisor both order runs so."""
    return WorkOrder(
        key=key,
        suite=suite,
        suite_hash=context.manifest.suite_hash,
        model=context.request.spec,
        name=name,
        limit=context.request.limit,
        model_hash=context.model.key.model_hash,
        seed=context.seed,
        source_dir=None if source_dir is None else str(source_dir.expanduser().resolve()),
        harness_version=context.claim_fields["harness_version"],
        git_commit=context.claim_fields["git_commit"],
        import_path=[str(Path.cwd()), *(entry for entry in sys.path if entry)],
        progress=progress,
    )


def ended(key: int, status: Literal["failed", "refused"], error: str, message: str | None = None) -> WorkResult:
    """A result for a run that produced nothing: `failed` (e.g. the worker died or timed out) or `refused`."""
    return WorkResult(key=key, status=status, error=error, message=message or error.strip().splitlines()[-1])


def _refused(order: WorkOrder, sentence: str) -> WorkResult:
    return ended(order.key, "refused", sentence)


def execute(order: WorkOrder) -> WorkResult:
    """Fit and predict the ordered run (see the module docstring); never raises but on an interrupt."""
    for folder in order.import_path:
        if folder not in sys.path and os.path.isdir(folder):
            sys.path.append(folder)
    if order.harness_version != __version__:
        return _refused(
            order,
            f"the worker runs structbench {__version__}, the driver {order.harness_version}; "
            "install the same structbench on every worker.",
        )
    commit = git_commit()
    if order.git_commit and commit and commit != order.git_commit:
        return _refused(
            order,
            f"the worker's structbench is at git revision {commit[:12]}, the driver's at {order.git_commit[:12]}; "
            "check out the same revision on every worker.",
        )
    try:
        suite = registry.suite(order.suite)
        keyed = ModelOnSuite.of(suite, ModelRequest.of(order.model, name=order.name, limit=order.limit))
        if keyed.key.model_hash != order.model_hash:
            return _refused(
                order,
                f"{order.model.label} resolves to another configuration on the worker than on the driver (its "
                "recipe, code or files differ there); give every worker the same files.",
            )
        source_dir = None if order.source_dir is None else Path(order.source_dir).expanduser()
        manifest = freeze.ensure_built(suite, source_dir)
        if manifest.suite_hash != order.suite_hash:
            return _refused(
                order,
                f"the worker's {suite.spec.key} data has hash {manifest.suite_hash[:12]}, the driver's "
                f"{order.suite_hash[:12]}; build the same data on every worker.",
            )
        outcome = attempt(
            keyed.seed_run(manifest, order.seed), log=_to_stderr, progress=None if order.progress else False
        )
    except UserError as error:
        return _refused(order, str(error))
    except Exception as error:  # the harness failed on this worker (not the model): the run fails, with why
        return ended(order.key, "failed", f"the worker failed before the model ran: {type(error).__name__}: {error}")
    return result_of(order.key, outcome)


def _to_stderr(message: str) -> None:
    """A worker's log line: to its stderr (the local executor keeps it for a failure's tail)."""
    print(message, file=sys.stderr, flush=True)


def result_of(key: int, outcome: Outcome) -> WorkResult:
    """A runner outcome as the JSON a worker sends back."""
    if isinstance(outcome, Ended):
        return WorkResult(key=key, status=outcome.status, error=outcome.error, message=outcome.message)
    splits = []
    for name, (scores, ids, predictions) in outcome.results.items():
        rows = [
            ScoreRow(
                metric=score.metric,
                value=None if math.isnan(score.value) else float(score.value),
                n=int(score.n),
                breakdown=score.breakdown,
                level=score.level,
                proportion=bool(score.proportion),
            )
            for score in scores.scores
        ]
        correct = [None if ok is None else bool(ok) for ok in scores.correct]
        answers = json.loads(json.dumps(list(predictions)))  # exactly the JSON values the store will keep
        splits.append(SplitOutcome(name=name, scores=rows, correct=correct, ids=list(ids), predictions=answers))
    return WorkResult(
        key=key,
        status="done",
        splits=splits,
        fit_seconds=outcome.fit_seconds,
        predict_seconds=outcome.predict_seconds,
        compute=outcome.compute,
        statistics=outcome.statistics,
        convergence=outcome.convergence,
        label=outcome.label,
        environment=outcome.environment,
    )


def outcome_of(result: WorkResult) -> Outcome:
    """A worker's result as the runner's outcome that `Runner.record` stores (not for `refused`)."""
    if result.status == "refused":
        raise ValueError("a refused run has no outcome to store")
    if result.status != "done":
        status: Literal["failed", "n/a"] = "n/a" if result.status == "n/a" else "failed"
        error = result.error or result.message or "no reason given"
        return Ended(status, error, result.message or error)
    results = {
        split.name: (
            SplitScores(
                scores=[
                    Score(
                        metric=row.metric,
                        value=math.nan if row.value is None else row.value,
                        n=row.n,
                        breakdown=row.breakdown,
                        level=row.level,
                        proportion=row.proportion,
                    )
                    for row in split.scores
                ],
                correct=list(split.correct),
            ),
            split.ids,
            split.predictions,
        )
        for split in result.splits
    }
    return Evaluated(
        results,
        result.fit_seconds,
        result.predict_seconds,
        result.compute,
        result.label,
        result.statistics,
        result.environment,
        result.convergence,
    )


def run_order_text(order: str, started: Any = None) -> str:
    """One order in, one result out, both JSON text: the Ray executor's task. With a time-out the
    driver passes `started`, a `ray.util.queue.Queue` that gets the order's key as the run begins, so
    that the time-out counts from there and not from the worker's start-up."""
    set_thresholds()  # a Ray worker is a process of Ray's: its collector is set per task
    work = WorkOrder.model_validate_json(order)
    if started is not None:
        started.put(work.key)
    with contained():  # what the model started ends with its run, a daemon too, as on the local executor
        return execute(work).model_dump_json()


def _die_with_parent() -> None:
    """End this worker when the process that started it ends, even by SIGKILL (see the module docstring)."""
    parent = int(os.environ.get(PARENT_VARIABLE, "0") or 0)
    if sys.platform.startswith("linux"):
        try:
            libc = ctypes.CDLL(None, use_errno=True)
            libc.prctl(1, signal.SIGKILL)  # PR_SET_PDEATHSIG: the kernel kills us when the parent exits
        except (OSError, AttributeError):
            pass
    if parent and os.getppid() != parent:  # the parent died before the line above took effect
        os._exit(1)

    def watch() -> None:
        while True:
            time.sleep(1.0)
            if parent and os.getppid() != parent:
                os._exit(1)

    threading.Thread(target=watch, name="parent-watch", daemon=True).start()


class _Protocol:
    """The worker's answers to the driver, one JSON line each, from any thread."""

    def __init__(self, stream: TextIO) -> None:
        self._stream, self._lock = stream, threading.Lock()

    def send(self, message: dict[str, Any] | str) -> None:
        line = message if isinstance(message, str) else json.dumps(message)
        with self._lock:
            self._stream.write(line + "\n")
            self._stream.flush()


class _BarRelay(io.TextIOBase):
    """`sys.stderr` during a run whose progress the driver shows: a progress bar's redraw (a write
    that starts with a carriage return, as tqdm's do) goes to the driver as `{"progress": TEXT}`,
    anything else the model writes to the worker's log. It says it is a terminal, so that bars that
    draw only on one (tqdm's `disable=None`) draw."""

    def __init__(self, log: TextIO, protocol: _Protocol) -> None:
        self._log, self._protocol = log, protocol

    def isatty(self) -> bool:
        return True

    def writable(self) -> bool:
        return True

    def write(self, text: str) -> int:
        if text.startswith("\r"):
            self._protocol.send({PROGRESS: _ANSI.sub("", text).strip()})
            return len(text)
        return self._log.write(text)

    def flush(self) -> None:
        self._log.flush()

    def fileno(self) -> int:
        return self._log.fileno()


_ANSI = re.compile(r"\x1b\[[0-9;]*[A-Za-z]")
"""Terminal control sequences (tqdm moves the cursor between bars): not text to relay."""


def main() -> int:
    """The local executor's worker: orders on stdin, results on the original stdout, one JSON line each."""
    _die_with_parent()
    subreaper(True)
    set_thresholds()
    protocol = _Protocol(os.fdopen(os.dup(sys.stdout.fileno()), "w", encoding="utf-8"))
    os.dup2(sys.stderr.fileno(), sys.stdout.fileno())  # whatever the model prints lands in the worker's log
    log = sys.stderr
    for line in sys.stdin:
        if not line.strip():
            continue
        order = WorkOrder.model_validate_json(line)
        reap()  # the orphans of the last run, which the driver has ended since
        protocol.send({STARTED: order.key})  # the run's time-out counts from here
        sys.stderr = _BarRelay(log, protocol) if order.progress else log
        try:
            result = execute(order)
        finally:
            sys.stderr = log
        protocol.send(result.model_dump_json())
    return 0
