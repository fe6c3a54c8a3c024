"""`structbench run`'s seeds, each in a supervised worker process: a sweep of one run at a time.

`SupervisedWorker` is the `structbench.runs.runner.Supervisor` that `run` and `reference verify`
hand the runner: the runner calls it in place of running a model in its own process. It hands the
claimed run to a local executor (`structbench.execution.executors.LocalExecutor`, one worker
that lives for the whole command, so that torch is imported once) and turns the worker's answer
into the runner's outcome, which the runner alone stores. So a model that hangs past
`--timeout`, exits (`os._exit`), dies of a signal or grows past `--max-memory` is a failed run
with one sentence; what it prints reaches the worker's log, never structbench's output (only its
tail, kept with a failed run); and what it forked is ended with its run. The worker relays the
run's progress bars (`WorkOrder.progress`), which are redrawn here, below the command's own bar.

`InProcess` is `run --in-process`'s supervisor: each seed runs in structbench's own process (for a
debugger), unbounded in time and memory, but what the model started still ends with its seed,
a daemon too (`structbench.execution.processes.contained`).

Only a model given by name is supervised: a Python API caller's own object lives in the caller's
process, and runs there. `quickstart`, `check` and the Python API run models in their own process.
"""

from __future__ import annotations

import sys
from collections.abc import Callable
from pathlib import Path
from types import TracebackType
from typing import Any, TextIO

from tqdm import tqdm

from structbench.errors import UserError
from structbench.execution.executors import LocalExecutor, Resources
from structbench.execution.processes import contained
from structbench.execution.worker import WorkOrder, order_for, outcome_of
from structbench.runs.attempt import Outcome, attempt
from structbench.runs.context import SeedRun

DEFAULT_TIMEOUT = 24 * 3600.0
"""A run's time-out when `--timeout` is not given: a day, longer than any `cpu-small` or GPU
`paper` budget of the reference models, so that only a hung run reaches it."""
POLL_SECONDS = 0.2
"""How often the worker's answers, time-out and memory are looked at while a run goes on."""


class SupervisedWorker:
    """Runs each claimed seed in a worker process (see the module docstring); a context manager
    that ends its worker on exit."""

    def __init__(
        self,
        *,
        command: str,
        timeout: float | None = DEFAULT_TIMEOUT,
        max_memory_mb: float | None = None,
        source_dir: Path | None = None,
        progress: bool | None = None,
        stream: TextIO | None = None,
    ) -> None:
        """`command` names the command in a failure's sentence (`run --timeout N`); `progress`: show
        the run's progress bars (None: on a terminal, as tqdm decides), redrawn on `stream` (stderr)."""
        if timeout is not None and timeout <= 0:
            raise UserError(f"--timeout {timeout:g} must be a positive number of seconds, e.g. --timeout 3600.")
        if max_memory_mb is not None and max_memory_mb <= 0:
            raise UserError(f"--max-memory {max_memory_mb:g} must be a positive number of MB, e.g. --max-memory 8000.")
        self.command, self.timeout, self.max_memory_mb = command, timeout, max_memory_mb
        self.source_dir = source_dir
        self.stream = stream or sys.stderr
        self.progress = self.stream.isatty() if progress is None else progress
        self._executor: LocalExecutor | None = None
        self._orders = 0
        self._ready().prestart()
        self._line: tqdm[Any] | None = None
        """The line showing the worker's progress, while a run shows some."""

    def __enter__(self) -> SupervisedWorker:
        return self

    def __exit__(
        self, kind: type[BaseException] | None, error: BaseException | None, trace: TracebackType | None
    ) -> None:
        self.close()

    def close(self) -> None:
        """End the worker (and whatever its models left running)."""
        if self._executor is not None:
            self._executor.stop()
            self._executor = None

    def __call__(
        self,
        suite_ref: str,
        context: SeedRun,
        *,
        log: Callable[[str], None] | None = None,
        progress: bool | None = None,
    ) -> Outcome:
        """Fit and ask the model of `context` in the worker: how it came out, or the refusal's sentence
        (`UserError`, e.g. a `--set` value the model's constructor rejects). The runner's `log` and
        `progress` are not the worker's: it logs to its own log, and relays bars as `progress` said."""
        executor = self._ready()
        self._orders += 1
        asked = context.request
        name = asked.label if asked.named else None
        order = order_for(self._orders, suite_ref, context, self.source_dir, name=name, progress=self.progress)
        executor.submit(order, Resources(cpus=float(context.model.threads)))
        try:
            while True:
                for result in executor.collect(POLL_SECONDS):
                    if result.key == order.key:
                        if result.status == "refused":
                            raise UserError(result.error or f"{context.where} was not run")
                        return outcome_of(result)
        except BaseException:
            self.close()  # an interrupt: the worker goes with it, and the run stays claimed for a redo
            raise
        finally:
            self._clear()

    def _ready(self) -> LocalExecutor:
        """The executor of this command's worker, started on first use (and again after an interrupt)."""
        if self._executor is None:
            self._executor = LocalExecutor(
                1,
                timeout=self.timeout,
                max_memory_mb=self.max_memory_mb,
                command=self.command,
                on_progress=self._show,
            )
        return self._executor

    def _show(self, order: WorkOrder, text: str) -> None:
        """Redraw the worker's latest progress line: a text-only tqdm bar, which tqdm places below the
        command's own overall bar and cuts to the terminal's width."""
        if self._line is None:
            self._line = tqdm(total=0, bar_format="{desc}", leave=False, file=self.stream, dynamic_ncols=True)
        self._line.set_description_str(text)

    def _clear(self) -> None:
        if self._line is not None:
            self._line.close()
            self._line = None


class InProcess:
    """`run --in-process`: each seed in this process, whatever it started ended with it (see the
    module docstring); a context manager, as `SupervisedWorker` is, with nothing to end."""

    def __enter__(self) -> InProcess:
        return self

    def __exit__(
        self, kind: type[BaseException] | None, error: BaseException | None, trace: TracebackType | None
    ) -> None:
        return None

    def __call__(
        self, suite_ref: str, context: SeedRun, *, log: Callable[[str], None], progress: bool | None
    ) -> Outcome:
        with contained():
            return attempt(context, log=log, progress=progress)
