"""The one escaping layer (`structbench.reports.escaping`): what a store's text becomes in a script, a
Markdown table and a CSV cell. The site as a whole, in Chromium, is `tests/browser/test_injection.py`."""

from __future__ import annotations

import json
import re

import pytest
from tabulate import tabulate

from structbench.reports.escaping import markdown_code, markdown_prose, markdown_text, script_json, spreadsheet_text

HOSTILE = [
    "</script><script>window.__pwned=1</script>",
    '"><img src=x onerror=window.__pwned=1>',
    "=cmd|' /C calc'!A0\nnext | row",
    'x": "", "y": (window.__pwned=1), "z',
    "<!-- a comment that swallows the rest",
    "line\u2028separator\u2029paragraph",
    "back\\slash \\| pipe `code` & &amp; < 0.99",
]


@pytest.mark.parametrize("text", HOSTILE)
def test_script_json_reads_back_as_the_same_value_and_holds_nothing_a_page_parses(text: str) -> None:
    value = {"split": text, text: [text, 1, None]}
    written = script_json(value)
    assert json.loads(written) == value
    assert not set(written) & {"<", ">", "&", "\u2028", "\u2029"}


@pytest.mark.parametrize("escape", [markdown_text, markdown_prose, markdown_code])
@pytest.mark.parametrize("text", HOSTILE)
def test_a_markdown_cell_stays_one_cell_of_one_row(escape: object, text: str) -> None:
    assert callable(escape)
    cell = escape(text)
    assert "\n" not in cell and "\r" not in cell and "\u2028" not in cell
    if escape is not markdown_code:  # inside a code span a tag is text
        assert not re.search(r"<[A-Za-z/!?]", cell)  # no tag, comment or closing tag starts
    table = tabulate([[cell, "x"]], headers=["a", "b"], tablefmt="github", disable_numparse=True)
    assert {len(re.findall(r"(?<!\\)\|", line)) for line in table.splitlines()} == {3}


def test_markdown_text_escapes_all_html_and_markdown_prose_only_what_starts_a_tag() -> None:
    assert markdown_text('a "b" & c < 1') == "a &#34;b&#34; &amp; c &lt; 1"
    assert markdown_prose('a "b" & c < 1 <b> &amp;') == 'a "b" & c < 1 &lt;b> &amp;amp;'
    assert markdown_code("a|b `c`") == "`` a\\|b `c` ``"


@pytest.mark.parametrize(
    ("text", "written"),
    [
        ("=cmd|' /C calc'!A0", "'=cmd|' /C calc'!A0"),
        ("+1+1", "'+1+1"),
        ("-2+3", "'-2+3"),
        ("@SUM(A1)", "'@SUM(A1)"),
        ("\t=1", "'\t=1"),
        ("-1.5", "-1.5"),
        ("+2e-3", "+2e-3"),
        ("copy", "copy"),
    ],
)
def test_a_spreadsheet_cell_never_starts_a_formula(text: str, written: str) -> None:
    assert spreadsheet_text(text) == written
