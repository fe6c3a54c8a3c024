"""One leaderboard per suite version and data hash, as a value: its rows, their order, marks and compute.

A `SuiteBoard` is a model x test-split matrix of the suite's primary metric (mean over seeds with
its labelled 95% interval, `structbench.cells`, and the number of seeds), its ranked rows ordered
by each model's suite score (`structbench.analysis.suite_score`), the rows set apart below them
(ceilings such as the oracle, models that see test-time information, partial runs), its best and
≈best marks, each model's failed and n/a runs and its compute (`Compute`: parameters, device, CPU
threads, training seconds per seed, and whether its seeds come from machines that differ, `Machines`).
A best or ≈best mark also needs a cell whose 95% interval lies wholly above the interval of the
trivial floor of its column (the best of `FLOORS` there) and, where higher is better, above 0
(`above_floor`): `copy` at 0.0 is not the best of anything, and neither is 0.3 [0.0, 1.0] beside a
floor of 0.0 [0.0, 0.3], which one more seed could reverse. Where the suite names groups of its splits
(BLiMP's phenomena, SyntaxGym's circuits), each model's cell per group, and the same means of published
rows (`group_means`), averaged as the cells are.

This module holds the values and the rules that read nothing; `structbench.reports.builders.boards`
reads them from the store. The views and the writers import this module, never the store.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from structbench.analysis.references import Reference
from structbench.analysis.suite_score import score_splits
from structbench.environments import MACHINE_FIELDS, differing
from structbench.reports.builders.provenance import Provenance
from structbench.specs import SeedStats, StatisticSpec, SuiteSpec, family_rank, natural_key

if TYPE_CHECKING:  # a type only: its module also reads stores, which no view may import
    from structbench.analysis.statistics import Sample


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
    """Whether a mean of `value` is better than the trivial floor's mean `floor` (where one was run) and,
    where higher is better, above 0: the rule of a statistic column, whose best is tested apart."""
    if higher_is_better and value <= 0:
        return False
    return floor is None or (value > floor if higher_is_better else value < floor)


def interval(cell: SeedStats) -> tuple[float, float]:
    """A cell's 95% interval; its mean as a point where it claims none (one seed of a metric that is
    not a proportion, or seeds that agree on one)."""
    if cell.ci_low is None or cell.ci_high is None:
        return cell.mean, cell.mean
    return cell.ci_low, cell.ci_high


def above_floor(cell: SeedStats, floor: SeedStats | None, higher_is_better: bool) -> bool:
    """Whether `cell` may be marked best or ≈best: its 95% interval (`interval`) lies wholly on the
    better side of the floor's, the best trivial baseline's cell in its column where one was run, and,
    where higher is better, above 0 (nothing beat, nothing learned). Overlapping intervals leave the
    cell unmarked: a mark says the model is better than the floor, not that one draw happened to be."""
    low, high = interval(cell)
    if higher_is_better and low <= 0:
        return False
    if floor is None:
        return True
    floor_low, floor_high = interval(floor)
    return low > floor_high if higher_is_better else high < floor_low


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
    """Ranked split -> the models a paired comparison cannot tell from its best (`structbench.reports.builders.ties`)."""
    ties_note: str = ""
    """Why the models were not compared with the best, if they were not."""
    statistic_marks: dict[str, dict[str, str]] = field(default_factory=dict)
    """Declared statistic -> model -> `best` or `tie` (a test over seeds cannot tell it from the best)."""
    scores: dict[str, SeedStats] = field(default_factory=dict)
    """model -> its suite score (`structbench.analysis.suite_score`), which orders the ranked rows."""
    floors: set[str] = field(default_factory=set)
    """The ranked models that are trivial baselines (`FLOORS`): the floor a best mark must beat."""
    samples: dict[str, dict[str, Sample]] = field(default_factory=dict)
    """model -> statistic -> its finished seeds on it (censored where the suite declares a bound), for
    each statistic of `statistic_names` that at least one of them reports (`boards.statistic_samples`)."""
    reference_runs: dict[str, Provenance] = field(default_factory=dict)
    """model -> what made its runs, for the rows of reference runs (`structbench.reports.builders.provenance`):
    ranked like any other row, and marked."""
    groups: dict[str, tuple[str, ...]] = field(default_factory=dict)
    """The suite's named groups of ranked splits (`Suite.split_groups`: BLiMP's phenomena, SyntaxGym's
    circuits), in its order; empty where the suite groups none."""
    group_cells: dict[str, dict[str, SeedStats]] = field(default_factory=dict)
    """group -> model -> its cell: per seed the mean of the primary metric over the group's splits, then
    over seeds (`structbench.analysis.suite_score.group_scores`), as a model's suite score is made."""

    @staticmethod
    def split_mean(values: Mapping[str, float], splits: Sequence[str]) -> float | None:
        """The unweighted mean of a published row's `values` (split -> value) over `splits`, as a measured row's
        suite score and group cells average its split means; None where the row lacks one of them."""
        return sum(values[s] for s in splits) / len(splits) if splits and all(s in values for s in splits) else None

    def group_means(self, values: Mapping[str, float]) -> dict[str, float | None]:
        """group -> a published row's `split_mean` over the group's splits."""
        return {group: self.split_mean(values, splits) for group, splits in self.groups.items()}

    def floor(self, values: dict[str, SeedStats]) -> SeedStats | None:
        """The cell of the trivial baseline with the best mean among `values` (model -> cell of one
        column), the first by name where two are equal; None where none of them has one."""
        found = sorted(m for m in self.floors if m in values)
        if not found:
            return None
        pick = max if self.spec.higher_is_better else min
        return values[pick(found, key=lambda m: values[m].mean)]

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
        return self.samples.get(model, {}).get(name)

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


def slug(text: str) -> str:
    """A file name for `text`: its safe characters, and a short hash when anything was replaced
    (so that two labels never share a file)."""
    safe = re.sub(r"[^A-Za-z0-9._@-]+", "-", text).strip("-.")[:60] or "x"
    if safe == text:
        return safe
    return f"{safe}-{hashlib.sha256(text.encode()).hexdigest()[:8]}"


def board_order(board: SuiteBoard) -> tuple[int, str, tuple[tuple[str | int, ...], str]]:
    """Where a board stands in every list of suites (overview columns, suite indexes, `leaderboard.md`):
    by family (`FAMILY_ORDER`), then by page name with its numbers by value (`natural_key`)."""
    return (*family_rank(board.spec.family), natural_key(board.slug))
