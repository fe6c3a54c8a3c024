"""`structbench report`: the leaderboard site, a static folder built from the results store and
written into `--out DIR` (`write_report` = `build_site`, then `write_site`).

Three stages, each with one job: the build (`structbench.reports.site`) reads the store into one
`Site` value; the views (`structbench.reports.views`) turn it into page contexts and plots; the
writers (`structbench.reports.writers`) write the files. Layout of the folder:

- `index.html`: the overview. A models x suites matrix of each model's suite score
  (`structbench.analysis.suite_score`), suites grouped by family, with a colour scale; the
  generalisation-gap view (plot and table); the learning curves of suite series
  (`structbench.reports.series`); ceilings and not-comparable models set apart; suites without
  results listed with the reason; the claims.
- `suites/ID@VERSION.html`: one page per suite version and data hash: its card
  (`structbench.reports.cards`), the table ranked by the same suite score with compute and failed
  runs, per-condition plots (`structbench.reports.conditions`, drawn by
  `structbench.reports.writers.plots`), published numbers and claims.
- `errors/SUITE.html`: what each model got wrong, filterable (`structbench.reports.writers.error_browser`),
  with each model's predictions in `errors/SUITE/MODEL.js` and the examples in `data/`.
- `results.csv`, `results.json` (every cell; schema in the README), `leaderboard.md`,
  `references.json`.
"""

from __future__ import annotations

import json
import shutil
from collections.abc import Sequence
from pathlib import Path

from structbench.errors import UserError
from structbench.reports.site import DEFAULT_TITLE, Site, build_site
from structbench.reports.views.pages import pages
from structbench.reports.writers.error_browser import write_error_data
from structbench.reports.writers.html import copy_static, write_pages
from structbench.reports.writers.markdown import leaderboard_markdown
from structbench.reports.writers.plots import Drawing
from structbench.reports.writers.tables import write_tables
from structbench.store import Store

SITE_MARKER = ".structbench-site"
"""Marks a folder as a site a report wrote, so that a report never deletes anything else's files."""
SITE_NAMES = {
    SITE_MARKER, "index.html", "leaderboard.md", "results.csv", "results.json", "references.json",
    "suites", "errors", "plots", "data", "static",
}  # fmt: skip
"""Everything a report writes at the top of its folder."""


def _is_site(folder: Path) -> bool:
    """Whether `folder` holds a site a report wrote: its marker, or (written before the marker was)
    an `index.html` and nothing but what a report writes."""
    names = {path.name for path in folder.iterdir()}
    return SITE_MARKER in names or ("index.html" in names and names <= SITE_NAMES)


def _prepare(out_dir: Path) -> None:
    """Make `out_dir` ready for a site: created, marked, and without the pages of an earlier site's
    suites or models (its example scripts are kept for reuse); refused when it holds other files."""
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


def write_site(site: Site, out_dir: Path) -> Path:
    """Write every file of `site` into `out_dir` (prepared by `_prepare`) and return the path of `index.html`."""
    views = pages(site)
    plotting = Drawing({out_dir / path: plot for path, plot in views.plots.items()})  # drawn while the rest is written
    write_error_data(site, views.errors, out_dir)
    write_tables(site.results, out_dir)
    (out_dir / "leaderboard.md").write_text(
        leaderboard_markdown(list(site.boards), list(site.verdicts)), encoding="utf-8"
    )
    (out_dir / "references.json").write_text(
        json.dumps([r.model_dump() for r in site.references], indent=1, ensure_ascii=False), encoding="utf-8"
    )
    copy_static(out_dir)
    write_pages(views, out_dir)
    plotting.wait()
    return out_dir / "index.html"


def write_report(
    store: Store,
    out_dir: Path,
    *,
    suites: Sequence[str] | None = None,
    models: Sequence[str] | None = None,
    title: str = DEFAULT_TITLE,
) -> Path:
    """Write the site of `store` into `out_dir` (created; files of an earlier site are replaced, its
    example scripts reused) and return the path of `index.html`. `suites` and `models` keep only the
    matching suite ids and model labels (shell patterns)."""
    out_dir = Path(out_dir)
    _prepare(out_dir)
    return write_site(build_site(store, suites=suites, models=models, title=title), out_dir)
