"""Rendering the leaderboard from the results store (and the installed suites' specs, where
they are installed: see `current_specs`).

Per (suite, version, data hash): a model x test-split matrix of the suite's primary metric,
mean over seeds with its labelled 95% interval (`structbench.cells`) and the number of seeds. Cells of different data
hashes are never merged. When a model's configuration changed (a neural baseline's recipe),
only the runs of its newest configuration are shown; the older ones stay in the store.
Models that see test-time information (oracle guidance) are flagged as not comparable and
ranked after the rest. Published numbers (`references.yaml`) follow as reference rows,
marked as reported and never ranked with measured rows. Outputs: `index.html` (Jinja2,
autoescaped), `leaderboard.md` (tabulate), `results.csv` and `results.json` (every cell: metric,
every split) and `references.json` (the published numbers).
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass, field
from functools import partial
from pathlib import Path
from typing import cast

import jinja2
import markupsafe
import pandas as pd
from tabulate import tabulate

from structbench import __version__, registry
from structbench.cells import RUN_CELL, STAT_COLUMNS, as_stats, cells, current_configuration
from structbench.errors import UserError
from structbench.reports.claims import Verdict, check_all
from structbench.reports.references import Reference, load_references
from structbench.reports.tables import write_tables
from structbench.reports.ties import best_and_ties
from structbench.specs import SeedStats, SuiteSpec
from structbench.store import Store

UNDEFINED = "metric not defined in the source: not comparable"
"""How a reported number of a metric its source does not define is marked."""

MARKS = {"best": " **best**", "tie": " ≈best", "": ""}
TIES_LEGEND = (
    "On each ranked split, **best** marks the best comparable model and ≈best those a paired bootstrap "
    "(seeds and examples, 95%) cannot tell from it."
)

RESULT_COLUMNS = [
    "suite", "version", "suite_hash", "model", "split", "metric", "breakdown", "level",
    "mean", "std", "min", "max", "ci_low", "ci_high", "interval", "n_seeds", "per_seed",
]  # fmt: skip


@dataclass
class SuiteBoard:
    """One suite version's leaderboard matrix."""

    spec: SuiteSpec
    suite_hash: str
    splits: list[str]
    ranked: list[str]
    """The test splits whose mean ranks the rows (the others are shown, not ranked)."""
    rows: list[tuple[str, dict[str, SeedStats | None]]] = field(default_factory=list)
    status: dict[str, str] = field(default_factory=dict)
    """model -> human summary of run statuses, e.g. `3 done, 1 failed`."""
    not_comparable: set[str] = field(default_factory=set)
    """Models that see test-time information (oracles): flagged, and ranked after the comparable ones."""
    references: list[Reference] = field(default_factory=list)
    """Published rows for this suite that report the primary metric on at least one shown split."""
    other_references: list[tuple[Reference, str, str, float]] = field(default_factory=list)
    """Published (row, metric, split, value) for the suite's other metrics."""
    best: dict[str, str] = field(default_factory=dict)
    """Ranked split -> the comparable model with the best mean on it."""
    ties: dict[str, set[str]] = field(default_factory=dict)
    """Ranked split -> the models a paired comparison cannot tell from its best (`structbench.reports.ties`)."""
    ties_note: str = ""
    """Why the models were not compared with the best, if they were not."""

    def mark(self, model: str, split: str) -> str:
        """`best`, `tie` (indistinguishable from the best) or "" for one cell."""
        if self.best.get(split) == model:
            return "best"
        return "tie" if model in self.ties.get(split, set()) else ""


def aggregate(store: Store, runs: pd.DataFrame | None = None) -> pd.DataFrame:
    """Every cell (suite, version, hash, model, split, metric, breakdown condition) of the current
    configurations, by the one cell function that `run --json` uses too; `runs` is
    `store.runs()` where the caller has read it already."""
    results = cells(current_configuration(store.scores(), store.runs() if runs is None else runs))
    return results[RESULT_COLUMNS]  # in cell-key order already


def _status_summary(runs: pd.DataFrame) -> dict[tuple[str, str, str, str], str]:
    """cell -> its runs' statuses, e.g. `3 done, 1 failed`."""
    parts: dict[tuple[str, str, str, str], list[str]] = {}
    for key, n in runs.groupby([*RUN_CELL, "status"]).size().items():
        suite, version, suite_hash, model, status = (str(part) for part in cast(tuple[object, ...], key))
        parts.setdefault((suite, version, suite_hash, model), []).append(f"{n} {status}")
    return {cell: ", ".join(statuses) for cell, statuses in parts.items()}


def _not_comparable(runs: pd.DataFrame) -> set[tuple[str, str, str, str]]:
    """The cells whose model the runner recorded as not comparable (it sees test-time information)."""
    flagged = runs[runs["comparable"] == 0]
    return {(str(s), str(v), str(h), str(m)) for s, v, h, m in flagged[RUN_CELL].itertuples(index=False)}


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


def _rank(row: tuple[str, dict[str, SeedStats | None]], board: SuiteBoard) -> tuple[bool, float, str]:
    """Comparable models first, then the best mean over the ranked splits (never a pooled
    duplicate of other splits), then the name."""
    means = [cell.mean for split, cell in row[1].items() if cell is not None and split in board.ranked]
    if not means:
        return (row[0] in board.not_comparable, math.inf, row[0])
    mean = sum(means) / len(means)
    return (row[0] in board.not_comparable, -mean if board.spec.higher_is_better else mean, row[0])


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


def boards(
    store: Store, results: pd.DataFrame, references: list[Reference] | None = None, runs: pd.DataFrame | None = None
) -> list[SuiteBoard]:
    specs = current_specs(store.suite_specs())
    runs = store.runs() if runs is None else runs
    runs = current_configuration(runs, runs)
    statuses = _status_summary(runs)
    not_comparable = _not_comparable(runs)
    whole_split = results[results.breakdown == ""]
    by_suite = dict(list(whole_split.groupby(["suite", "version", "suite_hash"])))
    out = []
    for (suite, version, suite_hash), spec in sorted(specs.items()):
        board = SuiteBoard(
            spec=spec,
            suite_hash=suite_hash,
            splits=[s.name for s in spec.splits_with_role("test")],
            ranked=[s.name for s in spec.ranked_splits],
        )
        mine = by_suite.get((suite, version, suite_hash), whole_split.iloc[:0])
        mine = mine[mine.metric == spec.primary_metric]
        keys = ["model", "split", *STAT_COLUMNS]  # read as columns: to_dict("records") is 3x slower
        rows = (dict(zip(keys, values, strict=True)) for values in zip(*(mine[k].tolist() for k in keys), strict=True))
        by_cell = {
            (str(row["model"]), str(row["split"])): as_stats(row) for row in rows
        }  # columns, not records: faster
        models = sorted({m for (s, v, h, m) in statuses if (s, v, h) == (suite, version, suite_hash)})
        for model in models:
            board.rows.append((model, {split: by_cell.get((model, split)) for split in board.splits}))
            board.status[model] = statuses[(suite, version, suite_hash, model)]
            if (suite, version, suite_hash, model) in not_comparable:
                board.not_comparable.add(model)
        board.rows.sort(key=partial(_rank, board=board))
        columns: dict[str, dict[str, SeedStats]] = {split: {} for split in board.ranked}
        for model, row_cells in board.rows:
            for split in board.ranked:
                if model not in board.not_comparable and (cell := row_cells[split]) is not None:
                    columns[split][model] = cell
        board.best, board.ties, board.ties_note = best_and_ties(store, spec, suite_hash, runs, columns)
        attach_references(board, references or [])
        out.append(board)
    return out


def breakable(name: str) -> markupsafe.Markup:
    """`name`, escaped, with line-break opportunities after underscores (long split names)."""
    return markupsafe.Markup("_<wbr>").join(markupsafe.escape(part) for part in name.split("_"))


def markdown_text(text: str) -> str:
    """Text safe in a Markdown table cell: HTML special characters escaped, pipes escaped."""
    return str(markupsafe.escape(text)).replace("|", "\\|")


def percent(value: float) -> str:
    return f"{100 * value:.1f}"


def method(cell: SeedStats) -> str:
    """The interval's method in a word: `t`, `Wilson` or `no interval`."""
    return "no interval" if cell.interval == "none" else cell.interval.split()[0]


def markdown_cell(cell: SeedStats) -> str:
    """`mean [low, high] (n seeds, method)` in percent."""
    interval = (
        "" if cell.ci_low is None or cell.ci_high is None else f" [{percent(cell.ci_low)}, {percent(cell.ci_high)}]"
    )
    seeds = f"{cell.n_seeds} seed{'s' if cell.n_seeds > 1 else ''}"
    return f"{percent(cell.mean)}{interval} ({seeds}, {method(cell)})"


def _claims_markdown(verdicts: list[Verdict]) -> list[str]:
    """The claims section: one row per claim."""
    if not verdicts:
        return []
    rows = [
        [markdown_text(v.claim.statement), markdown_text(v.claim.source), v.status, markdown_text(v.evidence)]
        for v in verdicts
    ]
    return [
        "## Claims",
        "",
        "Published findings checked on the measured cells: reproduced when the 95% intervals separate, "
        "not reproduced when the means contradict the claim, inconclusive otherwise.",
        "",
        tabulate(rows, headers=["claim", "source", "status", "evidence (%)"], tablefmt="github"),
        "",
    ]


def _markdown(board_list: list[SuiteBoard], verdicts: list[Verdict]) -> str:
    parts = ["# structbench leaderboard", "", *_claims_markdown(verdicts)]
    for board in board_list:
        parts += [
            f"## {board.spec.key} ({board.spec.primary_metric}, %; data {board.suite_hash[:12]})",
            "",
            "Cells: mean over seeds [95% interval] (seeds, method: t over seeds; Wilson over the test items "
            "for one seed or seeds that agree). Ranked by the mean over "
            + ", ".join(board.ranked)
            + ("" if board.spec.higher_is_better else " (lower is better)")
            + "; split roles: "
            + ", ".join(f"{s} {board.spec.split(s).test_role}" for s in board.splits)
            + ". "
            + TIES_LEGEND
            + (f" ({markdown_text(board.ties_note)})" if board.ties_note else ""),
            "",
        ]
        table = []
        for model, row_cells in board.rows:
            row = [markdown_text(model) + (" (not comparable)" if model in board.not_comparable else "")]
            for split in board.splits:
                c = row_cells[split]
                row.append((markdown_cell(c) + MARKS[board.mark(model, split)]) if c else "n/a")
            table.append(row)
        for reference in board.references:
            row = [f"*{markdown_text(reference.model)}* (reported, {markdown_text(reference.where)})"]
            for split in board.splits:
                value = reference.value(board.spec.primary_metric, split)
                row.append("" if value is None else percent(value))
            table.append(row)
        parts += [tabulate(table, headers=["model", *board.splits], tablefmt="github"), ""]
        citations = sorted({r.citation for r in board.references})
        if citations:
            parts += [
                "Reported rows are published numbers, not measured here: " + "; ".join(map(markdown_text, citations)),
                "",
            ]
        for reference, metric, split, value in board.other_references:
            parts.append(
                f"- reported {markdown_text(metric)} on {markdown_text(split)}: {percent(value)}, "
                f"*{markdown_text(reference.model)}* ({markdown_text(reference.citation)}, {markdown_text(reference.where)})"
                + (f"; {UNDEFINED}" if metric in reference.undefined_metrics else "")
            )
        if board.other_references:
            parts.append("")
    return "\n".join(parts)


def write_report(store: Store, out_dir: Path) -> Path:
    """Write the four report files into `out_dir` and return the path of `index.html`."""
    out_dir = Path(out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    runs = store.runs()
    results = aggregate(store, runs)
    references = load_references()
    board_list = boards(store, results, references, runs)
    write_tables(results, out_dir)
    verdicts = check_all(results)
    (out_dir / "leaderboard.md").write_text(_markdown(board_list, verdicts), encoding="utf-8")
    (out_dir / "references.json").write_text(
        json.dumps([r.model_dump() for r in references], indent=1, ensure_ascii=False), encoding="utf-8"
    )
    environment = jinja2.Environment(
        loader=jinja2.PackageLoader("structbench.reports", "templates"),
        autoescape=True,
        undefined=jinja2.StrictUndefined,
        trim_blocks=True,
        lstrip_blocks=True,
    )
    environment.filters["percent"] = percent
    environment.filters["breakable"] = breakable
    environment.filters["method"] = method
    environment.globals["undefined_label"] = UNDEFINED
    html = environment.get_template("index.html.j2").render(boards=board_list, verdicts=verdicts, version=__version__)
    index = out_dir / "index.html"
    index.write_text(html, encoding="utf-8")
    return index
