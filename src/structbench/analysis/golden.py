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

A file may pin more than `--write` writes, and the project's own golden table does (its
regression test checks it through this same command): a cell's value on each seed (`per_seed`,
then compared seed by seed), a breakdown cell (`metric[key=level]`), an entry whose every seed
ends without results (`status`, e.g. `n/a` for a model that does not speak the suite's protocol),
and an entry's own tolerance.

`--write` also records the machine and code the file was made with (`environment`), so that when
cells move `check` can say whether this machine differs from that one (CPU, SIMD level, library
versions: the cells may be the machine) or matches it (the cells come from the code or the data).
"""

from __future__ import annotations

import importlib
import importlib.util
import math
import re
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any, Literal

from pydantic import ConfigDict, Field, SerializerFunctionWrapHandler, ValidationError, model_serializer

from structbench import __version__
from structbench.environments import PACKAGES, differing
from structbench.errors import UserError
from structbench.runs import provenance
from structbench.runs.request import ModelRequest
from structbench.runs.runner import Runner
from structbench.specs import Frozen, ModelSpec, ResultRecord, SeedStats
from structbench.store.untrusted import Refused, read_file

Setting = str | int | float | bool | None
BREAKDOWN_CELL = re.compile(r"(?P<metric>[^\[]+)\[(?P<key>[^=\]]+)=(?P<level>.*)\]")
"""A breakdown cell's metric as a golden file names it: `metric[key=level]`."""
RECORDED = ("python", "platform", "cpu", "cpus", "simd_numpy", "simd_torch", "structbench", "git", *PACKAGES)
"""The entries of `provenance.environment` a golden file records: the machine and the code, not what
one run was asked (its threads)."""
CODE = ("structbench", "git")
"""The recorded entries that say which code made the file."""
MATCHED = ("cpu", "simd_numpy", "simd_torch", "numpy", "torch")
"""The machine entries `check` names when this machine matches the file's."""


def _without_unset(handler: SerializerFunctionWrapHandler, value: Frozen, optional: Sequence[str]) -> Any:
    """`value` dumped without those of its `optional` fields that are None: a file that pins
    nothing more than `--write` writes reads as it always did."""
    dumped = handler(value)
    return {key: item for key, item in dumped.items() if key not in optional or item is not None}


class GoldenCell(Frozen):
    """One cell as it was: a test split's metric, its mean over the entry's seeds."""

    model_config = ConfigDict(allow_inf_nan=False)  # a NaN or infinite mean, tolerance or value is refused

    split: str
    metric: str
    mean: float | None
    """None where the metric was undefined (NaN)."""
    per_seed: list[float] | None = None
    """The value of each seed that finished, in seed order, where the file pins them: then each
    seed is compared, and the mean is not."""

    @model_serializer(mode="wrap")
    def _dump(self, handler: SerializerFunctionWrapHandler) -> Any:
        return _without_unset(handler, self, ("per_seed",))


class GoldenEntry(Frozen):
    """One suite x one model as it was asked for, and its cells."""

    model_config = ConfigDict(allow_inf_nan=False)  # a NaN or infinite mean, tolerance or value is refused

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
    status: Literal["n/a", "failed"] | None = None
    """Where no seed finished: how every seed ended (`n/a`: the model does not speak the suite's
    protocol). Such an entry has no cells, and a seed that now ends otherwise is a change."""
    tolerance: float | None = Field(default=None, ge=0)
    """This entry's tolerance where it is not the file's (`--tolerance` overrides both)."""

    @model_serializer(mode="wrap")
    def _dump(self, handler: SerializerFunctionWrapHandler) -> Any:
        return _without_unset(handler, self, ("status", "tolerance"))


class GoldenFile(Frozen):
    """What `structbench check --write` writes and `structbench check` reads."""

    model_config = ConfigDict(allow_inf_nan=False)  # a NaN or infinite mean, tolerance or value is refused

    structbench: str
    """The structbench version that wrote the file."""
    tolerance: float = Field(default=0.0, ge=0)
    """The largest absolute change of a mean that still passes (`--tolerance` overrides it)."""
    entries: list[GoldenEntry]
    environment: dict[str, Any] | None = None
    """The machine and code the file was made with (`RECORDED` entries of the process that wrote it);
    None in a file written before it was recorded."""

    @model_serializer(mode="wrap")
    def _dump(self, handler: SerializerFunctionWrapHandler) -> Any:
        return _without_unset(handler, self, ("environment",))


class CheckResult(Frozen):
    """One cell of a golden file checked (one seed of it, where the file pins each seed's value;
    an entry's status, where the file expects no results)."""

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
    seed: int | None = None
    """The seed whose value was checked, where the file pins each seed's."""
    tolerance: float = 0.0
    """The largest absolute change that passed for this cell."""

    @property
    def what(self) -> str:
        """What of the split was checked: `metric`, `metric seed N`, or `status` (an entry's)."""
        if not self.split:
            return "status"
        return self.metric if self.seed is None else f"{self.metric} seed {self.seed}"

    @property
    def cell(self) -> str:
        """The cell in a phrase: `split metric`, `split metric seed N`, or `status`."""
        return f"{self.split} {self.what}" if self.split else self.what

    @property
    def why(self) -> str:
        """Why the cell moved, in a phrase (empty where it did not)."""
        if not self.moved:
            return ""
        return self.reason or f"moved from {shown(self.golden)} to {shown(self.now)} (tolerance {self.tolerance:g})"


def shown(value: float | None) -> str:
    """A checked value as `check` prints it: six decimals, or `undefined`."""
    return "undefined" if value is None else f"{value:.6f}"


GOLDEN_LIMIT = 256 << 20
"""The most bytes a golden file may hold (the project's own, every baseline on every suite, holds 1 MB)."""


def read(path: Path) -> GoldenFile:
    """The golden file at `path`, every value checked (finite numbers, the fields a golden file has)."""
    if not path.exists():
        raise UserError(
            f"no golden file at {path}; write one with `structbench check {path} --write --suite ... --model ...`."
        )
    try:
        return GoldenFile.model_validate_json(read_file(path, GOLDEN_LIMIT))
    except Refused as error:
        raise UserError(f"the golden file {path} cannot be read: {error}; pass the golden file itself.") from None
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


def environment(with_torch: bool) -> dict[str, Any]:
    """This process's `RECORDED` entries; `with_torch` loads torch first (where it is installed), so
    that the SIMD level its kernels run at is known and not None."""
    if with_torch and importlib.util.find_spec("torch") is not None:
        importlib.import_module("torch")
    here = provenance.environment(1)
    return {name: here.get(name) for name in RECORDED}


def _entry(name: str, value: object) -> str:
    return str(value)[:12] if name == "git" else str(value)


def machine(made: Mapping[str, Any] | None, here: Mapping[str, Any]) -> str:
    """The sentence `check` adds when cells moved: whether this machine (`here`) differs from the
    one the file was made on (`made`) in its machine entries (`differing`) or matches it;
    empty where the file records no environment, or no machine entry both sides know."""
    if not made:
        return ""
    if changed := differing(made, here):
        code = [
            f"{name} {_entry(name, made[name])} -> {_entry(name, here[name])}"
            for name in CODE
            if made.get(name) is not None and here.get(name) is not None and made[name] != here[name]
        ]
        listed = ", ".join(changed) + (f", and {' and '.join(code)}" if code else "")
        return (
            f"structbench check: the golden file was made on another machine ({listed}); "
            "the moved cells may be the machine, not the code."
        )
    same = [f"{name} {made[name]}" for name in MATCHED if made.get(name) is not None and here.get(name) is not None]
    if not same:
        return ""
    return (
        f"structbench check: this machine matches the one the golden file was made on ({', '.join(same)}); "
        "the moved cells come from the code or the data."
    )


def write(path: Path, entries: list[GoldenEntry], tolerance: float, made: dict[str, Any]) -> None:
    """The golden file of `entries`, made on the machine `made` describes (`environment`)."""
    golden = GoldenFile(structbench=__version__, tolerance=tolerance, entries=entries, environment=made)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(golden.model_dump_json(indent=2) + "\n")


def _moved(golden: float | None, now: float | None, tolerance: float) -> bool:
    """Whether `now` is not within `tolerance` of `golden`: a value that is not a finite number never is."""
    if golden is None or now is None:
        return golden is not now
    return not abs(now - golden) <= tolerance + 1e-12  # float noise of a mean is not a change; NaN moved


def _stats(record: ResultRecord, split: str, metric: str) -> SeedStats | None:
    """The record's cell named `metric` (a breakdown cell as `metric[key=level]`) of `split`."""
    if (stats := record.scores.get(split, {}).get(metric)) is not None:
        return stats
    if (breakdown := BREAKDOWN_CELL.fullmatch(metric)) is None:
        return None
    by_key = record.breakdowns.get(split, {}).get(breakdown["metric"], {})
    return by_key.get(breakdown["key"], {}).get(breakdown["level"])


def check(runner: Runner, golden: GoldenFile, tolerance: float | None = None) -> list[CheckResult]:
    """Every cell of `golden`, evaluated again through `runner`; `tolerance`, where given, replaces the
    file's and its entries' (a finite number, at least 0)."""
    if tolerance is not None and not (math.isfinite(tolerance) and tolerance >= 0):
        raise UserError(f"a tolerance of {tolerance!r} is not a finite number of at least 0, e.g. 0.005.")
    results: list[CheckResult] = []
    for item in golden.entries:
        allowed = (
            tolerance if tolerance is not None else item.tolerance if item.tolerance is not None else golden.tolerance
        )
        spec = ModelSpec(name=item.model, params=item.settings)
        record = runner.evaluate(item.suite, ModelRequest.of(spec, name=item.name), item.seeds)
        statuses = sorted(set(record.status.values()))
        reason = ""
        if record.suite_hash != item.suite_hash:
            reason = f"the suite's data changed (hash {item.suite_hash[:12]} -> {record.suite_hash[:12]})"
        elif item.status is not None:
            if statuses != [item.status]:
                reason = f"every seed ended {item.status}; now {', '.join(statuses)}"
        elif failed := [seed for seed, status in record.status.items() if status != "done"]:
            reason = f"seeds {', '.join(failed)} did not finish ({', '.join(record.errors.values())[:200]})"
        found = CheckResult(
            suite=item.suite, model=record.model, split="", metric="", golden=None, now=None, moved=False
        )
        if item.status is not None:
            results.append(found.model_copy(update={"moved": bool(reason), "reason": reason}))
        for cell in item.cells:
            stats = _stats(record, cell.split, cell.metric)
            missing = "" if stats is not None else "the cell is no longer produced"
            at = found.model_copy(update={"split": cell.split, "metric": cell.metric, "tolerance": allowed})
            if cell.per_seed is not None and not (reason or missing) and stats is not None:
                results.extend(_per_seed(at, cell.per_seed, stats.per_seed, sorted(item.seeds)))
                continue
            now = _mean(stats.mean) if stats is not None else None
            moved = bool(reason or missing) or _moved(cell.mean, now, allowed)
            results.append(
                at.model_copy(update={"golden": cell.mean, "now": now, "moved": moved, "reason": reason or missing})
            )
    return results


def _per_seed(at: CheckResult, golden: list[float], now: list[float], seeds: list[int]) -> list[CheckResult]:
    """A cell whose every seed's value is pinned, checked seed by seed (named by its seed where every
    seed has a value, else by its place): exactly where the tolerance is 0, since a stored value is
    read back as it was written, so that any difference is a change."""
    if len(golden) != len(now):
        reason = f"{len(golden)} seeds had a value, now {len(now)}"
        return [at.model_copy(update={"moved": True, "reason": reason})]
    return [
        at.model_copy(update={"seed": seed, "golden": was, "now": value, "moved": not abs(value - was) <= at.tolerance})
        for seed, was, value in zip(
            seeds if len(seeds) == len(golden) else range(len(golden)), golden, now, strict=True
        )
    ]
