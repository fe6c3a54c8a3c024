"""Hostile input never harms a reader of the site: an address from data is linked only when it is
http(s) (issue 34)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from structbench import registry
from structbench.reports.render import write_report
from structbench.reports.views.format import link, safe_url
from structbench.runs.runner import Runner
from structbench.specs import ModelSpec
from tests.support.helpers import links_of
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
