"""The reference runs set apart from the user's, read from a store's runs: what made each reference
row (`Provenance`) and each claim checked on the reference runs and on the user's own apart (`ClaimCheck`).

A reference run is one whose label carries the bundle's mark (`structbench.store.bundle.is_reference`,
`REFERENCE_SUFFIX`); the claims and the rows' provenance name it by its label without the mark
(`plain_label`). What the values mean is said where they are defined
(`structbench.reports.builders.provenance`, `structbench.reports.builders.verdicts`).
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from typing import Any

import pandas as pd

from structbench.analysis.claims import check_all, claim_cells
from structbench.cells import RUN_CELL
from structbench.reports.builders.provenance import Provenance
from structbench.reports.builders.verdicts import ClaimCheck
from structbench.store.bundle import is_reference, plain_label


def _unique(values: Iterable[Any]) -> tuple[Any, ...]:
    return tuple(dict.fromkeys(value for value in values if value not in (None, "")))


def _json(text: object) -> dict[str, Any]:
    """A JSON column as a dict; {} where it is absent or not a JSON object (a report reads damaged rows too)."""
    try:
        found = json.loads(text) if isinstance(text, str) else None
    except (ValueError, RecursionError):
        return {}
    return found if isinstance(found, dict) else {}


def _budget(spec: dict[str, Any]) -> tuple[str | None, int | None]:
    """(budget, epoch cap) of a stored model spec: its resolved configuration's, else its settings'."""
    configuration = spec.get("configuration")
    configuration = configuration if isinstance(configuration, dict) else {}
    params = spec.get("params")
    params = params if isinstance(params, dict) else {}
    budget = configuration.get("budget", params.get("budget"))
    epochs = configuration.get("epochs")
    return (
        str(budget) if budget not in (None, "") else None,
        epochs if type(epochs) is int and epochs > 0 else None,
    )


def _provenance(label: str, runs: pd.DataFrame) -> Provenance:
    """The provenance of `runs`, finished ones of one reference row, in the order they finished."""
    ordered = runs.sort_values(["finished_at", "seed"], na_position="last")
    environments = [_json(text) for text in ordered["environment"].tolist()]
    commits = [
        commit if isinstance(commit, str) and commit else environment.get("git")
        for commit, environment in zip(ordered["git_commit"].tolist(), environments, strict=True)
    ]
    budgets = [_budget(_json(spec)) for spec in ordered["model_spec"].tolist()]
    threads = {t for e in environments if type(t := e.get("threads")) is int and t > 0}
    return Provenance(
        label=plain_label(label),
        versions=_unique(str(v) for v in ordered["harness_version"].tolist() if isinstance(v, str)),
        commits=_unique(str(c) for c in commits if isinstance(c, str)),
        budgets=_unique(budget for budget, _ in budgets),
        epochs=tuple(sorted(set(_unique(epochs for _, epochs in budgets)))),
        threads=tuple(sorted(threads)),
    )


def reference_rows(
    current: pd.DataFrame,
) -> tuple[dict[str, Provenance], dict[tuple[str, str, str, str], Provenance]]:
    """Of the finished reference runs among `current` (current runs): model label -> the provenance of
    all its runs (the overview's row), and cell (suite, version, hash, model) -> that of its runs on
    one board. Empty where there are none."""
    marked = current.model.map(lambda label: is_reference(str(label))).astype(bool)  # bool also where empty
    done = current[(current.status == "done") & marked]
    by_model = {str(model): _provenance(str(model), runs) for model, runs in done.groupby("model")}
    by_cell = {
        (str(suite), str(version), str(suite_hash), str(model)): _provenance(str(model), runs)
        for (suite, version, suite_hash, model), runs in done.groupby(list(RUN_CELL))
    }
    return by_model, by_cell


def claim_checks(
    results: pd.DataFrame, runs: pd.DataFrame, shortfalls: Mapping[tuple[str, str], str | None] | None = None
) -> list[ClaimCheck]:
    """Every claim on the report's cells (`results`) and runs (`runs`, and `shortfalls`, as `claim_cells`
    takes them), in the claims file's order: on the reference runs and the user's apart where there are
    reference runs."""
    in_results = results.model.map(lambda label: is_reference(str(label))).astype(bool)
    in_runs = runs.model.map(lambda label: is_reference(str(label))).astype(bool)
    if not in_runs.any():
        return [ClaimCheck(verdict) for verdict in check_all(claim_cells(results, runs, shortfalls))]
    own = check_all(claim_cells(results[~in_results], runs[~in_runs], shortfalls))
    reference = check_all(
        claim_cells(
            results[in_results].assign(model=results.model[in_results].map(plain_label)),
            runs[in_runs].assign(model=runs.model[in_runs].map(plain_label)),
            shortfalls,
        )
    )
    return [ClaimCheck(mine, theirs) for mine, theirs in zip(own, reference, strict=True)]
