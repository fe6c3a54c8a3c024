"""Evaluating one model on one suite over seeds, with every finished run kept in the store.

For each seed: skip it if the store already holds it (same suite data, same model spec and,
for a model that declares one, same resolved configuration); otherwise build the model, fit it on
the draw's train split (dev only for model selection), ask it every test split, score and
store in one transaction. A model that crashes becomes a `failed` run and the next seed
still runs; a model that does not speak the suite's protocol becomes `n/a`. A model's optional
`compute()` and `statistics()` reports (`structbench.protocols.Model`), checked where the run
receives them (`structbench.runs.attempt`), are stored with the run.

One seed is three steps, so that `structbench sweep` shares them with `run`: the claim
(`SeedRun.claim_fields`, `Store.claim_run`), the fit and prediction (`structbench.runs.attempt`,
which touches no store: a sweep's workers call it in their own processes) and the record
(`Runner.record`: `finish_run` or `end_run`, in the process that holds the claim, a sweep's
driver). What a seed is keyed by is `structbench.runs.key.RunKey`; what it is keyed, labelled and drawn
by is made once, in `structbench.runs.context`.
"""

from __future__ import annotations

import sys
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol

from structbench import registry
from structbench.data import freeze
from structbench.errors import UserError
from structbench.runs.attempt import Ended, Outcome, attempt
from structbench.runs.context import ModelOnSuite, SeedRun
from structbench.runs.normalise import normalise_store
from structbench.runs.request import ModelRequest
from structbench.specs import ModelSpec, ResultRecord, SeedStats
from structbench.store import RunClaim, Store
from structbench.suite import Suite


@dataclass(frozen=True)
class SeedOutcome:
    """How one seed ended, and the label its stored run has."""

    run_id: int
    status: str
    error: str | None
    cached: bool
    """Answered from the store."""
    label: str


@dataclass(frozen=True)
class Evaluation:
    """One model on one suite over seeds: the record `run --json` prints, and where its seeds came from."""

    record: ResultRecord
    answered: list[int]
    """Seeds asked for that the store already held (whatever their status)."""
    finished: list[int]
    """Every seed the cells are computed over: the finished runs of this configuration in the store,
    including any stored before and not asked for this time."""

    def sources(self) -> str:
        """Which of the cells' seeds were run now and which came from the store, in one line, e.g.
        `cells over seeds 0, 1: seed 1 run now; seed 0 from the store, not asked for this time`;
        empty where every seed of the cells was run now (nothing to explain)."""
        asked = set(self.record.seeds)
        now = [s for s in self.finished if s in asked and s not in self.answered]
        held = [s for s in self.finished if s in asked and s in self.answered]
        before = [s for s in self.finished if s not in asked]
        if not held and not before:
            return ""
        parts = [
            f"{_seeds(now)} run now" if now else "",
            f"{_seeds(held)} from the store" if held else "",
            f"{_seeds(before)} from the store, not asked for this time" if before else "",
        ]
        return f"cells over {_seeds(self.finished)}: {'; '.join(part for part in parts if part)}"


def _seeds(seeds: Sequence[int]) -> str:
    """`seed 0` or `seeds 0, 1`."""
    return f"seed{'s' if len(seeds) > 1 else ''} {', '.join(map(str, seeds))}"


class Supervisor(Protocol):
    """Fits and asks the model of one claimed seed under supervision (`structbench.execution.supervised`:
    in a worker process, or in this one with its processes tracked): how it came out, as `attempt`
    would say; a `UserError` where the run was refused. `log` and `progress` are the runner's, for
    a supervisor that runs the model in this process."""

    def __call__(
        self, suite_ref: str, context: SeedRun, *, log: Callable[[str], None], progress: bool | None
    ) -> Outcome: ...


class Runner:
    """Evaluates models on suites into one store."""

    def __init__(
        self,
        store: Store,
        *,
        source_dir: Path | None = None,
        progress: bool | None = None,
        supervisor: Supervisor | None = None,
    ) -> None:
        """A runner into `store`, whose runs asked with an explicit default are first moved to the
        default run's key (`normalise_store`), so that they answer it. With a `supervisor`, every
        model given by name runs where it says (a worker process); without, and for a caller's own
        model object, in this process."""
        self.store = store
        self.source_dir = source_dir
        self.progress = progress
        self.supervisor = supervisor
        self.log: Callable[[str], None] = lambda message: print(message, file=sys.stderr)
        self.seed_ended: Callable[[SeedOutcome], None] = lambda outcome: None
        """Called once per seed `evaluation` ends, run or answered: a command's progress (`structbench.progress`)."""
        normalise_store(store, self.log)

    def evaluate(
        self,
        suite_ref: str,
        model: ModelSpec | ModelRequest,
        seeds: Sequence[int],
        *,
        force: bool = False,
    ) -> ResultRecord:
        """Every seed of `model` on the suite, each from the store where it holds it (unless `force`):
        the cells over all finished seeds of this configuration.

        `force` runs every seed again, replacing what the store holds for them."""
        return self.evaluation(suite_ref, model, seeds, force=force).record

    def evaluation(
        self,
        suite_ref: str,
        model: ModelSpec | ModelRequest,
        seeds: Sequence[int],
        *,
        force: bool = False,
    ) -> Evaluation:
        """`evaluate`, with where each seed of the cells came from (`Evaluation.sources`): a cell over
        more seeds than were asked for, or partly read from the store, says so where it is printed."""
        suite = registry.suite(suite_ref)
        if not seeds:
            raise UserError("no seeds given; pass --seeds, e.g. --seeds 0,1,2.")
        on_suite = ModelOnSuite.of(suite, model if isinstance(model, ModelRequest) else ModelRequest.of(model))
        manifest = freeze.ensure_built(suite, self.source_dir)
        self.store.record_suite(suite.spec, manifest.suite_hash)
        status: dict[str, str] = {}
        errors: dict[str, str] = {}
        answered: list[int] = []
        label = on_suite.label
        for seed in seeds:
            outcome = self._run_seed(suite_ref, on_suite.seed_run(manifest, seed), force=force)
            self.seed_ended(outcome)
            if outcome.cached:
                answered.append(seed)
            status[str(seed)] = outcome.status
            label = outcome.label
            if outcome.error:
                errors[str(seed)] = outcome.error
        if answered:
            self.log(f"{suite.spec.key} x {label}: {len(answered)} of {len(seeds)} seeds answered from the store")
        record = self.result_record(on_suite, manifest.suite_hash, seeds, status, errors, label)
        spec = suite.spec
        model_hash = on_suite.key.model_hash
        finished = self.store.finished_seeds(spec.id, spec.version, manifest.suite_hash, model_hash, label)
        return Evaluation(record, answered, finished)

    def result_record(
        self,
        on_suite: ModelOnSuite,
        suite_hash: str,
        seeds: Sequence[int],
        status: dict[str, str],
        errors: dict[str, str],
        label: str,
    ) -> ResultRecord:
        """What `run --json` prints of one model configuration on one suite: the per-seed statuses
        given, and the cells over every finished seed the store holds with how each one's training went
        against its criterion (`convergence`, `under_trained`)."""
        spec = on_suite.suite.spec
        model_hash = on_suite.key.model_hash
        trained = self.store.finished_convergence(spec.id, spec.version, suite_hash, model_hash, label)
        return ResultRecord(
            convergence={str(seed): judged.model_dump(mode="json") for seed, judged in trained.items()},
            under_trained=any(not judged.reached for judged in trained.values()),
            suite=spec.id,
            version=spec.version,
            suite_hash=suite_hash,
            model=label,
            seeds=list(seeds),
            status=status,
            errors=errors,
            partial=on_suite.request.limit,
            threads=on_suite.threads,
            **self.cell_scores(on_suite.suite, suite_hash, on_suite.key.model_hash),
        )

    def _run_seed(self, suite_ref: str, seed_run: SeedRun, *, force: bool = False) -> SeedOutcome:
        """Evaluate one seed or answer it from the store.

        The run is claimed atomically (`Store.claim_run`), so that processes evaluating into one
        store at once never crash on each other or repeat each other's work: a run that another
        live process holds is waited for and its result read. A failed or interrupted run is
        redone, and with `force` a finished one too; an interrupt leaves this one `running` and
        released, to be redone next time. A finished run asked for under another label (`--name`)
        is relabelled: the label is not part of the run key."""
        claim = self.store.claim_run(seed_run.claim_fields, force=force)
        if claim.state == "busy":
            self.log(f"{seed_run.where} is being run by {claim.holder}; waiting for it")
            while claim.state == "busy":
                time.sleep(0.5)
                # the other process's failure is this ask's answer too, not a cue to repeat the crash
                claim = self.store.claim_run(seed_run.claim_fields, retry_failed=False)
        if claim.state == "cached":
            return self.answered(claim, seed_run)
        try:
            try:
                if self.supervisor is not None and seed_run.request.instance is None:
                    outcome = self.supervisor(suite_ref, seed_run, log=self.log, progress=self.progress)
                else:
                    outcome = attempt(seed_run, log=self.log, progress=self.progress)
            except UserError:
                self.store.discard(claim)  # a configuration error says nothing about the model
                raise
            return self.record(claim, seed_run, outcome)
        finally:
            self.store.release(claim)  # after an interrupt only: the run stays `running`, for anyone to redo

    def answered(self, claim: RunClaim, seed_run: SeedRun) -> SeedOutcome:
        """A run the store already holds (`claim.state == "cached"`), relabelled when it is asked for
        under another final label (`--name`): the label is not part of the run key."""
        error = None if claim.status == "done" else claim.error
        if claim.status == "failed" and error:
            error = error.strip().splitlines()[-1]  # the exception line of the stored traceback
        stored = self.store.label(claim.run_id)
        label = seed_run.model.label
        if seed_run.request.label_is_final and stored != label:
            renamed = self.store.relabel(claim.run_id, label)
            self.log(
                f"{seed_run.where}: the {renamed} stored run(s) of {stored!r} on this suite are now shown as {label!r}"
            )
            stored = label
        return SeedOutcome(claim.run_id, claim.status, error, True, stored)

    def record(self, claim: RunClaim, seed_run: SeedRun, outcome: Outcome) -> SeedOutcome:
        """Store how a claimed run came out, in one transaction: its results (`finish_run`), with the
        environment of the process that ran the model (this one, or a sweep's worker), or its
        failure or n/a reason (`end_run`). A failure is logged whole and shown in the record by its first
        line, so that a command model's stderr tail is printed once. The outcome's compute, statistics and
        convergence were checked where they entered (`attempt`)."""
        label = seed_run.model.label
        if seed_run.request.label_is_final and (renamed := self.store.relabel(claim.run_id, label)):
            self.log(f"{seed_run.where}: {renamed} stored run(s) of this configuration are now shown as {label!r}")
        if isinstance(outcome, Ended):
            self.store.end_run(claim, outcome.status, outcome.error)
            shown = outcome.message
            if outcome.status == "failed":
                self.log(f"{seed_run.where} failed: {outcome.message}")
                # the log has the whole message (a command model's stderr tail), the record its first line
                shown = outcome.message.split("\n", 1)[0]
            return SeedOutcome(claim.run_id, outcome.status, shown, False, label)
        if outcome.label is not None and not seed_run.request.label_is_final:
            label = seed_run.request.shown(outcome.label)
            self.store.relabel(claim.run_id, label)
        self.store.finish_run(
            claim,
            outcome.results,
            outcome.fit_seconds,
            outcome.predict_seconds,
            outcome.compute,
            outcome.statistics,
            environment=outcome.environment,
            convergence=outcome.convergence,
        )
        if outcome.convergence is not None and not outcome.convergence.reached:
            self.log(f"{seed_run.where}: {outcome.convergence.shown()} (flagged on the leaderboard)")
        return SeedOutcome(claim.run_id, "done", None, False, label)

    def cell_scores(self, suite: Suite, suite_hash: str, model_key: str) -> dict[str, Any]:
        """`scores` (split -> metric -> cell) and `breakdowns` (split -> metric -> key -> level -> cell)
        of one model configuration, over every finished seed the store holds (see `structbench.cells`)."""
        spec = suite.spec
        stored = self.store.configuration_scores(spec.id, spec.version, suite_hash, model_key)
        scores: dict[str, dict[str, SeedStats]] = {test.name: {} for test in spec.splits_with_role("test")}
        breakdowns: dict[str, dict[str, dict[str, dict[str, SeedStats]]]] = {}
        for (_, split, metric, key, level), stats in stored.cells():
            if key:
                breakdowns.setdefault(split, {}).setdefault(metric, {}).setdefault(key, {})[level] = stats
            else:
                scores.setdefault(split, {})[metric] = stats
        return {"scores": scores, "breakdowns": breakdowns}
