"""The command adapter: a model in any language, spoken to in JSON lines over stdin/stdout.

In the spirit of LM Zoo's container binaries, without Docker. The harness starts the command
once per run; the command says hello with the protocols it speaks, is sent a fit request and
then predict requests, answers each with one line, and is told to close. The protocol's
reference, with a transcript and complete example models in Python and JavaScript, is
docs/command-protocol.md.

Each request has one time-out for being sent and answered (`timeout`, `fit_timeout` for fit):
a model that stops reading its stdin must not hold up the harness any more than one that never
answers. A time-out, a crash, an error reported by the model, or an answer that is not the JSON
expected fails the run with the command's last stderr lines.

A command's processes never outlive its run, nor the harness. A model may start processes of
its own (a server, data-loader workers), so the command runs in a process group of its own and
the whole group is ended (SIGTERM, then SIGKILL after a grace) on a failure, on close, and at
the interpreter's exit (atexit). A harness killed outright (kill -9, the OOM killer) runs no
code, so the group is led by a watchdog, a `/bin/sh` started just before the command, whose
stdin is a pipe that only the harness can write to: when the harness dies the pipe closes and
the watchdog ends the group. `prctl(PR_SET_PDEATHSIG)` would reach the command but not its
children. The watchdog leads the group instead of wrapping the command, so that the command
stays the harness's own child (its pipes, its exit status) and is never running unwatched.

A process that leaves the group on purpose (a daemon: it forks twice and calls `setsid`) is found
by a marker (Linux): the command runs with an environment variable of its own
(`structbench.execution.processes`), which everything it starts inherits; ending the command ends
the marker's carriers too, and so does the watchdog. (Where the model runs under `run`, `sweep` or
`run --in-process`, the run's own tracking ends them as well.) A process that also clears its
environment escapes the marker, not the run's tracking.

Limits: a child that the harness forks without exec (multiprocessing's `fork`) holds the pipe open
and so delays the watchdog until that child exits. Outside POSIX (Windows) there is no group and
no watchdog: on failure and close the command alone is killed, and sending a request can block.
"""

from __future__ import annotations

import atexit
import contextlib
import json
import math
import os
import queue
import select
import shlex
import signal
import subprocess
import threading
import time
from collections import deque
from typing import IO, Any

from pydantic import PositiveFloat

from structbench.errors import NotApplicable, UserError
from structbench.execution.processes import end_marked, new_marker
from structbench.runs.fingerprint import command_fingerprint
from structbench.specs import PROTOCOLS, Split

STDERR_LINES = 20
"""How many of the command's last stderr lines a failure carries."""
STDERR_LINE_BYTES = 4096
"""The bytes kept of each stderr line: the rest of a longer line is dropped as it is read, so that
a single enormous stderr line is never held whole."""
MAX_LINE_BYTES = 256 * 1024 * 1024
"""The longest stdout line (an answer) read from the command: a longer one fails the run and the
command is ended, rather than the harness holding however much it writes without a newline."""
MAX_STDOUT_BYTES = 1024 * 1024 * 1024
"""The most the command may write to stdout over one run (its answers to every request: a few MB on
the largest suite): more fails the run, rather than the harness queueing lines it never asked for
until memory runs out."""
KILL_GRACE = 2
"""Seconds between SIGTERM and SIGKILL when a command's process group is ended."""
CLOSE_WAIT = 5.0
"""Seconds a command is given to exit by itself after the close message."""
POLL_SECONDS = 0.1
"""How often a wait for an answer checks whether the command is still running."""
LAST_LINES_WAIT = 0.5
"""Seconds after the command's exit that its last lines, already written, are still awaited."""
POSIX = os.name == "posix"
_CARRIERS = (
    "carriers() { [ -d /proc/self ] || return 0; for e in /proc/[0-9]*/environ; do "
    'tr "\\000" "\\n" < "$e" 2>/dev/null | grep -qx "$1=1" && { p=${e#/proc/}; kill -"$2" "${p%/environ}" 2>/dev/null; }; '
    "done; return 0; }"
)
"""A shell function: send signal $2 to every process whose environment holds marker $1 (Linux's `/proc`)."""


def watchdog_script(marker: str) -> str:
    """The watchdog's script: wait for end of file on stdin (the harness has died or let go), then end
    its own process group, which the command joined, and the processes that carry the command's
    `marker` (a daemon that left the group). It ignores the SIGTERM it sends, and the harness's, so
    that it is still there to send SIGKILL."""
    return (
        f"{_CARRIERS}; trap '' TERM INT HUP; read -r line; kill -TERM 0; carriers {marker} TERM; "
        f"sleep {KILL_GRACE}; carriers {marker} KILL; kill -KILL 0"
    )


class CommandModelError(RuntimeError):
    """The external model timed out, crashed or answered something malformed."""


class _Overflow:
    """Put on the stdout queue, last, when the command writes a line longer than `MAX_LINE_BYTES` or
    more than `MAX_STDOUT_BYTES` in all: what it did, for the failure's sentence."""

    def __init__(self, what: str) -> None:
        self.what = what


def _pump(stream: IO[bytes], sink: queue.Queue[str | _Overflow | None]) -> None:
    """Queue the command's stdout lines; stop reading at a line longer than `MAX_LINE_BYTES`, or once
    it has written more than `MAX_STDOUT_BYTES`."""
    limit, total = MAX_LINE_BYTES, 0
    while line := stream.readline(limit + 1):
        if len(line) > limit and not line.endswith(b"\n"):
            sink.put(_Overflow(f"it wrote a line of more than {limit} bytes to stdout without a newline"))
            return
        total += len(line)
        if total > MAX_STDOUT_BYTES:
            sink.put(_Overflow(f"it wrote more than {MAX_STDOUT_BYTES} bytes to stdout in this run"))
            return
        sink.put(line.decode("utf-8", "replace"))
    sink.put(None)


def _keep_tail(stream: IO[bytes], tail: deque[str]) -> None:
    """Keep the command's last stderr lines in `tail`, each cut to `STDERR_LINE_BYTES`."""
    limit = STDERR_LINE_BYTES
    while line := stream.readline(limit):
        if line.endswith(b"\n") or len(line) < limit:
            tail.append(line.decode("utf-8", "replace").rstrip("\n"))
            continue
        dropped = 0
        while (rest := stream.readline(limit)) and not rest.endswith(b"\n"):
            dropped += len(rest)
        dropped += len(rest.rstrip(b"\n"))
        cut = line.decode("utf-8", "replace")
        tail.append(f"{cut} [... {dropped} more bytes of this line dropped]" if dropped else cut)


def _exit_phrase(code: int | None, stream: str) -> str:
    """What became of a command that closed `stream` (its exit status None: it is still running)."""
    if code is None:
        return f"it closed its {stream}"
    if code < 0:
        try:
            return f"it was killed by {signal.Signals(-code).name}"
        except ValueError:
            return f"it was killed by signal {-code}"
    return f"it exited with status {code}"


class _Processes:
    """The command's process and, on POSIX, the process group it runs in and the group's watchdog."""

    def __init__(self, argv: list[str]) -> None:
        self.watchdog: subprocess.Popen[bytes] | None = None
        self._lifeline = -1
        """The write end of the watchdog's stdin: held by this process only, closed when it dies."""
        self.marker = new_marker()
        """The command's marker, which every process it starts inherits (see the module docstring)."""
        if POSIX:
            read_end, self._lifeline = os.pipe()
            try:
                self.watchdog = subprocess.Popen(
                    ["/bin/sh", "-c", watchdog_script(self.marker)],
                    stdin=read_end,
                    stdout=subprocess.DEVNULL,
                    stderr=subprocess.DEVNULL,
                    process_group=0,
                )
            except BaseException:
                os.close(self._lifeline)
                raise
            finally:
                os.close(read_end)
        try:
            self.process = subprocess.Popen(
                argv,
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,
                process_group=self.watchdog.pid if self.watchdog else None,
                env={**os.environ, self.marker: "1"},
            )
        except BaseException:
            self._reap_watchdog()
            raise
        self.pgid = self.watchdog.pid if self.watchdog else None
        """The command's process group (the watchdog's pid): None outside POSIX."""
        self.ended = False
        _LIVE.add(self)

    def _signal_group(self, number: signal.Signals) -> None:
        assert self.pgid is not None
        with contextlib.suppress(ProcessLookupError):
            os.killpg(self.pgid, number)

    def _reap_watchdog(self) -> None:
        if self.watchdog is not None:
            self.watchdog.kill()
            self.watchdog.wait()
        if self._lifeline >= 0:
            os.close(self._lifeline)
            self._lifeline = -1

    def end(self) -> None:
        """End the command and every process of its group: SIGTERM, then SIGKILL after a grace.

        The watchdog leads the group and is reaped last, so that the group's id cannot be taken
        by an unrelated process while it is signalled."""
        if self.ended:
            return
        self.ended = True
        _LIVE.discard(self)
        process = self.process
        if self.pgid is None:
            if process.poll() is None:
                process.kill()
        else:
            self._signal_group(signal.SIGTERM)
            with contextlib.suppress(subprocess.TimeoutExpired):
                process.wait(timeout=KILL_GRACE)
            self._signal_group(signal.SIGKILL)
        process.wait()
        end_marked(self.marker)  # a daemon that left the group
        self._reap_watchdog()
        assert process.stdin is not None
        with contextlib.suppress(OSError):
            process.stdin.close()


_LIVE: set[_Processes] = set()


@atexit.register
def _end_all() -> None:
    """No command outlives the interpreter, whether it exits normally or by an exception."""
    for processes in list(_LIVE):
        processes.end()


class CommandModel:
    """A model behind an executable speaking the JSON-lines protocol (`--set command='...'`)."""

    name = "command"
    protocols: tuple[str, ...] = PROTOCOLS
    """Any protocol; an instance narrows this to what its command's hello declares."""
    label = "command"
    """The leaderboard label until the command says hello; then its hello `name` (never the command
    line, which would publish local paths). `--name` overrides both."""
    unkeyed_settings = frozenset({"timeout", "fit_timeout"})
    """Settings that do not change what the model answers: raising a time-out is not a new run."""

    @classmethod
    def fingerprint(cls, command: str = "", **_: object) -> str:
        """The files the command runs, by content (`structbench.runs.fingerprint`): an edited script is a new run."""
        return command_fingerprint(command)

    def __init__(self, command: str = "", timeout: PositiveFloat = 600.0, fit_timeout: PositiveFloat = 7200.0) -> None:
        try:
            argv = shlex.split(command)
        except ValueError as error:
            raise UserError(
                f"the model command {command!r} cannot be split into words ({error}); check its quotes."
            ) from None
        if not argv:
            raise UserError("the command model needs the executable to run: --set command='python my_model.py'.")
        self.timeout = float(timeout)
        self.fit_timeout = float(fit_timeout)
        try:
            self._processes = _Processes(argv)
        except OSError as error:
            raise UserError(f"cannot start the model command {command!r} ({error}); check the path.") from None
        process = self._processes.process
        assert process.stdin is not None and process.stdout is not None and process.stderr is not None
        if POSIX:
            os.set_blocking(process.stdin.fileno(), False)
        self._compute: object = None
        self._busy = True
        """No hello yet, or a request unanswered: an interrupt (Ctrl-C) came while the command worked."""
        self._lines: queue.Queue[str | _Overflow | None] = queue.Queue()
        self._stderr: deque[str] = deque(maxlen=STDERR_LINES)
        self._readers = [
            threading.Thread(target=_pump, args=(process.stdout, self._lines), daemon=True),
            threading.Thread(target=_keep_tail, args=(process.stderr, self._stderr), daemon=True),
        ]
        for reader in self._readers:
            reader.start()
        try:
            hello = self._receive("hello", time.monotonic() + self.timeout, "timeout")
            protocols = hello.get("protocols")
            if not isinstance(protocols, list) or not set(protocols) <= set(PROTOCOLS):
                raise self._failure(
                    f"its hello lists protocols {protocols!r}; expected a list out of {list(PROTOCOLS)}"
                )
        except BaseException:
            self.close()
            raise
        self._busy = False
        self.protocols = tuple(protocols)
        self.continuations = hello.get("continuations") is True
        """Whether the hello says `"continuations": true`: the command answers `loglikelihood` requests."""
        self.name = str(hello.get("name", "command"))
        self.label = self.name.strip() or "command"

    @property
    def pid(self) -> int:
        """The command's process id."""
        return self._processes.process.pid

    @property
    def pgid(self) -> int | None:
        """The process group the command and its children run in; None outside POSIX."""
        return self._processes.pgid

    def _stop(self) -> None:
        """End the command's processes and wait for the readers of its output (for a whole stderr tail)."""
        self._processes.end()
        process = self._processes.process
        for reader, stream in zip(self._readers, (process.stdout, process.stderr), strict=True):
            reader.join(timeout=1.0)
            if not reader.is_alive() and stream is not None:  # else a process that escaped the group holds it
                stream.close()

    def _failure(self, what: str) -> CommandModelError:
        """End the command and say why; the error carries its last stderr lines."""
        self._stop()
        tail = "\n".join(self._stderr)
        return CommandModelError(f"model command failed: {what}" + (f"\n--- stderr tail ---\n{tail}" if tail else ""))

    def _exit_status(self) -> int | None:
        try:
            return self._processes.process.wait(timeout=KILL_GRACE)
        except subprocess.TimeoutExpired:
            return None

    def _write(self, data: bytes, deadline: float) -> int:
        """Write `data` to the command's stdin by `deadline`; the number of bytes written.

        BrokenPipeError when the command has closed its stdin (or exited)."""
        process = self._processes.process
        assert process.stdin is not None
        if not POSIX:
            process.stdin.write(data)
            process.stdin.flush()
            return len(data)
        fd = process.stdin.fileno()
        poller = select.poll()
        poller.register(fd, select.POLLOUT)
        view, written = memoryview(data), 0
        while written < len(data):
            remaining = deadline - time.monotonic()
            if remaining <= 0 or not poller.poll(remaining * 1000):
                break
            try:
                written += os.write(fd, view[written:])
            except BlockingIOError:
                continue
        return written

    def _send(self, message: dict[str, Any], deadline: float, setting: str) -> None:
        data = (json.dumps(message, separators=(",", ":")) + "\n").encode()
        kind = message["type"]
        try:
            written = self._write(data, deadline)
        except OSError:
            what = _exit_phrase(self._exit_status(), "stdin")
            raise self._failure(f"{what} before reading the {kind} request") from None
        if written < len(data):
            limit = getattr(self, setting)
            raise self._failure(
                f"it did not read the {kind} request: {written} of its {len(data)} bytes went through within "
                f"{limit:g} s; make it read each request line whole, or raise the limit with --set {setting}=SECONDS"
            )

    def _next_line(self, deadline: float) -> str | _Overflow | None:
        """The command's next stdout line; None at the end of its output, or once the command has
        exited (a child of its own may hold its stdout open); queue.Empty after `deadline`."""
        exited_at: float | None = None
        while True:
            try:
                return self._lines.get(timeout=min(max(deadline - time.monotonic(), 0.0), POLL_SECONDS))
            except queue.Empty:
                now = time.monotonic()
                if now >= deadline:
                    raise
            if exited_at is None and self._processes.process.poll() is not None:
                exited_at = now
            elif exited_at is not None and now - exited_at > LAST_LINES_WAIT:
                return None

    def _receive(self, expected: str, deadline: float, setting: str) -> dict[str, Any]:
        try:
            line = self._next_line(deadline)
        except queue.Empty:
            limit = getattr(self, setting)
            waited = "no hello" if expected == "hello" else "no answer"
            raise self._failure(f"{waited} within {limit:g} s (raise it with --set {setting}=SECONDS)") from None
        if line is None:
            raise self._failure(f"{_exit_phrase(self._exit_status(), 'stdout')} before answering")
        if isinstance(line, _Overflow):
            raise self._failure(
                f"{line.what}; end each answer with a newline, keep it under {MAX_LINE_BYTES} bytes, "
                "and write nothing but the answers to stdout"
            )
        try:
            answer = json.loads(line)
        except json.JSONDecodeError:
            raise self._failure(f"its answer is not JSON: {line[:200]!r}") from None
        except (ValueError, RecursionError) as error:  # a number of over 4,300 digits; arrays nested thousands deep
            reason = " ".join(str(error).split())[:100] or type(error).__name__
            raise self._failure(f"its answer is JSON Python cannot read ({reason}): {line[:100]!r}") from None
        if not isinstance(answer, dict):
            raise self._failure(f"its answer is not a JSON object: {line[:200]!r}")
        if answer.get("type") == "error":
            raise self._failure(f"it reported an error: {answer.get('message')}")
        if answer.get("type") != expected:
            raise self._failure(f"expected a {expected!r} answer, got {line[:200]!r}")
        return answer

    def _request(self, message: dict[str, Any], expected: str, setting: str) -> dict[str, Any]:
        """Send `message` and read its answer, both within the time-out of `setting`."""
        if self._processes.ended:
            raise CommandModelError("model command failed: it was already ended by an earlier failure or close")
        deadline = time.monotonic() + getattr(self, setting)
        self._busy = True
        self._send(message, deadline, setting)
        answer = self._receive(expected, deadline, setting)
        self._busy = False
        return answer

    def _outputs(self, message: dict[str, Any], count: int) -> list[Any]:
        outputs = self._request(message, "predictions", "timeout").get("outputs")
        if not isinstance(outputs, list) or len(outputs) != count:
            got = len(outputs) if isinstance(outputs, list) else type(outputs).__name__
            raise self._failure(f"it returned {got} outputs for {count} items")
        return outputs

    def _log_probabilities(self, outputs: list[Any], method: str) -> list[float]:
        """`outputs` as floats, each a finite JSON number: a dict, a string or 10**400 (which JSON
        allows and `float` cannot hold) is the command's mistake, said in one sentence."""
        values = []
        for index, value in enumerate(outputs):
            number = math.nan
            if isinstance(value, int | float) and not isinstance(value, bool):
                with contextlib.suppress(OverflowError):  # an integer beyond a float's range
                    number = float(value)
            if not math.isfinite(number):
                shown = json.dumps(value)
                shown = shown if len(shown) <= 40 else f"{shown[:20]}... ({len(shown)} characters)"
                raise self._failure(
                    f"its {method} output {index} is {shown}, not a finite number; answer each item with its "
                    "log-probability, a JSON number such as -3.25"
                )
            values.append(number)
        return values

    def fit(self, train: Split, dev: Split | None, *, seed: int) -> None:
        message = {
            "type": "fit",
            "seed": seed,
            "train": [e.model_dump(exclude_none=True) for e in train.examples],
            "dev": [e.model_dump(exclude_none=True) for e in dev.examples] if dev else None,
        }
        self._compute = self._request(message, "ok", "fit_timeout").get("compute")

    def compute(self) -> dict[str, int | str]:
        """The `compute` object of the command's fit reply ({} without one); the runner checks its
        entries. Anything but a JSON object raises, which the runner logs without failing the run."""
        if self._compute is None:
            return {}
        if not isinstance(self._compute, dict):
            raise CommandModelError(
                f"the model command's fit reply has compute {json.dumps(self._compute)[:80]}; "
                'send an object such as {"parameters": 120000, "device": "cpu"}.'
            )
        return dict(self._compute)

    def transduce(self, inputs: list[list[str]]) -> list[list[str]]:
        return self._outputs({"type": "predict", "method": "transduce", "inputs": inputs}, len(inputs))

    def logprob(self, sequences: list[list[str]]) -> list[float]:
        message = {"type": "predict", "method": "logprob", "sequences": sequences}
        return self._log_probabilities(self._outputs(message, len(sequences)), "logprob")

    def loglikelihood(self, requests: list[tuple[list[str], list[str]]]) -> list[float]:
        """log p(continuation | context) per request, from a command whose hello says `"continuations": true`;
        `NotApplicable` (the run is n/a with this reason) for one that does not."""
        if not self.continuations:
            raise NotApplicable(
                f'{self.label} does not score continuations: its hello lacks "continuations": true, the '
                "promise to answer loglikelihood requests (docs/command-protocol.md)"
            )
        message = {"type": "predict", "method": "loglikelihood", "requests": [[c, w] for c, w in requests]}
        return self._log_probabilities(self._outputs(message, len(requests)), "loglikelihood")

    def classify(self, inputs: list[list[str]], labels: list[str]) -> list[str]:
        message = {"type": "predict", "method": "classify", "inputs": inputs, "labels": labels}
        return [str(v) for v in self._outputs(message, len(inputs))]

    def induce(self, sentences: list[list[str]], n_clusters: int) -> list[list[int]]:
        message = {"type": "predict", "method": "induce", "sentences": sentences, "n_clusters": n_clusters}
        return self._outputs(message, len(sentences))

    def close(self) -> None:
        """Tell the command to close and give it `CLOSE_WAIT` seconds to exit, then end its whole
        process group; one still busy with an interrupted request is ended at once, and one that
        failed was ended then."""
        if self._processes.ended:
            return
        process = self._processes.process
        try:
            if (
                not self._busy
                and self._write(b'{"type":"close"}\n', time.monotonic() + CLOSE_WAIT)
                and process.stdin is not None
            ):
                process.stdin.close()  # end of input: the other way to say close
                process.wait(timeout=CLOSE_WAIT)
        except (OSError, subprocess.TimeoutExpired):
            pass
        self._stop()
