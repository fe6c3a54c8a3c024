"""The progress of a whole command: one overall bar over its steps, with an estimate of the time left.

`quickstart`, `build`, `run`, `report` and `sweep` each know before they start every step they will
take: a suite to build, a (suite, model, seed) run, a stage of the report. A `Job` is that list. It
shows where the command is ("suite 1 of 2 lookup-tables, model 2 of 5 copy, seed 0"), how many steps
are done and, where the store has timed such steps before, how long the rest should take (`Timings`).
The bar of the step itself (a trainer's epochs, the examples asked) is drawn below it by whoever runs
the step.

How it shows depends on where stderr goes (`mode_of`):

- a terminal: a tqdm bar, redrawn in place and refreshed every second, so that its elapsed time moves
  while one long step runs. A terminal that reports 0 columns (a pseudo-terminal nobody sized: `script`,
  `docker exec -t`, some CI runners) gets 80 x 24, here and, through `TQDM_NCOLS` and `TQDM_NROWS`
  (`fit_unsized_terminal`), in every tqdm bar of this process and its children: without it tqdm draws
  nothing at all.
- anything else (a log file, a pipe): one plain line per finished step, naming the step, its position,
  how it ended and took, the elapsed time and the estimate; and one as a step starts whose time is
  unknown or long (`LONG_STEP_SECONDS`), so that a log never sits silent through a first build or
  training without saying what it is at. No carriage returns.
- `--json` or `--no-progress`: nothing. Messages (`Job.write`) are still printed: they are not progress.

The estimate of a step (`Timings.estimate`) is the mean wall time (claim to finish) of the store's
finished runs of the same model label on the same suite id, any version or data; failing that, of the
same label on every suite; failing that, unknown. A step the store already holds ended (done or n/a,
same suite id, label and seed) is answered from the store and counts as no time. A step still unknown
learns from the job itself, in the same order: once a run of the same label on the same suite (else on
any suite) has been made in this job, the mean of those runs (`Step.keys`, `Job.finish(timed=)`), so
that the first seed of a new model on a fresh store tells how long the others will take. Steps without an
estimate (a suite's build: the store does not time builds) are counted apart: the line says
"ETA >= 1:20, 3 steps not timed before" rather than a number that leaves them out silently.
"""

from __future__ import annotations

import os
import re
import sys
import threading
import time
from collections.abc import Iterable, Iterator, Sequence
from contextlib import contextmanager, nullcontext
from dataclasses import dataclass, field
from typing import Any, Literal, TextIO

Mode = Literal["bar", "lines", "quiet"]
"""How a job shows: a redrawn bar (a terminal), plain lines (a log), or nothing (`--json`, `--no-progress`)."""

UNSIZED_TERMINAL = (80, 24)
"""Columns and rows assumed for a terminal that reports 0 columns."""
TICK_SECONDS = 1.0
"""How often a terminal's bar is redrawn while a step runs, so that its elapsed time moves."""
LONG_STEP_SECONDS = 30.0
"""In a log, a step expected to take at least this long (or of unknown time) is announced as it starts."""


def mode_of(stream: TextIO, *, quiet: bool = False) -> Mode:
    """`quiet` (the command's `--json` or `--no-progress`): nothing; a terminal: the bar; else plain lines."""
    if quiet:
        return "quiet"
    isatty = getattr(stream, "isatty", None)
    return "bar" if callable(isatty) and isatty() else "lines"


def _terminal_size(stream: TextIO) -> tuple[int, int]:
    """Columns and rows of the terminal `stream` writes to; 0 where it reports none."""
    try:
        size = os.get_terminal_size(stream.fileno())
    except (AttributeError, OSError, ValueError):
        return 0, 0
    return size.columns, size.lines


def fit_unsized_terminal(stream: TextIO | None = None) -> None:
    """Where `stream` (stderr) is a terminal that reports 0 columns, set `TQDM_NCOLS` and `TQDM_NROWS` to
    80 x 24 (unless set), so that every tqdm bar draws (tqdm reads them when it is first imported, so this
    must run before: `structbench.cli` calls it first). On a sized terminal, or anything else, it does nothing."""
    stream = sys.stderr if stream is None else stream
    if mode_of(stream) != "bar" or _terminal_size(stream)[0] > 0:
        return
    os.environ.setdefault("TQDM_NCOLS", str(UNSIZED_TERMINAL[0]))
    os.environ.setdefault("TQDM_NROWS", str(UNSIZED_TERMINAL[1]))


def clock(seconds: float) -> str:
    """`0:07`, `12:30`, `1:02:03`."""
    whole = max(0, round(seconds))
    hours, rest = divmod(whole, 3600)
    minutes, secs = divmod(rest, 60)
    return f"{hours}:{minutes:02d}:{secs:02d}" if hours else f"{minutes}:{secs:02d}"


def position(kind: str, index: int, count: int, name: str) -> str:
    """`suite 1 of 2 lookup-tables`: a step's place among its kind (`index` from 0), then its name; the
    place is left out where there is only one."""
    return f"{kind} {index + 1} of {count} {name}" if count > 1 else f"{kind} {name}"


def run_bar(suite: str, model: str, seed: int) -> str:
    """`lookup-tables lstm seed 0`: what a bar of one run (a trainer's epochs, the examples asked) is called,
    so that it names its suite as the overall bar above it does; `suite` may carry its version
    (`Split.suite`, `id@version`), which is left out."""
    return f"{suite.partition('@')[0]} {model} seed {seed}"


@dataclass(frozen=True)
class Step:
    """One step of a job: what it is, where it stands, and how long it should take."""

    text: str
    """Its name and position, e.g. `suite 1 of 2 lookup-tables, model 2 of 5 copy, seed 0`."""
    estimate: float | None = None
    """Expected seconds (`Timings.estimate`); None: unknown."""
    keys: tuple[str, ...] = ()
    """What it is like, most alike first (`suite model`, then `model`): a step still unknown is estimated
    by the mean of the steps this job has timed under its first key that has any."""


@dataclass(frozen=True)
class Timings:
    """Past wall times of the store's runs, for the estimates of a job's steps (see the module docstring)."""

    by_suite_and_model: dict[tuple[str, str], float] = field(default_factory=dict)
    """(suite id, model label) -> mean wall seconds of its finished (done) runs."""
    by_model: dict[str, float] = field(default_factory=dict)
    """model label -> mean wall seconds of its finished runs on every suite."""
    held: frozenset[tuple[str, str, int]] = frozenset()
    """(suite id, model label, seed) of the runs the store holds ended (done or n/a): answered, not run."""

    @classmethod
    def of(cls, rows: Iterable[tuple[str, str, int, str, float | None]]) -> Timings:
        """From the store's runs (`Store.run_timings`): (suite id, model label, seed, status, wall seconds)."""
        pairs: dict[tuple[str, str], list[float]] = {}
        models: dict[str, list[float]] = {}
        held = set()
        for suite, label, seed, status, seconds in rows:
            if status in ("done", "n/a"):
                held.add((suite, label, seed))
            if status == "done" and seconds is not None and seconds >= 0:
                pairs.setdefault((suite, label), []).append(seconds)
                models.setdefault(label, []).append(seconds)
        return cls(
            {key: sum(values) / len(values) for key, values in pairs.items()},
            {key: sum(values) / len(values) for key, values in models.items()},
            frozenset(held),
        )

    def estimate(self, suite: str, label: str, seed: int, *, force: bool = False) -> float | None:
        """Expected seconds of running `label` on suite id `suite` with `seed`: 0 when the store holds it ended
        (and `force` does not ask for it again), else the mean of the same label on the same suite, else of
        the same label on every suite, else None."""
        if not force and (suite, label, seed) in self.held:
            return 0.0
        return self.by_suite_and_model.get((suite, label), self.by_model.get(label))


def grid_steps(
    suites: Sequence[str],
    models: Sequence[Sequence[tuple[str, str]]],
    seeds: Sequence[int],
    timings: Timings,
    *,
    force: bool = False,
) -> list[list[Step]]:
    """The run steps of `models[i]` (each a (shown name, store label) pair) on `suites[i]` over `seeds`, per
    suite, in the order a command runs them: model by model, seed by seed."""
    steps = []
    for s, suite in enumerate(suites):
        at_suite = position("suite", s, len(suites), suite)
        runs = []
        for m, (name, label) in enumerate(models[s]):
            at_model = position("model", m, len(models[s]), name)
            for seed in seeds:
                text = f"{at_suite}, {at_model}, seed {seed}"
                estimate = timings.estimate(suite, label, seed, force=force)
                runs.append(Step(text, estimate, keys=(f"{suite} {label}", label)))
        steps.append(runs)
    return steps


class Job:
    """The steps of one command, shown as one overall bar, as plain lines or not at all (see the module
    docstring). Steps finish in order (`finish`, `skip`) unless the caller names which (`finish(index=)`,
    a sweep's parallel runs); `parallel` divides the time left among that many workers."""

    def __init__(
        self,
        name: str,
        steps: Sequence[Step],
        *,
        mode: Mode,
        stream: TextIO | None = None,
        parallel: int = 1,
        initial: int = 0,
    ) -> None:
        """A job called `name` (the command) over `steps`, of which the first `initial` are done already."""
        self.name = name
        self.steps = list(steps)
        self.mode = mode
        self.stream = sys.stderr if stream is None else stream
        self.parallel = max(1, parallel)
        self.pending = list(range(initial, len(self.steps)))
        self.timed: dict[str, list[float]] = {}
        """Seconds of the steps this job has timed, by each of their keys."""
        self.done = initial
        self.started = time.monotonic()
        self.step_started = self.started
        self.tally = ""
        """What the bar of a parallel job shows after its name (a sweep's counts), in place of one step."""
        self._bar: Any = None
        self._ticker: threading.Thread | None = None
        self._closed = threading.Event()
        if mode == "bar":
            self._open_bar()
        elif mode == "lines":
            eta = self.eta()
            held = f", {initial} done before" if initial else ""
            self._line(f"{name}: {len(self.steps)} steps{held}{'; ' + eta if eta else ''}")
            self._announce()

    # what is shown

    def current(self) -> Step | None:
        """The first step not finished yet; None once all are."""
        return self.steps[self.pending[0]] if self.pending else None

    def eta(self, *, short: bool = False) -> str:
        """The time left as the lines show it: `ETA 1:20`, `ETA >= 1:20, 3 steps not timed before`, or
        empty where no step left has an estimate; `short`, as the bar does: `ETA >=1:20`."""
        now = time.monotonic()
        pending = list(self.pending)  # a copy: the bar's ticker reads it while the command finishes steps
        known, unknown = 0.0, 0
        for index in pending:
            estimate = self.expected(self.steps[index])
            if estimate is None:
                unknown += 1
                continue
            if index == pending[0]:  # the step under way: what is left of it
                estimate = max(0.0, estimate - (now - self.step_started))
            known += estimate
        known /= self.parallel
        if unknown == len(pending):
            return ""
        if unknown and short:
            return f"ETA >={clock(known)}"
        if unknown:
            return f"ETA >= {clock(known)}, {unknown} step{'s' if unknown > 1 else ''} not timed before"
        return f"ETA {clock(known)}"

    def expected(self, step: Step) -> float | None:
        """`step`'s estimate, else the mean of the steps like it this job has timed, else None."""
        if step.estimate is not None:
            return step.estimate
        for key in step.keys:
            seconds = self.timed.get(key)
            if seconds:
                return sum(seconds) / len(seconds)
        return None

    def _description(self) -> str:
        """What the bar shows after its counts and times (cut at the terminal's edge): the step under way,
        its places shortened (`suite 1/3 lookup-tables, model 2/4 copy, seed 0`), or a parallel job's counts."""
        if self.parallel > 1:  # several steps under way at once: the counts, not one of them
            return f"{self.name}: {self.tally}" if self.tally else self.name
        step = self.current()
        return re.sub(r"\b(\d+) of (\d+)\b", r"\1/\2", step.text) if step else f"{self.name}: finished"

    def _open_bar(self) -> None:
        from tqdm import tqdm

        sized = _terminal_size(self.stream)[0] > 0
        self._bar = tqdm(
            total=len(self.steps),
            initial=self.done,
            desc=self._description(),
            unit="step",
            file=self.stream,
            bar_format="{n_fmt}/{total_fmt} {bar:8} [{elapsed}{postfix}] {desc}",  # the counts never cut off
            dynamic_ncols=sized,
            ncols=None if sized else UNSIZED_TERMINAL[0],
            nrows=None if sized else UNSIZED_TERMINAL[1],
            position=0,
            leave=True,
            mininterval=0,
        )
        self._bar.set_postfix_str(self.eta(short=True), refresh=True)
        self._ticker = threading.Thread(target=self._tick, name="progress", daemon=True)
        self._ticker.start()

    def _tick(self) -> None:
        while not self._closed.wait(TICK_SECONDS):
            bar = self._bar
            if bar is not None:
                bar.set_description_str(self._description(), refresh=False)
                bar.set_postfix_str(self.eta(short=True), refresh=True)

    def _line(self, text: str) -> None:
        print(text, file=self.stream, flush=True)

    def _announce(self) -> None:
        """In a log, the step now under way, where it is long or its time unknown (`LONG_STEP_SECONDS`)."""
        step = self.current() if self.parallel == 1 else None
        if step is None:
            return
        expected = self.expected(step)
        if expected is None or expected >= LONG_STEP_SECONDS:
            about = "" if expected is None else f", about {clock(expected)}"
            self._line(f"[{self.done + 1}/{len(self.steps)}] {step.text}: started{about}")

    # what the command tells it

    def finish(self, how: str = "done", *, index: int | None = None, timed: bool = True) -> None:
        """Step `index` (default: the first one not finished) ended as `how` (`done`, `from the store`,
        `failed`, `built`, ...); `timed`: its time tells how long the steps like it take (not so for one
        answered from the store, or one of several under way at once)."""
        index = self.pending[0] if index is None else index
        if index not in self.pending:
            return
        now = time.monotonic()
        took = now - self.step_started
        first = index == self.pending[0]
        if timed and self.parallel == 1:
            for key in self.steps[index].keys:
                self.timed.setdefault(key, []).append(took)
        self.pending.remove(index)
        self.done += 1
        if first or self.parallel > 1:
            self.step_started = now
        if self.mode == "lines":
            elapsed = f"elapsed {clock(now - self.started)}"
            eta = self.eta()
            took_text = f" in {took:.1f} s" if self.parallel == 1 else ""
            self._line(
                f"[{self.done}/{len(self.steps)}] {self.steps[index].text}: {how}{took_text}; "
                f"{elapsed}{', ' + eta if eta else ''}"
            )
            self._announce()
        elif self._bar is not None:
            self._bar.set_description_str(self._description(), refresh=False)
            self._bar.set_postfix_str(self.eta(short=True), refresh=False)
            self._bar.update(1)

    def skip(self, count: int, why: str) -> None:
        """The next `count` steps will not be taken, because `why`: one line for them all."""
        chosen = self.pending[:count]
        if not chosen:
            return
        first, last = self.steps[chosen[0]].text, self.steps[chosen[-1]].text
        del self.pending[:count]
        self.done += len(chosen)
        self.step_started = time.monotonic()
        if self.mode == "lines":
            span = first if len(chosen) == 1 else f"{first} .. {last}"
            self._line(f"[{self.done}/{len(self.steps)}] skipped {len(chosen)}: {span} ({why})")
            self._announce()
        elif self._bar is not None:
            self._bar.set_description_str(self._description(), refresh=False)
            self._bar.set_postfix_str(self.eta(short=True), refresh=False)
            self._bar.update(len(chosen))

    def write(self, message: str, *, file: TextIO | None = None) -> None:
        """Print `message` (to stderr, or `file`) without breaking the bar: it is cleared, the message
        printed and the bar drawn again below it."""
        target = self.stream if file is None else file
        if self._bar is not None:
            self._bar.write(message, file=target)
        else:
            print(message, file=target, flush=True)

    @contextmanager
    def printing(self) -> Iterator[None]:
        """Plain `print`s inside it (a command's tables on stdout) do not mix with the bar."""
        if self._bar is None:
            with nullcontext():
                yield
            return
        from tqdm import tqdm

        with tqdm.external_write_mode(file=self.stream):
            yield

    def close(self) -> None:
        """End the bar (left on screen at its last state) or, for lines, say how long the job took."""
        self._closed.set()
        if self._ticker is not None:
            self._ticker.join()
            self._ticker = None
        if self._bar is not None:
            self._bar.set_postfix_str("", refresh=False)
            self._bar.close()
            self._bar = None
        elif self.mode == "lines":
            self._line(
                f"{self.name}: {self.done} of {len(self.steps)} steps in {clock(time.monotonic() - self.started)}"
            )

    def __enter__(self) -> Job:
        return self

    def __exit__(self, *_: object) -> None:
        self.close()
