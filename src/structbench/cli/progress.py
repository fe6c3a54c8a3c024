"""The steps of `run`, `quickstart`, `build` and `report`, as one `structbench.progress.Job` each.

A command lists every step before it takes the first: per suite, its build where it is not built yet,
then each model on it seed by seed (`run_job`); a build or verification per suite (`build_job`); the
report's two stages (`REPORT_STAGES`). The estimates come from the store's past runs
(`structbench.progress.Timings`). `--json` and `--no-progress` make a job silent (`is_quiet`).
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable, Sequence
from pathlib import Path

from structbench.data import freeze
from structbench.progress import Job, Step, Timings, grid_steps, mode_of, position
from structbench.runs.runner import SeedOutcome
from structbench.store import Store
from structbench.suite import Suite

REPORT_STAGES = ("read the store", "write the site")
"""The steps of `report`: `build_site`, then the pages, tables and plots."""


def is_quiet(args: argparse.Namespace) -> bool:
    """A command's `--json` or `--no-progress`: no progress at all (its stdout is a script's)."""
    return bool(getattr(args, "json", False) or getattr(args, "no_progress", False))


def seed_ended(job: Job) -> Callable[[SeedOutcome], None]:
    """What a runner calls as each seed ends (`Runner.seed_ended`): the job's step finished, said `done`,
    `failed` or `n/a` and `(from the store)` where answered, which then does not time the steps like it."""

    def ended(outcome: SeedOutcome) -> None:
        how = f"{outcome.status} (from the store)" if outcome.cached else outcome.status
        job.finish(how, timed=not outcome.cached)

    return ended


class SuiteRuns:
    """A job over suites, each built where it is not yet and then run model by model, seed by seed."""

    def __init__(
        self,
        name: str,
        suites: Sequence[Suite],
        models: Sequence[Sequence[tuple[str, str]]],
        seeds: Sequence[int],
        store: Store,
        *,
        quiet: bool,
        force: bool = False,
        after: Sequence[str] = (),
    ) -> None:
        """`models[i]`: the (shown name, store label) of each model run on `suites[i]`; `after`: steps
        the command takes once every suite is done (quickstart's report)."""
        timings = Timings.of(store.run_timings())
        ids = [suite.spec.id for suite in suites]
        runs = grid_steps(ids, models, seeds, timings, force=force)
        self.unbuilt = {suite.spec.id for suite in suites if freeze.built_manifest(suite) is None}
        self.runs = {suite.spec.id: len(steps) for suite, steps in zip(suites, runs, strict=True)}
        steps: list[Step] = []
        for s, (suite, suite_runs) in enumerate(zip(suites, runs, strict=True)):
            if suite.spec.id in self.unbuilt:
                steps.append(Step(f"{position('suite', s, len(suites), suite.spec.id)}, build"))
            steps.extend(suite_runs)
        steps.extend(Step(text) for text in after)
        self.job = Job(name, steps, mode=mode_of(sys.stderr, quiet=quiet))

    def build(
        self, suite: Suite, source_dir: Path | None, made: Callable[[], freeze.Manifest] | None = None
    ) -> freeze.Manifest:
        """`freeze.ensure_built` (or `made`, e.g. waiting for a build made in another process), as the
        suite's build step where it was not built when the job began."""
        manifest = made() if made is not None else freeze.ensure_built(suite, source_dir)
        if suite.spec.id in self.unbuilt:
            self.job.finish("built")
        return manifest

    def skip_suite(self, suite: Suite, why: str) -> None:
        """The suite could not be built: its build step and its runs are skipped, with one line."""
        built = 0 if suite.spec.id not in self.unbuilt else 1
        self.job.skip(built + self.runs[suite.spec.id], why)


def build_job(suites: Sequence[Suite], *, verify: bool, quiet: bool) -> Job:
    """`build`'s steps: one build (or verification) per suite."""
    kind = "verify" if verify else "build"
    steps = [Step(f"{position('suite', i, len(suites), suite.spec.id)}, {kind}") for i, suite in enumerate(suites)]
    return Job("verify" if verify else "build", steps, mode=mode_of(sys.stderr, quiet=quiet))


def report_job(*, quiet: bool) -> Job:
    """`report`'s steps (`REPORT_STAGES`)."""
    return Job("report", [Step(stage) for stage in REPORT_STAGES], mode=mode_of(sys.stderr, quiet=quiet))
