"""The one escaping layer: every string the report takes from a store, a bundle or a user passes here
on its way into a script, a Markdown file or a CSV file.

A store or a bundle is input like any other: a shared store's split name, a bundle's model label
or a plugin suite's text may hold `</script>`, a quote or a spreadsheet formula (issue 45: a split
name in a bundle's predictions reached the error browser's data script unescaped, and Chromium ran
it). So no writer joins such a string into one of these by hand:

- **scripts** (`script_json`): a value as JSON whose text holds no `<`, `>` or `&` (written as
  `\\u003c` and so on, so that neither `</script>` nor `<!--` can end or change a script block
  around it) and no U+2028 or U+2029 (line ends to JavaScript before ES2019). It reads back as the
  same value, in a script file or inline.
- **Markdown** (`markdown_text`, `markdown_prose`, `markdown_code`): a table cell, a heading or a list
  item: HTML special characters escaped (GitHub renders HTML in Markdown), pipes escaped, and line
  breaks joined into spaces, so that neither a tag nor a new row nor a new block can start inside.
  `markdown_text` escapes every HTML character (`leaderboard.md`); `markdown_prose` only what would
  begin a tag or an entity, so that `< 0.99` and quotes read as they are in a text editor
  (`docs/reproductions.md`).
- **CSV** (`spreadsheet_text`): a text cell a spreadsheet would read as a formula gets a leading
  apostrophe (OWASP's rule against CSV injection); quoting is the csv module's.

HTML is Jinja's: every page template is autoescaped, no template marks data `safe`, and the few
Python helpers that return markup (`views/format.py`'s `link` and `breakable`) escape what they join.
"""

from __future__ import annotations

import json
import re
from typing import Any

import markupsafe

_SCRIPT_UNSAFE = {"<": "\\u003c", ">": "\\u003e", "&": "\\u0026", "\u2028": "\\u2028", "\u2029": "\\u2029"}
_SCRIPT_PATTERN = re.compile("[<>&\u2028\u2029]")
_LINE_BREAK = re.compile(r"\r\n|[\r\n\v\f\x85\u2028\u2029]")
_ENTITY = re.compile(r"&(?=#?[A-Za-z0-9]+;)")
"""An `&` that would begin an HTML entity."""
_TAG = re.compile(r"<(?=[A-Za-z/!?])")
"""A `<` that would begin an HTML tag (`< 0.99` begins none)."""
FORMULA_STARTS = ("=", "+", "-", "@", "\t", "\r")
"""First characters that make a spreadsheet read a cell as a formula (OWASP, "CSV Injection")."""
_NUMBER = re.compile(r"[+-]?(?:\d+(?:\.\d*)?|\.\d+)(?:[eE][+-]?\d+)?")


def script_json(value: Any) -> str:
    """`value` as JSON text safe anywhere in a script, inline in a page too (see the module docstring)."""
    return _SCRIPT_PATTERN.sub(lambda match: _SCRIPT_UNSAFE[match.group()], json.dumps(value))


def _one_line(text: str) -> str:
    return _LINE_BREAK.sub(" ", text)


def markdown_text(text: str) -> str:
    """`text` safe in a Markdown table cell, heading or list item: every HTML special character escaped,
    pipes escaped, line breaks made spaces."""
    return _one_line(str(markupsafe.escape(text))).replace("|", "\\|")


def markdown_prose(text: str) -> str:
    """`text` safe in a Markdown table cell, heading or list item, and readable as text: no HTML tag or
    entity starts in it, pipes are escaped and line breaks are spaces; quotes, a lone `&` and `< 0.99`
    stay as they are."""
    return _one_line(_TAG.sub("&lt;", _ENTITY.sub("&amp;", text))).replace("|", "\\|")


def markdown_code(text: str) -> str:
    """`text` as a code span in a Markdown table cell: a fence longer than any run of backticks in it,
    pipes escaped (GitHub splits table cells on them even inside code spans) and line breaks made
    spaces."""
    text = _one_line(text)
    fence = "`" * (1 + max((len(run) for run in re.findall(r"`+", text)), default=0))
    padded = f" {text} " if text.startswith("`") or text.endswith("`") else text
    return f"{fence}{padded}{fence}".replace("|", "\\|")


def spreadsheet_text(text: str) -> str:
    """`text` as a text cell that a spreadsheet shows and never runs: with a leading apostrophe when it
    starts with one of `FORMULA_STARTS`, unless it is a plain number such as `-1.5` or `+2e-3`."""
    if text.startswith(FORMULA_STARTS) and not _NUMBER.fullmatch(text):
        return "'" + text
    return text
