"""The fit and prediction of one seed, away from any store: what `structbench run` and a sweep's workers share.

`attempt` builds the model, fits it on the draw's train split (dev only for model selection), asks
it every test split and scores the answers; a model's crash (or `sys.exit`) is a `failed` outcome
and a model that does not speak the suite's protocol an `n/a` one. A model with the optional
`compute()`, `statistics()` or `convergence()` (`structbench.protocols.Model`) is asked after
prediction; its report is checked here, where it enters the harness (`checked_compute`,
`checked_statistics`, `checked_convergence`), and what passes is trusted from then on. A report that raises or has invalid entries is only logged:
the run it describes has finished and is stored without them.
"""

from __future__ import annotations

import contextlib
import dataclasses
import sys
import time
import traceback
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass
from typing import Any, Literal, TypeVar

from tqdm import tqdm

from structbench.convergence import Convergence, checked_convergence
from structbench.data import freeze
from structbench.errors import NotApplicable, UserError
from structbench.protocols import (
    ComputeReporter,
    ConvergenceReporter,
    OracleUser,
    StatisticsReporter,
    Trainable,
    ask,
    checked_compute,
    checked_statistics,
    hook,
    not_spoken,
    speaks,
    undeclared,
)
from structbench.runs.context import SeedRun
from structbench.runs.provenance import environment_json
from structbench.runs.threads import pinned
from structbench.seeding import seed_everything
from structbench.specs import Split
from structbench.suite import Suite

R = TypeVar("R")

ERROR_TAIL = 2000
"""The characters of a failed run's traceback the store keeps (its end)."""


class DrawSplits(Mapping[str, Split]):
    """The frozen splits of one draw of a suite, by name, each read (and hash-checked) on first use."""

    def __init__(self, suite: Suite, manifest: freeze.Manifest, draw: int) -> None:
        self._suite, self._manifest, self._draw = suite, manifest, draw
        self._names = [s.name for s in suite.spec.splits]

    def __getitem__(self, name: str) -> Split:
        if name not in self._names:
            raise KeyError(name)
        return freeze.load_split(self._suite, self._manifest, self._draw, name)

    def __iter__(self) -> Iterator[str]:
        return iter(self._names)

    def __len__(self) -> int:
        return len(self._names)


@dataclass(frozen=True)
class Evaluated:
    """What one seed's fit and prediction produced, as `Store.finish_run` takes it."""

    results: dict[str, Any]
    """split -> (scores, example ids, predictions), in split order."""
    fit_seconds: float
    predict_seconds: float
    compute: dict[str, int | str] | None
    """The model's checked `compute()` report; None when it has none or it raised."""
    label: str | None = None
    """What the built model calls itself, where it names itself (see `structbench.runs.request.model_label`)."""
    statistics: dict[str, float] | None = None
    """The model's checked `statistics()` report (e.g. dev perplexity); None when it has none or it raised."""
    environment: str | None = None
    """The environment JSON of the process that ran the model (`structbench.runs.provenance`), taken
    after it ran (so that it names the SIMD level of a torch the model loaded); None: the claim's."""
    convergence: Convergence | None = None
    """The model's checked `convergence()` report; None when it has none, or it raised or was invalid."""


@dataclass(frozen=True)
class Ended:
    """A run that ended without results: `failed` (the model crashed or exited; in a sweep also a
    worker that died or ran out of time) or `n/a` (the model does not speak the suite's protocol)."""

    status: Literal["failed", "n/a"]
    error: str
    """What the store keeps: a failure's traceback tail, or the n/a reason."""
    message: str
    """One line for the person at the terminal."""


Outcome = Evaluated | Ended
"""How the fit and prediction of one claimed run came out: `Runner.record` stores either."""


def failure_line(error: BaseException) -> str:
    """One line saying why a model's run failed."""
    if isinstance(error, SystemExit):
        return f"SystemExit: the model called sys.exit({error.code!r}) during its run"
    return f"{type(error).__name__}: {error}"


def _error_text(error: BaseException) -> str:
    """What the store keeps of a model's crash: the end of its traceback, then the failure's first
    line again where the traceback does not end with it (an error whose message goes on, e.g. a
    command model's stderr tail): a stored run's error is shown by its last line."""
    text = "".join(traceback.format_exception(error)).rstrip("\n")
    line = failure_line(error).split("\n", 1)[0][: ERROR_TAIL // 4]
    if text.endswith(line):
        return text[-ERROR_TAIL:]
    return f"{text[-(ERROR_TAIL - len(line) - 1) :]}\n{line}"


def attempt(seed_run: SeedRun, *, log: Callable[[str], None], progress: bool | None = None) -> Outcome:
    """Build, fit and ask the model for one seed: its results, or how it ended without them.

    A model's own crash (or `sys.exit`) is a failed outcome and one that does not speak the
    suite's protocol an n/a one; a `UserError` (a configuration problem, which says nothing about
    the model) and an interrupt propagate. Touches no store: `structbench run` calls it in its own
    process, a sweep's workers in theirs."""
    try:
        return fit_and_predict(seed_run, log=log, progress=progress)
    except NotApplicable as reason:
        return Ended("n/a", str(reason), str(reason))
    except UserError:
        raise
    except (Exception, SystemExit) as error:  # a model's own crash (or exit): recorded, the next seed runs
        return Ended("failed", _error_text(error), failure_line(error))


def fit_and_predict(seed_run: SeedRun, *, log: Callable[[str], None], progress: bool | None = None) -> Evaluated:
    """Build the model, run it on the draw's splits, on the run's fixed number of CPU threads
    (`structbench.runs.threads`), and close it (a caller's own object stays open).

    Whatever the model prints to `sys.stdout` from any of its hooks, from construction to `close`,
    goes to `sys.stderr` instead: stdout is structbench's own (`run --json`'s record, a table), and
    a model's `print` there corrupted it (issue 34). Every command that runs a model in this process
    (`run`, `check`, `quickstart`, `structbench.evaluate`) comes through here. Only Python-level writes are
    redirected: a C extension or `os.write(1, ...)` writing to file descriptor 1 still reaches
    stdout (a sweep's worker moves its descriptor 1 itself, `structbench.execution.worker`)."""
    with contextlib.redirect_stdout(sys.stderr):
        request = seed_run.request
        model = request.build()
        threads = seed_run.model.threads
        try:
            with pinned(threads):
                evaluated = _evaluate_model(model, seed_run, log=log, progress=progress)
            return dataclasses.replace(evaluated, environment=environment_json(threads))
        finally:
            close = hook(model, "close")
            if request.instance is None and callable(close):  # a caller's own object stays theirs to close
                close()


def _evaluate_model(model: Any, seed_run: SeedRun, *, log: Callable[[str], None], progress: bool | None) -> Evaluated:
    suite, request, seed = seed_run.suite, seed_run.request, seed_run.seed
    spec = suite.spec
    if not speaks(model, spec.protocol, continuations=spec.continuations):
        missing = undeclared(model, spec.protocol)
        if missing:
            raise UserError(missing)
        raise NotApplicable(not_spoken(request.label, model, spec))
    own_label = hook(model, "label") if not request.label_is_final else None
    splits = DrawSplits(suite, seed_run.manifest, seed_run.draw)
    if isinstance(model, OracleUser):
        model.use_oracle(suite.oracle(splits))
    # a model that does not train never sees the train and dev splits: they are not read (the largest
    # splits of most suites, and most of an `oracle` or `copy` run's time)
    trains = isinstance(model, Trainable)
    train = [splits[s.name] for s in spec.splits_with_role("train")] if trains else []
    dev = [splits[s.name] for s in spec.splits_with_role("dev")] if trains else []
    seed_everything(seed)
    started = time.perf_counter()
    if train:
        model.fit(train[0], dev[0] if dev else None, seed=seed)
    fit_seconds = time.perf_counter() - started
    tests = spec.splits_with_role("test")
    sizes = [s.size for s in tests]
    total = None if None in sizes else sum(size or 0 for size in sizes)
    results: dict[str, Any] = {}
    started = time.perf_counter()
    with tqdm(
        total=total,
        desc=f"{spec.id} {request.label} seed {seed}",
        unit="ex",
        disable=progress is False or None,
        leave=False,
    ) as bar:
        for test in tests:
            data = splits[test.name]
            if request.limit is not None:
                data = data.model_copy(update={"examples": data.examples[: request.limit]})
            predictions = ask(model, spec, data.examples, on_batch=bar.update)
            scores = suite.score(data, predictions)
            results[test.name] = (scores, [e.id for e in data.examples], predictions)
    predict_seconds = time.perf_counter() - started
    where = f"{spec.key} x {request.label} seed {seed}"
    return Evaluated(
        results,
        fit_seconds,
        predict_seconds,
        _checked_report(model, "compute", ComputeReporter, checked_compute, where, log),
        own_label if isinstance(own_label, str) else None,
        _checked_report(model, "statistics", StatisticsReporter, checked_statistics, where, log),
        convergence=_checked_report(model, "convergence", ConvergenceReporter, checked_convergence, where, log),
    )


def _checked_report(
    model: Any,
    method: Literal["compute", "statistics", "convergence"],
    reporter: type,
    check: Callable[[object], tuple[R, list[str]]],
    where: str,
    log: Callable[[str], None],
) -> R | None:
    """The model's optional `compute()`, `statistics()` or `convergence()` report (`reporter` is its
    protocol), as `check` accepts it; None without the method or when it raises."""
    if not isinstance(model, reporter):
        return None
    try:
        reported = hook(model, method)()
    except (Exception, SystemExit) as error:  # the model's bug, not the run's: log it, keep the run
        log(f"{where}: {method}() raised {failure_line(error)}; the run is stored without it")
        return None
    valid, dropped = check(reported)
    if dropped:
        log(f"{where}: {method}() entries left out: {'; '.join(dropped)}")
    return valid
