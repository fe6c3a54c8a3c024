"""Evaluating one model on one suite over seeds, with every finished run kept in the store.

For each seed: skip it if the store already holds it (same suite data, same model spec and,
for a model that declares one, same resolved configuration); otherwise build the model, fit it on
the draw's train split (dev only for model selection), ask it every test split, score and
store in one transaction. A model that crashes becomes a `failed` run and the next seed
still runs; a model that does not speak the suite's protocol becomes `n/a`.
"""

from __future__ import annotations

import hashlib
import inspect
import json
import os
import platform
import random
import subprocess
import sys
import time
import traceback
from collections.abc import Callable, Sequence
from functools import cache
from pathlib import Path
from typing import Any

import numpy as np
from tqdm import tqdm

from structbench import __version__, freeze, registry
from structbench.errors import NotApplicable, UserError
from structbench.protocols import ask, speaks
from structbench.scoring import seed_stats
from structbench.sources import structbench_home
from structbench.specs import ModelSpec, ResultRecord, SeedStats, Split
from structbench.store import Store
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
    """
    factory = registry.model_factory(spec.name)
    facts: dict[str, Any] = {}
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


def check_settings(spec: ModelSpec) -> None:
    """Refuse `--set` keys the model's constructor does not take, before any run starts."""
    factory = registry.model_factory(spec.name)
    try:
        signature = inspect.signature(factory)
    except (TypeError, ValueError):
        signature = None
    if signature is not None:
        accepts_any = any(p.kind is inspect.Parameter.VAR_KEYWORD for p in signature.parameters.values())
        unknown = [key for key in spec.params if key not in signature.parameters]
        if unknown and not accepts_any:
            known = [n for n, p in signature.parameters.items() if p.kind is not inspect.Parameter.VAR_POSITIONAL]
            raise UserError(
                f"model {spec.name!r} has no setting {', '.join(map(repr, unknown))}; "
                f"its settings are: {', '.join(known) or 'none'}."
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


def _error_text(error: BaseException) -> str:
    text = "".join(traceback.format_exception(error))
    return text[-ERROR_TAIL:]


class Runner:
    """Evaluates models on suites into one store."""

    def __init__(self, store: Store, *, source_dir: Path | None = None, progress: bool | None = None) -> None:
        self.store = store
        self.source_dir = source_dir
        self.progress = progress
        self.log: Callable[[str], None] = lambda message: print(message, file=sys.stderr)

    def evaluate(self, suite_ref: str, model: ModelSpec, seeds: Sequence[int]) -> ResultRecord:
        suite = registry.suite(suite_ref)
        manifest = freeze.ensure_built(suite, self.source_dir)
        if not seeds:
            raise UserError("no seeds given; pass --seeds, e.g. --seeds 0,1,2.")
        check_settings(model)
        facts = model_facts(model, suite.spec.id)
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
            scores=self._aggregate(suite, [run_ids[s] for s in seeds if status[str(s)] == "done"]),
        )

    def _run_seed(
        self,
        suite: Suite,
        manifest: freeze.Manifest,
        model_spec: ModelSpec,
        facts: dict[str, Any],
        seed: int,
    ) -> tuple[int, str, str | None, bool]:
        spec = suite.spec
        key = (spec.id, spec.version, manifest.suite_hash, model_hash(model_spec, facts), seed)
        found = self.store.find_run(*key)
        if found is not None and found[1] in ("done", "n/a"):
            status, error = self.store.run_status(found[0])
            return found[0], status, error if status == "n/a" else None, True
        draw = seed % spec.n_draws
        run_id = self.store.start_run(
            {
                "suite": spec.id,
                "version": spec.version,
                "suite_hash": manifest.suite_hash,
                "model": model_spec.label,
                "model_spec": json.dumps(model_record(model_spec, facts), sort_keys=True, default=str),
                "model_hash": key[3],
                "seed": seed,
                "draw": draw,
                "harness_version": __version__,
                "git_commit": _git_commit(),
                "environment": _environment(),
            }
        )
        try:
            results, fit_seconds, predict_seconds = self._fit_and_predict(suite, manifest, model_spec, seed, draw)
        except NotApplicable as reason:
            self.store.end_run(run_id, "n/a", str(reason))
            return run_id, "n/a", str(reason), False
        except UserError:
            self.store.discard_run(run_id)  # a configuration error says nothing about the model
            raise
        except Exception as error:  # a model's own crash: recorded, and the next seed still runs
            self.store.end_run(run_id, "failed", _error_text(error))
            self.log(f"{spec.key} x {model_spec.label} seed {seed} failed: {type(error).__name__}: {error}")
            return run_id, "failed", f"{type(error).__name__}: {error}", False
        self.store.finish_run(run_id, results, fit_seconds, predict_seconds)
        return run_id, "done", None, False

    def _fit_and_predict(
        self, suite: Suite, manifest: freeze.Manifest, model_spec: ModelSpec, seed: int, draw: int
    ) -> tuple[dict[str, Any], float, float]:
        model = build_model(model_spec)
        try:
            return self._evaluate_model(model, suite, manifest, model_spec, seed, draw)
        finally:
            close = getattr(model, "close", None)
            if callable(close):
                close()

    def _evaluate_model(
        self, model: Any, suite: Suite, manifest: freeze.Manifest, model_spec: ModelSpec, seed: int, draw: int
    ) -> tuple[dict[str, Any], float, float]:
        spec = suite.spec
        if not speaks(model, spec.protocol):
            raise NotApplicable(f"{model_spec.label} does not speak the {spec.protocol} protocol")

        def split(name: str) -> Split:
            return freeze.load_split(suite, manifest, draw, name)

        train = [split(s.name) for s in spec.splits_with_role("train")]
        dev = [split(s.name) for s in spec.splits_with_role("dev")]
        _seed_everything(seed)
        started = time.perf_counter()
        fit = getattr(model, "fit", None)
        if callable(fit) and train:
            fit(train[0], dev[0] if dev else None, seed=seed)
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
                data = split(test.name)
                predictions = ask(model, spec, data.examples, on_batch=bar.update)
                scores = suite.score(data, predictions)
                results[test.name] = (scores, [e.id for e in data.examples], predictions)
        return results, fit_seconds, time.perf_counter() - started

    def _aggregate(self, suite: Suite, run_ids: list[int]) -> dict[str, dict[str, SeedStats]]:
        per_run = [self.store.run_scores(run_id) for run_id in run_ids]
        out: dict[str, dict[str, SeedStats]] = {}
        for test in suite.spec.splits_with_role("test"):
            metrics: dict[str, list[float]] = {}
            for scores in per_run:
                for metric, value in scores.get(test.name, {}).items():
                    if value is not None:
                        metrics.setdefault(metric, []).append(value)
            out[test.name] = {metric: seed_stats(values) for metric, values in metrics.items()}
        return out
