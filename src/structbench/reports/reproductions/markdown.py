"""`docs/reproductions.md` written: the page's content (`structbench.reports.reproductions.page`)
rendered by its template (`templates/reproductions.md.j2`, beside this module) as Markdown, every
value from a store or a references file escaped for its table cell, and the file replaced whole.
"""

from __future__ import annotations

import os
from pathlib import Path

import jinja2

from structbench.analysis.significance import RULE as VERDICT_RULE
from structbench.reports.escaping import markdown_code, markdown_prose
from structbench.reports.reproductions.page import cells_named, reproductions_page
from structbench.store import StoreReader

TEMPLATE = "reproductions.md.j2"


def environment() -> jinja2.Environment:
    """The page's template environment: Markdown, so no HTML autoescape; table cells go through the
    `text` filter (HTML and pipes escaped, one line) or the `code` filter (a code span, pipes
    escaped, one line), both of `structbench.reports.escaping`."""
    env = jinja2.Environment(
        loader=jinja2.PackageLoader("structbench.reports.reproductions", "templates"),
        autoescape=False,
        undefined=jinja2.StrictUndefined,
        trim_blocks=True,
        lstrip_blocks=True,
        keep_trailing_newline=True,
    )
    env.filters["text"] = markdown_prose
    env.filters["code"] = markdown_code
    env.globals["cells_named"] = cells_named
    env.globals["verdict_rule"] = VERDICT_RULE
    return env


def reproductions_markdown(store: StoreReader, *, grid: str, command: str | None = None) -> str:
    """The page's Markdown from `store` (the reference bundle's runs), made by `grid`'s sweep,
    `command` (default `structbench sweep GRID`)."""
    page = reproductions_page(store, grid=grid, command=command)
    return environment().get_template(TEMPLATE).render(page=page)


def write_reproductions(store: StoreReader, out: Path, *, grid: str, command: str | None = None) -> None:
    """Write the page to `out` (replaced whole, never half written)."""
    text = reproductions_markdown(store, grid=grid, command=command)
    out.parent.mkdir(parents=True, exist_ok=True)
    partial = out.with_name(out.name + ".partial")
    partial.write_text(text, encoding="utf-8")
    os.replace(partial, out)
