"""Evaluating one model on one suite over seeds, with every finished run kept in the store.

For each seed: skip it if the store already holds it (same suite data, same model spec and,
for a model that declares one, same resolved configuration); otherwise build the model, fit it on
the draw's train split (dev only for model selection), ask it every test split, score and
store in one transaction. A model that crashes becomes a `failed` run and the next seed
still runs; a model that does not speak the suite's protocol becomes `n/a`. A model with the
optional `compute()` (`structbench.protocols.ComputeReporter`) is asked after prediction, and its
parameter count and device are stored with the run; a failing `compute()` is only logged.
"""

from __future__ import annotations

import hashlib
import json
import os
import platform
import random
import subprocess
import sys
import time
import traceback
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import Any

import numpy as np
from tqdm import tqdm

from structbench import __version__, freeze, registry
from structbench.cells import as_stats, cells
from structbench.errors import NotApplicable, UserError
from structbench.fingerprint import source_fingerprint
from structbench.model_settings import check_settings
from structbench.protocols import ComputeReporter, OracleUser, Trainable, ask, checked_compute, speaks
from structbench.sources import structbench_home
from structbench.specs import ModelSpec, ResultRecord, SeedStats, Split
from structbench.store import Store, config_hash
from structbench.suite import Suite

ERROR_TAIL = 2000


def default_store_path() -> Path:
    return structbench_home() / "results.sqlite"


def model_facts(spec: ModelSpec, suite_id: str) -> dict[str, Any]:
    """What the store records of a model beyond its spec, read from its class without building it.

    `configuration`: a model whose numbers also come from files it ships (a neural baseline's
    recipe) returns its resolved settings from the optional classmethod
    `configuration(suite_id, **settings)`, so that a changed recipe is a different model to
    the store rather than a cache hit on results it no longer produces.
    `comparable`: False for a model that sees test-time information (an oracle); the report
    flags it and never ranks it among comparable models.
    `code`: the fingerprint of the user's own code (`structbench.fingerprint`): a model's optional
    classmethod `fingerprint(**settings)` (the command model hashes the files its command names),
    else, for a `module:Class` model, its module's source file; so an edited model is run again.
    """
    factory = registry.model_factory(spec.name)
    facts: dict[str, Any] = {}
    fingerprint = getattr(factory, "fingerprint", None)
    if callable(fingerprint):
        facts["code"] = fingerprint(**spec.params)
    elif ":" in spec.name and (source := source_fingerprint(factory)) is not None:
        facts["code"] = source
    configure = getattr(factory, "configuration", None)
    if callable(configure):
        resolved = configure(suite_id, **spec.params)
        if not isinstance(resolved, dict):
            raise UserError(f"model {spec.name!r}: configuration() must return a dict, not {type(resolved).__name__}.")
        facts["configuration"] = resolved
    if getattr(factory, "comparable", True) is False:
        facts["comparable"] = False
    return facts


def model_record(spec: ModelSpec, facts: dict[str, Any] | None = None) -> dict[str, Any]:
    """The model as stored: its spec (name, params) and its facts (see `model_facts`)."""
    return {**spec.model_dump(), **(facts or {})}


def model_hash(spec: ModelSpec, facts: dict[str, Any] | None = None) -> str:
    text = json.dumps(model_record(spec, facts), sort_keys=True, default=str)
    return hashlib.sha256(text.encode()).hexdigest()


@cache
def _git_commit() -> str | None:
    try:
        out = subprocess.run(
            ["git", "rev-parse", "HEAD"],
            cwd=Path(__file__).resolve().parent,
            capture_output=True,
            text=True,
            timeout=5,
            check=False,
        )
    except (OSError, subprocess.TimeoutExpired):
        return None
    return out.stdout.strip() or None


@cache
def _environment() -> str:
    import importlib.metadata as metadata

    versions: dict[str, str | None] = {}
    for package in ("numpy", "torch", "scipy", "pydantic"):
        try:
            versions[package] = metadata.version(package)
        except metadata.PackageNotFoundError:
            versions[package] = None
    return json.dumps(
        {"python": sys.version.split()[0], "platform": platform.platform(), "cpus": os.cpu_count(), **versions},
        sort_keys=True,
    )


def build_model(spec: ModelSpec) -> Any:
    return registry.model_factory(spec.name)(**spec.params)


def _seed_everything(seed: int) -> None:
    """Seed the global generators that user models commonly rely on."""
    random.seed(seed)
    np.random.seed(seed % 2**32)
    torch = sys.modules.get("torch")
    if torch is not None:
        torch.manual_seed(seed)


def _failure(error: BaseException) -> str:
    """One line saying why a model's run failed."""
    if isinstance(error, SystemExit):
        return f"SystemExit: the model called sys.exit({error.code!r}) during its run"
    return f"{type(error).__name__}: {error}"


def _error_text(error: BaseException) -> str:
    text = "".join(traceback.format_exception(error))
    return text[-ERROR_TAIL:]


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


class Runner:
    """Evaluates models on suites into one store."""

    def __init__(self, store: Store, *, source_dir: Path | None = None, progress: bool | None = None) -> None:
        self.store = store
        self.source_dir = source_dir
        self.progress = progress
        self.log: Callable[[str], None] = lambda message: print(message, file=sys.stderr)

    def evaluate(self, suite_ref: str, model: ModelSpec, seeds: Sequence[int]) -> ResultRecord:
        suite = registry.suite(suite_ref)
        if not seeds:
            raise UserError("no seeds given; pass --seeds, e.g. --seeds 0,1,2.")
        check_settings(model)  # before any data is built: a typo in --set costs nothing
        facts = model_facts(model, suite.spec.id)
        manifest = freeze.ensure_built(suite, self.source_dir)
        self.store.record_suite(suite.spec, manifest.suite_hash)
        status: dict[str, str] = {}
        errors: dict[str, str] = {}
        run_ids: dict[int, int] = {}
        cached = 0
        for seed in seeds:
            run_id, outcome, error, was_cached = self._run_seed(suite, manifest, model, facts, seed)
            cached += was_cached
            status[str(seed)] = outcome
            run_ids[seed] = run_id
            if error:
                errors[str(seed)] = error
        if cached:
            self.log(f"{suite.spec.key} x {model.label}: {cached} of {len(seeds)} seeds answered from the store")
        return ResultRecord(
            suite=suite.spec.id,
            version=suite.spec.version,
            suite_hash=manifest.suite_hash,
            model=model.label,
            seeds=list(seeds),
            status=status,
            errors=errors,
            **self.cell_scores(suite, manifest.suite_hash, model_hash(model, facts)),
        )

    def _run_seed(
        self,
        suite: Suite,
        manifest: freeze.Manifest,
        model_spec: ModelSpec,
        facts: dict[str, Any],
        seed: int,
    ) -> tuple[int, str, str | None, bool]:
        """Evaluate one seed or answer it from the store: (run id, status, error, answered from the store).

        The run is claimed atomically (`Store.claim_run`), so that processes evaluating into one
        store at once never crash on each other or repeat each other's work: a run that another
        live process holds is waited for and its result read. A failed or interrupted run is
        redone; an interrupt leaves this one `running` and released, to be redone next time."""
        spec = suite.spec
        draw = seed % spec.n_draws
        fields = {
            "suite": spec.id,
            "version": spec.version,
            "suite_hash": manifest.suite_hash,
            "model": model_spec.label,
            "model_spec": json.dumps(model_record(model_spec, facts), sort_keys=True, default=str),
            "model_hash": model_hash(model_spec, facts),
            "config_hash": config_hash(facts.get("configuration")),
            "comparable": facts.get("comparable", True),
            "seed": seed,
            "draw": draw,
            "harness_version": __version__,
            "git_commit": _git_commit(),
            "environment": _environment(),
        }
        claim = self.store.claim_run(fields)
        if claim.state == "busy":
            self.log(f"{spec.key} x {model_spec.label} seed {seed} is being run by {claim.holder}; waiting for it")
            while claim.state == "busy":
                time.sleep(0.5)
                # the other process's failure is this ask's answer too, not a cue to repeat the crash
                claim = self.store.claim_run(fields, retry_failed=False)
        if claim.state == "cached":
            error = None if claim.status == "done" else claim.error
            if claim.status == "failed" and error:
                error = error.strip().splitlines()[-1]  # the exception line of the stored traceback
            return claim.run_id, claim.status, error, True
        run_id = claim.run_id
        try:
            try:
                evaluated = self._fit_and_predict(suite, manifest, model_spec, seed, draw)
            except NotApplicable as reason:
                self.store.end_run(claim, "n/a", str(reason))
                return run_id, "n/a", str(reason), False
            except UserError:
                self.store.discard(claim)  # a configuration error says nothing about the model
                raise
            except (Exception, SystemExit) as error:  # a model's own crash (or exit): recorded, the next seed runs
                self.store.end_run(claim, "failed", _error_text(error))
                message = _failure(error)
                self.log(f"{spec.key} x {model_spec.label} seed {seed} failed: {message}")
                return run_id, "failed", message, False
            self.store.finish_run(
                claim, evaluated.results, evaluated.fit_seconds, evaluated.predict_seconds, evaluated.compute
            )
            return run_id, "done", None, False
        finally:
            self.store.release(claim)  # after an interrupt only: the run stays `running`, for anyone to redo

    def _fit_and_predict(
        self, suite: Suite, manifest: freeze.Manifest, model_spec: ModelSpec, seed: int, draw: int
    ) -> Evaluated:
        model = build_model(model_spec)
        try:
            return self._evaluate_model(model, suite, manifest, model_spec, seed, draw)
        finally:
            close = getattr(model, "close", None)
            if callable(close):
                close()

    def _evaluate_model(
        self, model: Any, suite: Suite, manifest: freeze.Manifest, model_spec: ModelSpec, seed: int, draw: int
    ) -> Evaluated:
        spec = suite.spec
        if not speaks(model, spec.protocol):
            raise NotApplicable(f"{model_spec.label} does not speak the {spec.protocol} protocol")
        splits = DrawSplits(suite, manifest, draw)
        train = [splits[s.name] for s in spec.splits_with_role("train")]
        dev = [splits[s.name] for s in spec.splits_with_role("dev")]
        if isinstance(model, OracleUser):
            model.use_oracle(suite.oracle(splits))
        _seed_everything(seed)
        started = time.perf_counter()
        if isinstance(model, Trainable) and train:
            model.fit(train[0], dev[0] if dev else None, seed=seed)
        fit_seconds = time.perf_counter() - started
        tests = spec.splits_with_role("test")
        sizes = [s.size for s in tests]
        total = None if None in sizes else sum(size or 0 for size in sizes)
        results: dict[str, Any] = {}
        started = time.perf_counter()
        with tqdm(
            total=total,
            desc=f"{spec.id} {model_spec.label} seed {seed}",
            unit="ex",
            disable=self.progress is False or None,
            leave=False,
        ) as bar:
            for test in tests:
                data = splits[test.name]
                predictions = ask(model, spec, data.examples, on_batch=bar.update)
                scores = suite.score(data, predictions)
                results[test.name] = (scores, [e.id for e in data.examples], predictions)
        predict_seconds = time.perf_counter() - started
        where = f"{spec.key} x {model_spec.label} seed {seed}"
        return Evaluated(results, fit_seconds, predict_seconds, self._reported_compute(model, where))

    def _reported_compute(self, model: Any, where: str) -> dict[str, int | str] | None:
        """What the model's optional `compute()` reports, checked; None without the method.

        The run it describes has finished: a `compute()` that raises, or answers keys or types
        outside `COMPUTE_FIELDS`, is logged and the run is stored without those entries."""
        if not isinstance(model, ComputeReporter):
            return None
        try:
            reported = model.compute()
        except (Exception, SystemExit) as error:  # the model's bug, not the run's: log it, keep the run
            self.log(f"{where}: compute() raised {_failure(error)}; the run is stored without its compute")
            return None
        valid, dropped = checked_compute(reported)
        if dropped:
            self.log(f"{where}: compute() entries left out: {'; '.join(dropped)}")
        return valid

    def cell_scores(self, suite: Suite, suite_hash: str, model_key: str) -> dict[str, Any]:
        """`scores` (split -> metric -> cell) and `breakdowns` (split -> metric -> key -> level -> cell)
        of one model configuration, over every finished seed the store holds (see `structbench.cells`)."""
        spec = suite.spec
        stored = self.store.scores(suite=spec.id, version=spec.version, suite_hash=suite_hash, model_hash=model_key)
        scores: dict[str, dict[str, SeedStats]] = {test.name: {} for test in spec.splits_with_role("test")}
        breakdowns: dict[str, dict[str, dict[str, dict[str, SeedStats]]]] = {}
        for row in cells(stored).to_dict("records"):
            split, metric, key = str(row["split"]), str(row["metric"]), str(row["breakdown"])
            if key:
                by_level = breakdowns.setdefault(split, {}).setdefault(metric, {}).setdefault(key, {})
                by_level[str(row["level"])] = as_stats(row)
            else:
                scores.setdefault(split, {})[metric] = as_stats(row)
        return {"scores": scores, "breakdowns": breakdowns}
