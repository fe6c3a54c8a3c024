"""A run's key: what the store answers a run by, and every rule that makes it.

A run is one suite x model x seed. The store keys it by (suite id, version, suite hash, model hash,
seed): a run asked for again under the same key is answered from the store, not run again. `RunKey.of`
makes that key and documents its rules; nothing else in structbench computes a model hash, so that
`structbench run`, a sweep's planner and its workers, `check`, `reference verify` and the Python API
key a run alike. The model's part of the key, `ModelKey`, is fixed before any data is built and made
once per (suite, model) (`ModelKey.of`); the run key adds the built data's hash and the seed.
`normalise` moves runs a store holds under an older form of the settings rule with `ModelKey.of_stored`.
"""

from __future__ import annotations

import hashlib
import inspect
import json
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from structbench import registry
from structbench.errors import UserError
from structbench.protocols import hook
from structbench.runs.fingerprint import source_fingerprint
from structbench.runs.request import ModelRequest
from structbench.specs import ModelSpec, SuiteSpec
from structbench.store import config_hash


@dataclass(frozen=True)
class ModelKey:
    """A model's part of the key of its runs on one suite: made once per (suite, model), before any
    data is built (`ModelKey.of`; the rules are `RunKey.of`'s)."""

    suite: str
    """The id of the suite it was made for (a recipe's configuration differs from suite to suite)."""
    spec: ModelSpec
    """The name and the settings that key the runs: as asked, less those that change no answer and
    those that ask for the model's defaults on this suite."""
    facts: dict[str, Any]
    """What keys the runs beyond the settings, read from the model's class without building it:
    `configuration`, `code`, `comparable: False`, and `limit` for a partial run."""
    record_json: str
    """`spec` and `facts` as the store's `model_spec` column holds them."""
    model_hash: str
    """SHA-256 of `record_json`: the store's `model_hash`."""
    dropped_defaults: bool
    """Whether settings that ask for the model's defaults were left out of `spec` (its label is then
    made again from `spec`, so that an explicit default is shown as the default)."""

    @classmethod
    def of(cls, suite_id: str, request: ModelRequest) -> ModelKey:
        """`request`'s part of the key of its runs on suite `suite_id` (see `RunKey.of`). A caller's
        own model object keeps every setting it shows: its defaults are its constructor's business."""
        asked = _keyed_settings(request.spec, request.factory)
        spec = asked if request.instance is not None else _without_defaults(asked, request.factory, suite_id)
        facts = _model_facts(spec, suite_id, request.factory)
        if request.limit is not None:
            facts["limit"], facts["comparable"] = request.limit, False  # a partial run is its own, never ranked
        return cls._of_facts(suite_id, spec, facts, dropped_defaults=spec != asked)

    @classmethod
    def of_stored(cls, suite_id: str, record: Mapping[str, Any]) -> ModelKey:
        """The key a stored model record (`record_json`, read) has under today's settings rule: its
        settings less those that ask for the model's defaults on suite `suite_id`, its facts as stored
        (`structbench.runs.normalise` moves a run stored before the rule to it). Raises `UserError`,
        `KeyError`, `ImportError` or `ValueError` where the record names no model found here."""
        asked = ModelSpec(name=str(record["name"]), params=record.get("params") or {})
        spec = _without_defaults(asked, registry.model_factory(asked.name), suite_id)
        facts = {name: value for name, value in record.items() if name not in ("name", "params")}
        return cls._of_facts(suite_id, spec, facts, dropped_defaults=spec != asked)

    @classmethod
    def _of_facts(cls, suite_id: str, spec: ModelSpec, facts: dict[str, Any], *, dropped_defaults: bool) -> ModelKey:
        record_json = json.dumps({**spec.model_dump(), **facts}, sort_keys=True, default=str)
        model_hash = hashlib.sha256(record_json.encode()).hexdigest()
        return cls(suite_id, spec, facts, record_json, model_hash, dropped_defaults)

    @property
    def config_hash(self) -> str | None:
        """SHA-256 of the resolved configuration (`structbench.store.config_hash`); None without one."""
        return config_hash(self.facts.get("configuration"))

    @property
    def comparable(self) -> bool:
        """False for a model that sees test-time information (an oracle) or a partial run: never ranked."""
        return bool(self.facts.get("comparable", True))


@dataclass(frozen=True)
class RunKey:
    """What the store answers one run by (made by `RunKey.of`): the store's run key is (`suite`,
    `version`, `suite_hash`, `model.model_hash`, `seed`)."""

    suite: str
    """The suite's id."""
    version: str
    """The suite's version."""
    suite_hash: str
    """SHA-256 over the suite's built data (`freeze.Manifest.suite_hash`)."""
    model: ModelKey
    """The model's part of the key."""
    seed: int

    @classmethod
    def of(cls, suite: SuiteSpec, suite_hash: str, model: ModelRequest | ModelKey, seed: int) -> RunKey:
        """The key of seed `seed` of `model` on `suite`'s data whose hash is `suite_hash`.

        - The suite: its id, version and the SHA-256 of its built data: other data is another run.
        - The model: the SHA-256 of its record (`ModelKey.record_json`), which holds
          - its name (registered, `module:Class` or a command);
          - its `--set` values, less those it declares as changing no answer
            (`Model.unkeyed_settings`: the device it runs on, how long it may take; not its threads,
            which may round otherwise),
            and less those that ask for what it does anyway (`_without_defaults`): a value equal to
            its constructor's default (`depth=2` where `depth: int = 2`), or a recipe value
            (`epochs=20` where its recipe says 20 on this suite); so `--set depth=2` is the default
            run, keyed and labelled as it;
          - its facts, read from its class without building it (`_model_facts`): its resolved
            `configuration` on this suite (`Model.configuration`, a neural baseline's recipe: a
            changed recipe is another model), the fingerprint of the user's own `code`
            (`Model.fingerprint`, else a `module:Class` model's source file,
            `structbench.runs.fingerprint`: an edited model runs again), `comparable: False` for a
            model that sees test-time information (an oracle), and, for a partial run (`--limit`),
            `limit` with `comparable: False`.
        - The seed.

        The label (`--name`) is never part of it: a run asked for under another name is answered
        from the store and relabelled. `model` is the request, or its `ModelKey` on this suite made
        once for many seeds."""
        key = model if isinstance(model, ModelKey) else ModelKey.of(suite.id, model)
        if key.suite != suite.id:
            raise ValueError(f"the model key was made for suite {key.suite!r}, not {suite.id!r}")
        return cls(suite.id, suite.version, suite_hash, key, seed)

    def stored_fields(self) -> dict[str, Any]:
        """The key as the store's run columns hold it (`Store.claim_run`), with what the store records
        of the same model facts: `model_spec` (the record the model hash is of), `config_hash`, `comparable`."""
        return {
            "suite": self.suite,
            "version": self.version,
            "suite_hash": self.suite_hash,
            "model_spec": self.model.record_json,
            "model_hash": self.model.model_hash,
            "config_hash": self.model.config_hash,
            "comparable": self.model.comparable,
            "seed": self.seed,
        }


def _keyed_settings(spec: ModelSpec, factory: Callable[..., Any]) -> ModelSpec:
    """`spec` without the settings its factory declares as not changing its answers
    (`Model.unkeyed_settings`, e.g. the command model's time-outs)."""
    unkeyed = hook(factory, "unkeyed_settings", ())
    if not any(key in unkeyed for key in spec.params):
        return spec
    return ModelSpec(name=spec.name, params={k: v for k, v in spec.params.items() if k not in unkeyed})


def _same(value: Any, default: Any) -> bool:
    """Whether a `--set` value is the default itself: equal and of the same kind (2 and 2.0 are one
    number; True is not 1)."""
    numbers = (int, float)
    if isinstance(value, numbers) and isinstance(default, numbers):
        return not isinstance(value, bool) and not isinstance(default, bool) and value == default
    return type(value) is type(default) and value == default


def _without_defaults(spec: ModelSpec, factory: Callable[..., Any], suite_id: str) -> ModelSpec:
    """`spec` less the `--set` values that ask for what the model does anyway, so that an explicit
    default is the same run (and the same label) as the default: a value equal to its constructor
    parameter's default (`depth=2` where `depth: int = 2`), and, for a model whose resolved
    configuration keys its runs (`Model.configuration`, a neural baseline's recipe), a setting the
    constructor takes as a keyword override whose removal leaves that configuration as it is on this
    suite (`epochs=20` where the recipe says 20)."""
    try:
        parameters: Mapping[str, inspect.Parameter] = inspect.signature(factory).parameters
    except (TypeError, ValueError):
        parameters = {}
    params = {
        key: value
        for key, value in spec.params.items()
        if not (
            key in parameters
            and parameters[key].default is not inspect.Parameter.empty
            and _same(value, parameters[key].default)
        )
    }
    configure = hook(factory, "configuration")
    if callable(configure):
        resolved = configure(suite_id, **params)
        for key in sorted(params):
            if key in parameters or key not in resolved:  # a setting the configuration does not show is kept
                continue
            rest = {k: v for k, v in params.items() if k != key}
            try:
                unchanged = configure(suite_id, **rest) == resolved
            except UserError:  # the others are invalid without it (embedding = hidden): it is needed
                unchanged = False
            if unchanged:
                params = rest
    return spec if params == spec.params else ModelSpec(name=spec.name, params=params)


def _model_facts(spec: ModelSpec, suite_id: str, factory: Callable[..., Any]) -> dict[str, Any]:
    """What keys a model's runs beyond its spec, read from its class (`factory`) without building it.

    `configuration`: a model whose numbers also come from files it ships (a neural baseline's
    recipe) returns its resolved settings from the optional classmethod
    `configuration(suite_id, **settings)` (`Model.configuration`), so that a changed recipe is a
    different model to the store rather than a cache hit on results it no longer produces.
    `comparable`: False for a model that sees test-time information (`Model.comparable`, an
    oracle); the report flags it and never ranks it among comparable models.
    `code`: the fingerprint of the user's own code (`structbench.runs.fingerprint`): a model's optional
    classmethod `fingerprint(**settings)` (`Model.fingerprint`: the command model hashes the files
    its command names, a Hugging Face model its config and weights), else, for a `module:Class`
    model, its module's source; so an edited model is run again."""
    facts: dict[str, Any] = {}
    fingerprint = hook(factory, "fingerprint")
    if callable(fingerprint):
        facts["code"] = fingerprint(**spec.params)
    elif ":" in spec.name and (source := source_fingerprint(factory)) is not None:
        facts["code"] = source
    configure = hook(factory, "configuration")
    if callable(configure):
        resolved = configure(suite_id, **spec.params)
        if not isinstance(resolved, dict):
            raise UserError(f"model {spec.name!r}: configuration() must return a dict, not {type(resolved).__name__}.")
        facts["configuration"] = resolved
    if hook(factory, "comparable", True) is False:
        facts["comparable"] = False
    return facts
