"""One leaderboard per suite version and data hash: the rows, their order, marks and compute.

Per (suite, version, data hash): a model x test-split matrix of the suite's primary metric,
mean over seeds with its labelled 95% interval (`structbench.cells`) and the number of seeds;
ranked rows are ordered by each model's suite score (`structbench.analysis.suite_score`), the
number the overview shows for the suite.
Cells of different data hashes are never merged. When a model's configuration changed (a
neural baseline's recipe), only the runs of its newest configuration are shown; the older ones
stay in the store (`structbench.cells.current_runs`). A row of reference runs (shipped with
structbench, `structbench.store.bundle`) is ranked like any other and carries what made its runs
(`structbench.reports.provenance`). Two kinds of rows are set apart from the ranked ones, below them: ceilings
(models that solve a suite from its definition, `ceiling = True` on the model class: the
oracle) and models that see test-time information (recorded by the runner as not
comparable). Neither is ever marked best. A best or ≈best mark also needs a value better than the
trivial floor of its column (the best of `FLOORS` there) and, where higher is better, above 0: `copy`
at 0.0 is not the best of anything. Every board also carries its failed and n/a runs,
with their error, and each model's compute (parameters, device, CPU threads, training seconds per
seed) and whether its seeds were computed on machines that differ (`structbench.environments`), so
that a reader can tell a number that depends on the machine from one that does not.
"""

from __future__ import annotations

import hashlib
import json
import math
import re
from dataclasses import dataclass, field
from functools import partial
from typing import Any, cast

import pandas as pd

from structbench import registry
from structbench.analysis.claims import under_trained_cells
from structbench.analysis.references import Reference
from structbench.analysis.statistics import Sample, sample, two_sample_test
from structbench.analysis.suite_score import score_splits, suite_scores
from structbench.cells import RUN_CELL, STAT_COLUMNS, as_stats, cells, current_runs, current_scores
from structbench.environments import MACHINE_FIELDS, differing
from structbench.errors import UserError
from structbench.reports.provenance import Provenance, reference_rows
from structbench.reports.ties import best_and_ties
from structbench.specs import SeedStats, StatisticSpec, SuiteSpec, natural_key
from structbench.store import StoreReader, run_compute, run_statistics

RESULT_COLUMNS = [
    "suite", "version", "suite_hash", "model", "split", "metric", "breakdown", "level",
    "mean", "std", "min", "max", "ci_low", "ci_high", "interval", "n_seeds", "per_seed",
]  # fmt: skip


@dataclass(frozen=True)
class RunProblem:
    """A run that did not finish: what went wrong, for the page that shows it."""

    seed: int
    status: str
    """`failed` or `n/a`."""
    error: str


FLOORS = ("copy", "random", "majority")
"""The registered trivial baselines: a column's best of them is the floor a best mark must beat."""


def beats_floor(value: float, floor: float | None, higher_is_better: bool) -> bool:
    """Whether a cell of `value` may be marked best or ≈best: better than the column's trivial floor
    (where one was run) and, where higher is better, above 0 (nothing beat, nothing learned)."""
    if higher_is_better and value <= 0:
        return False
    return floor is None or (value > floor if higher_is_better else value < floor)


NOTED_ENTRIES = 2
"""How many differing machine entries a row's note names with their values (the rest are counted)."""


@dataclass(frozen=True)
class Machines:
    """Whether one model's finished seeds on one board were computed on machines that differ in an
    entry of `MACHINE_FIELDS`, each seed compared with the first (an entry a run lacks is not)."""

    first_seed: int | None = None
    differences: dict[int, list[str]] = field(default_factory=dict)
    """Seed -> the entries its machine differs in from the first seed's (`name A -> B`), where any."""
    values: dict[str, list[str]] = field(default_factory=dict)
    """Differing entry -> its values over the seeds, the first seed's first, in `MACHINE_FIELDS` order
    but for the CPU model (a long name, which a differing SIMD level usually says already) last."""

    @property
    def count(self) -> int:
        """How many machines the seeds come from, as the first seed's sees them."""
        return 1 + len({tuple(entries) for entries in self.differences.values()})

    @property
    def note(self) -> str:
        """The row's short note, e.g. `seeds from 2 machines: simd_numpy AVX512_ICL / X86_V3`; empty
        where every seed's machine is the first's."""
        if not self.differences:
            return ""
        named = [f"{name} {' / '.join(values)}" for name, values in list(self.values.items())[:NOTED_ENTRIES]]
        more = len(self.values) - len(named)
        return f"seeds from {self.count} machines: {', '.join(named)}" + (f" and {more} more" if more else "")

    @property
    def details(self) -> str:
        """Every difference, seed by seed, against the first seed's machine."""
        listed = "; ".join(f"seed {seed}: {', '.join(entries)}" for seed, entries in sorted(self.differences.items()))
        return f"against seed {self.first_seed}'s machine, {listed}" if listed else ""


def machines(environments: list[tuple[int, dict[str, Any]]]) -> Machines:
    """How the machines of finished seeds (seed, its environment), in seed order, differ from the first's."""
    if not environments:
        return Machines()
    (first_seed, first), *others = environments
    differences = {seed: found for seed, here in others if (found := differing(first, here))}
    order = [name for name in MACHINE_FIELDS if name != "cpu"] + ["cpu"]
    values: dict[str, list[str]] = {}
    for name in order:
        if first.get(name) is None:
            continue
        theirs = [str(here[name]) for _, here in others if here.get(name) not in (None, first[name])]
        if theirs:
            values[name] = [str(first[name]), *dict.fromkeys(theirs)]
    return Machines(first_seed=first_seed, differences=differences, values=values)


@dataclass(frozen=True)
class Compute:
    """What one model's finished runs on one board cost, and where they ran."""

    fit_seconds: float | None
    """Mean training time per finished seed."""
    parameters: int | None
    """Trainable parameters, where the model reports them (the largest over its seeds)."""
    device: str
    """Devices the runs reported, comma-separated; empty when none did."""
    seed_statistics: dict[int, dict[str, float]] = field(default_factory=dict)
    """Finished seed -> the statistics of training (`dev_perplexity`) its run reported."""
    threads: tuple[int, ...] = ()
    """The CPU thread counts the finished runs computed on (one count: a count other than 1 keys a
    run); empty where every run predates the record."""
    machines: Machines = field(default_factory=Machines)

    @property
    def where(self) -> str:
        """Device and threads as the row shows them, e.g. `cpu · 1 thread`; empty where neither is known."""
        counts = ", ".join(map(str, self.threads))
        shown = f"{counts} thread{'' if self.threads == (1,) else 's'}" if self.threads else ""
        return " · ".join(part for part in (self.device, shown) if part)

    @property
    def seeds(self) -> int:
        """Finished seeds: a statistic reported by fewer (a criterion some seeds never reached) says so."""
        return len(self.seed_statistics)

    @property
    def statistic_values(self) -> dict[str, list[float]]:
        """Each statistic, over the finished seeds that report it (in seed order)."""
        out: dict[str, list[float]] = {}
        for _, reported in sorted(self.seed_statistics.items()):
            for name, value in reported.items():
                out.setdefault(name, []).append(value)
        return dict(sorted(out.items()))

    def sample(self, name: str, censored_by: str | None) -> Sample:
        """Statistic `name` over the finished seeds, those that report `censored_by` instead censored."""
        return sample(self.seed_statistics, name, censored_by)


@dataclass
class SuiteBoard:
    """One suite version's leaderboard matrix."""

    spec: SuiteSpec
    suite_hash: str
    splits: list[str]
    ranked: list[str]
    """The test splits whose mean ranks the rows (the others are shown, not ranked)."""
    slug: str = ""
    """The suite page's file name without `.html`, unique in the site."""
    rows: list[tuple[str, dict[str, SeedStats | None]]] = field(default_factory=list)
    status: dict[str, str] = field(default_factory=dict)
    """model -> human summary of run statuses, e.g. `3 done, 1 failed`."""
    not_comparable: set[str] = field(default_factory=set)
    """Models that see test-time information: set apart below the ranked rows."""
    ceilings: set[str] = field(default_factory=set)
    """Models that solve the suite from its definition (the oracle): set apart below the ranked rows."""
    partial: set[str] = field(default_factory=set)
    """Runs on the first N examples of each test split (`--limit N`): set apart below the ranked rows."""
    under_trained: dict[str, str] = field(default_factory=dict)
    """model -> why its training did not reach the recipe's criterion on some seed: ranked, tagged, never
    marked best (its score says more about the budget than about the architecture)."""
    problems: dict[str, list[RunProblem]] = field(default_factory=dict)
    """model -> its failed and n/a runs."""
    compute: dict[str, Compute] = field(default_factory=dict)
    references: list[Reference] = field(default_factory=list)
    """Published rows for this suite that report the primary metric on at least one shown split."""
    other_references: list[tuple[Reference, str, str, float]] = field(default_factory=list)
    """Published (row, metric, split, value) for the suite's other metrics."""
    best: dict[str, str] = field(default_factory=dict)
    """Ranked split -> the ranked model with the best mean on it."""
    ties: dict[str, set[str]] = field(default_factory=dict)
    """Ranked split -> the models a paired comparison cannot tell from its best (`structbench.reports.ties`)."""
    ties_note: str = ""
    """Why the models were not compared with the best, if they were not."""
    statistic_marks: dict[str, dict[str, str]] = field(default_factory=dict)
    """Declared statistic -> model -> `best` or `tie` (a test over seeds cannot tell it from the best)."""
    scores: dict[str, SeedStats] = field(default_factory=dict)
    """model -> its suite score (`structbench.analysis.suite_score`), which orders the ranked rows."""
    floors: set[str] = field(default_factory=set)
    """The ranked models that are trivial baselines (`FLOORS`): the floor a best mark must beat."""
    reference_runs: dict[str, Provenance] = field(default_factory=dict)
    """model -> what made its runs, for the rows of reference runs (`structbench.reports.provenance`):
    ranked like any other row, and marked."""

    def floor(self, values: dict[str, SeedStats]) -> float | None:
        """The best mean of the trivial baselines among `values` (model -> cell of one column); None
        where none of them has one."""
        found = [values[m].mean for m in self.floors if m in values]
        if not found:
            return None
        return max(found) if self.spec.higher_is_better else min(found)

    def mark(self, model: str, split: str) -> str:
        """`best`, `tie` (indistinguishable from the best) or "" for one cell."""
        if self.best.get(split) == model:
            return "best"
        return "tie" if model in self.ties.get(split, set()) else ""

    def missing(self, model: str) -> str:
        """What a cell without a number says: `failed` when the model's runs here failed, else `n/a`."""
        failed = any(problem.status == "failed" for problem in self.problems.get(model, []))
        return "failed" if failed else "n/a"

    @property
    def statistic_names(self) -> list[str]:
        """One column each: the statistics of training the suite declares (in its order), then any
        other that a model on this board reports (in name order)."""
        declared = [s.name for s in self.spec.statistics]
        reported = {name for compute in self.compute.values() for name in compute.statistic_values}
        return declared + sorted(reported - set(declared))

    def statistic_spec(self, name: str) -> StatisticSpec | None:
        """The suite's declaration of statistic `name` (its direction and meaning), if it declares it."""
        return self.spec.statistic(name)

    def statistic_sample(self, model: str, name: str) -> Sample | None:
        """`model`'s seeds on statistic `name` (censored where the suite declares a bound); None when
        no finished seed of it reports the statistic or its bound."""
        compute = self.compute.get(model)
        declared = self.statistic_spec(name)
        found = compute.sample(name, declared.censored_by if declared else None) if compute else None
        return found if found is not None and found.n else None

    def set_apart(self, model: str) -> bool:
        """Whether `model` is shown below the ranked rows (a ceiling, not comparable, or partial)."""
        return model in self.ceilings or model in self.not_comparable or model in self.partial

    @property
    def ranked_rows(self) -> list[tuple[str, dict[str, SeedStats | None]]]:
        return [row for row in self.rows if not self.set_apart(row[0])]

    @property
    def apart_rows(self) -> list[tuple[str, dict[str, SeedStats | None]]]:
        return [row for row in self.rows if self.set_apart(row[0])]

    @property
    def generalisation(self) -> list[str]:
        """The splits of the suite score (`score_splits`): the ranked generalisation splits, or every
        ranked split where none is."""
        return score_splits(self.spec)

    @property
    def generalises(self) -> bool:
        """Whether the board has a ranked generalisation split (else its overview column is in-distribution)."""
        return any(self.spec.split(s).test_role == "generalisation" for s in self.ranked)

    @property
    def in_distribution(self) -> list[str]:
        """The in-distribution test splits, ranked ones where there are any."""
        splits = [s for s in self.splits if self.spec.split(s).test_role == "in-distribution"]
        return [s for s in splits if s in self.ranked] or splits


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


def model_names(runs: pd.DataFrame) -> dict[str, str]:
    """model label -> the registered name its stored spec gives (`name`; "" where unreadable)."""
    names: dict[str, str] = {}
    for label, spec in zip(runs["model"].tolist(), runs["model_spec"].tolist(), strict=True):
        if label not in names:
            try:
                names[str(label)] = str(json.loads(spec).get("name", ""))
            except (ValueError, AttributeError):
                names[str(label)] = ""
    return names


def floor_labels(runs: pd.DataFrame) -> set[str]:
    """The model labels of the trivial baselines (`FLOORS`), under any settings."""
    return {label for label, name in model_names(runs).items() if name in FLOORS}


def ceiling_labels(runs: pd.DataFrame) -> set[str]:
    """The model labels whose registered model class declares `ceiling = True` (the oracle).

    Only names the store holds are imported, and only registered ones: a label's class is
    found through its stored spec's `name`."""
    registered = set(registry.model_names())
    names = model_names(runs)
    ceiling: dict[str, bool] = {}
    for name in set(names.values()) & registered:
        try:
            ceiling[name] = bool(getattr(registry.model_factory(name), "ceiling", False))
        except UserError:
            ceiling[name] = False
    return {label for label, name in names.items() if ceiling.get(name, False)}


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
        reported = [run_compute(environment) for _, environment, _ in cell_runs]
        parameters = [c["parameters"] for c in reported if isinstance(c.get("parameters"), int)]
        devices = sorted({str(c["device"]) for c in reported if isinstance(c.get("device"), str)})
        seconds = [float(s) for *_, s in cell_runs if s is not None and s == s]
        environments = [(seed, _environment(environment)) for seed, environment, _ in cell_runs]
        threads = {t for _, e in environments if type(t := e.get("threads")) is int and t > 0}
        out[key] = Compute(
            fit_seconds=sum(seconds) / len(seconds) if seconds else None,
            parameters=max(int(p) for p in parameters) if parameters else None,
            device=", ".join(devices),
            seed_statistics={seed: run_statistics(environment) for seed, environment, _ in cell_runs},
            threads=tuple(sorted(threads)),
            machines=machines(environments),
        )
    return out


def statistic_marks(board: SuiteBoard) -> dict[str, dict[str, str]]:
    """Declared statistic -> ranked model -> `best` (the best mean in the declared direction; with
    censored seeds, the restricted mean) or `tie` (the two-sample test over seeds, 95%, cannot tell
    it from the best: Welch's t-test, or the logrank test where a seed is censored). A model with
    fewer than two seeds is never tested, so never marked. As on the split columns (`beats_floor`),
    only a mean better than the trivial baselines' best there, and above 0 where higher is better,
    is marked at all."""
    ranked = [m for m, _ in board.ranked_rows if m in board.compute and m not in board.under_trained]
    marks: dict[str, dict[str, str]] = {}
    for declared in board.spec.statistics:
        found_samples = {m: found for m in ranked if (found := board.statistic_sample(m, declared.name)) is not None}
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


def current_specs(stored: dict[tuple[str, str, str], SuiteSpec]) -> dict[tuple[str, str, str], SuiteSpec]:
    """The installed spec of each stored suite version where this structbench has it, else the
    stored one: how a suite is presented (primary metric, split roles, ranked splits) may be
    corrected without a change to its data, and the leaderboard follows the correction."""
    current = {}
    installed = set(registry.suite_names())
    for (suite, version, suite_hash), spec in stored.items():
        try:
            current[(suite, version, suite_hash)] = (
                registry.suite(f"{suite}@{version}").spec if suite in installed else spec
            )
        except UserError:  # another version than this structbench has: what the store holds
            current[(suite, version, suite_hash)] = spec
    return current


def slug(text: str) -> str:
    """A file name for `text`: its safe characters, and a short hash when anything was replaced
    (so that two labels never share a file)."""
    safe = re.sub(r"[^A-Za-z0-9._@-]+", "-", text).strip("-.")[:60] or "x"
    if safe == text:
        return safe
    return f"{safe}-{hashlib.sha256(text.encode()).hexdigest()[:8]}"


def boards(
    store: StoreReader,
    results: pd.DataFrame,
    references: list[Reference] | None = None,
    runs: pd.DataFrame | None = None,
    scores: pd.DataFrame | None = None,
) -> list[SuiteBoard]:
    """Every board of the suite versions `runs` (default: the whole store) holds, in suite order;
    `scores` are the score rows of their current runs where the caller has read them already."""
    runs = store.runs() if runs is None else runs
    if scores is None:
        scores = current_scores(store.scores(), runs)
    runs = current_runs(runs)
    held = set(zip(runs["suite"].tolist(), runs["version"].tolist(), runs["suite_hash"].tolist(), strict=True))
    specs = {key: spec for key, spec in current_specs(store.suite_specs()).items() if key in held}
    statuses = _status_summary(runs)
    flagged, limited = _flagged(runs)
    ceilings = ceiling_labels(runs)
    floors = floor_labels(runs)
    problems = _problems(runs)
    compute = _compute(runs)
    under = under_trained_cells(runs)
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
            columns[split] = {m: c for m, c in column.items() if beats_floor(c.mean, floor, spec.higher_is_better)}
        board.best, board.ties, board.ties_note = best_and_ties(store, spec, suite_hash, runs, columns)
        board.statistic_marks = statistic_marks(board)
        attach_references(board, references or [])
        out.append(board)
    return out
