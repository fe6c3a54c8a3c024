"""Where runs are fitted and predicted away from the command's process: a local process pool, or Ray.

Both take `WorkOrder`s and give back `WorkResult`s (`structbench.execution.worker`), as JSON text;
neither touches the store. Both end a run that outlives `--timeout` (its worker is killed, the
run fails with "timed out after N s") and turn a worker that dies into a failed run ("worker
died: killed by SIGKILL"), so that the sweep goes on.

- `LocalExecutor`: at most N worker processes (`python -m structbench.execution.local_worker`), each in a
  session of its own, each running one order at a time and living on for the next, so
  that torch is imported once per worker rather than once per run. Every process a worker's model
  starts is tracked (`structbench.execution.processes`: the worker adopts orphans, carries a marker
  of its own, and runs in a cgroup of its own where one can be made), counted in `--max-memory`
  and ended when its run ends, a daemon too. A worker's stderr (what its
  models print) goes to a log file whose tail explains a death. A timed-out worker is killed with
  everything it started and replaced by a fresh one. Workers die with the driver (see `structbench.execution.worker`).
  Each run holds its worker to the run's own thread count (`structbench.runs.threads`), so the
  pool's parallelism is its workers.
- `RayExecutor`: one Ray task per run (`pip install 'structbench[ray]'`), on a local Ray started
  with N CPUs or on the cluster at `--address`. A task asks for as many CPUs as its run has
  threads and the GPU its settings ask for (`resources_of`); `STRUCTBENCH_HOME` and `STRUCTBENCH_SOURCE_DIR` are passed to
  the workers, so that checkpoints land in a shared home where it is shared and on the worker's
  disk where it is not. Tasks are never retried by Ray: a crashed worker is a failed run. A run's
  time-out counts from when its task starts on a worker, which says so on a Ray queue: starting
  a worker (importing torch) is not the run's, and on a loaded machine it took more than a
  short time-out. A task that has not started `STARTUP_SECONDS` after its submission is
  counted from its submission, as a local worker that never starts is.
"""

from __future__ import annotations

import contextlib
import importlib
import json
import logging
import os
import queue
import signal
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Any, Protocol

from structbench.data.sources import SOURCE_DIR_VARIABLE
from structbench.errors import UserError
from structbench.execution.processes import LINUX, Cgroup, Tracked, new_marker
from structbench.execution.worker import (
    PARENT_VARIABLE,
    PROGRESS,
    STARTED,
    WorkOrder,
    WorkResult,
    ended,
    run_order_text,
)
from structbench.paths import HOME_VARIABLE, structbench_home
from structbench.specs import ModelSpec

POSIX = os.name == "posix"
TAIL_LINES = 20
"""Lines of a dead worker's stderr kept in its run's error."""
STARTUP_SECONDS = 120.0
"""How long a worker may take to start (import structbench) before its order's time-out begins anyway."""
MEMORY_SECONDS = 0.5
"""How often a run's memory is added up for `--max-memory` (a look at every process's `/proc` entry)."""


@dataclass(frozen=True)
class Resources:
    """What one run asks of the machine that runs it."""

    cpus: float = 1.0
    gpus: float = 0.0


def resources_of(spec: ModelSpec, threads: int, *, gpus_available: bool) -> Resources:
    """A run's CPUs and GPUs: the `threads` it computes on (`ModelOnSuite.threads`); one GPU for
    `device=cuda` (or `cuda:N`), and for `device=auto` where the cluster has GPUs (auto takes one)."""
    device = spec.params.get("device")
    cpus = float(threads)
    wants_gpu = isinstance(device, str) and (device.startswith("cuda") or (device == "auto" and gpus_available))
    return Resources(cpus=cpus, gpus=1.0 if wants_gpu else 0.0)


class Executor(Protocol):
    """Runs work orders somewhere and reports their results."""

    name: str
    capacity: int
    """How many runs may be in flight at once; the driver submits no more."""

    def submit(self, order: WorkOrder, resources: Resources) -> None:
        """Start `order` (the driver has claimed its run)."""

    def collect(self, wait: float) -> list[WorkResult]:
        """The results that have arrived, waiting up to `wait` seconds for the first; also ends the
        runs past their time-out, whose (failed) results it returns."""

    def stop(self) -> None:
        """End every run in flight and let go of the workers (idempotent)."""


def timed_out(order: WorkOrder, timeout: float, option: str = "sweep --timeout") -> WorkResult:
    return ended(order.key, "failed", f"timed out after {timeout:g} s ({option} {timeout:g}); its worker was killed")


def over_memory(order: WorkOrder, limit_mb: float, option: str = "sweep --max-memory") -> WorkResult:
    return ended(
        order.key,
        "failed",
        f"used more than {limit_mb:g} MB of memory ({option} {limit_mb:g}); its worker was killed",
    )


def worker_environment() -> dict[str, str]:
    """What every worker must see as the driver does: the home (suites, checkpoints) and the source folder."""
    variables = {HOME_VARIABLE: str(structbench_home().resolve())}
    if source := os.environ.get(SOURCE_DIR_VARIABLE):
        variables[SOURCE_DIR_VARIABLE] = source
    return variables


@dataclass
class _Worker:
    """One local worker process and the order it is running."""

    process: subprocess.Popen[bytes]
    log_path: Path
    log: IO[bytes]
    tracked: Tracked
    """Every process the worker's models started (see `structbench.execution.processes`)."""
    order: WorkOrder | None = None
    started: float = 0.0
    """When the order was sent, then when the worker said it started on it (its start-up excluded)."""
    running: bool = False
    """The worker has said it started on its order."""
    log_offset: int = 0
    timed_out: bool = False
    over_memory: bool = False
    measured: float = 0.0
    """When its memory was last added up."""


class LocalExecutor:
    """A pool of at most `workers` local worker processes (see the module docstring)."""

    name = "local"

    def __init__(
        self,
        workers: int,
        *,
        timeout: float | None = None,
        max_memory_mb: float | None = None,
        command: str = "sweep",
        on_progress: Callable[[WorkOrder, str], None] | None = None,
    ) -> None:
        """`command` names the command in a failure's sentence (`sweep --timeout N`); `on_progress`
        gets the progress a worker relays for an order that asks for it (`WorkOrder.progress`)."""
        if workers < 1:
            raise UserError(f"--workers {workers} must be at least 1.")
        self.capacity = workers
        self.timeout = timeout
        self.max_memory_mb = max_memory_mb
        self.command = command
        self.on_progress = on_progress
        self._folder = tempfile.TemporaryDirectory(prefix="structbench-sweep-")
        self._workers: list[_Worker] = []
        self._messages: queue.Queue[tuple[_Worker, str | None]] = queue.Queue()
        self._started = 0
        self._environment = {**os.environ, **worker_environment(), PARENT_VARIABLE: str(os.getpid())}

    def _start(self) -> _Worker:
        self._started += 1
        log_path = Path(self._folder.name) / f"worker-{self._started}.log"
        log = log_path.open("w+b")
        marker = new_marker()
        process = subprocess.Popen(
            [sys.executable, "-m", "structbench.execution.local_worker"],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=log,
            env={**self._environment, marker: "1"},
            start_new_session=POSIX,  # its own session and group: spared the driver's Ctrl-C and terminal
        )
        cgroup = Cgroup.make()
        if cgroup is not None and not cgroup.add(process.pid):  # before it reads an order: nothing forked yet
            cgroup.remove()
            cgroup = None
        worker = _Worker(process, log_path, log, Tracked(process.pid, marker, cgroup, session=POSIX, adopts=LINUX))
        threading.Thread(target=self._read, args=(worker,), name=f"sweep-worker-{process.pid}", daemon=True).start()
        self._workers.append(worker)
        return worker

    def _read(self, worker: _Worker) -> None:
        """Pass every line the worker answers to the driver, then None at its end."""
        assert worker.process.stdout is not None
        for line in worker.process.stdout:
            self._messages.put((worker, line.decode("utf-8", "replace")))
        self._messages.put((worker, None))

    def prestart(self) -> None:
        """Start a worker now, so that its start-up (importing structbench, torch) overlaps the
        caller's own (opening the store, building the suite) rather than delaying the first run."""
        if not self._workers:
            self._start()

    def submit(self, order: WorkOrder, resources: Resources) -> None:
        worker = next((w for w in self._workers if w.order is None and w.process.poll() is None), None)
        if worker is None:
            worker = self._start()
        worker.order, worker.started, worker.running, worker.timed_out = order, time.monotonic(), False, False
        worker.log_offset = worker.log_path.stat().st_size
        assert worker.process.stdin is not None
        try:
            worker.process.stdin.write(order.model_dump_json().encode() + b"\n")
            worker.process.stdin.flush()
        except OSError:
            pass  # the worker died just now: its end arrives through the reader, and fails this order

    def collect(self, wait: float) -> list[WorkResult]:
        results: list[WorkResult] = []
        try:
            message = self._messages.get(timeout=wait)
            while True:
                results += self._handle(*message)
                message = self._messages.get_nowait()
        except queue.Empty:
            pass
        self._end_overdue()
        return results

    def _handle(self, worker: _Worker, line: str | None) -> list[WorkResult]:
        order = worker.order
        if line is not None:
            try:
                message = json.loads(line)
                if isinstance(message, dict) and set(message) == {STARTED}:
                    if order is not None and message[STARTED] == order.key:
                        worker.started, worker.running = time.monotonic(), True
                    return []
                if isinstance(message, dict) and set(message) == {PROGRESS}:
                    if order is not None and self.on_progress is not None:
                        self.on_progress(order, str(message[PROGRESS]))
                    return []
                result = WorkResult.model_validate(message)
            except ValueError:
                self._kill(worker)  # only structbench writes there: a worker that garbles it is broken
                return []
            if order is not None and result.key == order.key:
                worker.order = None
                worker.tracked.end()  # what the model left running, a daemon too; the worker lives on
                return [result]
            return []
        code = worker.process.wait()
        worker.tracked.root_alive = False
        self._kill(worker)
        self._forget(worker)
        if order is None:
            return []
        if worker.timed_out and self.timeout is not None:
            return [timed_out(order, self.timeout, f"{self.command} --timeout")]
        if worker.over_memory and self.max_memory_mb is not None:
            return [over_memory(order, self.max_memory_mb, f"{self.command} --max-memory")]
        return [ended(order.key, "failed", f"worker died: {_fate(code)}{self._tail(worker)}")]

    def _tail(self, worker: _Worker) -> str:
        """The last lines the worker wrote to stderr while running its last order."""
        try:
            with worker.log_path.open("rb") as log:
                log.seek(worker.log_offset)
                text = log.read().decode("utf-8", "replace")
        except OSError:
            return ""
        lines = [line for line in text.splitlines() if line.strip()][-TAIL_LINES:]
        return "; its last output:\n" + "\n".join(lines) if lines else ""

    def _end_overdue(self) -> None:
        """Kill the workers whose run is past the time-out (counted from the run's start, not the
        worker's: a fresh worker's start-up is not the run's; one that never starts gets `STARTUP_SECONDS` more)
        or whose process group holds more memory than `max_memory_mb`; and end the group of a worker
        that has died, whose children would otherwise keep its pipe open and its death unseen."""
        now = time.monotonic()
        for worker in self._workers:
            if worker.process.poll() is not None:
                worker.tracked.root_alive = False
                self._kill(worker)  # the reader then sees the end of the pipe, and the death is reported
                continue
            if worker.order is None or worker.timed_out or worker.over_memory:
                continue
            allowed = None if self.timeout is None else self.timeout + (0.0 if worker.running else STARTUP_SECONDS)
            if allowed is not None and now - worker.started > allowed:
                worker.timed_out = True
                self._kill(worker)
            elif self.max_memory_mb is not None and now - worker.measured >= MEMORY_SECONDS:
                worker.measured = now
                if worker.tracked.memory() > self.max_memory_mb * 2**20:
                    worker.over_memory = True
                    self._kill(worker)

    def _kill(self, worker: _Worker) -> None:
        """Kill the worker and every process it started (its session, its cgroup, its marker's
        carriers: a daemon too; also what is left once the worker itself has ended)."""
        worker.tracked.end(root=True)
        with contextlib.suppress(ProcessLookupError, PermissionError):
            if POSIX:
                os.killpg(worker.process.pid, signal.SIGKILL)
            elif worker.process.poll() is None:
                worker.process.kill()

    def _forget(self, worker: _Worker) -> None:
        """Let go of a worker that has ended: its log, and its cgroup once empty."""
        self._workers.remove(worker)
        worker.log.close()
        if worker.tracked.cgroup is not None:
            worker.tracked.cgroup.remove()

    def stop(self) -> None:
        """End every worker with its whole group (a model's children too): an idle worker holds
        nothing to lose, and one still starting up would otherwise be waited for."""
        for worker in list(self._workers):
            self._kill(worker)
            assert worker.process.stdin is not None
            with contextlib.suppress(OSError):
                worker.process.stdin.close()
        for worker in list(self._workers):
            worker.process.wait()
            worker.tracked.root_alive = False
            worker.tracked.end()  # what outlived the worker, were it still starting when it was killed
            self._forget(worker)
        self._folder.cleanup()


def _fate(code: int) -> str:
    """How a worker process ended, from its exit status."""
    if code < 0:
        try:
            return f"killed by {signal.Signals(-code).name}"
        except ValueError:
            return f"killed by signal {-code}"
    if code == 0:
        return "it exited without answering"
    return f"it exited with status {code}"


def _import_ray() -> Any:
    """The `ray` module, or one sentence on how to install it."""
    try:
        return importlib.import_module("ray")
    except ImportError:
        raise UserError("the ray executor needs Ray; install it with `pip install 'structbench[ray]'`.") from None


class RayExecutor:
    """One Ray task per run, on a local Ray or a cluster (see the module docstring)."""

    name = "ray"
    STOPPING = (signal.SIGINT, signal.SIGTERM)
    """The signals that end a sweep (Ctrl-C, a batch scheduler's cancel)."""

    @staticmethod
    def _main_thread() -> bool:
        """Whether this is the main thread, the only one that may set signal handlers."""
        return threading.current_thread() is threading.main_thread()

    def __init__(self, workers: int | None, *, timeout: float | None = None, address: str | None = None) -> None:
        if workers is not None and workers < 1:
            raise UserError(f"--workers {workers} must be at least 1.")
        self._ray = ray = _import_ray()
        self.timeout = timeout
        # Ray's driver prints its workers' error messages ("(raylet) A worker died ...") on stdout: they
        # go to stderr while the sweep runs, so that stdout holds only what structbench prints (--json)
        self._stdout = sys.stdout
        sys.stdout = sys.stderr
        # the runs are the sweep's work: they run at the priority of the process that started Ray, as the local
        # executor's do, not at Ray's default of nice 15, where on a machine busy with other work a run got so
        # little CPU that `--timeout` failed it as hung
        runtime_env = {"env_vars": {**worker_environment(), "RAY_worker_niceness": "0"}}
        options: dict[str, Any] = {"runtime_env": runtime_env, "log_to_driver": False, "logging_level": logging.WARNING}
        # ray.init installs SIGTERM handlers of its own, which exit the process (sys.exit) from wherever
        # it is: the sweep's handler (SIGTERM ends the sweep as Ctrl-C does) is put back once Ray is up
        sweep_handler = signal.getsignal(signal.SIGTERM) if self._main_thread() else None
        try:
            if address:
                ray.init(address=address, **options)
            else:
                ray.init(num_cpus=workers or os.cpu_count() or 1, include_dashboard=False, **options)
        except (ConnectionError, ValueError, RuntimeError) as error:
            self._abandon_start(sweep_handler)
            where = f"the Ray cluster at {address}" if address else "a local Ray"
            raise UserError(f"cannot start or reach {where} ({error}); check --address, or leave it out.") from None
        except SystemExit:  # SIGTERM while Ray started: its handler's exit, told as the interrupt it is
            self._abandon_start(sweep_handler, interrupted=True)
            raise KeyboardInterrupt from None
        except BaseException:  # Ctrl-C while Ray started
            self._abandon_start(sweep_handler, interrupted=True)
            raise
        if sweep_handler is not None:
            signal.signal(signal.SIGTERM, sweep_handler)
        available = ray.cluster_resources()
        self.gpus_available = float(available.get("GPU", 0)) > 0
        self.capacity = workers or max(1, int(available.get("CPU", 1)))
        # never retried (a crash is a failed run); a CPU task's worker process lives on for the next
        # run (torch imported once), a GPU task's ends with its run, which gives its GPU memory back
        self._cpu_task = ray.remote(max_retries=0)(run_order_text)
        self._gpu_task = ray.remote(max_retries=0, max_calls=1)(run_order_text)
        self._running: dict[Any, tuple[WorkOrder, float]] = {}
        """Each task's run and when it was submitted."""
        self._started_queue: Any = None
        """Where the tasks put their order's key as they start (only with a time-out)."""
        self._started: dict[int, float] = {}
        """Order key -> when its task started, as far as the queue has told."""
        if timeout is not None:
            queues = importlib.import_module("ray.util.queue")
            self._started_queue = queues.Queue(actor_options={"num_cpus": 0})

    def _abandon_start(self, sweep_handler: Any, *, interrupted: bool = False) -> None:
        """Undo a `ray.init` cut short (an error, Ctrl-C, SIGTERM): shut down what of Ray it started,
        deaf to a second signal meanwhile, then give stdout and SIGTERM back. Without the shutdown the
        process exited with Ray half up, which ended in SIGABRT. Interrupted, it says how to end what
        Ray may have left running: the agents its raylet had started can outlive it, and only
        `ray stop` (which ends every Ray of this user on the machine) finds them."""
        deaf = self._main_thread()
        previous = {number: signal.signal(number, signal.SIG_IGN) for number in self.STOPPING} if deaf else {}
        try:
            with contextlib.suppress(Exception):
                self._ray.shutdown()
        finally:
            for number, handler in previous.items():
                signal.signal(number, handler)
            if sweep_handler is not None:
                signal.signal(signal.SIGTERM, sweep_handler)
            sys.stdout = self._stdout
        if interrupted:
            print(
                "structbench: the sweep was interrupted while Ray was starting; if Ray processes are left "
                "(`ps -ef | grep ray::`), `ray stop` ends them.",
                file=sys.stderr,
            )

    def submit(self, order: WorkOrder, resources: Resources) -> None:
        task = self._gpu_task if resources.gpus else self._cpu_task
        options = {"num_cpus": resources.cpus, "num_gpus": resources.gpus}
        reference = task.options(**options).remote(order.model_dump_json(), self._started_queue)
        self._running[reference] = (order, time.monotonic())

    def collect(self, wait: float) -> list[WorkResult]:
        ray = self._ray
        results: list[WorkResult] = []
        references = list(self._running)
        if references:
            ready, _ = ray.wait(references, num_returns=1, timeout=wait)
            if ready:
                ready, _ = ray.wait(references, num_returns=len(references), timeout=0)
            for reference in ready:
                order, _ = self._running.pop(reference)
                self._started.pop(order.key, None)
                results.append(self._result(reference, order))
        else:
            time.sleep(wait)
        if self.timeout is not None:
            now = time.monotonic()
            waiting = self._started_queue.qsize()
            if waiting:
                self._started.update((key, now) for key in self._started_queue.get_nowait_batch(waiting))
            for reference, (order, submitted) in list(self._running.items()):
                started = self._started.get(order.key)
                expired = (
                    now - submitted > self.timeout + STARTUP_SECONDS
                    if started is None
                    else now - started > self.timeout
                )
                if expired:
                    ray.cancel(reference, force=True)
                    del self._running[reference]
                    self._started.pop(order.key, None)
                    results.append(timed_out(order, self.timeout))
        return results

    def _result(self, reference: Any, order: WorkOrder) -> WorkResult:
        """The task's answer, or how its worker failed."""
        exceptions = self._ray.exceptions
        try:
            text: str = self._ray.get(reference)
        except exceptions.RayTaskError as error:  # the task raised: a harness error on the worker
            return ended(order.key, "failed", f"the worker failed: {error}")
        except exceptions.RayError as error:  # the worker process or its node died (OOM, SIGKILL, lost node)
            first = str(error).strip().splitlines()[0] if str(error).strip() else ""
            return ended(order.key, "failed", f"worker died: {type(error).__name__}: {first}")
        return WorkResult.model_validate_json(text)

    def stop(self) -> None:
        for reference in list(self._running):
            with contextlib.suppress(Exception):
                self._ray.cancel(reference, force=True)
        self._running.clear()
        with contextlib.suppress(Exception):
            self._ray.shutdown()
        sys.stdout = self._stdout
