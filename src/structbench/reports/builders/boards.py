"""Every board of a store: its suite versions' cells, ranks, marks and compute, read from the runs.

Per (suite, version, data hash) one `SuiteBoard` (`structbench.reports.builders.suite_board`). Cells
of different data hashes are never merged. When a model's configuration changed (a neural
baseline's recipe), only the runs of its newest configuration are shown; the older ones stay in the
store (`structbench.cells.current_runs`). A row of reference runs (shipped with structbench,
`structbench.store.bundle`) is ranked like any other and carries what made its runs
(`structbench.reports.builders.reference_runs`). Ceilings are the models whose class says
`ceiling = True` (the oracle); not comparable ones are those the runner recorded as seeing test-time
information; neither is ever marked best. Each model's compute and the machines of its seeds
(`structbench.environments`) are read from its runs' environments, so that a reader can tell a
number that depends on the machine from one that does not; the ≈best marks of the split columns
come from paired comparisons of stored predictions (`structbench.reports.builders.ties`), those of the
statistic columns from a two-sample test over seeds (`statistic_marks`).
"""

from __future__ import annotations

import json
import math
from functools import partial
from typing import Any, cast

import pandas as pd

from structbench import registry
from structbench.analysis.references import Reference
from structbench.analysis.statistics import Sample, sample, two_sample_test
from structbench.analysis.suite_score import group_scores, suite_scores
from structbench.cells import RUN_CELL, STAT_COLUMNS, as_stats, cells, current_runs, current_scores
from structbench.errors import UserError
from structbench.protocols import checked_compute, checked_statistics
from structbench.reports.builders.model_facts import ModelFacts, answers, ceiling_labels, model_names, questions
from structbench.reports.builders.reference_runs import reference_rows
from structbench.reports.builders.suite_board import (
    FLOORS,
    Compute,
    RunProblem,
    SuiteBoard,
    above_floor,
    beats_floor,
    machines,
    slug,
)
from structbench.reports.builders.ties import best_and_ties
from structbench.specs import SeedStats, SuiteSpec, natural_key
from structbench.store import StoreReader
from structbench.suite import Suite

RESULT_COLUMNS = [
    "suite", "version", "suite_hash", "model", "split", "metric", "breakdown", "level",
    "mean", "std", "min", "max", "ci_low", "ci_high", "interval", "n_seeds", "per_seed",
]  # fmt: skip


def aggregate(store: StoreReader, runs: pd.DataFrame | None = None) -> pd.DataFrame:
    """Every cell (suite, version, hash, model, split, metric, breakdown condition) of the current
    configurations, by the one cell function that `run --json` uses too; `runs` is
    `store.runs()` where the caller has read it already."""
    return cell_table(current_scores(store.scores(), store.runs() if runs is None else runs))


def cell_table(current_scores: pd.DataFrame) -> pd.DataFrame:
    """The report's cells of score rows already narrowed to the current configurations."""
    return cells(current_scores)[RESULT_COLUMNS]  # in cell-key order already


def _status_summary(runs: pd.DataFrame) -> dict[tuple[str, str, str, str], str]:
    """cell -> its runs' statuses, e.g. `3 done, 1 failed`."""
    parts: dict[tuple[str, str, str, str], list[str]] = {}
    for key, n in runs.groupby([*RUN_CELL, "status"]).size().items():
        suite, version, suite_hash, model, status = (str(part) for part in cast(tuple[object, ...], key))
        parts.setdefault((suite, version, suite_hash, model), []).append(f"{n} {status}")
    return {cell: ", ".join(statuses) for cell, statuses in parts.items()}


def _flagged(runs: pd.DataFrame) -> tuple[set[tuple[str, str, str, str]], set[tuple[str, str, str, str]]]:
    """The cells whose runs the runner recorded as never ranked: (not comparable, partial). Partial
    runs (`--limit N`) carry `limit` in their stored spec; the others see test-time information."""
    flagged = runs[runs["comparable"] == 0]
    seeing: set[tuple[str, str, str, str]] = set()
    limited: set[tuple[str, str, str, str]] = set()
    for *cell, spec in flagged[[*RUN_CELL, "model_spec"]].itertuples(index=False):
        key = (str(cell[0]), str(cell[1]), str(cell[2]), str(cell[3]))
        (limited if "limit" in json.loads(spec) else seeing).add(key)
    return seeing, limited


def floor_labels(runs: pd.DataFrame) -> set[str]:
    """The model labels of the trivial baselines (`FLOORS`), under any settings."""
    return {label for label, name in model_names(runs).items() if name in FLOORS}


def _problems(runs: pd.DataFrame) -> dict[tuple[str, str, str, str], list[RunProblem]]:
    """cell -> its failed and n/a runs, by seed."""
    out: dict[tuple[str, str, str, str], list[RunProblem]] = {}
    unfinished = runs[runs.status.isin(["failed", "n/a"])].sort_values(["seed"])
    columns = (unfinished[c].tolist() for c in [*RUN_CELL, "seed", "status", "error"])
    for suite, version, suite_hash, model, seed, status, error in zip(*columns, strict=True):
        problem = RunProblem(int(seed), str(status), "" if error is None else str(error))
        out.setdefault((str(suite), str(version), str(suite_hash), str(model)), []).append(problem)
    return out


def _environment(environment_json: object) -> dict[str, Any]:
    """A run's `environment` JSON as a dict; {} where it is absent or not a JSON object (never raises:
    a report reads old and damaged rows too)."""
    try:
        environment = json.loads(str(environment_json)) if isinstance(environment_json, str) else None
    except (ValueError, RecursionError):
        return {}
    return environment if isinstance(environment, dict) else {}


def _compute(runs: pd.DataFrame) -> dict[tuple[str, str, str, str], Compute]:
    """cell -> the compute of its finished runs."""
    done = runs[runs.status == "done"].sort_values(["seed"])
    by_cell: dict[tuple[str, str, str, str], list[tuple[int, str, float]]] = {}
    columns = (done[c].tolist() for c in [*RUN_CELL, "seed", "environment", "fit_seconds"])
    for suite, version, suite_hash, model, seed, environment, fit_seconds in zip(*columns, strict=True):
        by_cell.setdefault((suite, version, suite_hash, model), []).append((int(seed), environment, fit_seconds))
    out = {}
    for key, cell_runs in by_cell.items():
        # each run's JSON parsed once: its compute and statistics entries are read from the parsed object,
        # checked as `run_compute` and `run_statistics` check them
        environments = [(seed, _environment(environment)) for seed, environment, _ in cell_runs]
        reported = [checked_compute(e.get("compute", {}))[0] for _, e in environments]
        parameters = [c["parameters"] for c in reported if isinstance(c.get("parameters"), int)]
        devices = sorted({str(c["device"]) for c in reported if isinstance(c.get("device"), str)})
        seconds = [float(s) for *_, s in cell_runs if s is not None and s == s]
        threads = {t for _, e in environments if type(t := e.get("threads")) is int and t > 0}
        out[key] = Compute(
            fit_seconds=sum(seconds) / len(seconds) if seconds else None,
            parameters=max(int(p) for p in parameters) if parameters else None,
            device=", ".join(devices),
            seed_statistics={seed: checked_statistics(e.get("statistics", {}))[0] for seed, e in environments},
            threads=tuple(sorted(threads)),
            machines=machines(environments),
        )
    return out


def statistic_samples(board: SuiteBoard) -> dict[str, dict[str, Sample]]:
    """model -> statistic -> its finished seeds on it, for every statistic of `board.statistic_names`
    that at least one of its seeds reports (those that report the suite's declared bound instead are
    censored there): what `SuiteBoard.statistic_sample` answers."""
    out: dict[str, dict[str, Sample]] = {}
    names = board.statistic_names  # read once: every model's seeds make it
    for model, compute in board.compute.items():
        for name in names:
            declared = board.statistic_spec(name)
            found = sample(compute.seed_statistics, name, declared.censored_by if declared else None)
            if found.n:
                out.setdefault(model, {})[name] = found
    return out


def statistic_marks(board: SuiteBoard) -> dict[str, dict[str, str]]:
    """Declared statistic -> ranked model -> `best` (the best mean in the declared direction; with
    censored seeds, the restricted mean) or `tie` (the two-sample test over seeds, 95%, cannot tell
    it from the best: Welch's t-test, or the logrank test where a seed is censored). A model with
    fewer than two seeds is never tested, so never marked. As on the split columns (`beats_floor`),
    only a mean better than the trivial baselines' best there, and above 0 where higher is better,
    is marked at all."""
    ranked = [m for m, _ in board.ranked_rows if m in board.compute and m not in board.under_trained]
    by_model = statistic_samples(board)
    marks: dict[str, dict[str, str]] = {}
    for declared in board.spec.statistics:
        found_samples = {m: found for m in ranked if (found := by_model.get(m, {}).get(declared.name)) is not None}
        floor_means = [found_samples[m].mean for m in board.floors if m in found_samples]
        pick = max if declared.higher_is_better else min
        floor = pick(floor_means) if floor_means else None
        samples = {
            m: found for m, found in found_samples.items() if beats_floor(found.mean, floor, declared.higher_is_better)
        }
        if not samples:
            continue
        best = pick(sorted(samples), key=lambda model: samples[model].mean)
        marks[declared.name] = {best: "best"}
        for model, mine in samples.items():
            testable = model != best and mine.n > 1 and samples[best].n > 1
            if testable and two_sample_test(mine, samples[best]).a_lower is None:
                marks[declared.name][model] = "tie"
    return marks


def attach_references(board: SuiteBoard, references: list[Reference]) -> None:
    """Give `board` the published rows of its suite."""
    primary = board.spec.primary_metric
    for reference in references:
        if reference.suite != board.spec.id:
            continue
        if any(reference.value(primary, split) is not None for split in board.splits):
            board.references.append(reference)
        for metric, by_split in reference.values.items():
            if metric != primary:
                board.other_references += [(reference, metric, split, value) for split, value in by_split.items()]


def _rank(row: tuple[str, dict[str, SeedStats | None]], board: SuiteBoard) -> tuple[bool, bool, float, str]:
    """Ranked models first (ceilings, then not comparable ones after), then the best suite score (a
    model without one last), then the name."""
    model = row[0]
    score = board.scores.get(model)
    order = math.inf if score is None else (-score.mean if board.spec.higher_is_better else score.mean)
    return (model in board.not_comparable, model in board.ceilings, order, model)


def installed_suite(suite: str, version: str) -> Suite | None:
    """The suite class this structbench has for stored suite version `suite@version`, if it has it."""
    if suite not in set(registry.suite_names()):
        return None
    try:
        return registry.suite(f"{suite}@{version}")
    except UserError:  # another version than this structbench has
        return None


def current_specs(stored: dict[tuple[str, str, str], SuiteSpec]) -> dict[tuple[str, str, str], SuiteSpec]:
    """The installed spec of each stored suite version where this structbench has it, else the
    stored one: how a suite is presented (primary metric, split roles, ranked splits) may be
    corrected without a change to its data, and the leaderboard follows the correction."""
    current = {}
    for (suite, version, suite_hash), spec in stored.items():
        found = installed_suite(suite, version)
        current[(suite, version, suite_hash)] = found.spec if found is not None else spec
    return current


def split_groups(spec: SuiteSpec) -> dict[str, tuple[str, ...]]:
    """The named groups of `spec`'s splits where this structbench has its suite version
    (`Suite.split_groups`), only those whose splits the spec ranks; empty otherwise."""
    found = installed_suite(spec.id, spec.version)
    if found is None:
        return {}
    ranked = {s.name for s in spec.ranked_splits}
    return {group: tuple(splits) for group, splits in found.split_groups.items() if splits and set(splits) <= ranked}


def boards(
    store: StoreReader,
    results: pd.DataFrame,
    references: list[Reference] | None = None,
    runs: pd.DataFrame | None = None,
    scores: pd.DataFrame | None = None,
    facts: ModelFacts | None = None,
) -> list[SuiteBoard]:
    """Every board of the suite versions `runs` (default: the whole store) holds, in suite order;
    `scores` are the score rows of their current runs and `facts` the models' answers about `runs`
    (`structbench.reports.builders.model_facts`) where the caller has them already."""
    runs = store.runs() if runs is None else runs
    if scores is None:
        scores = current_scores(store.scores(), runs)
    facts = answers(questions(runs)) if facts is None else facts
    runs = current_runs(runs)
    held = set(zip(runs["suite"].tolist(), runs["version"].tolist(), runs["suite_hash"].tolist(), strict=True))
    specs = {key: spec for key, spec in current_specs(store.suite_specs()).items() if key in held}
    statuses = _status_summary(runs)
    flagged, limited = _flagged(runs)
    ceilings = ceiling_labels(runs, facts)
    floors = floor_labels(runs)
    problems = _problems(runs)
    compute = _compute(runs)
    under = facts.under_trained
    _, reference = reference_rows(runs)
    whole_split = results[results.breakdown == ""]
    by_suite = dict(list(whole_split.groupby(["suite", "version", "suite_hash"])))
    ordered = sorted(specs.items(), key=lambda item: (natural_key(item[0][0]), natural_key(item[0][1]), item[0][2]))
    score_list = suite_scores(scores, [(spec, suite_hash) for (_, _, suite_hash), spec in ordered])
    out: list[SuiteBoard] = []
    slugs: set[str] = set()
    for ((suite, version, suite_hash), spec), board_scores in zip(ordered, score_list, strict=True):
        name = spec.key if spec.key not in slugs else f"{spec.key}-{suite_hash[:8]}"
        slugs.add(name)
        board = SuiteBoard(
            spec=spec,
            suite_hash=suite_hash,
            splits=[s.name for s in spec.splits_with_role("test")],
            ranked=[s.name for s in spec.ranked_splits],
            slug=slug(name),
            scores=board_scores,
        )
        mine = by_suite.get((suite, version, suite_hash), whole_split.iloc[:0])
        mine = mine[mine.metric == spec.primary_metric]
        keys = ["model", "split", *STAT_COLUMNS]  # read as columns: to_dict("records") is 3x slower
        rows = (dict(zip(keys, values, strict=True)) for values in zip(*(mine[k].tolist() for k in keys), strict=True))
        by_cell = {(str(row["model"]), str(row["split"])): as_stats(row) for row in rows}
        models = sorted({m for (s, v, h, m) in statuses if (s, v, h) == (suite, version, suite_hash)})
        for model in models:
            cell_key = (suite, version, suite_hash, model)
            board.rows.append((model, {split: by_cell.get((model, split)) for split in board.splits}))
            board.status[model] = statuses[cell_key]
            if cell_key in flagged:
                board.not_comparable.add(model)
            if cell_key in limited:
                board.partial.add(model)
            if model in ceilings:
                board.ceilings.add(model)
            if cell_key in problems:
                board.problems[model] = problems[cell_key]
            if cell_key in compute:
                board.compute[model] = compute[cell_key]
            if cell_key in under:
                board.under_trained[model] = under[cell_key]
            if cell_key in reference:
                board.reference_runs[model] = reference[cell_key]
        board.rows.sort(key=partial(_rank, board=board))
        board.floors = {model for model, _ in board.ranked_rows if model in floors}
        columns: dict[str, dict[str, SeedStats]] = {split: {} for split in board.ranked}
        for model, row_cells in board.ranked_rows:
            if model in board.under_trained:
                continue
            for split in board.ranked:
                if (cell := row_cells[split]) is not None:
                    columns[split][model] = cell
        for split, column in columns.items():  # only a cell above the floor may be marked
            floor = board.floor(column)
            columns[split] = {m: c for m, c in column.items() if above_floor(c, floor, spec.higher_is_better)}
        board.best, board.ties, board.ties_note = best_and_ties(store, spec, suite_hash, runs, columns)
        board.groups = split_groups(spec)
        if board.groups:
            board.group_cells = group_scores(scores, spec, suite_hash, board.groups)
        board.samples = statistic_samples(board)
        board.statistic_marks = statistic_marks(board)
        attach_references(board, references or [])
        out.append(board)
    return out
