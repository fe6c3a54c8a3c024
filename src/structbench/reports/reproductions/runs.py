"""What made a group of reference runs and how to make a cell of them again, as the page states it:
commits, versions, threads, SIMD levels, budgets, seeds and CPU time (`Provenance`), how many seeds
reached their recipe's convergence criterion, and the `structbench run` and `reference verify`
commands of a cell.
"""

from __future__ import annotations

import datetime
import json
import shlex
from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any

import pandas as pd

from structbench.cells import RUN_CELL
from structbench.convergence import under_trained
from structbench.reports.views.format import seconds
from structbench.specs import natural_key
from structbench.store import run_convergence


@dataclass(frozen=True)
class Provenance:
    """Where and how a group of runs was made, as the page states it."""

    commits: str
    versions: str
    threads: str
    simd: str
    processors: str
    """The CPU models the runs recorded: under one SIMD pin, CPUs of two vendors can still train a
    network to other last bits."""
    budgets: str
    seeds: str
    cpu: str
    finished: str
    runs: int


def seed_list(seeds: Sequence[int]) -> str:
    """Seeds as `--seeds` reads them: `0,1,2`, or ranges of four or more (`0-9`)."""
    parts: list[str] = []
    ordered = sorted(seeds)
    start = 0
    while start < len(ordered):
        end = start
        while end + 1 < len(ordered) and ordered[end + 1] == ordered[end] + 1:
            end += 1
        if end - start >= 3:
            parts.append(f"{ordered[start]}-{ordered[end]}")
        else:
            parts += [str(seed) for seed in ordered[start : end + 1]]
        start = end + 1
    return ",".join(parts)


def tally(values: Iterable[object], missing: str = "not recorded", unit: str = "run") -> str:
    """Distinct values with their counts where they differ: `1`, or `1 (12 runs), 2 (3 runs)`."""
    counts = Counter("" if value is None else str(value) for value in values)
    named = sorted(counts.items(), key=lambda item: natural_key(item[0]))
    if len(named) <= 1:
        return (named[0][0] if named else "") or missing
    return ", ".join(f"{value or missing} ({n} {unit}{'s' if n > 1 else ''})" for value, n in named)


def _setting(key: str, value: Any) -> str:
    """`--set key=value` as `parse_settings` reads it back to `value`."""
    if isinstance(value, str):
        try:
            json.loads(value)
        except ValueError:
            text = value
        else:
            text = json.dumps(value)  # a string that would read as a number or a boolean
    else:
        text = json.dumps(value)
    return f"--set {shlex.quote(f'{key}={text}')}"


def _json_object(text: str) -> dict[str, Any]:
    """A stored JSON object (a run's environment or model record); {} for anything else."""
    try:
        found = json.loads(text)
    except (TypeError, ValueError):
        return {}
    return found if isinstance(found, dict) else {}


def budget(model_spec: str) -> str | None:
    configuration = _json_object(model_spec).get("configuration")
    budget = configuration.get("budget") if isinstance(configuration, dict) else None
    return None if budget is None else str(budget)


def cpu_seconds(runs: pd.DataFrame) -> float:
    """Training and prediction seconds, summed over `runs`."""
    return float((runs["fit_seconds"].fillna(0) + runs["predict_seconds"].fillna(0)).sum())


def provenance(runs: pd.DataFrame) -> Provenance:
    environments = [_json_object(text) for text in runs["environment"].tolist()]
    simd = [
        None
        if env.get("simd_torch") is None and env.get("simd_numpy") is None
        else f"torch {env.get('simd_torch') or 'not recorded'}, numpy {env.get('simd_numpy') or 'not recorded'}"
        for env in environments
    ]
    days = sorted(
        datetime.datetime.fromtimestamp(stamp, datetime.UTC).date().isoformat()
        for stamp in runs["finished_at"].dropna().tolist()
    )
    finished = "not recorded" if not days else days[0] if days[0] == days[-1] else f"{days[0]} to {days[-1]}"
    return Provenance(
        commits=tally(None if commit is None else str(commit)[:12] for commit in runs["git_commit"].tolist()),
        versions=tally(runs["harness_version"].tolist()),
        threads=tally(env.get("threads") for env in environments),
        simd=tally(simd),
        processors=tally(env.get("cpu") for env in environments),
        budgets=tally((budget(spec) for spec in runs["model_spec"].tolist()), missing="none (not a trained network)"),
        seeds=tally((seed_list(cell["seed"].tolist()) for _, cell in runs.groupby(RUN_CELL)), unit="cell"),
        cpu=seconds(cpu_seconds(runs)),
        finished=finished,
        runs=len(runs),
    )


def seeds_converged(runs: pd.DataFrame, why: str | None) -> tuple[str, str | None]:
    """(how many of the cell's seeds reached their recipe's criterion, with the rule and the values of
    those that did not; what reaching it takes, as the model states it, or None). `why` is the cell's
    under-trained reason as the claims read it (`claim_cells`), which ends with the latter."""
    records = [found for text in runs["environment"].tolist() if (found := run_convergence(text)) is not None]
    if not records:
        return "no criterion reported", None
    reached = sum(record.reached for record in records)
    missed = under_trained(records)  # `under-trained: 2 of 3 seeds (dev_accuracy 0.39, 0.49 < 0.95)`
    rules = "; ".join(sorted({record.criterion.shown() for record in records}))
    detail = f"({rules})" if missed is None else missed.partition(" seeds ")[2]
    counted = f"{reached} of {len(records)} {detail}"
    rest = None if why is None or missed is None else why.removeprefix(missed).removeprefix("; ")
    return counted, (rest or None)


def commands(suite: str, version: str, model_spec: str, label: str, seeds: Sequence[int]) -> tuple[str, str]:
    """(`structbench run` of the cell, with the stored settings as `--set`; `structbench reference verify`)."""
    spec = _json_object(model_spec)
    name = str(spec.get("name", label))
    given = spec.get("params")
    params: dict[str, Any] = given if isinstance(given, dict) else {}
    settings = "".join(f" {_setting(key, params[key])}" for key in sorted(params))
    key = shlex.quote(f"{suite}@{version}")
    run = f"structbench run --suite {key} --model {shlex.quote(name)} --seeds {seed_list(seeds)}{settings}"
    return run, f"structbench reference verify --suite {key} --model {shlex.quote(label)}"
