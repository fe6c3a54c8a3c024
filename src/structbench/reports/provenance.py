"""Where a reference run comes from, as the site marks its row.

The reference runs ship with structbench (`structbench.store.bundle`) and are shown beside the
user's own under their label with `REFERENCE_SUFFIX` (`with_reference`): a user's run of the same
configuration is a row of its own. Each reference row says what made its numbers, read from the
runs' own columns: the structbench version (`harness_version`) and commit (`git_commit`, else the
environment's `git`), the budget the model trained under (its resolved configuration's `budget`,
else the budget its settings asked for; a model without one, a classical baseline, shows none) and
the CPU threads (the environment's `threads`). Where the runs of one row differ, every value is
listed, in the order the runs finished: `at 90adbc0, 3b0bae3`.

Reference rows are ranked like any other comparable model: they are measured runs of a known
configuration, not published numbers, and a user's model is compared with them.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

import pandas as pd

from structbench.cells import RUN_CELL
from structbench.store.bundle import is_reference, plain_label

SHOWN_COMMITS = 3
"""How many commits a row's line names (the others are counted; its title names them all)."""


def _unique(values: Iterable[Any]) -> tuple[Any, ...]:
    return tuple(dict.fromkeys(value for value in values if value not in (None, "")))


@dataclass(frozen=True)
class Provenance:
    """What made one reference row's runs."""

    label: str
    """The model's label without the reference mark (as the claims name it)."""
    versions: tuple[str, ...] = ()
    """The structbench versions, in the order the runs finished."""
    commits: tuple[str, ...] = ()
    """The commits (full hashes), in the order the runs finished."""
    budgets: tuple[str, ...] = ()
    epochs: tuple[int, ...] = ()
    """The recipes' caps on training epochs, where the configuration has one."""
    threads: tuple[int, ...] = ()

    @property
    def made(self) -> str:
        """What made the runs, e.g. `structbench 0.1.0 at d0f99fc, budget cpu-small, 1 thread`."""
        made = "structbench " + (", ".join(self.versions) or "(version not recorded)")
        if self.commits:
            shown = [commit[:7] for commit in self.commits[:SHOWN_COMMITS]]
            more = len(self.commits) - len(shown)
            made += " at " + ", ".join(shown) + (f" and {more} more" if more else "")
        parts = [made]
        if self.budgets:
            parts.append("budget " + ", ".join(self.budgets))
        if self.threads:
            parts.append(f"{', '.join(map(str, self.threads))} thread{'' if self.threads == (1,) else 's'}")
        return ", ".join(parts)

    @property
    def line(self) -> str:
        """The row's mark: `reference run, ` and what made it."""
        return f"reference run, {self.made}"

    @property
    def details(self) -> str:
        """Every commit in full, and the epoch caps: the line's title."""
        parts = ["a run shipped with structbench (its reference bundle), not one of this store's"]
        if self.commits:
            parts.append("commit" + ("s " if len(self.commits) > 1 else " ") + ", ".join(self.commits))
        if self.epochs:
            parts.append("at most " + ", ".join(map(str, self.epochs)) + " epochs")
        return "; ".join(parts)


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
