"""The leaderboard site: a static folder rendered from the results store (Jinja2, autoescaped).

Layout of `--out DIR`, every page readable with no network (no CDN, no font or script from
elsewhere), from any static host or opened from disk:

- `index.html`: the overview. A models x suites matrix of each suite's ranked generalisation
  metric (`structbench.reports.overview`), suites grouped by family, with a colour scale; the
  generalisation-gap view (plot and table); the learning curves of suite series
  (`structbench.reports.series`); ceilings and not-comparable models set apart; suites without
  results listed with the reason; the claims.
- `suites/ID@VERSION.html`: one page per suite version and data hash: its card
  (`structbench.reports.cards`), the ranked table with compute and failed runs, per-condition
  plots (`structbench.reports.conditions`, drawn by `structbench.reports.plots`), published
  numbers and claims.
- `errors/SUITE.html`: what each model got wrong, filterable (`structbench.reports.error_browser`), with
  each model's predictions in `errors/SUITE/MODEL.js` and the examples in `data/`.
- `results.csv`, `results.json` (every cell; schema in the README), `leaderboard.md`,
  `references.json`.

`--suites` and `--models` take ids and labels or shell patterns (`seq2seq*`), so that
debugging runs stay out of a published site.
"""

from __future__ import annotations

import fnmatch
import json
import shutil
from collections.abc import Sequence
from dataclasses import dataclass
from importlib import resources
from pathlib import Path

import jinja2
import markupsafe
import pandas as pd

from structbench import __version__, registry
from structbench.analysis.claims import Verdict, check_all, claim_cells
from structbench.analysis.references import load_references
from structbench.cells import current_configuration
from structbench.data import freeze, sources
from structbench.errors import UserError
from structbench.reports.boards import SuiteBoard, boards, cell_table
from structbench.reports.cards import SuiteCard, suite_card
from structbench.reports.conditions import Condition, conditions
from structbench.reports.error_browser import ErrorPage, write_error_data
from structbench.reports.markdown import UNDEFINED, leaderboard_markdown, method, percent
from structbench.reports.overview import OverviewRow, Summary, overview_rows, summarise
from structbench.reports.plots import OTHER, PALETTE, PLOTTED, Drawing, GapPlot, Line, LinePlot, Plot
from structbench.reports.series import Curve, curves
from structbench.reports.tables import write_tables
from structbench.store import Store

DEFAULT_TITLE = "structbench leaderboard"
SITE_MARKER = ".structbench-site"
"""Marks a folder as a site a report wrote, so that a report never deletes anything else's files."""
SITE_NAMES = {
    SITE_MARKER, "index.html", "leaderboard.md", "results.csv", "results.json", "references.json",
    "suites", "errors", "plots", "data", "static",
}  # fmt: skip
"""Everything a report writes at the top of its folder."""
FAMILIES = ["systematicity", "agreement", "lookup", "completion", "pos-induction"]
"""The overview's column groups, in this order (other families follow alphabetically)."""
SCALE = [
    "#ffffd9", "#edf8b1", "#c7e9b4", "#7fcdbb", "#41b6c4", "#1d91c0", "#225ea8", "#253494", "#081d58",
]  # fmt: skip
"""ColorBrewer's YlGnBu, 9 classes (Brewer, colorbrewer2.org): the overview's colour scale, light = low."""


@dataclass
class PlotView:
    """One per-condition plot as a page shows it."""

    condition: Condition
    path: str
    """The SVG, relative to the site root; empty when the condition is shown as a table only."""
    plotted: list[tuple[str, str]]
    """(model, colour) of the lines drawn, in legend order."""


def _matches(value: str, patterns: Sequence[str] | None) -> bool:
    return patterns is None or any(fnmatch.fnmatchcase(value, pattern) for pattern in patterns)


def _select(frame: pd.DataFrame, suites: Sequence[str] | None, models: Sequence[str] | None) -> pd.DataFrame:
    """The rows of `frame` (runs or scores) whose suite and model match; the patterns are tried on
    each distinct name once, not on each of the score rows."""
    for column, patterns in (("suite", suites), ("model", models)):
        if patterns is not None:
            names = [name for name in frame[column].unique().tolist() if _matches(str(name), patterns)]
            frame = frame[frame[column].isin(names)]
    return frame


def scale_colour(value: float, higher_is_better: bool) -> tuple[str, str]:
    """(background, text colour) of a cell of `value` (a fraction) on the overview's colour scale."""
    goodness = min(max(value if higher_is_better else 1 - value, 0.0), 1.0)
    index = min(int(goodness * len(SCALE)), len(SCALE) - 1)
    return SCALE[index], "#ffffff" if index >= 5 else "#1d2330"


def _family_order(board: SuiteBoard) -> tuple[int, str, str]:
    family = board.spec.family
    return (FAMILIES.index(family) if family in FAMILIES else len(FAMILIES), family, board.slug)


def _skipped(board_list: list[SuiteBoard], suites: Sequence[str] | None) -> list[tuple[str, str]]:
    """(suite key, why it has no results) of every installed suite the site would show but has no board."""
    shown = {board.spec.id for board in board_list}
    out = []
    for name in registry.suite_names():
        if name in shown or not _matches(name, suites):
            continue
        suite = registry.suite(name)
        user_files = [source for source in suite.sources if not source.sha256]
        missing = [source.path for source in suite.sources if source.sha256 and not sources.is_local(source)]
        if user_files:
            reason = "needs your own copy of licensed data (" + ", ".join(s.path for s in user_files) + ")"
        elif freeze.built_manifest(suite) is not None:
            reason = "no runs in this store"
        elif missing:
            reason = (
                f"not built here: {len(missing)} published file{'s are' if len(missing) > 1 else ' is'} not on this "
                f"machine ({missing[0]}{', …' if len(missing) > 1 else ''}); `structbench build {suite.spec.id}` "
                "downloads them from their pinned addresses"
            )
        else:
            reason = "no runs in this store, and not built here"
        out.append((suite.spec.key, reason))
    return out


def _plot_views(
    board: SuiteBoard, board_conditions: list[Condition], plot_dir: str
) -> tuple[list[PlotView], dict[str, Plot]]:
    """The board's plot views and the plots to draw for them (path relative to the site root -> plot)."""
    plotted = [model for model, _ in board.ranked_rows][:PLOTTED]
    colours = dict(zip(plotted, PALETTE, strict=False))
    views: list[PlotView] = []
    jobs: dict[str, Plot] = {}
    for index, condition in enumerate(board_conditions):
        lines = [
            Line(
                model,
                colours[model],
                [None if c is None else c.mean for c in condition.cells[model]],
                [None if c is None else c.ci_low for c in condition.cells[model]],
                [None if c is None else c.ci_high for c in condition.cells[model]],
            )
            for model in plotted
            if any(c is not None for c in condition.cells[model])
        ]
        if not lines or not condition.plotted:
            views.append(PlotView(condition, "", []))
            continue
        path = f"{plot_dir}/{board.slug}-{index}.svg"
        jobs[path] = LinePlot(condition.axis, f"{board.spec.primary_metric} (%)", condition.levels, lines)
        views.append(PlotView(condition, path, [(line.label, line.colour) for line in lines]))
    return views, jobs


def _environment() -> jinja2.Environment:
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
    environment.filters["seconds"] = seconds
    environment.filters["count"] = count
    environment.globals["undefined_label"] = UNDEFINED
    environment.globals["scale_colour"] = scale_colour
    environment.globals["version"] = __version__
    return environment


def breakable(name: str) -> markupsafe.Markup:
    """`name`, escaped, with line-break opportunities after underscores (long split names)."""
    return markupsafe.Markup("_<wbr>").join(markupsafe.escape(part) for part in name.split("_"))


def seconds(value: float | None) -> str:
    """A duration in a few characters: `0.4 s`, `12 s`, `3.2 min`, `1.5 h`."""
    if value is None:
        return "–"
    if value < 10:
        return f"{value:.1f} s"
    if value < 600:
        return f"{value:.0f} s"
    return f"{value / 60:.1f} min" if value < 36_000 else f"{value / 3600:.1f} h"


def count(value: int | None) -> str:
    """A parameter count in a few characters: `950`, `12.3k`, `4.1M`."""
    if value is None:
        return "–"
    if value < 1000:
        return str(value)
    return f"{value / 1e3:.1f}k" if value < 1e6 else f"{value / 1e6:.1f}M"


def _copy_static(out_dir: Path) -> None:
    static = out_dir / "static"
    static.mkdir(parents=True, exist_ok=True)
    for item in resources.files("structbench.reports").joinpath("static").iterdir():
        if item.name.endswith((".css", ".js")):
            (static / item.name).write_text(item.read_text(encoding="utf-8"), encoding="utf-8")


def _is_site(folder: Path) -> bool:
    """Whether `folder` holds a site a report wrote: its marker, or (written before the marker was)
    an `index.html` and nothing but what a report writes."""
    names = {path.name for path in folder.iterdir()}
    return SITE_MARKER in names or ("index.html" in names and names <= SITE_NAMES)


def write_report(
    store: Store,
    out_dir: Path,
    *,
    suites: Sequence[str] | None = None,
    models: Sequence[str] | None = None,
    title: str = DEFAULT_TITLE,
) -> Path:
    """Write the site into `out_dir` (created; files of an earlier site are replaced, its example
    scripts reused) and return the path of `index.html`. `suites` and `models` keep only the
    matching suite ids and model labels (shell patterns)."""
    out_dir = Path(out_dir)
    if out_dir.exists() and not out_dir.is_dir():
        raise UserError(f"--out {out_dir} is a file; give a folder for the site.")
    if out_dir.is_dir() and any(out_dir.iterdir()) and not _is_site(out_dir):
        raise UserError(
            f"--out {out_dir} holds files that no structbench report wrote; give an empty or new folder "
            "(a report replaces the pages of the site it finds there)."
        )
    out_dir.mkdir(parents=True, exist_ok=True)
    (out_dir / SITE_MARKER).write_text("written by structbench report; its pages are replaced on the next one\n")
    for stale in ("suites", "errors", "plots"):  # pages of suites or models no longer shown must not linger
        shutil.rmtree(out_dir / stale, ignore_errors=True)
    (out_dir / "suites").mkdir()
    (out_dir / "plots").mkdir()
    runs = _select(store.runs(), suites, models)
    if runs.empty and (suites or models):
        raise UserError(
            f"no runs in {store.path} match "
            + " and ".join(
                f"--{what} {' '.join(given)}" for what, given in (("suites", suites), ("models", models)) if given
            )
            + "; give suite ids and model labels as the report shows them (shell patterns such as 'scan-*' work)."
        )
    scores = current_configuration(_select(store.scores(), suites, models), runs)
    results = cell_table(scores)
    references = [r for r in load_references() if _matches(r.suite, suites)]
    board_list = sorted(boards(store, results, references, runs), key=_family_order)
    summaries = summarise(scores, board_list)
    rows = overview_rows(summaries)
    curve_list = curves(summaries)

    breakdowns = results[results.breakdown != ""]
    by_board = dict(list(breakdowns.groupby(["suite", "version", "suite_hash"])))
    plot_views: dict[str, list[PlotView]] = {}
    jobs: dict[str, Plot] = {}
    for board in board_list:
        mine = by_board.get((board.spec.id, board.spec.version, board.suite_hash), breakdowns.iloc[:0])
        views, board_jobs = _plot_views(
            board, conditions(board, mine[mine.metric == board.spec.primary_metric]), "plots"
        )
        plot_views[board.slug] = views
        jobs.update(board_jobs)
    gap_colours = {row.model: colour for row, colour in zip(rows, PALETTE, strict=False) if not row.apart}
    gap_points = [
        (within.mean, summary.cells["generalisation"][model].mean, gap_colours.get(model, OTHER))
        for summary in summaries
        if summary.board.generalises
        for model, within in summary.cells["in-distribution"].items()
        if model in summary.cells["generalisation"]
    ]
    if gap_points:
        jobs["plots/gap.svg"] = GapPlot(gap_points)
    for curve in curve_list:
        curve.path = f"plots/{curve.anchor}.svg"
        jobs[curve.path] = curve.plot(f"{curve.boards[0].spec.primary_metric} (%)")
    plotting = Drawing({out_dir / path: plot for path, plot in jobs.items()})

    error_pages = write_error_data(store, runs, board_list, out_dir)
    verdicts = check_all(claim_cells(results, runs))
    write_tables(results, out_dir)
    (out_dir / "leaderboard.md").write_text(leaderboard_markdown(board_list, verdicts), encoding="utf-8")
    (out_dir / "references.json").write_text(
        json.dumps([r.model_dump() for r in references], indent=1, ensure_ascii=False), encoding="utf-8"
    )
    _copy_static(out_dir)
    cards = {board.slug: suite_card(board.spec, board.suite_hash) for board in board_list}
    _write_pages(
        out_dir, title, board_list, summaries, rows, gap_colours, bool(gap_points),
        _skipped(board_list, suites), verdicts, plot_views, cards, error_pages, curve_list,
    )  # fmt: skip
    plotting.wait()
    return out_dir / "index.html"


def _write_pages(
    out_dir: Path,
    title: str,
    board_list: list[SuiteBoard],
    summaries: list[Summary],
    rows: list[OverviewRow],
    gap_colours: dict[str, str],
    has_gap_plot: bool,
    skipped: list[tuple[str, str]],
    verdicts: list[Verdict],
    plot_views: dict[str, list[PlotView]],
    cards: dict[str, SuiteCard],
    error_pages: list[ErrorPage],
    curve_list: list[Curve],
) -> None:
    environment = _environment()
    families: list[tuple[str, list[SuiteBoard]]] = []
    for board in board_list:
        if not families or families[-1][0] != board.spec.family:
            families.append((board.spec.family, []))
        families[-1][1].append(board)
    gap_boards = [
        s for s in summaries if s.board.generalises and s.cells["in-distribution"] and s.cells["generalisation"]
    ]
    errors_of = {page.board.slug: page for page in error_pages}
    common = {"title": title, "families": families}
    index = environment.get_template("index.html.j2").render(
        root="", boards=board_list, summaries=summaries, rows=rows, gap_boards=gap_boards,
        gap_colours=gap_colours, has_gap_plot=has_gap_plot, skipped=skipped, verdicts=verdicts, curves=curve_list,
        **common,
    )  # fmt: skip
    (out_dir / "index.html").write_text(index, encoding="utf-8")
    suite_page = environment.get_template("suite.html.j2")
    for board in board_list:
        html = suite_page.render(
            root="../", board=board, card=cards[board.slug], plots=plot_views[board.slug],
            verdicts=[v for v in verdicts if v.claim.suite == board.spec.id], errors=errors_of.get(board.slug),
            curves=[(c, x) for c in curve_list if (x := c.x_of(board)) is not None], **common,
        )  # fmt: skip
        (out_dir / "suites" / f"{board.slug}.html").write_text(html, encoding="utf-8")
    error_page = environment.get_template("errors.html.j2")
    for page in error_pages:
        html = error_page.render(root="../", page=page, board=page.board, **common)
        (out_dir / page.path).write_text(html, encoding="utf-8")
