"""Rendering the leaderboard from the results store alone.

Per (suite, version, data hash): a model x test-split matrix of the suite's primary metric,
mean over seeds with its 95% bootstrap CI and the number of seeds. Cells of different data
hashes are never merged. Published numbers (`references.yaml`) follow as reference rows,
marked as reported and never ranked with measured rows. Outputs: `index.html` (Jinja2,
autoescaped), `leaderboard.md` (tabulate), `results.csv` and `results.json` (every metric,
every split) and `references.json` (the published numbers).
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass, field
from pathlib import Path

import jinja2
import markupsafe
import pandas as pd
from tabulate import tabulate

from harness import __version__
from harness.scoring import seed_stats
from harness.specs import SeedStats, SuiteSpec
from harness.store import Store
from reports.references import Reference, load_references

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
    references: list[Reference] = field(default_factory=list)
    """Published rows for this suite that report the primary metric on at least one shown split."""
    other_references: list[tuple[Reference, str, str, float]] = field(default_factory=list)
    """Published (row, metric, split, value) for the suite's other metrics."""


def aggregate(store: Store) -> pd.DataFrame:
    """Every (suite, version, hash, model, split, metric) aggregated over its seeds."""
    scores = store.scores()
    records = []
    keys = ["suite", "version", "suite_hash", "model", "split", "metric"]
    for key, group in scores.groupby(keys, sort=True):
        values = group.sort_values("seed")["value"].dropna().tolist()
        if not values:
            continue
        stats = seed_stats(values)
        records.append({**dict(zip(keys, key, strict=True)), **stats.model_dump()})
    return pd.DataFrame.from_records(records, columns=RESULT_COLUMNS)


def _status_summary(store: Store) -> dict[tuple[str, str, str, str], str]:
    runs = store.runs()
    out = {}
    for key, group in runs.groupby(["suite", "version", "suite_hash", "model"]):
        counts = group["status"].value_counts()
        suite, version, suite_hash, model = (str(part) for part in key)
        out[(suite, version, suite_hash, model)] = ", ".join(f"{n} {status}" for status, n in sorted(counts.items()))
    return out


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


def boards(store: Store, results: pd.DataFrame, references: list[Reference] | None = None) -> list[SuiteBoard]:
    specs = store.suite_specs()
    statuses = _status_summary(store)
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

        def rank(item: tuple[str, dict[str, SeedStats | None]]) -> tuple[float, str]:
            means = [c.mean for c in item[1].values() if c is not None]
            return (-(sum(means) / len(means)) if means else math.inf, item[0])

        board.rows.sort(key=rank)
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
            row = [markdown_text(model)]
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
