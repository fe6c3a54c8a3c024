"""Reading a bundle of runs as untrusted input: every file checked against the layout and its schema.

A bundle travels: users pass bundles around, and a run file may have been edited by hand or by
someone who meant harm. So nothing of a bundle is trusted that has not been checked here:

- each file is read through `structbench.store.untrusted` (a regular file inside the bundle, no
  link followed, its size bounded before it is read; a predictions file inflated in chunks up to
  a cap; JSON whose nesting is bounded before it is parsed);
- its name must be the one the layout gives its content (`bundle.cell_paths`): a run file's
  `suite`, `version` and model hash are those of its path, so a `"suite": "../../outside"` points
  nowhere but where the file is;
- every field is validated by a frozen pydantic schema (`CellHeader`, `RunEntry`, `ScoreEntry`,
  `PredictionsBlock`, `SuiteEntry`): text where text is stored, finite numbers, item counts and
  seeds from 0 to SQLite's largest integer, the one status a bundled run has (`done`), a model spec
  that is an object naming its model, and each score inside its metric's range
  (`structbench.cells.value_problem`).

A violation leaves out the least it can: a run file that cannot be read or whose key is wrong, one
run of a file, one suite's spec, or one run's predictions (the run is kept without them), and is
listed as one sentence naming the file and the field (`BundleContents.left_out`). Only a bundle
whose `bundle.json` is missing or of another layout is refused whole.
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, StringConstraints, ValidationError, model_validator

from structbench.cells import value_problem
from structbench.errors import UserError
from structbench.specs import SuiteSpec
from structbench.store.bundle_layout import FORMAT, cell_paths, run_files, suite_files, suite_path
from structbench.store.codec import pack_predictions
from structbench.store.reader import StoredRun
from structbench.store.untrusted import Refused, inflate, parse_json, read_file

MARKER_LIMIT = 4 << 10
"""The most bytes a `bundle.json` may hold (it holds `{"format": 1}`)."""
RUN_FILE_LIMIT = 16 << 20
"""The most bytes a run file may hold (the largest of the installed bundle's holds 160 KB)."""
SUITE_FILE_LIMIT = 1 << 20
"""The most bytes a suite's spec file may hold (the largest holds 5 KB)."""
PREDICTIONS_FILE_LIMIT = 4 << 20
"""The most bytes a predictions file may hold, compressed (the writer bundles up to 512 KiB)."""
PREDICTIONS_INFLATED_LIMIT = 32 << 20
"""The most bytes a predictions file may inflate to (the largest of the installed bundle's: 2.1 MB)."""
SQLITE_INTEGER = 2**63 - 1
"""The largest integer an SQLite column holds: no seed, draw or count of a bundle exceeds it."""
TEXT = 100_000
"""The longest text field (a label, a split's name, an error) a bundle's run may hold, in characters."""

Text = Annotated[str, StringConstraints(max_length=TEXT)]
Name = Annotated[str, StringConstraints(pattern=r"^[A-Za-z0-9][A-Za-z0-9_.+-]*$", max_length=200)]
"""A suite id or version: one path component of the layout, never `..` or a folder."""
Hash = Annotated[str, StringConstraints(pattern=r"^[0-9a-f]{64}$")]
"""A SHA-256 in hex: a suite's data hash, a model hash, a configuration hash."""
Count = Annotated[int, Field(ge=0, le=SQLITE_INTEGER)]
Seconds = Annotated[float, Field(ge=0)]


class Checked(BaseModel):
    """Strict (no text read as a number, no number as text or a flag), finite, frozen, nothing unknown."""

    model_config = ConfigDict(frozen=True, extra="forbid", strict=True, allow_inf_nan=False)


class ModelSpecEntry(Checked):
    """A run file's `model_spec`: the model's name and settings, and the facts that keyed it."""

    model_config = ConfigDict(extra="allow")
    name: Text
    params: dict[str, Any] = Field(default_factory=dict)


class CellHeader(Checked):
    """The key fields every run of one run file shares."""

    suite: Name
    version: Name
    suite_hash: Hash
    model: Text
    model_spec: ModelSpecEntry
    model_hash: Hash
    config_hash: Hash | None
    comparable: bool


class ScoreEntry(Checked):
    """One score of a run: `[split, metric, breakdown, level, value, n, proportion]`."""

    split: Text
    metric: Text
    breakdown: Text
    level: Text
    value: float | None
    n: Count
    proportion: bool

    @model_validator(mode="before")
    @classmethod
    def _from_list(cls, data: Any) -> Any:
        if isinstance(data, list) and len(data) == len(cls.model_fields):
            return dict(zip(cls.model_fields, data, strict=True))
        if isinstance(data, list):
            raise ValueError(f"a score is a list of {len(cls.model_fields)} entries ({', '.join(cls.model_fields)})")
        return data

    @model_validator(mode="after")
    def _possible(self) -> ScoreEntry:
        if (problem := value_problem(self.metric, self.value, self.n, self.proportion)) is not None:
            raise ValueError(f"{self.split} {self.metric} has {problem}")
        return self


class RunEntry(Checked):
    """One seed's run in a run file."""

    seed: Count
    draw: Count
    harness_version: Text
    git_commit: Text | None
    environment: dict[str, Any]
    status: Literal["done"]
    """A bundle holds finished runs only (`bundle.write_runs` writes no other)."""
    error: Text | None
    started_at: Seconds
    finished_at: Seconds | None
    fit_seconds: Seconds | None
    predict_seconds: Seconds | None
    scores: list[ScoreEntry]


class PredictionsBlock(Checked):
    """One split's predictions in a predictions file: `[split, [ids], [predictions], [correct]]`."""

    split: Text
    ids: list[Text]
    predictions: list[Any]
    correct: list[Literal[0, 1] | bool | None]

    @model_validator(mode="before")
    @classmethod
    def _from_list(cls, data: Any) -> Any:
        if isinstance(data, list) and len(data) == len(cls.model_fields):
            return dict(zip(cls.model_fields, data, strict=True))
        if isinstance(data, list):
            raise ValueError("a split's predictions are a list of its name, ids, predictions and verdicts")
        return data

    @model_validator(mode="after")
    def _aligned(self) -> PredictionsBlock:
        if not len(self.ids) == len(self.predictions) == len(self.correct):
            raise ValueError(
                f"{len(self.ids)} ids, {len(self.predictions)} predictions and {len(self.correct)} verdicts"
            )
        return self


class SuiteEntry(Checked):
    """A suite's spec file: the hash of the data the runs were made on, and the spec."""

    suite_hash: Hash
    spec: dict[str, Any]


@dataclass(frozen=True)
class BundleContents:
    """What a bundle holds that passed every check, and what was left out."""

    runs: list[StoredRun]
    suites: list[tuple[SuiteSpec, str]]
    """(spec, suite hash) of every suite's data the bundle has runs on."""
    left_out: list[str] = field(default_factory=list)
    """One sentence per entry not read: the file, the field, why."""


def _where(location: Sequence[int | str]) -> str:
    """A pydantic error location as a path: `runs[0].scores[3].value`."""
    shown = ""
    for part in location:
        shown += f"[{part}]" if isinstance(part, int) else f".{part}" if shown else str(part)
    return shown


def _why(error: ValidationError, prefix: str = "") -> str:
    """The first problem of `error` as a phrase naming its field: `runs[0].seed: Input should be ...`."""
    first = error.errors(include_url=False)[0]
    location = _where([*([prefix] if prefix else []), *first["loc"]])
    message = str(first["msg"]).removeprefix("Value error, ")
    found = first.get("input")
    shown = "" if isinstance(found, dict | list) or "input" not in first else f" (it holds {repr(found)[:60]})"
    return f"{location or 'the file'}: {message}{shown}"


def _left_out(path: Path, why: str, what: str = "was left out") -> str:
    """The sentence that lists an entry of the bundle not read: the file, `what` of it, and `why`."""
    return f"the bundle's {path} {what}: {why}; restore it from git, or from whoever gave you the bundle."


def check_format(folder: Path) -> None:
    """Refuse a folder that is no bundle, or a bundle of a layout this code does not read."""
    marker = folder / "bundle.json"
    if not os.path.lexists(marker):
        raise UserError(f"{folder} is not a reference bundle (it has no bundle.json); pass the bundle's folder.")
    try:
        content = parse_json(read_file(marker, MARKER_LIMIT, root=folder))
    except Refused as error:
        raise UserError(f"the reference bundle's {marker} cannot be read: {error}; restore it from git.") from None
    found = content.get("format") if isinstance(content, dict) else None
    if found != FORMAT or isinstance(found, bool):
        raise UserError(
            f"the reference bundle {folder} has layout {found!r}, and this structbench reads layout {FORMAT}; "
            "upgrade structbench (pip install -U structbench), or pass --no-reference."
        )


def read_suites(folder: Path, left_out: list[str]) -> list[tuple[SuiteSpec, str]]:
    """(spec, suite hash) of every suite spec file of the bundle at `folder` that passes its checks
    (its name `ID@VERSION-HASH12.json` that of its content); a sentence in `left_out` for each other."""
    found = []
    for path in suite_files(folder):
        try:
            entry = SuiteEntry.model_validate(parse_json(read_file(path, SUITE_FILE_LIMIT, root=folder)))
            spec = SuiteSpec.model_validate(entry.spec)
        except Refused as error:
            left_out.append(_left_out(path, str(error)))
            continue
        except ValidationError as error:
            left_out.append(_left_out(path, _why(error, "spec" if error.title == "SuiteSpec" else "")))
            continue
        expected = suite_path(folder, spec.id, spec.version, entry.suite_hash)
        if path != expected:
            left_out.append(_left_out(path, f"its spec is of {spec.key} data {entry.suite_hash[:12]}, whose file is "
                                            f"{expected.relative_to(folder)}"))  # fmt: skip
            continue
        found.append((spec, entry.suite_hash))
    return found


def _row(header: CellHeader, run: RunEntry) -> dict[str, Any]:
    """A run's columns as the store holds them (`ROW_COLUMNS`)."""
    return {
        **header.model_dump(exclude={"model_spec", "comparable"}),
        "model_spec": json.dumps(header.model_spec.model_dump(), sort_keys=True),
        "comparable": int(header.comparable),
        **run.model_dump(exclude={"scores", "environment"}),
        "environment": json.dumps(run.environment, sort_keys=True),
        "owner": None,
    }


def read_predictions(path: Path, folder: Path) -> list[tuple[str, int, bytes]]:
    """The predictions blocks (`pack_predictions`) of the predictions file `path` of the bundle at
    `folder`; `Refused` (or a pydantic ValidationError) where it is not one."""
    blocks = parse_json(inflate(read_file(path, PREDICTIONS_FILE_LIMIT, root=folder), PREDICTIONS_INFLATED_LIMIT))
    if not isinstance(blocks, list):
        raise Refused("it is not a list of splits' predictions")
    checked = [PredictionsBlock.model_validate(block) for block in blocks]
    return [(b.split, len(b.ids), pack_predictions(b.ids, b.predictions, [None if c is None else bool(c) for c in b.correct]))
            for b in checked]  # fmt: skip


def _header(folder: Path, path: Path) -> tuple[CellHeader, list[Any]]:
    """The checked key fields of the run file `path` and its runs as they are (each to check);
    `Refused` or a pydantic ValidationError where the file or its key is not what its name says."""
    content = parse_json(read_file(path, RUN_FILE_LIMIT, root=folder))
    if not isinstance(content, dict) or not isinstance(content.get("runs"), list):
        raise Refused("it is not a run file (an object with the key's fields and a list of runs)")
    header = CellHeader.model_validate({name: value for name, value in content.items() if name != "runs"})
    cell = cell_paths(folder, header.suite, header.version, header.model_spec.name, header.model_hash)
    if cell.runs != path:
        raise Refused(
            f"its runs are of {header.suite}@{header.version} and model hash {header.model_hash[:12]}, whose file "
            f"is {cell.runs.relative_to(folder)}"
        )
    return header, content["runs"]


def read_cell(folder: Path, path: Path) -> tuple[CellHeader, list[RunEntry]]:
    """The run file `path` of the bundle at `folder`, every run of it checked: for a writer, which
    adds to a file only where all of it is sound. `Refused` or a pydantic ValidationError otherwise."""
    header, entries = _header(folder, path)
    runs = [RunEntry.model_validate(entry) for entry in entries]
    if len({run.seed for run in runs}) != len(runs):
        raise Refused("a seed appears twice among its runs")
    return header, runs


def _cell(folder: Path, path: Path, left_out: list[str]) -> Iterator[StoredRun]:
    """The runs of the run file `path` that pass their checks; a sentence in `left_out` for each other."""
    try:
        header, entries = _header(folder, path)
    except Refused as error:
        left_out.append(_left_out(path, str(error)))
        return
    except ValidationError as error:
        left_out.append(_left_out(path, _why(error)))
        return
    cell = cell_paths(folder, header.suite, header.version, header.model_spec.name, header.model_hash)
    seen: set[int] = set()
    for index, entry in enumerate(entries):
        try:
            run = RunEntry.model_validate(entry)
        except ValidationError as error:
            seed = entry.get("seed") if isinstance(entry, dict) else None
            what = f"runs[{index}]" + (
                f" (seed {seed})" if isinstance(seed, int) and not isinstance(seed, bool) else ""
            )
            left_out.append(_left_out(path, _why(error, f"runs[{index}]"), f"had its {what} left out"))
            continue
        if run.seed in seen:
            left_out.append(
                _left_out(path, f"runs[{index}].seed: seed {run.seed} appears twice", f"had its runs[{index}] left out")
            )
            continue
        seen.add(run.seed)
        predictions: list[tuple[str, int, bytes]] = []
        bundled = cell.predictions / f"seed{run.seed}.json.gz"
        if os.path.lexists(bundled):
            kept = f"was left out (seed {run.seed} is read without its predictions)"
            try:
                predictions = read_predictions(bundled, folder)
            except Refused as error:
                left_out.append(_left_out(bundled, str(error), kept))
            except ValidationError as error:
                left_out.append(_left_out(bundled, _why(error), kept))
        scores = [(s.split, s.metric, s.breakdown, s.level, s.value, s.n, int(s.proportion)) for s in run.scores]
        yield StoredRun(_row(header, run), scores, predictions)


def read_bundle(folder: Path) -> BundleContents:
    """Every run and suite spec of the bundle at `folder` that passes its checks (see the module
    docstring), and a sentence for each entry left out."""
    check_format(folder)
    left_out: list[str] = []
    suites = read_suites(folder, left_out)
    runs = [run for path in run_files(folder) for run in _cell(folder, path, left_out)]
    return BundleContents(runs, suites, left_out)
