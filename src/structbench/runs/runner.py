"""Evaluating one model on one suite over seeds, with every finished run kept in the store.

For each seed: skip it if the store already holds it (same suite data, same model spec and,
for a model that declares one, same resolved configuration); otherwise build the model, fit it on
the draw's train split (dev only for model selection), ask it every test split, score and
store in one transaction. A model that crashes becomes a `failed` run and the next seed
still runs; a model that does not speak the suite's protocol becomes `n/a`. A model with the
optional `compute()` (`structbench.protocols.ComputeReporter`) is asked after prediction, and its
parameter count and device are stored with the run, as are the numbers of an optional
`statistics()` (`StatisticsReporter`, e.g. dev perplexity); a failing one is only logged.

One seed is three steps, so that `structbench sweep` shares them with `run`: the claim
(`run_fields`, `Store.claim_run`), the fit and prediction (`attempt`, which touches no store: a
sweep's workers call it in their own processes) and the record (`Runner.record`: `finish_run` or
`end_run`, in the process that holds the claim, a sweep's driver).
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
from typing import Any, Literal

import numpy as np
from tqdm import tqdm

from structbench import __version__, registry
from structbench.cells import as_stats, cells
from structbench.data import freeze
from structbench.data.sources import structbench_home
from structbench.errors import NotApplicable, UserError
from structbench.protocols import (
    ComputeReporter,
    OracleUser,
    StatisticsReporter,
    Trainable,
    ask,
    checked_compute,
    checked_statistics,
    speaks,
    undeclared,
)
from structbench.runs.fingerprint import source_fingerprint
from structbench.runs.settings import check_settings
from structbench.specs import ModelSpec, ResultRecord, SeedStats, Split
from structbench.store import Claim, Store, config_hash
from structbench.suite import Suite

ERROR_TAIL = 2000


def default_store_path() -> Path:
    return structbench_home() / "results.sqlite"


def model_facts(spec: ModelSpec, suite_id: str, factory: Callable[..., Any] | None = None) -> dict[str, Any]:
    """What the store records of a model beyond its spec, read from its class without building it.

    `configuration`: a model whose numbers also come from files it ships (a neural baseline's
    recipe) returns its resolved settings from the optional classmethod
    `configuration(suite_id, **settings)`, so that a changed recipe is a different model to
    the store rather than a cache hit on results it no longer produces.
    `comparable`: False for a model that sees test-time information (an oracle); the report
    flags it and never ranks it among comparable models.
    `code`: the fingerprint of the user's own code (`structbench.runs.fingerprint`): a model's optional
    classmethod `fingerprint(**settings)` (the command model hashes the files its command names,
    a Hugging Face model its config and weights), else, for a `module:Class` model, its module's
    source; so an edited model is run again.
    `factory` is what builds the model when it is not found by name (a Python API caller's class).
    """
    factory = factory or registry.model_factory(spec.name)
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


def model_label(spec: ModelSpec, factory: Callable[..., Any]) -> str:
    """The name the leaderboard shows for a model (never part of the run key; `--name` overrides it).

    A model factory's classmethod `label(**settings)` decides where it has one (a Hugging Face
    model: its folder's name, never the path); a `module:Class` model is its class's own `name`
    attribute, else the class name; a registered model is its registry name; each with its
    `--set` values, e.g. `ngram[order=3]`, except those that do not change its answers
    (`unkeyed_settings`: where it runs, on how many threads, how long it may take). A factory whose `label` is a string gives a default,
    shown without settings, that the built model replaces (`labelled_by_instance`): the command
    model's hello name."""
    custom = getattr(factory, "label", None)
    if callable(custom):
        label = custom(**spec.params)
        if not isinstance(label, str) or not label.strip():
            raise UserError(f"model {spec.name!r}: label() must return a non-empty str, not {label!r}.")
        return label.strip()
    unkeyed = getattr(factory, "unkeyed_settings", ())
    shown = {key: value for key, value in spec.params.items() if key not in unkeyed}
    if ":" in spec.name:
        return ModelSpec(name=own_name(factory) or getattr(factory, "__name__", spec.name), params=shown).label
    if isinstance(custom, str):
        return custom  # without settings: a command line would publish local paths
    return ModelSpec(name=spec.name, params=shown).label


def own_name(model: object) -> str | None:
    """The `name` a class (or an object, or its class) defines itself; not one inherited from a base
    class, which would show a subclass under its parent's name (an edited oracle as `oracle`)."""
    for owner in (model, type(model)):
        name = vars(owner).get("name") if hasattr(owner, "__dict__") else None
        if isinstance(name, str) and name.strip():
            return name.strip()
    return None


def labelled_by_instance(factory: Callable[..., Any]) -> bool:
    """Whether the built model names itself (a `label` string attribute; see `model_label`)."""
    return isinstance(getattr(factory, "label", None), str)


def checked_name(name: str) -> str:
    """A `--name` as the leaderboard will show it: one line of at most 100 characters."""
    shown = name.strip()
    if not shown or len(shown) > 100 or any(c in shown for c in "\r\n\t"):
        raise UserError(f"--name {name!r} must be one line of 1 to 100 characters, e.g. --name my-model-v2.")
    return shown


@dataclass(frozen=True)
class Asked:
    """One model as a caller asked for it: its spec (name and `--set` values, the run key with its
    facts), what builds it, the label it is shown under, and how much of each test split it sees."""

    spec: ModelSpec
    factory: Callable[..., Any]
    label: str
    label_is_final: bool
    """False where the built model names itself (the command model) and no `--name` was given."""
    instance: Any = None
    """A Python API caller's own model object, asked on every seed instead of building one."""
    limit: int | None = None
    """Only the first `limit` examples of each test split: a partial run, never ranked."""

    @classmethod
    def of(cls, spec: ModelSpec, *, name: str | None = None, limit: int | None = None, instance: Any = None) -> Asked:
        factory = type(instance) if instance is not None else registry.model_factory(spec.name)
        if name is not None:
            label, final = checked_name(name), True
        elif instance is not None:
            label, final = ModelSpec(name=own_name(instance) or factory.__name__, params=spec.params).label, True
        else:
            label, final = model_label(spec, factory), not labelled_by_instance(factory)
        if limit is not None and limit < 1:
            raise UserError(f"--limit {limit} must be a positive number of examples per test split, e.g. --limit 100.")
        return cls(spec, factory, label, final, instance, limit)

    @property
    def keyed(self) -> ModelSpec:
        """The spec as the run key holds it: without the settings the factory declares as not changing
        its answers (`unkeyed_settings`, e.g. the command model's time-outs)."""
        unkeyed = getattr(self.factory, "unkeyed_settings", ())
        if not any(key in unkeyed for key in self.spec.params):
            return self.spec
        return ModelSpec(name=self.spec.name, params={k: v for k, v in self.spec.params.items() if k not in unkeyed})

    def shown(self, label: str) -> str:
        """`label` as the leaderboard shows it: a partial run says so."""
        return label if self.limit is None else f"{label} (partial: first {self.limit} per split)"

    def build(self) -> Any:
        return self.instance if self.instance is not None else build_model(self.spec)


def model_record(spec: ModelSpec, facts: dict[str, Any] | None = None) -> dict[str, Any]:
    """The model as stored: its spec (name, params) and its facts (see `model_facts`)."""
    return {**spec.model_dump(), **(facts or {})}


def model_hash(spec: ModelSpec, facts: dict[str, Any] | None = None) -> str:
    text = json.dumps(model_record(spec, facts), sort_keys=True, default=str)
    return hashlib.sha256(text.encode()).hexdigest()


@cache
def git_commit() -> str | None:
    """The git revision of this structbench checkout; None for an installed copy (no git)."""
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
def environment_json() -> str:
    """What a run records of the process that made it: python, platform, CPUs and package versions (JSON)."""
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
    label: str | None = None
    """What the built model calls itself, where it names itself (see `model_label`)."""
    statistics: dict[str, float] | None = None
    """The model's checked `statistics()` report (e.g. dev perplexity); None when it has none or it raised."""


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


@dataclass(frozen=True)
class SeedOutcome:
    """How one seed ended, and the label its stored run has."""

    run_id: int
    status: str
    error: str | None
    cached: bool
    """Answered from the store."""
    label: str


def checked_facts(suite: Suite, asked: Asked) -> dict[str, Any]:
    """The facts a model's runs on `suite` are keyed by (`model_facts`, plus `limit` for a partial
    run), after refusing settings its constructor does not take and a protocol it does not declare:
    everything that can be refused before any data is built or any model trained."""
    if asked.instance is None:
        check_settings(asked.spec)  # before any data is built: a typo in --set costs nothing
    if missing := undeclared(asked.factory if asked.instance is None else asked.instance, suite.spec.protocol):
        raise UserError(missing)
    facts = model_facts(asked.spec, suite.spec.id, asked.factory)
    if asked.limit is not None:
        facts["limit"], facts["comparable"] = asked.limit, False  # a partial run is its own, never ranked
    return facts


def run_fields(
    suite: Suite, manifest: freeze.Manifest, asked: Asked, facts: dict[str, Any], seed: int
) -> dict[str, Any]:
    """Everything `Store.claim_run` needs of one run: its key (suite data, model spec and facts,
    seed) and what is recorded with it (label, draw, harness version, environment)."""
    spec = suite.spec
    return {
        "suite": spec.id,
        "version": spec.version,
        "suite_hash": manifest.suite_hash,
        "model": asked.shown(asked.label),
        "model_spec": json.dumps(model_record(asked.keyed, facts), sort_keys=True, default=str),
        "model_hash": model_hash(asked.keyed, facts),
        "config_hash": config_hash(facts.get("configuration")),
        "comparable": facts.get("comparable", True),
        "seed": seed,
        "draw": seed % spec.n_draws,
        "harness_version": __version__,
        "git_commit": git_commit(),
        "environment": environment_json(),
    }


def attempt(
    suite: Suite,
    manifest: freeze.Manifest,
    asked: Asked,
    seed: int,
    *,
    log: Callable[[str], None],
    progress: bool | None = None,
) -> Outcome:
    """Build, fit and ask the model for one seed: its results, or how it ended without them.

    A model's own crash (or `sys.exit`) is a failed outcome and one that does not speak the
    suite's protocol an n/a one; a `UserError` (a configuration problem, which says nothing about
    the model) and an interrupt propagate. Touches no store: `structbench run` calls it in its own
    process, a sweep's workers in theirs."""
    try:
        return fit_and_predict(suite, manifest, asked, seed, seed % suite.spec.n_draws, log=log, progress=progress)
    except NotApplicable as reason:
        return Ended("n/a", str(reason), str(reason))
    except UserError:
        raise
    except (Exception, SystemExit) as error:  # a model's own crash (or exit): recorded, the next seed runs
        return Ended("failed", _error_text(error), _failure(error))


def fit_and_predict(
    suite: Suite,
    manifest: freeze.Manifest,
    asked: Asked,
    seed: int,
    draw: int,
    *,
    log: Callable[[str], None],
    progress: bool | None = None,
) -> Evaluated:
    """Build the model, run it on the draw's splits and close it (a caller's own object stays open)."""
    model = asked.build()
    try:
        return _evaluate_model(model, suite, manifest, asked, seed, draw, log=log, progress=progress)
    finally:
        close = getattr(model, "close", None)
        if asked.instance is None and callable(close):  # a caller's own object stays theirs to close
            close()


def _evaluate_model(
    model: Any,
    suite: Suite,
    manifest: freeze.Manifest,
    asked: Asked,
    seed: int,
    draw: int,
    *,
    log: Callable[[str], None],
    progress: bool | None,
) -> Evaluated:
    spec = suite.spec
    if not speaks(model, spec.protocol):
        missing = undeclared(model, spec.protocol)
        if missing:
            raise UserError(missing)
        raise NotApplicable(f"{asked.label} does not speak the {spec.protocol} protocol")
    own_label = getattr(model, "label", None) if not asked.label_is_final else None
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
        desc=f"{spec.id} {asked.label} seed {seed}",
        unit="ex",
        disable=progress is False or None,
        leave=False,
    ) as bar:
        for test in tests:
            data = splits[test.name]
            if asked.limit is not None:
                data = data.model_copy(update={"examples": data.examples[: asked.limit]})
            predictions = ask(model, spec, data.examples, on_batch=bar.update)
            scores = suite.score(data, predictions)
            results[test.name] = (scores, [e.id for e in data.examples], predictions)
    predict_seconds = time.perf_counter() - started
    where = f"{spec.key} x {asked.label} seed {seed}"
    return Evaluated(
        results,
        fit_seconds,
        predict_seconds,
        _reported(model, "compute", where, log),
        own_label if isinstance(own_label, str) else None,
        _reported(model, "statistics", where, log),
    )


def _reported(model: Any, method: str, where: str, log: Callable[[str], None]) -> dict[str, Any] | None:
    """What the model's optional `compute()` or `statistics()` reports, checked; None without the method.

    The run it describes has finished: a method that raises, or answers keys or values the
    checker rejects, is logged and the run is stored without those entries."""
    reporter = ComputeReporter if method == "compute" else StatisticsReporter
    if not isinstance(model, reporter):
        return None
    try:
        reported = getattr(model, method)()
    except (Exception, SystemExit) as error:  # the model's bug, not the run's: log it, keep the run
        log(f"{where}: {method}() raised {_failure(error)}; the run is stored without it")
        return None
    checked = checked_compute if method == "compute" else checked_statistics
    valid, dropped = checked(reported)
    if dropped:
        log(f"{where}: {method}() entries left out: {'; '.join(dropped)}")
    return valid


class Runner:
    """Evaluates models on suites into one store."""

    def __init__(self, store: Store, *, source_dir: Path | None = None, progress: bool | None = None) -> None:
        self.store = store
        self.source_dir = source_dir
        self.progress = progress
        self.log: Callable[[str], None] = lambda message: print(message, file=sys.stderr)

    def evaluate(
        self,
        suite_ref: str,
        model: ModelSpec | Asked,
        seeds: Sequence[int],
        *,
        force: bool = False,
    ) -> ResultRecord:
        """Every seed of `model` on the suite, each from the store where it holds it (unless `force`):
        the cells over all finished seeds of this configuration.

        `force` runs every seed again, replacing what the store holds for them."""
        suite = registry.suite(suite_ref)
        if not seeds:
            raise UserError("no seeds given; pass --seeds, e.g. --seeds 0,1,2.")
        asked = model if isinstance(model, Asked) else Asked.of(model)
        facts = checked_facts(suite, asked)
        manifest = freeze.ensure_built(suite, self.source_dir)
        self.store.record_suite(suite.spec, manifest.suite_hash)
        status: dict[str, str] = {}
        errors: dict[str, str] = {}
        cached = 0
        label = asked.shown(asked.label)
        for seed in seeds:
            outcome = self._run_seed(suite, manifest, asked, facts, seed, force=force)
            cached += outcome.cached
            status[str(seed)] = outcome.status
            label = outcome.label
            if outcome.error:
                errors[str(seed)] = outcome.error
        if cached:
            self.log(f"{suite.spec.key} x {label}: {cached} of {len(seeds)} seeds answered from the store")
        return self.result_record(suite, manifest.suite_hash, asked, facts, seeds, status, errors, label)

    def result_record(
        self,
        suite: Suite,
        suite_hash: str,
        asked: Asked,
        facts: dict[str, Any],
        seeds: Sequence[int],
        status: dict[str, str],
        errors: dict[str, str],
        label: str,
    ) -> ResultRecord:
        """What `run --json` prints of one model configuration on one suite: the per-seed statuses
        given and the cells over every finished seed the store holds."""
        return ResultRecord(
            suite=suite.spec.id,
            version=suite.spec.version,
            suite_hash=suite_hash,
            model=label,
            seeds=list(seeds),
            status=status,
            errors=errors,
            partial=asked.limit,
            **self.cell_scores(suite, suite_hash, model_hash(asked.keyed, facts)),
        )

    def _run_seed(
        self,
        suite: Suite,
        manifest: freeze.Manifest,
        asked: Asked,
        facts: dict[str, Any],
        seed: int,
        *,
        force: bool = False,
    ) -> SeedOutcome:
        """Evaluate one seed or answer it from the store.

        The run is claimed atomically (`Store.claim_run`), so that processes evaluating into one
        store at once never crash on each other or repeat each other's work: a run that another
        live process holds is waited for and its result read. A failed or interrupted run is
        redone, and with `force` a finished one too; an interrupt leaves this one `running` and
        released, to be redone next time. A finished run asked for under another label (`--name`)
        is relabelled: the label is not part of the run key."""
        spec = suite.spec
        label = asked.shown(asked.label)
        fields = run_fields(suite, manifest, asked, facts, seed)
        claim = self.store.claim_run(fields, force=force)
        if claim.state == "busy":
            self.log(f"{spec.key} x {label} seed {seed} is being run by {claim.holder}; waiting for it")
            while claim.state == "busy":
                time.sleep(0.5)
                # the other process's failure is this ask's answer too, not a cue to repeat the crash
                claim = self.store.claim_run(fields, retry_failed=False)
        where = f"{spec.key} x {label} seed {seed}"
        if claim.state == "cached":
            return self.answered(claim, asked, where)
        try:
            try:
                outcome = attempt(suite, manifest, asked, seed, log=self.log, progress=self.progress)
            except UserError:
                self.store.discard(claim)  # a configuration error says nothing about the model
                raise
            return self.record(claim, asked, outcome, where)
        finally:
            self.store.release(claim)  # after an interrupt only: the run stays `running`, for anyone to redo

    def answered(self, claim: Claim, asked: Asked, where: str) -> SeedOutcome:
        """A run the store already holds (`claim.state == "cached"`), relabelled when it is asked for
        under another final label (`--name`): the label is not part of the run key."""
        error = None if claim.status == "done" else claim.error
        if claim.status == "failed" and error:
            error = error.strip().splitlines()[-1]  # the exception line of the stored traceback
        stored = self.store.label(claim.run_id)
        label = asked.shown(asked.label)
        if asked.label_is_final and stored != label:
            self.store.relabel(claim.run_id, label)
            self.log(f"{where}: the stored run of {stored!r} is now shown as {label!r}")
            stored = label
        return SeedOutcome(claim.run_id, claim.status, error, True, stored)

    def record(
        self, claim: Claim, asked: Asked, outcome: Outcome, where: str, *, environment: str | None = None
    ) -> SeedOutcome:
        """Store how a claimed run came out, in one transaction: its results (`finish_run`), or its
        failure or n/a reason (`end_run`). A failure is logged. `environment` is the environment
        JSON of the process that ran the model where that is not this one (a sweep's worker)."""
        label = asked.shown(asked.label)
        if isinstance(outcome, Ended):
            self.store.end_run(claim, outcome.status, outcome.error)
            if outcome.status == "failed":
                self.log(f"{where} failed: {outcome.message}")
            return SeedOutcome(claim.run_id, outcome.status, outcome.message, False, label)
        if outcome.label is not None and not asked.label_is_final:
            label = asked.shown(outcome.label)
            self.store.relabel(claim.run_id, label)
        self.store.finish_run(
            claim,
            outcome.results,
            outcome.fit_seconds,
            outcome.predict_seconds,
            outcome.compute,
            outcome.statistics,
            environment=environment,
        )
        return SeedOutcome(claim.run_id, "done", None, False, label)

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
