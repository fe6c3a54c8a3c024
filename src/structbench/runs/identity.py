"""Who a model is to the store and the leaderboard: its run key, its facts and the label it is shown under.

A run is keyed by the model's name, its `--set` values (less those that do not change its answers)
and its facts (resolved configuration, code fingerprint, comparability), read from its class
without building it. `Asked` is one model as a caller asked for it; building it checks its
settings against its constructor, once, at the entry that `structbench run`, a sweep, `check`
and the Python API share. What a model may define for these is listed in
`structbench.protocols.Model`; each is read here through `structbench.protocols.hook`.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from structbench import registry
from structbench.errors import UserError
from structbench.protocols import hook
from structbench.runs.fingerprint import source_fingerprint
from structbench.runs.settings import check_settings
from structbench.specs import ModelSpec


def model_facts(spec: ModelSpec, suite_id: str, factory: Callable[..., Any] | None = None) -> dict[str, Any]:
    """What the store records of a model beyond its spec, read from its class without building it.

    `configuration`: a model whose numbers also come from files it ships (a neural baseline's
    recipe) returns its resolved settings from the optional classmethod
    `configuration(suite_id, **settings)` (`Model.configuration`), so that a changed recipe is a
    different model to the store rather than a cache hit on results it no longer produces.
    `comparable`: False for a model that sees test-time information (`Model.comparable`, an
    oracle); the report flags it and never ranks it among comparable models.
    `code`: the fingerprint of the user's own code (`structbench.runs.fingerprint`): a model's optional
    classmethod `fingerprint(**settings)` (`Model.fingerprint`: the command model hashes the files
    its command names, a Hugging Face model its config and weights), else, for a `module:Class`
    model, its module's source; so an edited model is run again.
    `factory` is what builds the model when it is not found by name (a Python API caller's class).
    """
    factory = factory or registry.model_factory(spec.name)
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


def model_label(spec: ModelSpec, factory: Callable[..., Any]) -> str:
    """The name the leaderboard shows for a model (never part of the run key; `--name` overrides it).

    A model factory's classmethod `label(**settings)` (`Model.label`) decides where it has one (a
    Hugging Face model: its folder's name, never the path); a `module:Class` model is its class's
    own `name` attribute, else the class name; a registered model is its registry name; each with
    its `--set` values, e.g. `ngram[order=3]`, except those that do not change its answers
    (`Model.unkeyed_settings`: where it runs, on how many threads, how long it may take). A factory
    whose `label` is a string gives a default, shown without settings, that the built model
    replaces (`labelled_by_instance`): the command model's hello name."""
    custom = hook(factory, "label")
    if callable(custom):
        label = custom(**spec.params)
        if not isinstance(label, str) or not label.strip():
            raise UserError(f"model {spec.name!r}: label() must return a non-empty str, not {label!r}.")
        return label.strip()
    unkeyed = hook(factory, "unkeyed_settings", ())
    shown = {key: value for key, value in spec.params.items() if key not in unkeyed}
    if ":" in spec.name:
        return ModelSpec(name=own_name(factory) or getattr(factory, "__name__", spec.name), params=shown).label
    if isinstance(custom, str):
        return custom  # without settings: a command line would publish local paths
    return ModelSpec(name=spec.name, params=shown).label


def own_name(model: object) -> str | None:
    """The `name` (`Model.name`) a class (or an object, or its class) defines itself; not one inherited
    from a base class, which would show a subclass under its parent's name (an edited oracle as `oracle`)."""
    for owner in (model, type(model)):
        name = vars(owner).get("name") if hasattr(owner, "__dict__") else None
        if isinstance(name, str) and name.strip():
            return name.strip()
    return None


def labelled_by_instance(factory: Callable[..., Any]) -> bool:
    """Whether the built model names itself (a `label` string attribute; see `model_label`)."""
    return isinstance(hook(factory, "label"), str)


def checked_name(name: str) -> str:
    """A `--name` as the leaderboard will show it: one line of at most 100 characters."""
    shown = name.strip()
    if not shown or len(shown) > 100 or any(c in shown for c in "\r\n\t"):
        raise UserError(f"--name {name!r} must be one line of 1 to 100 characters, e.g. --name my-model-v2.")
    return shown


def build_model(spec: ModelSpec) -> Any:
    return registry.model_factory(spec.name)(**spec.params)


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
    named: bool = False
    """The label is the caller's `--name`, kept whatever the settings."""

    @classmethod
    def of(cls, spec: ModelSpec, *, name: str | None = None, limit: int | None = None, instance: Any = None) -> Asked:
        """The model asked for, after refusing settings its constructor does not take (`check_settings`;
        a model object was built by its caller) and a bad `--name` or `--limit`: the one place where
        they are checked, before any data is built, so that a typo in `--set` costs nothing."""
        factory = type(instance) if instance is not None else registry.model_factory(spec.name)
        if instance is None:
            check_settings(spec)
        if name is not None:
            label, final = checked_name(name), True
        elif instance is not None:
            label, final = ModelSpec(name=own_name(instance) or factory.__name__, params=spec.params).label, True
        else:
            label, final = model_label(spec, factory), not labelled_by_instance(factory)
        if limit is not None and limit < 1:
            raise UserError(f"--limit {limit} must be a positive number of examples per test split, e.g. --limit 100.")
        return cls(spec, factory, label, final, instance, limit, named=name is not None)

    @property
    def keyed(self) -> ModelSpec:
        """The spec as the run key holds it: without the settings the factory declares as not changing
        its answers (`Model.unkeyed_settings`, e.g. the command model's time-outs)."""
        unkeyed = hook(self.factory, "unkeyed_settings", ())
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


def model_record_json(spec: ModelSpec, facts: dict[str, Any] | None = None) -> str:
    """`model_record` as the store's `model_spec` column holds it, and as `model_hash` hashes it."""
    return json.dumps(model_record(spec, facts), sort_keys=True, default=str)


def record_hash(record: str) -> str:
    """The model's part of the run key: SHA-256 of its `model_record_json`."""
    return hashlib.sha256(record.encode()).hexdigest()


def model_hash(spec: ModelSpec, facts: dict[str, Any] | None = None) -> str:
    """The model's part of the run key (`record_hash` of `model_record_json`)."""
    return record_hash(model_record_json(spec, facts))
