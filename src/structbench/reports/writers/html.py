"""The HTML pages: each page context (`structbench.reports.views.pages`) rendered by its Jinja2
template (autoescaped; undefined names are errors), and the static files the pages load.

Every page is readable with no network (no CDN, no font or script from elsewhere), from any static
host or opened from disk.

The compiled templates are kept in Jinja's cache in the user's temporary folder
(`jinja2.FileSystemBytecodeCache`: keyed by each template's source checksum and the Python
version), so that a report does not compile them again; a cache that cannot be read or written
only means they are compiled.
"""

from __future__ import annotations

import contextlib
import dataclasses
from importlib import resources
from pathlib import Path
from typing import Any

import jinja2

from structbench.analysis.significance import RULE as VERDICT_RULE
from structbench.reports.builders.families import KINDS, SPARK_HEIGHT, SPARK_WIDTH
from structbench.reports.builders.overview import MIN_SHARED
from structbench.reports.views.format import (
    UNDEFINED,
    breakable,
    count,
    link,
    made_by,
    method,
    percent,
    scale_colour,
    seconds,
)
from structbench.reports.views.pages import Pages


class _TemplateCache(jinja2.FileSystemBytecodeCache):
    """Jinja's cache of compiled templates, in its own folder of the temporary folder, that never fails a report."""

    def dump_bytecode(self, bucket: jinja2.bccache.Bucket) -> None:
        with contextlib.suppress(OSError):  # a full disk, or the folder removed meanwhile: compiled again next time
            super().dump_bytecode(bucket)


def _template_cache() -> jinja2.BytecodeCache | None:
    """The compiled templates' cache, or None where Jinja finds no safe folder for it (another user owns it)."""
    try:
        return _TemplateCache()
    except (OSError, RuntimeError):
        return None


def environment(version: str) -> jinja2.Environment:
    """The templates' environment, with the formatting filters (`structbench.reports.views.format`);
    `version` is the structbench version every page says wrote it."""
    env = jinja2.Environment(
        loader=jinja2.PackageLoader("structbench.reports", "templates"),
        bytecode_cache=_template_cache(),
        autoescape=True,
        undefined=jinja2.StrictUndefined,
        trim_blocks=True,
        lstrip_blocks=True,
    )
    env.filters["percent"] = percent
    env.filters["breakable"] = breakable
    env.filters["method"] = method
    env.filters["seconds"] = seconds
    env.filters["count"] = count
    env.filters["link"] = link  # every address from data is linked through it (http(s) only)
    env.globals["undefined_label"] = UNDEFINED
    env.globals["scale_colour"] = scale_colour
    env.globals["made_by"] = made_by
    env.globals["version"] = version
    env.globals["verdict_rule"] = VERDICT_RULE
    env.globals["kinds"] = KINDS
    env.globals["min_shared"] = MIN_SHARED
    env.globals["zip"] = zip
    env.globals["spark_size"] = (int(SPARK_WIDTH), int(SPARK_HEIGHT))
    return env


def _context(page: Any) -> dict[str, Any]:
    """A page context's fields as template variables (shallow: the values themselves)."""
    return {field.name: getattr(page, field.name) for field in dataclasses.fields(page)}


def copy_static(out_dir: Path) -> None:
    """The pages' stylesheet and scripts, into `static/`."""
    static = out_dir / "static"
    static.mkdir(parents=True, exist_ok=True)
    for item in resources.files("structbench.reports").joinpath("static").iterdir():
        if item.name.endswith((".css", ".js")):
            (static / item.name).write_text(item.read_text(encoding="utf-8"), encoding="utf-8")


def write_pages(pages: Pages, out_dir: Path, *, version: str) -> None:
    """`index.html`, `suites/*.html` and `errors/*.html`, each saying that structbench `version` wrote it."""
    env = environment(version)
    index = env.get_template("index.html.j2").render(root="", **_context(pages.index))
    (out_dir / "index.html").write_text(index, encoding="utf-8")
    suite_template = env.get_template("suite.html.j2")
    for suite in pages.suites:
        (out_dir / suite.path).write_text(
            suite_template.render(root="../", published_levels=suite.published_levels, **_context(suite)),
            encoding="utf-8",
        )
    error_template = env.get_template("errors.html.j2")
    families = pages.index.families
    for page in pages.errors:
        html = error_template.render(
            root="../", page=page, board=page.board, title=pages.index.title, families=families
        )
        (out_dir / page.path).write_text(html, encoding="utf-8")
