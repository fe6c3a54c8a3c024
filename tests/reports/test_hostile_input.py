"""Hostile input never harms a reader of the site: an address from data is linked only when it is
http(s), and a text cell of `results.csv` never becomes a spreadsheet formula (issue 34)."""

from __future__ import annotations

import csv
import json
from collections.abc import Iterator
from pathlib import Path

import pandas as pd
import pytest

from structbench import registry
from structbench.reports.render import write_report
from structbench.reports.views.format import link, safe_url
from structbench.reports.writers.tables import write_tables
from structbench.runs.request import ModelRequest
from structbench.runs.runner import Runner
from structbench.specs import ModelSpec
from tests.support.helpers import links_of, read_results
from tests.support.hostile import install_hostile_plugin


@pytest.fixture
def hostile_plugin(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """`reverse-words` as an installed plugin whose source files claim the addresses of `tests.support.hostile.SOURCE_URLS`."""
    install_hostile_plugin(tmp_path / "plugin", monkeypatch)
    yield
    registry.clear_cache()


@pytest.mark.usefixtures("hostile_plugin")
def test_a_source_address_that_is_not_http_is_shown_as_text_never_as_a_link(runner: Runner, tmp_path: Path) -> None:
    runner.evaluate("reverse-words", ModelSpec(name="copy"), [0])
    index = write_report(runner.store, tmp_path / "site")
    page = index.parent / "suites" / "reverse-words@1.0.0.html"
    text = page.read_text(encoding="utf-8")
    assert "https://example.org/fine.txt?a=1&b=2" in links_of(page)
    assert '<a href="https://example.org/fine.txt?a=1&amp;b=2" rel="noopener">' in text
    assert "javascript:alert(&#39;srcurl&#39;)" in text  # still shown, as text
    assert "data:text/html,&lt;script&gt;alert(4)&lt;/script&gt;" in text
    pages = [index, *index.parent.glob("suites/*.html"), *index.parent.glob("errors/*.html")]
    for each in pages:
        for target in links_of(each):
            assert safe_url(target) == target, f"{each.name} links to {target!r}"
            assert (each.parent / target.split("#")[0]).exists() or target.startswith(("https://", "#")), target


@pytest.mark.parametrize(
    ("url", "allowed"),
    [
        ("https://example.org/a?b=1#c", True),
        ("HTTP://example.org", True),
        ("../index.html#suites", True),
        ("suites/x@1.0.0.html", True),
        ("#results", True),
        ("javascript:alert(1)", False),
        ("JavaScript:alert(1)", False),
        (" javascript:alert(1)", False),
        ("java\nscript:alert(1)", False),
        ("\x01javascript:alert(1)", False),
        ("vbscript:msgbox", False),
        ("data:text/html,x", False),
        ("file:///etc/passwd", False),
        ("//evil.example/x", False),
        ("/\\evil.example/x", False),
        ("https:///no-host", False),
        ("mailto:a@b.c", False),
        ("", False),
    ],
)
def test_only_http_addresses_and_relative_links_are_linked(url: str, allowed: bool) -> None:
    assert (safe_url(url) == url) is allowed and (safe_url(url) is None) is not allowed
    shown = str(link(url, "the <file>"))
    assert shown.startswith("<a href=") is allowed
    assert "the &lt;file&gt;" in shown


FORMULAS = ['=HYPERLINK("https://evil.example","click")', "+1+1", "-2+3", "@SUM(A1:A9)", "\tx", "\rx", "-"]
NUMBERS_AS_TEXT = ["-1.5", "+2e-3", "-7", "0.5", ""]


def read_csv(path: Path) -> list[dict[str, str]]:
    with path.open(newline="", encoding="utf-8") as handle:
        return list(csv.DictReader(handle))


def test_a_text_cell_that_a_spreadsheet_would_run_gets_an_apostrophe_and_numbers_stay_numbers(tmp_path: Path) -> None:
    texts = FORMULAS + NUMBERS_AS_TEXT + ["plain", "a=b"]
    frame = pd.DataFrame({"model": texts, "mean": [-1.5] * len(texts), "n_seeds": [-1] * len(texts)})
    write_tables(frame, tmp_path)
    rows = read_csv(tmp_path / "results.csv")
    assert [row["model"] for row in rows] == ["'" + text for text in FORMULAS] + NUMBERS_AS_TEXT + ["plain", "a=b"]
    assert {row["mean"] for row in rows} == {"-1.5"} and {row["n_seeds"] for row in rows} == {"-1"}
    assert json.loads((tmp_path / "results.json").read_text())["data"][0] == [FORMULAS[0], -1.5, -1]  # JSON as given


def test_a_model_named_as_a_formula_is_text_in_the_report_csv(runner: Runner, tmp_path: Path) -> None:
    label = '=HYPERLINK("https://evil.example","click")'
    runner.evaluate("lookup-tables", ModelRequest.of(ModelSpec(name="copy"), name=label), [0])
    index = write_report(runner.store, tmp_path / "site")
    models = {row["model"] for row in read_csv(index.parent / "results.csv")}
    assert models == {"'" + label}
    assert {row["model"] for row in read_results(index.parent / "results.json")} == {label}
