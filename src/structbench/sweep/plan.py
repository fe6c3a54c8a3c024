"""From a grid to the runs a sweep hands out: resolved, keyed, built, without the finished ones, longest first.

Everything that can be refused is refused before any suite is built or any model trained:
suite names, model names, `--set` values, protocols (as `run` checks them). Each run gets the
very fields `structbench run` would claim it under (`structbench.runs.context.SeedRun`), so that a
sweep, `run` and the report agree on run identity: a run either one finished is not run again.

Order, longest first, so that the sweep does not end waiting on one long run started last. A
run's expected seconds are, in this order of preference:
1. the mean `fit_seconds + predict_seconds` of the store's finished runs of the same model
   configuration on the same suite data (other seeds, or an earlier sweep);
2. its recipe's work, `epochs` x training examples, times the seconds per example-epoch that the
   store's finished runs of this grid's other configurations took (their median); without any,
   `ASSUMED_SECONDS_PER_EXAMPLE_EPOCH`;
3. 0 (a model without a recipe, never run before): last.
"""

from __future__ import annotations

import statistics
from collections.abc import Callable
from dataclasses import dataclass, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

from structbench import registry
from structbench.data import freeze
from structbench.runs.context import ModelOnSuite, SeedRun
from structbench.runs.request import ModelRequest
from structbench.store import Store
from structbench.suite import Suite
from structbench.sweep.grid import Grid, expand

if TYPE_CHECKING:
    import pandas as pd

ASSUMED_SECONDS_PER_EXAMPLE_EPOCH = 1e-3
"""Seconds one training example takes per epoch when the store has no run to measure it on: the
order of a small recurrent network on one CPU core (cpu-small seq2seq on scan-simple, one core)."""

FINISHED = ("done", "n/a")
"""Statuses a run is not redone from (a failed or interrupted run is, as `run` redoes it)."""


@dataclass(frozen=True)
class Cell:
    """One model configuration on one suite: what `run --suite S --model M --set ...` evaluates."""

    reference: str
    """The suite as the grid names it (`ID`, `ID@VERSION` or `module:Class`), for the workers."""
    suite: Suite
    manifest: freeze.Manifest
    model: ModelOnSuite
    name: str | None
    """The grid's label for the model (`run --name`), None where the model's own label is shown."""
    seeds: tuple[int, ...]

    @property
    def request(self) -> ModelRequest:
        return self.model.request

    @property
    def facts(self) -> dict[str, Any]:
        return self.model.key.facts

    @property
    def model_hash(self) -> str:
        return self.model.key.model_hash

    @property
    def label(self) -> str:
        return self.model.label

    def work(self) -> float:
        """Recipe work: `epochs` x training examples of draw 0; 0 without a recipe that says `epochs`."""
        configuration = self.facts.get("configuration") or {}
        epochs = configuration.get("epochs")
        if not isinstance(epochs, int | float) or isinstance(epochs, bool):
            return 0.0
        train = self.suite.spec.splits_with_role("train")
        if not train:
            return 0.0
        size = train[0].size
        if size is None:
            digest = self.manifest.splits.get(freeze.split_key(0, train[0].name))
            size = digest.n_examples if digest else 0
        return float(epochs) * size


@dataclass(frozen=True)
class PlannedRun:
    """One run of the sweep: its cell, its seed's run (key and claim fields) and expected seconds."""

    cell: Cell
    seed_run: SeedRun
    seconds: float
    """Expected fit + predict seconds (see the module docstring); what the order is by."""
    measured: bool
    """True when `seconds` is the mean of the store's finished runs of the same configuration."""
    stored: str | None = None
    """The status the store holds the run under when it is finished (`done` or `n/a`): skipped."""

    @property
    def seed(self) -> int:
        return self.seed_run.seed

    @property
    def claim_fields(self) -> dict[str, Any]:
        """What `Store.claim_run` takes, as `run` claims it."""
        return self.seed_run.claim_fields

    @property
    def where(self) -> str:
        """The run in a log line, as `run` names it."""
        return self.seed_run.where


@dataclass(frozen=True)
class Plan:
    """A grid resolved against a store."""

    cells: list[Cell]
    """Every distinct model configuration on every suite, in the grid's order."""
    todo: list[PlannedRun]
    """The runs to make, longest first."""
    finished: list[PlannedRun]
    """Runs the store already holds (done or n/a): skipped."""
    duplicates: int
    """Runs the grid names more than once (the same run key), run once."""

    @property
    def total(self) -> int:
        return len(self.todo) + len(self.finished)


def plan(
    grid: Grid, store: Store, *, source_dir: Path | None = None, log: Callable[[str], None] = lambda _: None
) -> Plan:
    """Resolve `grid` against `store`: check every name and setting, build the suites, key the runs,
    leave out the finished ones and order the rest (see the module docstring)."""
    runs = expand(grid)
    suites = {reference: registry.suite(reference) for reference in dict.fromkeys(run.suite for run in runs)}
    requests: dict[tuple[str, str | None], ModelRequest] = {}
    on_suites: dict[tuple[str, str, str | None], ModelOnSuite] = {}
    for run in runs:  # every name, setting and protocol is checked before any data is built
        asked = (run.model.model_dump_json(), run.label)
        if asked not in requests:
            requests[asked] = ModelRequest.of(run.model, name=run.label, limit=grid.limit)
        if (run.suite, *asked) not in on_suites:
            on_suites[(run.suite, *asked)] = ModelOnSuite.of(suites[run.suite], requests[asked])
    manifests = {}
    for reference, suite in suites.items():
        manifests[reference] = freeze.ensure_built(suite, source_dir)
        store.record_suite(suite.spec, manifests[reference].suite_hash)
    identities: dict[tuple[str, str, str], tuple[str, ModelOnSuite, str | None]] = {}
    seeds: dict[tuple[str, str, str], list[int]] = {}
    duplicates = 0
    for run in runs:
        on_suite = on_suites[(run.suite, run.model.model_dump_json(), run.label)]
        identity = (suites[run.suite].spec.key, manifests[run.suite].suite_hash, on_suite.key.model_hash)
        identities.setdefault(identity, (run.suite, on_suite, run.label))
        listed = seeds.setdefault(identity, [])
        if run.seed in listed:  # the same run key twice (an axis value repeated, two entries alike): run once
            duplicates += 1
        else:
            listed.append(run.seed)
    cells = {
        identity: Cell(reference, suites[reference], manifests[reference], model, name, tuple(seeds[identity]))
        for identity, (reference, model, name) in identities.items()
    }
    stored = store.runs()
    finished_rows = _finished(stored)
    seconds = _measured_seconds(stored)
    rate = _seconds_per_work(list(cells.values()), seconds)
    todo: list[PlannedRun] = []
    finished: list[PlannedRun] = []
    for cell in cells.values():
        measured = seconds.get(_cell_key(cell))
        expected = measured if measured is not None else cell.work() * rate
        for seed in cell.seeds:
            planned_run = PlannedRun(cell, cell.model.seed_run(cell.manifest, seed), expected, measured is not None)
            if (found := finished_rows.get((*_cell_key(cell), seed))) is None:
                todo.append(planned_run)
                continue
            run_id, stored_label, status = found
            finished.append(replace(planned_run, stored=status))
            # as `run` does: the label is no key; the cell's first seed renames every run of it
            if (
                cell.request.label_is_final
                and stored_label != cell.label
                and (renamed := store.relabel(run_id, cell.label))
            ):
                log(
                    f"{planned_run.where}: the {renamed} stored run(s) of {stored_label!r} are now shown as {cell.label!r}"
                )
    todo.sort(key=lambda planned_run: -planned_run.seconds)  # stable: equal estimates keep the grid's order
    return Plan(list(cells.values()), todo, finished, duplicates)


def _finished(stored: pd.DataFrame) -> dict[tuple[str, str, str, str, int], tuple[int, str, str]]:
    """(suite, version, suite hash, model hash, seed) -> (run id, label, status) of the store's finished runs."""
    rows = stored[stored["status"].isin(FINISHED)].to_dict("records")
    return {
        (str(row["suite"]), str(row["version"]), str(row["suite_hash"]), str(row["model_hash"]), int(row["seed"])): (
            int(row["id"]),
            str(row["model"]),
            str(row["status"]),
        )
        for row in rows
    }


def _cell_key(cell: Cell) -> tuple[str, str, str, str]:
    spec = cell.suite.spec
    return (spec.id, spec.version, cell.manifest.suite_hash, cell.model_hash)


def _measured_seconds(stored: pd.DataFrame) -> dict[tuple[str, str, str, str], float]:
    """(suite, version, suite hash, model hash) -> mean fit + predict seconds of its finished runs."""
    done = stored[(stored["status"] == "done") & stored["fit_seconds"].notna() & stored["predict_seconds"].notna()]
    if done.empty:
        return {}
    columns = ["suite", "version", "suite_hash", "model_hash"]
    means = done.assign(seconds=done["fit_seconds"] + done["predict_seconds"]).groupby(columns)["seconds"].mean()
    return {
        (str(row["suite"]), str(row["version"]), str(row["suite_hash"]), str(row["model_hash"])): float(row["seconds"])
        for row in means.reset_index().to_dict("records")
    }


def _seconds_per_work(cells: list[Cell], seconds: dict[tuple[str, str, str, str], float]) -> float:
    """Median seconds per example-epoch over the cells with both a measured time and recipe work."""
    rates = [seconds[_cell_key(cell)] / cell.work() for cell in cells if _cell_key(cell) in seconds and cell.work() > 0]
    return statistics.median(rates) if rates else ASSUMED_SECONDS_PER_EXAMPLE_EPOCH


def finished_run_ids(planned: Plan, store: Store) -> list[int]:
    """The ids of the `done` runs of `planned`'s grid that `store` holds, in the grid's cell and seed
    order: what `sweep --reference` writes into the bundle."""
    done = _finished(store.runs())
    out = []
    for cell in planned.cells:
        for seed in cell.seeds:
            found = done.get((*_cell_key(cell), seed))
            if found is not None and found[2] == "done":
                out.append(found[0])
    return out
