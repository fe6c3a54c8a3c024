"""How the pages write numbers, names and links: percentages, interval methods, durations, counts,
long split names, the overview's colour scale, and which addresses a page may link to. Pure
functions of a value, shared by the HTML pages (as Jinja filters) and `leaderboard.md`.
"""

from __future__ import annotations

import urllib.parse
from collections.abc import Mapping

import markupsafe

from structbench.reports.builders.provenance import Provenance
from structbench.specs import SeedStats

UNDEFINED = "metric not defined in the source: not comparable"
"""How a reported number of a metric its source does not define is marked."""
SCALE = [
    "#ffffd9", "#edf8b1", "#c7e9b4", "#7fcdbb", "#41b6c4", "#1d91c0", "#225ea8", "#253494", "#081d58",
]  # fmt: skip
"""ColorBrewer's YlGnBu, 9 classes (Brewer, colorbrewer2.org): the overview's colour scale, light = low."""


def percent(value: float) -> str:
    return f"{100 * value:.1f}"


def method(cell: SeedStats) -> str:
    """The interval's method in a word: `t`, `Wilson` or `no interval`."""
    return "no interval" if cell.interval == "none" else cell.interval.split()[0]


def scale_colour(value: float, higher_is_better: bool) -> tuple[str, str]:
    """(background, text colour) of a cell of `value` (a fraction) on the overview's colour scale."""
    goodness = min(max(value if higher_is_better else 1 - value, 0.0), 1.0)
    index = min(int(goodness * len(SCALE)), len(SCALE) - 1)
    # WCAG contrast >= 4.5:1 on every step (tests/reports/writers/test_contrast.py): the page's ink on the
    # light ones, white on the dark ones, and black on #1d91c0, where neither reaches it (3.6 and 4.4)
    return SCALE[index], "#ffffff" if index >= 6 else "#000000" if index == 5 else "#1d2330"


def breakable(name: str) -> markupsafe.Markup:
    """`name`, escaped, with line-break opportunities after underscores (long split names)."""
    return markupsafe.Markup("_<wbr>").join(markupsafe.escape(part) for part in name.split("_"))


def made_by(reference_runs: Mapping[str, Provenance]) -> list[tuple[str, str, list[str]]]:
    """The reference rows grouped by what made their runs, for a page's one footnote on them:
    (what made them, every commit and epoch cap in full, the models' labels), in first-seen order."""
    groups: dict[tuple[str, str], list[str]] = {}
    for found in reference_runs.values():
        groups.setdefault((found.made, found.details), []).append(found.label)
    return [(made, details, sorted(labels)) for (made, details), labels in groups.items()]


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


LINK_SCHEMES = frozenset({"http", "https"})
"""The schemes an address from data (a suite's source URL, say) may have to be shown as a link."""


def safe_url(url: str) -> str | None:
    """`url` when a page may link to it, else None: an http(s) address with a host, or a relative link
    within the site (no scheme, not `//host`). Anything else (`javascript:`, `data:`, `file:`, ...)
    would run or open something on a click; an address holding whitespace or control characters is
    refused too, since browsers drop those before reading the scheme (`java\tscript:`)."""
    if not url or any(ord(char) <= 0x20 or ord(char) == 0x7F for char in url) or "\\" in url:
        return None
    try:
        parts = urllib.parse.urlsplit(url)
    except ValueError:
        return None
    if parts.scheme:
        return url if parts.scheme.lower() in LINK_SCHEMES and parts.netloc else None
    return None if url.startswith("//") or ":" in url.split("/", 1)[0] else url


def link(url: str, text: str | None = None) -> markupsafe.Markup:
    """`<a href="url">text</a>` (both escaped; `text` defaults to the address) when `safe_url` allows
    `url`; otherwise `text` alone, as text, so that an address from data never becomes a script to click."""
    shown = markupsafe.escape(url if text is None else text)
    target = safe_url(url)
    if target is None:
        return markupsafe.Markup(shown)
    return markupsafe.Markup('<a href="{}" rel="noopener">{}</a>').format(target, shown)
