"""The command adapter: a model in any language, spoken to in JSON lines over stdin/stdout.

In the spirit of LM Zoo's container binaries, without Docker. The harness starts the
command once per run; the command's first line on stdout is a hello naming the protocols it
speaks, then it answers each request line with one line:

    model  -> {"type": "hello", "name": "my-model", "protocols": ["transduction"]}
    harness-> {"type": "fit", "seed": 0, "train": [example, ...], "dev": [example, ...] | null}
    model  -> {"type": "ok", "compute": {"parameters": 120000, "device": "cpu"}}   (compute optional)
    harness-> {"type": "predict", "method": "transduce", "inputs": [["tok", ...], ...]}
    model  -> {"type": "predictions", "outputs": [["tok", ...], ...]}
    harness-> {"type": "close"}

`method` is the Python adapter method of the protocol: `transduce` and `classify` send
`inputs` (`classify` also `labels`), `logprob` (minimal-pair and forced-choice) sends
`sequences` and expects one natural-log probability each, `induce` (tag-induction) sends
`sentences` and `n_clusters`. Examples are `Example` records as
JSON. The fit reply may carry `compute`, what the model trained with (`parameters`: its
trainable parameter count, `device`: e.g. "cpu", "cuda:0"); the harness stores it with the
run. A model may answer `{"type": "error", "message": ...}`. A time-out, a crash, or an
answer that is not the JSON expected fails the run with the command's last stderr lines;
the process is always ended.
"""

from __future__ import annotations

import json
import queue
import shlex
import subprocess
import threading
from collections import deque
from typing import IO, Any

from pydantic import PositiveFloat

from structbench.errors import UserError
from structbench.fingerprint import command_fingerprint
from structbench.specs import PROTOCOLS, Split

STDERR_LINES = 20


class CommandModelError(RuntimeError):
    """The external model timed out, crashed or answered something malformed."""


def _pump(stream: IO[str], sink: queue.Queue[str | None]) -> None:
    for line in stream:
        sink.put(line)
    sink.put(None)


def _keep_tail(stream: IO[str], tail: deque[str]) -> None:
    for line in stream:
        tail.append(line.rstrip("\n"))


class CommandModel:
    """A model behind an executable speaking the JSON-lines protocol (`--set command='...'`)."""

    name = "command"
    protocols: tuple[str, ...] = PROTOCOLS
    """Any protocol; an instance narrows this to what its command's hello declares."""

    @classmethod
    def fingerprint(cls, command: str = "", **_: object) -> str:
        """The files the command runs, by content (`structbench.fingerprint`): an edited script is a new run."""
        return command_fingerprint(command)

    def __init__(self, command: str = "", timeout: PositiveFloat = 600.0, fit_timeout: PositiveFloat = 86400.0) -> None:
        if not command:
            raise UserError("the command model needs the executable to run: --set command='python my_model.py'.")
        self.timeout = float(timeout)
        self.fit_timeout = float(fit_timeout)
        try:
            self._process = subprocess.Popen(
                shlex.split(command),
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,
                text=True,
                bufsize=1,
            )
        except OSError as error:
            raise UserError(f"cannot start the model command {command!r} ({error}); check the path.") from None
        assert self._process.stdout is not None and self._process.stderr is not None
        self._broken = False
        self._compute: object = None
        self._lines: queue.Queue[str | None] = queue.Queue()
        self._stderr: deque[str] = deque(maxlen=STDERR_LINES)
        threading.Thread(target=_pump, args=(self._process.stdout, self._lines), daemon=True).start()
        threading.Thread(target=_keep_tail, args=(self._process.stderr, self._stderr), daemon=True).start()
        try:
            hello = self._receive("hello", self.timeout)
            protocols = hello.get("protocols")
            if not isinstance(protocols, list) or not set(protocols) <= set(PROTOCOLS):
                raise self._failure(
                    f"its hello lists protocols {protocols!r}; expected a list out of {list(PROTOCOLS)}"
                )
        except BaseException:
            self.close()
            raise
        self.protocols = tuple(protocols)
        self.name = str(hello.get("name", "command"))

    def _failure(self, what: str) -> CommandModelError:
        self._broken = True
        tail = "\n".join(self._stderr)
        return CommandModelError(f"model command failed: {what}" + (f"\n--- stderr tail ---\n{tail}" if tail else ""))

    def _receive(self, expected: str, timeout: float) -> dict[str, Any]:
        try:
            line = self._lines.get(timeout=timeout)
        except queue.Empty:
            raise self._failure(f"no answer within {timeout:g} s (raise it with --set timeout=SECONDS)") from None
        if line is None:
            code = self._process.wait()
            raise self._failure(f"it exited with status {code} before answering")
        try:
            answer = json.loads(line)
        except json.JSONDecodeError:
            raise self._failure(f"its answer is not JSON: {line[:200]!r}") from None
        if not isinstance(answer, dict):
            raise self._failure(f"its answer is not a JSON object: {line[:200]!r}")
        if answer.get("type") == "error":
            raise self._failure(f"it reported an error: {answer.get('message')}")
        if answer.get("type") != expected:
            raise self._failure(f"expected a {expected!r} answer, got {line[:200]!r}")
        return answer

    def _request(self, message: dict[str, Any], expected: str, timeout: float) -> dict[str, Any]:
        assert self._process.stdin is not None
        try:
            self._process.stdin.write(json.dumps(message, separators=(",", ":")) + "\n")
            self._process.stdin.flush()
        except (BrokenPipeError, OSError):
            code = self._process.wait()
            raise self._failure(f"it exited with status {code} before reading the request") from None
        return self._receive(expected, timeout)

    def _outputs(self, message: dict[str, Any], count: int) -> list[Any]:
        outputs = self._request(message, "predictions", self.timeout).get("outputs")
        if not isinstance(outputs, list) or len(outputs) != count:
            got = len(outputs) if isinstance(outputs, list) else type(outputs).__name__
            raise self._failure(f"it returned {got} outputs for {count} items")
        return outputs

    def fit(self, train: Split, dev: Split | None, *, seed: int) -> None:
        message = {
            "type": "fit",
            "seed": seed,
            "train": [e.model_dump(exclude_none=True) for e in train.examples],
            "dev": [e.model_dump(exclude_none=True) for e in dev.examples] if dev else None,
        }
        self._compute = self._request(message, "ok", self.fit_timeout).get("compute")

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
        return [float(v) for v in self._outputs(message, len(sequences))]

    def classify(self, inputs: list[list[str]], labels: list[str]) -> list[str]:
        message = {"type": "predict", "method": "classify", "inputs": inputs, "labels": labels}
        return [str(v) for v in self._outputs(message, len(inputs))]

    def induce(self, sentences: list[list[str]], n_clusters: int) -> list[list[int]]:
        message = {"type": "predict", "method": "induce", "sentences": sentences, "n_clusters": n_clusters}
        return self._outputs(message, len(sentences))

    def close(self) -> None:
        """Ask the command to stop, then end it if it does not; a command that failed is ended at once."""
        process = self._process
        if process.poll() is None and self._broken:
            process.kill()
            process.wait()
        elif process.poll() is None:
            try:
                assert process.stdin is not None
                process.stdin.write('{"type":"close"}\n')
                process.stdin.close()
                process.wait(timeout=5)
            except (OSError, subprocess.TimeoutExpired):
                process.kill()
                process.wait()
