"""A model author's own regression check: `structbench check GOLDEN.json`.

A golden file lists what a model scored: per suite and model (name, settings, label, seeds),
the mean of each test split's metric. `check` asks the runner for every listed (suite, model)
again and fails, naming the cell, when a mean moved by more than the tolerance. The runner
answers from the store what it holds for unchanged code and data, and runs afresh what it does
not: a fresh store in CI, or a model whose code was edited (its fingerprint is part of the run
key). So the two lines in an author's `tox.ini` fail their CI when, say, their model's
scan-length accuracy drops. `check --write` makes the file from the runs it asks for.

A changed suite hash (other data under the same version) fails too: the means are no longer
about the same examples. Means are compared, not per-seed values: the file is what the
leaderboard shows, and a difference within the tolerance is not a regression.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from pathlib import Path

from pydantic import Field, ValidationError

from structbench import __version__
from structbench.errors import UserError
from structbench.runs.runner import Asked, Runner
from structbench.specs import Frozen, ModelSpec, ResultRecord

Setting = str | int | float | bool | None


class GoldenCell(Frozen):
    """One cell as it was: a test split's metric, its mean over the entry's seeds."""

    split: str
    metric: str
    mean: float | None
    """None where the metric was undefined (NaN)."""


class GoldenEntry(Frozen):
    """One suite x one model as it was asked for, and its cells."""

    suite: str
    """`ID@VERSION`."""
    suite_hash: str
    model: str
    """The name `--model` takes (registered name, `module:Class` or `command`)."""
    settings: dict[str, Setting] = Field(default_factory=dict)
    name: str | None = None
    """`--name`, where one was given."""
    seeds: list[int]
    cells: list[GoldenCell]


class GoldenFile(Frozen):
    """What `structbench check --write` writes and `structbench check` reads."""

    structbench: str
    """The structbench version that wrote the file."""
    tolerance: float = Field(default=0.0, ge=0)
    """The largest absolute change of a mean that still passes (`--tolerance` overrides it)."""
    entries: list[GoldenEntry]


class Verdict(Frozen):
    """One cell checked."""

    suite: str
    model: str
    """The label the run has."""
    split: str
    metric: str
    golden: float | None
    now: float | None
    moved: bool
    reason: str = ""
    """Why the cell failed beyond its value: changed data, a failed seed."""


def read(path: Path) -> GoldenFile:
    if not path.is_file():
        raise UserError(
            f"no golden file at {path}; write one with `structbench check {path} --write --suite ... --model ...`."
        )
    try:
        return GoldenFile.model_validate_json(path.read_bytes())
    except ValidationError as error:
        first = error.errors()[0]
        where = ".".join(map(str, first["loc"])) or "the file"
        raise UserError(
            f"{path} is not a structbench golden file ({where}: {first['msg']}); write it anew with --write."
        ) from None


def _mean(value: float) -> float | None:
    return None if math.isnan(value) else value


def entry(record: ResultRecord, model: ModelSpec, name: str | None, metrics: Sequence[str] | None) -> GoldenEntry:
    """The golden entry of a finished evaluation: every test split's `metrics` (all where None)."""
    cells = [
        GoldenCell(split=split, metric=metric, mean=_mean(stats.mean))
        for split, by_metric in record.scores.items()
        for metric, stats in by_metric.items()
        if metrics is None or metric in metrics
    ]
    return GoldenEntry(
        suite=f"{record.suite}@{record.version}",
        suite_hash=record.suite_hash,
        model=model.name,
        settings=dict(model.params),
        name=name,
        seeds=record.seeds,
        cells=cells,
    )


def write(path: Path, entries: list[GoldenEntry], tolerance: float) -> None:
    golden = GoldenFile(structbench=__version__, tolerance=tolerance, entries=entries)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(golden.model_dump_json(indent=2) + "\n")


def _moved(golden: float | None, now: float | None, tolerance: float) -> bool:
    if golden is None or now is None:
        return golden is not now
    return abs(now - golden) > tolerance + 1e-12  # float noise of a mean is not a change


def check(runner: Runner, golden: GoldenFile, tolerance: float | None = None) -> list[Verdict]:
    """Every cell of `golden`, evaluated again through `runner`."""
    allowed = golden.tolerance if tolerance is None else tolerance
    verdicts: list[Verdict] = []
    for item in golden.entries:
        spec = ModelSpec(name=item.model, params=item.settings)
        record = runner.evaluate(item.suite, Asked.of(spec, name=item.name), item.seeds)
        reason = ""
        if record.suite_hash != item.suite_hash:
            reason = f"the suite's data changed (hash {item.suite_hash[:12]} -> {record.suite_hash[:12]})"
        elif failed := [seed for seed, status in record.status.items() if status != "done"]:
            reason = f"seeds {', '.join(failed)} did not finish ({', '.join(record.errors.values())[:200]})"
        for cell in item.cells:
            stats = record.scores.get(cell.split, {}).get(cell.metric)
            now = _mean(stats.mean) if stats is not None else None
            missing = "" if stats is not None else "the cell is no longer produced"
            verdicts.append(
                Verdict(
                    suite=item.suite,
                    model=record.model,
                    split=cell.split,
                    metric=cell.metric,
                    golden=cell.mean,
                    now=now,
                    moved=bool(reason or missing) or _moved(cell.mean, now, allowed),
                    reason=reason or missing,
                )
            )
    return verdicts
