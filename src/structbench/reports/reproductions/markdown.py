"""`docs/reproductions.md` written: the page's content (`structbench.reports.reproductions.page`)
rendered by its template (`templates/reproductions.md.j2`, beside this module) as Markdown, every
value from a store or a references file escaped for its table cell, and the file replaced whole.
"""

from __future__ import annotations

import os
import re
from pathlib import Path

import jinja2

from structbench.analysis.significance import RULE as VERDICT_RULE
from structbench.reports.reproductions.page import cells_named, reproductions_page
from structbench.store import StoreReader

TEMPLATE = "reproductions.md.j2"


ENTITY = re.compile(r"&(?=#?[A-Za-z0-9]+;)")
"""An `&` that would begin an HTML entity."""


TAG = re.compile(r"<(?=[A-Za-z/!?])")
"""A `<` that would begin an HTML tag (`< 0.99` begins none)."""


def _text(text: str) -> str:
    """`text` safe in Markdown, in a table cell too: no HTML tag or entity starts in it and pipes are
    escaped; quotes, a lone `&` and `< 0.99` stay as they are, so that the page reads as well in a text
    editor as on GitHub."""
    return TAG.sub("&lt;", ENTITY.sub("&amp;", text)).replace("|", "\\|")


def _code(text: str) -> str:
    """`text` as a code span in a Markdown table cell: a fence longer than any run of backticks in it,
    and pipes escaped (GitHub splits table cells on them even inside code spans)."""
    fence = "`" * (1 + max((len(run) for run in re.findall(r"`+", text)), default=0))
    padded = f" {text} " if text.startswith("`") or text.endswith("`") else text
    return f"{fence}{padded}{fence}".replace("|", "\\|")


def environment() -> jinja2.Environment:
    """The page's template environment: Markdown, so no HTML autoescape; table cells go through the
    `text` filter (HTML and pipes escaped) or the `code` filter (a code span, pipes escaped)."""
    env = jinja2.Environment(
        loader=jinja2.PackageLoader("structbench.reports.reproductions", "templates"),
        autoescape=False,
        undefined=jinja2.StrictUndefined,
        trim_blocks=True,
        lstrip_blocks=True,
        keep_trailing_newline=True,
    )
    env.filters["text"] = _text
    env.filters["code"] = _code
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
