"""Rendering the leaderboard from the results store alone.

Per (suite, version, data hash): a model x test-split matrix of the suite's primary metric,
mean over seeds with its 95% bootstrap CI and the number of seeds. Cells of different data
hashes are never merged. When a model's configuration changed (a neural baseline's recipe),
only the runs of its newest configuration are shown; the older ones stay in the store.
Models that see test-time information (oracle guidance) are flagged as not comparable and
ranked after the rest. Published numbers (`references.yaml`) follow as reference rows,
marked as reported and never ranked with measured rows. Outputs: `index.html` (Jinja2,
autoescaped), `leaderboard.md` (tabulate), `results.csv` and `results.json` (every metric,
every split) and `references.json` (the published numbers).
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass, field
from functools import partial
from pathlib import Path

import jinja2
import markupsafe
import pandas as pd
from tabulate import tabulate

from structbench import __version__
from structbench.reports.references import Reference, load_references
from structbench.scoring import seed_stats
from structbench.specs import SeedStats, SuiteSpec
from structbench.store import Store

RESULT_COLUMNS = [
    "suite", "version", "suite_hash", "model", "split", "metric",
    "mean", "std", "min", "max", "ci_low", "ci_high", "n_seeds", "per_seed",
]  # fmt: skip


@dataclass
class SuiteBoard:
    """One suite version's leaderboard matrix."""

    spec: SuiteSpec
    suite_hash: str
    splits: list[str]
    rows: list[tuple[str, dict[str, SeedStats | None]]] = field(default_factory=list)
    status: dict[str, str] = field(default_factory=dict)
    """model -> human summary of run statuses, e.g. `3 done, 1 failed`."""
    not_comparable: set[str] = field(default_factory=set)
    """Models that see test-time information (oracles): flagged, and ranked after the comparable ones."""
    references: list[Reference] = field(default_factory=list)
    """Published rows for this suite that report the primary metric on at least one shown split."""
    other_references: list[tuple[Reference, str, str, float]] = field(default_factory=list)
    """Published (row, metric, split, value) for the suite's other metrics."""


CELL = ["suite", "version", "suite_hash", "model"]


def current_configuration(frame: pd.DataFrame, runs: pd.DataFrame) -> pd.DataFrame:
    """The rows of `frame` whose model hash is that of the newest run of their cell.

    A model label names one configuration at a time: runs made before its recipe changed
    are kept in the store but are not mixed into the seeds of the current one.
    """
    newest = runs.sort_values("id").groupby(CELL, as_index=False)["model_hash"].last()
    return frame.merge(newest, on=[*CELL, "model_hash"], how="inner")


def aggregate(store: Store) -> pd.DataFrame:
    """Every (suite, version, hash, model, split, metric) of the current configurations, aggregated over seeds."""
    scores = current_configuration(store.scores(), store.runs())
    records = []
    keys = [*CELL, "split", "metric"]
    for key, group in scores.groupby(keys, sort=True):
        values = group.sort_values("seed")["value"].dropna().tolist()
        if not values:
            continue
        stats = seed_stats(values)
        records.append({**dict(zip(keys, key, strict=True)), **stats.model_dump()})
    return pd.DataFrame.from_records(records, columns=RESULT_COLUMNS)


def _status_summary(runs: pd.DataFrame) -> dict[tuple[str, str, str, str], str]:
    out = {}
    for key, group in runs.groupby(CELL):
        counts = group["status"].value_counts()
        suite, version, suite_hash, model = (str(part) for part in key)
        out[(suite, version, suite_hash, model)] = ", ".join(f"{n} {status}" for status, n in sorted(counts.items()))
    return out


def _not_comparable(runs: pd.DataFrame) -> set[tuple[str, str, str, str]]:
    """The cells whose model the runner recorded as not comparable (`"comparable": false` in its spec)."""
    flagged = runs[runs["model_spec"].map(lambda text: json.loads(text).get("comparable", True) is False)]
    return {(str(s), str(v), str(h), str(m)) for s, v, h, m in flagged[CELL].itertuples(index=False)}


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


def _rank(row: tuple[str, dict[str, SeedStats | None]], not_comparable: set[str]) -> tuple[bool, float, str]:
    """Comparable models first, then the best mean over the shown splits, then the name."""
    means = [cell.mean for cell in row[1].values() if cell is not None]
    return (row[0] in not_comparable, -(sum(means) / len(means)) if means else math.inf, row[0])


def boards(store: Store, results: pd.DataFrame, references: list[Reference] | None = None) -> list[SuiteBoard]:
    specs = store.suite_specs()
    runs = store.runs()
    runs = current_configuration(runs, runs)
    statuses = _status_summary(runs)
    not_comparable = _not_comparable(runs)
    out = []
    for (suite, version, suite_hash), spec in sorted(specs.items()):
        board = SuiteBoard(spec=spec, suite_hash=suite_hash, splits=[s.name for s in spec.splits_with_role("test")])
        mine = results[
            (results.suite == suite)
            & (results.version == version)
            & (results.suite_hash == suite_hash)
            & (results.metric == spec.primary_metric)
        ]
        models = sorted({m for (s, v, h, m) in statuses if (s, v, h) == (suite, version, suite_hash)})
        for model in models:
            cells: dict[str, SeedStats | None] = {}
            for split in board.splits:
                row = mine[(mine.model == model) & (mine.split == split)]
                cells[split] = SeedStats(**{k: row.iloc[0][k] for k in SeedStats.model_fields}) if len(row) else None
            board.rows.append((model, cells))
            board.status[model] = statuses[(suite, version, suite_hash, model)]
            if (suite, version, suite_hash, model) in not_comparable:
                board.not_comparable.add(model)
        board.rows.sort(key=partial(_rank, not_comparable=board.not_comparable))
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


def _markdown(board_list: list[SuiteBoard]) -> str:
    parts = ["# structbench leaderboard", ""]
    for board in board_list:
        parts += [
            f"## {board.spec.key} ({board.spec.primary_metric}, %; data {board.suite_hash[:12]})",
            "",
            "Cells: mean over seeds [95% bootstrap CI] (seeds).",
            "",
        ]
        table = []
        for model, cells in board.rows:
            row = [markdown_text(model) + (" (not comparable)" if model in board.not_comparable else "")]
            for split in board.splits:
                c = cells[split]
                row.append(
                    f"{percent(c.mean)} [{percent(c.ci_low)}, {percent(c.ci_high)}] ({c.n_seeds})" if c else "n/a"
                )
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
            )
        if board.other_references:
            parts.append("")
    return "\n".join(parts)


def write_report(store: Store, out_dir: Path) -> Path:
    """Write the four report files into `out_dir` and return the path of `index.html`."""
    out_dir = Path(out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    results = aggregate(store)
    references = load_references()
    board_list = boards(store, results, references)
    results.to_csv(out_dir / "results.csv", index=False)
    results.to_json(out_dir / "results.json", orient="records", indent=1, double_precision=15)
    (out_dir / "leaderboard.md").write_text(_markdown(board_list), encoding="utf-8")
    (out_dir / "references.json").write_text(
        json.dumps([r.model_dump() for r in references], indent=1, ensure_ascii=False), encoding="utf-8"
    )
    environment = jinja2.Environment(
        loader=jinja2.PackageLoader("reports", "templates"),
        autoescape=True,
        undefined=jinja2.StrictUndefined,
        trim_blocks=True,
        lstrip_blocks=True,
    )
    environment.filters["percent"] = percent
    environment.filters["breakable"] = breakable
    html = environment.get_template("index.html.j2").render(boards=board_list, version=__version__)
    index = out_dir / "index.html"
    index.write_text(html, encoding="utf-8")
    return index
