"""A model as a caller asked for it: checked once, and the label it is shown under.

`ModelRequest.of` is the entry that `structbench run`, a sweep, `check`, `reference verify` and the
Python API share: it checks a model's `--set` values against its constructor (and a `--name` and
`--limit`), once, before any data is built, so that a typo costs nothing, and fixes the label the
leaderboard shows. The label is never part of a run's key (`structbench.runs.key`). What a model may
define for these is listed in `structbench.protocols.Model`; each is read here through
`structbench.protocols.hook`.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from structbench import registry
from structbench.errors import UserError
from structbench.protocols import hook
from structbench.runs.settings import check_settings
from structbench.specs import ModelSpec


def model_label(spec: ModelSpec, factory: Callable[..., Any]) -> str:
    """The name the leaderboard shows for a model (never part of the run key; `--name` overrides it).

    A model factory's classmethod `label(**settings)` (`Model.label`) decides where it has one (a
    Hugging Face model: its folder's name, never the path); a `module:Class` model is its class's
    own `name` attribute, else the class name; a registered model is its registry name; each with
    its `--set` values, e.g. `ngram[order=3]`, except those that do not change its answers
    (`Model.unkeyed_settings`: the device it runs on, how long it may take). A factory
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
    """A new model from its registered factory (or `module:Class`) and its settings."""
    return registry.model_factory(spec.name)(**spec.params)


@dataclass(frozen=True)
class ModelRequest:
    """One model as a caller asked for it, checked: its spec (name and `--set` values, from which
    `structbench.runs.key.ModelKey.of` makes its runs' key), what builds it, the label it is shown
    under, and how much of each test split it sees."""

    spec: ModelSpec
    """The name and `--set` values as asked (the run key leaves out some of them: `ModelKey.spec`)."""
    factory: Callable[..., Any]
    """What builds the model: its registered factory or class (a caller's object: its class)."""
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
    def of(
        cls, spec: ModelSpec, *, name: str | None = None, limit: int | None = None, instance: Any = None
    ) -> ModelRequest:
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

    def shown(self, label: str) -> str:
        """`label` as the leaderboard shows it: a partial run says so."""
        return label if self.limit is None else f"{label} (partial: first {self.limit} per split)"

    def build(self) -> Any:
        """The model to fit and ask: the caller's own object, else one built from `spec`."""
        return self.instance if self.instance is not None else build_model(self.spec)
