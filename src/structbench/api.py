"""The Python entry points: evaluate a model, read a store's results, load a suite's frozen examples.

For researchers who work in a notebook or a training script rather than at the terminal. They
run the command line's own runner, store and cells, so that a number from `evaluate` is the
number `structbench run` and the leaderboard show, and a run made here is answered from the
store there (and the other way round):

    import structbench
    result = structbench.evaluate("scan-simple", MyModel(), seeds=[0, 1, 2])
    result.to_pandas()                                       # one row per (split, metric)
    structbench.load_results("results.sqlite").to_pandas()   # one row per (run, split, metric)
    structbench.load_suite("scan-simple").split("test")      # the frozen examples
"""

from __future__ import annotations

import inspect
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from structbench import registry
from structbench.data import freeze
from structbench.errors import UserError
from structbench.paths import default_store_path
from structbench.runs.request import ModelRequest
from structbench.runs.runner import Runner
from structbench.specs import ModelSpec, ResultRecord, Split, SuiteSpec
from structbench.store import Store
from structbench.suite import Suite

if TYPE_CHECKING:
    import pandas as pd


def evaluate(
    suite: str,
    model: object,
    seeds: Sequence[int] = (0,),
    *,
    settings: Mapping[str, str | int | float | bool | None] | None = None,
    store: str | Path | None = None,
    name: str | None = None,
    limit: int | None = None,
    force: bool = False,
    source_dir: str | Path | None = None,
    progress: bool | None = None,
) -> ResultRecord:
    """Evaluate `model` on `suite` (`ID` or `ID@VERSION`) over `seeds`, stored in `store`
    (default: the command line's), and return the result record `structbench run --json` prints.

    `model` is a model object (any class with `protocols` and the protocol's method; the same
    object is fitted and asked on every seed), or a name as `--model` takes it (registered, or
    `module:Class`) with `settings` as `--set` gives them. A model object is keyed in the store
    as `--model module:Class` with its settings (`instance_settings`) as `--set` values: two
    objects of one class built with different settings are two models, an edited class is a new
    one, and the same object asked again, here or by `structbench run`, is answered from the store. `name` is the label (`--name`; default
    the object's `name` attribute, else its class name), `limit` asks only the first N
    examples of each test split (a partial run, never ranked), `force` runs stored seeds again."""
    if isinstance(model, str):
        asked = ModelRequest.of(ModelSpec(name=model, params=dict(settings or {})), name=name, limit=limit)
    else:
        if settings:
            raise UserError("settings go with a model name; a model object is configured by its own constructor.")
        if isinstance(model, type):
            raise UserError(f"pass a model object, e.g. {model.__name__}(), not the class {model.__name__}.")
        cls = type(model)
        spec = ModelSpec(name=f"{cls.__module__}:{cls.__qualname__}", params=instance_settings(model))
        asked = ModelRequest.of(spec, name=name, limit=limit, instance=model)
    with Store(Path(store) if store is not None else default_store_path()) as opened:
        runner = Runner(opened, source_dir=Path(source_dir) if source_dir is not None else None, progress=progress)
        return runner.evaluate(suite, asked, list(seeds), force=force)


def instance_settings(model: object) -> dict[str, str | int | float | bool | None]:
    """A model object's settings as far as they can be seen: the constructor's parameters that it
    keeps under the same name (scikit-learn's `get_params` convention) as plain values (str, int,
    float, bool, None) and that differ from their defaults, as `--set` would give them. What
    `fit` learns is not among them, so the same object asked again is answered from the store."""
    try:
        parameters = inspect.signature(type(model)).parameters
    except (TypeError, ValueError):
        return {}
    settings: dict[str, str | int | float | bool | None] = {}
    for name, parameter in parameters.items():
        if parameter.kind in (parameter.VAR_POSITIONAL, parameter.VAR_KEYWORD) or name.startswith("_"):
            continue
        value = getattr(model, name, inspect.Parameter.empty)
        if not (value is None or isinstance(value, str | int | float | bool)):
            continue  # not kept, or not a plain value: not visible as a setting
        if parameter.default is inspect.Parameter.empty or parameter.default != value:
            settings[name] = value
    return settings


@dataclass(frozen=True)
class Results:
    """The runs a store holds, for analysis in pandas."""

    path: Path

    def to_pandas(self) -> pd.DataFrame:
        """One row per (run, split, metric) of the whole test splits, in run order: suite, version,
        suite_hash, model (the label), seed, status, split, metric, value, n. A failed or n/a run is
        one row with its status and empty split, metric and value, so that no run goes missing."""
        with Store(self.path) as store:
            return store.run_scores()


def load_results(store: str | Path | None = None) -> Results:
    """The results in `store` (default: the command line's); an absent file is an error, not a new store."""
    path = Path(store) if store is not None else default_store_path()
    if not path.is_file():
        raise UserError(f"no results store at {path}; evaluate a model first or pass the store's path.")
    return Results(path)


@dataclass(frozen=True)
class LoadedSuite:
    """A suite's frozen data as built on this machine: its spec and its splits, draw by draw."""

    spec: SuiteSpec
    suite_hash: str
    """SHA-256 over the frozen splits: results with another hash are about other data."""
    _manifest: freeze.Manifest
    _source: Suite

    @property
    def splits(self) -> list[str]:
        """The split names, in the suite's order."""
        return [split.name for split in self.spec.splits]

    def split(self, name: str, draw: int = 0) -> Split:
        """The examples of split `name` of data draw `draw` (seed s evaluates draw s mod n_draws)."""
        if name not in self.splits:
            raise UserError(f"{self.spec.key} has no split {name!r}; its splits are {', '.join(self.splits)}.")
        if not 0 <= draw < self.spec.n_draws:
            raise UserError(f"{self.spec.key} has draws 0 to {self.spec.n_draws - 1}, not {draw}.")
        return freeze.load_split(self._source, self._manifest, draw, name)


def load_suite(suite: str, *, source_dir: str | Path | None = None) -> LoadedSuite:
    """The frozen data of `suite` (`ID`, `ID@VERSION` or `module:Class`), built first if need be."""
    loaded = registry.suite(suite)
    manifest = freeze.ensure_built(loaded, Path(source_dir) if source_dir is not None else None)
    return LoadedSuite(loaded.spec, manifest.suite_hash, manifest, loaded)
