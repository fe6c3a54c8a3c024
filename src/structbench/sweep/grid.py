"""Sweep grid files: what `structbench sweep GRID.yaml` reads, checked and expanded into runs.

A grid names suites, models with their `--set` values, and seeds; a list among a model's
settings is an axis of the grid, and every combination of the axes is one model configuration:

```yaml
suites: [lookup-tables, miniscan]
models:
  - name: seq2seq-gru-attn
    set: {hidden: [32, 64], epochs: 2}   # two configurations
  - transformer                          # a name alone: the recipe's defaults
  - name: my_model:MyModel               # module:Class, as `run --model` takes it
    label: mine                          # the leaderboard label (`run --name`); one configuration only
  - name: lla-lstm
    suites: [miniscan]                   # this model on these suites instead of the grid's
    seeds: "0-4"                         # and over these seeds
seeds: [0, 1, 2]                         # or "0-4", as `run --seeds` takes it
limit: 100                               # optional: `run --limit`, a partial sweep that is never ranked
```

Every model configuration runs on every suite (its own `suites` where it names them) over every
seed (its own `seeds` where it names them); each is the same run `structbench run --suite S
--model M --set ... --seeds ...` would make: a string setting is read as `--set key=value` reads it
(`structbench.runs.arguments.parse_settings`: "1e-3" becomes the number 0.001), so that a sweep and `run`
key a run alike. A grid that cannot be read is refused in one sentence naming the file, the
place in it and the fix.

The YAML is read strictly: a key given twice in one mapping is refused (YAML would keep the last
one silently), and a seed must be an integer (`seeds: [yes, no]` is a list of YAML booleans, not
the seeds 1 and 0). A file is UTF-8, or UTF-16 with its byte-order mark, as the YAML spec allows.

Limits: a grid file is read up to `MAX_GRID_BYTES` (10 MB), and a grid may ask for at most
`MAX_RUNS` (100,000) runs, counted from its axes before anything is expanded; a bigger one is
refused with its count, to be split into several files.
"""

from __future__ import annotations

import codecs
import itertools
import math
import os
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml
from pydantic import Field, StrictInt, ValidationError, field_validator, model_validator

from structbench.errors import UserError
from structbench.runs.arguments import parse_seeds, parse_settings
from structbench.runs.settings import text_settings
from structbench.specs import Frozen, ModelSpec
from structbench.store.untrusted import Refused, read_file

Scalar = str | int | float | bool | None
"""One setting's value, as `ModelSpec.params` holds it."""

EXAMPLE = "suites: [miniscan]\nmodels:\n  - name: seq2seq\n    set: {hidden: [32, 64]}\nseeds: [0, 1, 2]"
"""A grid to show in an error: the smallest complete one."""

MAX_RUNS = 100_000
"""The most runs one grid may ask for (configurations x suites x seeds, summed over its models)."""
MAX_GRID_BYTES = 10_000_000
"""The most bytes of a grid file that are read; a larger (or endless) file is refused."""


def _listed_seeds(seeds: Any) -> Any:
    """`seeds: 3` is `seeds: [3]`; a YAML boolean (`true`, `yes`, `on`) is refused, not read as 1."""
    if isinstance(seeds, bool) or (isinstance(seeds, list) and any(isinstance(seed, bool) for seed in seeds)):
        raise ValueError(
            "a seed is an integer, and `true`, `yes` or `on` is a YAML boolean; write the seeds as numbers"
        )
    return [seeds] if isinstance(seeds, int) else seeds


class _RepeatedKey(yaml.constructor.ConstructorError):
    """A key given twice in one mapping of a grid file."""

    def __init__(self, key: Any, mark: yaml.Mark) -> None:
        super().__init__(None, None, f"the key {key!r} is given twice", mark)
        self.key = key


class _StrictLoader(yaml.SafeLoader):
    """PyYAML's safe loader, refusing a key given twice in one mapping: YAML keeps the last one
    silently, so that `seeds: [0]` above a second `seeds: [1]` would run seed 1 alone."""

    def construct_mapping(self, node: yaml.MappingNode, deep: bool = False) -> dict[Any, Any]:
        seen: set[Any] = set()
        for key_node, _ in node.value:
            if key_node.tag == "tag:yaml.org,2002:merge":  # `<<: *defaults` overrides by design
                continue
            key = self.construct_object(key_node, deep=deep)
            try:
                repeated = key in seen
            except TypeError:
                continue  # an unhashable key: the safe loader refuses it itself
            if repeated:
                raise _RepeatedKey(key, key_node.start_mark)
            seen.add(key)
        return super().construct_mapping(node, deep=deep)


class GridModel(Frozen):
    """One model entry of a grid: a model name, its settings (a list is an axis) and an optional label."""

    name: str = Field(min_length=1)
    """A registered model (`structbench models`), `module:Class` or `command`, as `run --model` takes it."""
    set: dict[str, Scalar | list[Scalar]] = Field(default_factory=dict)
    """Constructor settings, as `--set` gives them; a list of values is a grid axis."""
    label: str | None = None
    """The leaderboard label (`run --name`); only for an entry without axes (one configuration)."""
    suites: list[str] | None = Field(default=None, min_length=1)
    """Suites for this model instead of the grid's."""
    seeds: list[StrictInt] | str | None = None
    """Seeds for this model instead of the grid's (a list, or what `run --seeds` takes)."""

    @field_validator("seeds", mode="before")
    @classmethod
    def _seeds_as_list(cls, seeds: Any) -> Any:
        return _listed_seeds(seeds)

    @field_validator("set")
    @classmethod
    def _axes_have_values(cls, settings: dict[str, Scalar | list[Scalar]]) -> dict[str, Scalar | list[Scalar]]:
        for key, value in settings.items():
            if isinstance(value, list) and not value:
                raise ValueError(f"the axis {key!r} is an empty list; give it at least one value")
        return settings

    @model_validator(mode="after")
    def _label_names_one_configuration(self) -> GridModel:
        if self.label is not None and any(isinstance(value, list) for value in self.set.values()):
            raise ValueError(f"label {self.label!r} would name every configuration of the axes of {self.name!r}")
        return self

    def _axes(self) -> list[list[Scalar]]:
        return [value if isinstance(value, list) else [value] for value in self.set.values()]

    def count(self) -> int:
        """How many configurations the axes make, without making them."""
        return math.prod(len(axis) for axis in self._axes())

    def configurations(self) -> Iterator[ModelSpec]:
        """One spec per combination of the axes, made as they are asked for, in the order the file
        lists keys and values; string values read as `--set key=value` reads them."""
        keys = list(self.set)
        axes = self._axes()
        strings = any(isinstance(v, str) for axis in axes for v in axis)
        text = text_settings(self.name) if strings else frozenset()  # a str setting keeps "111" a string
        for combination in itertools.product(*axes):
            params = {key: _as_set_reads_it(key, value, text) for key, value in zip(keys, combination, strict=True)}
            yield ModelSpec(name=self.name, params=params)


def _as_set_reads_it(key: str, value: Scalar, text: frozenset[str]) -> Scalar:
    """A string setting as `--set key=value` reads it (JSON where it parses, text for the model's
    `text` settings); others unchanged."""
    if not isinstance(value, str):
        return value
    parsed: Scalar = parse_settings([f"{key}={value}"], text=text)[key]
    return parsed


class Grid(Frozen):
    """A sweep grid file (see the module docstring)."""

    suites: list[str] | None = Field(default=None, min_length=1)
    """Suites to evaluate on: `ID`, `ID@VERSION` or `module:Class`, as `run --suite` takes them; may be left
    out when every model names its own."""
    models: list[GridModel] = Field(min_length=1)
    """Models and their settings; every one runs on every suite."""
    seeds: list[StrictInt] | str | None = None
    """Seeds, a list (`[0, 1, 2]`) or what `run --seeds` takes (`"0-4"`); may be left out when every model
    names its own."""
    limit: StrictInt | None = Field(default=None, gt=0)
    """Ask only the first `limit` examples of each test split (`run --limit`): a partial sweep, never ranked."""

    @model_validator(mode="after")
    def _every_model_has_suites_and_seeds(self) -> Grid:
        for entry in self.models:
            if self.suites is None and entry.suites is None:
                raise ValueError(f"model {entry.name!r} has no suites; give `suites` at the top or in its entry")
            if self.seeds is None and entry.seeds is None:
                raise ValueError(f"model {entry.name!r} has no seeds; give `seeds` at the top or in its entry")
        return self

    @field_validator("seeds", mode="before")
    @classmethod
    def _seeds_as_list(cls, seeds: Any) -> Any:
        return _listed_seeds(seeds)

    @field_validator("models", mode="before")
    @classmethod
    def _names_alone(cls, models: Any) -> Any:
        """`- transformer` is `- name: transformer`."""
        if isinstance(models, list):
            return [{"name": entry} if isinstance(entry, str) else entry for entry in models]
        return models

    def suites_of(self, entry: GridModel) -> list[str]:
        """The suites `entry` runs on: its own, else the grid's."""
        suites = entry.suites if entry.suites is not None else self.suites
        assert suites is not None  # the validator saw to it
        return suites

    def seeds_of(self, entry: GridModel) -> list[int]:
        """The seeds `entry` runs over (its own, else the grid's), checked as `run --seeds` checks them."""
        seeds = entry.seeds if entry.seeds is not None else self.seeds
        assert seeds is not None  # the validator saw to it
        return parse_seeds(seeds)


@dataclass(frozen=True)
class GridRun:
    """One run a grid asks for, before anything is resolved: suite reference, model, label, seed."""

    suite: str
    model: ModelSpec
    label: str | None
    seed: int


def _read_grid_text(path: Path) -> str:
    """The text of the grid file at `path`, a regular file of at most `MAX_GRID_BYTES` (so that a FIFO,
    `/dev/zero` or a huge file is refused rather than read forever)."""
    limit = MAX_GRID_BYTES
    if not os.path.exists(path):
        raise UserError(f"cannot read the grid file {path} (No such file or directory); check the path.")
    try:  # a regular file only, its size checked first: a FIFO or /dev/zero is refused, not read forever
        data = read_file(path, limit, follow=True)
    except Refused as error:
        raise UserError(
            f"cannot read the grid file {path}: {error}; give a YAML grid file (split a very large grid into several)."
        ) from None
    # UTF-16 with its byte-order mark, as the YAML spec allows (Windows editors save it); else UTF-8
    encoding = "utf-16" if data.startswith((codecs.BOM_UTF16_LE, codecs.BOM_UTF16_BE)) else "utf-8-sig"
    if encoding != "utf-16" and b"\x00" in data:
        raise UserError(
            f"the grid file {path} holds NUL bytes (byte {data.index(0)}): not text, or UTF-16 without its "
            "byte-order mark; save it as UTF-8 YAML."
        )
    try:
        return data.decode(encoding)
    except UnicodeDecodeError as error:
        shown = "UTF-16" if encoding == "utf-16" else "UTF-8"
        raise UserError(
            f"the grid file {path} is not {shown} text (byte {error.start}); save it as UTF-8 YAML."
        ) from None


def load_grid(path: Path) -> Grid:
    """The grid in the YAML file at `path`; a file that cannot be read, parsed or checked is refused
    in one sentence naming the file, the place in it and the fix."""
    text = _read_grid_text(Path(path))
    try:
        raw = yaml.load(text, Loader=_StrictLoader)
    except _RepeatedKey as error:
        line = error.problem_mark.line + 1 if error.problem_mark is not None else "?"
        raise UserError(
            f"the grid file {path} gives the key {error.key!r} twice (line {line}); YAML would keep the last "
            "one silently, so give each key once."
        ) from None
    except yaml.YAMLError as error:
        where = getattr(error, "problem_mark", None)
        line = f" at line {where.line + 1}" if where is not None else ""
        problem = getattr(error, "problem", None)
        why = f" ({' '.join(str(problem).split())[:200]})" if problem else ""
        raise UserError(f"the grid file {path} is not valid YAML{line}{why}; fix its syntax.") from None
    except RecursionError:  # `[[[[...]]]]` thousands deep: the parser recurses once per level
        raise UserError(
            f"the grid file {path} nests lists or mappings thousands deep, deeper than a grid is; "
            f"give a grid such as {EXAMPLE!r}."
        ) from None
    if not isinstance(raw, dict):
        raise UserError(f"the grid file {path} must be a mapping with suites, models and seeds, e.g. {EXAMPLE!r}.")
    try:
        grid = Grid.model_validate(raw)
    except ValidationError as error:
        problem = error.errors(include_url=False, include_input=False)[0]
        # pydantic names the union member it tried ("seeds.list[int].0"); the file's place is without it
        where = ".".join(str(part) for part in problem["loc"] if "[" not in str(part)) or "the file"
        message = problem["msg"].removeprefix("Value error, ")
        raise UserError(f"the grid file {path}: {where}: {message}; fix it (a complete grid: {EXAMPLE!r}).") from None
    try:
        for entry in grid.models:
            grid.seeds_of(entry)
    except UserError as error:
        raise UserError(f"the grid file {path}: {error}") from None
    runs = count_runs(grid)
    if runs > MAX_RUNS:
        raise UserError(
            f"the grid file {path} asks for {runs:,} runs (configurations x suites x seeds), more than the "
            f"{MAX_RUNS:,} one sweep takes; split it into several grid files, e.g. one per model or per value "
            "of its largest axis."
        )
    return grid


def count_runs(grid: Grid) -> int:
    """How many runs `expand` would make of `grid`, counted from its axes, suites and seeds."""
    return sum(entry.count() * len(grid.suites_of(entry)) * len(grid.seeds_of(entry)) for entry in grid.models)


def expand(grid: Grid) -> list[GridRun]:
    """Every run of the grid: per model entry, its configurations x its suites x its seeds, in the file's order."""
    return [
        GridRun(suite, spec, entry.label, seed)
        for entry in grid.models
        for suite in grid.suites_of(entry)
        for spec in entry.configurations()
        for seed in grid.seeds_of(entry)
    ]
