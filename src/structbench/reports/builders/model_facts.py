"""What a report asks of the registered model classes: which are ceilings (`ceiling`, the oracle), and
what an under-trained cell's configuration lacks to reach its criterion (`budget_shortfall`).

Asking imports the classes (a tenth of a second for the reference runs' models: none imports PyTorch
until it trains). So the questions are made from the runs alone (`questions`, no model imported),
and the answers (`answers`) may be computed in another process while the report reads the store
(`structbench.reports.render.write_report` hands them to its worker process); both are plain data,
the same wherever they are computed.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from structbench import registry
from structbench.analysis.claims import shortfall_of, under_trained_configurations, with_shortfalls
from structbench.errors import UserError
from structbench.protocols import hook
from structbench.store.codec import spec_model_name

if TYPE_CHECKING:
    import pandas as pd

Cell = tuple[str, str, str, str]
"""(suite, version, suite_hash, model label)."""


@dataclass(frozen=True)
class Questions:
    """The registered model names the runs name (`model_names`), and each under-trained cell with why
    and its configuration's model record (`structbench.analysis.claims.under_trained_configurations`),
    whose (suite, model record) the models are asked about."""

    names: frozenset[str]
    under_trained: dict[Cell, tuple[str, str]]


@dataclass(frozen=True)
class ModelFacts:
    """The models' answers to `Questions`."""

    ceilings: frozenset[str]
    """The names whose class declares `ceiling = True`."""
    shortfalls: dict[tuple[str, str], str | None]
    """(suite, model record) -> what the configuration lacks, as its model states it (None: nothing)."""
    under_trained: dict[Cell, str]
    """Each under-trained cell -> why, with its shortfall (`structbench.analysis.claims.under_trained_cells`)."""


def model_names(runs: pd.DataFrame) -> dict[str, str]:
    """model label -> the registered name its stored spec gives (`name`; "" where unreadable)."""
    names: dict[str, str] = {}
    for label, spec in zip(runs["model"].tolist(), runs["model_spec"].tolist(), strict=True):
        if label not in names:
            names[str(label)] = spec_model_name(spec) or ""
    return names


def questions(runs: pd.DataFrame) -> Questions:
    """What the report will ask of the models about `runs` (rows of `Store.runs()`)."""
    registered = set(registry.model_names())
    return Questions(
        names=frozenset(set(model_names(runs).values()) & registered),
        under_trained=under_trained_configurations(runs),
    )


def answers(asked: Questions) -> ModelFacts:
    """Ask the model classes (importing them)."""
    ceilings = set()
    for name in asked.names:
        try:
            if hook(registry.model_factory(name), "ceiling", False):
                ceilings.add(name)
        except UserError:  # registered, but its class cannot be loaded: no ceiling
            pass
    configurations = sorted({(key[0], spec) for key, (_, spec) in asked.under_trained.items()})
    shortfalls = {(suite, spec): shortfall_of(suite, spec) for suite, spec in configurations}
    return ModelFacts(
        ceilings=frozenset(ceilings),
        shortfalls=shortfalls,
        under_trained=with_shortfalls(asked.under_trained, shortfalls),
    )


def ceiling_labels(runs: pd.DataFrame, facts: ModelFacts) -> set[str]:
    """The model labels of `runs` whose registered class is a ceiling (`facts.ceilings`): a label's
    class is found through its stored spec's `name`."""
    return {label for label, name in model_names(runs).items() if name in facts.ceilings}
