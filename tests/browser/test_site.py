"""The leaderboard site in a real browser: headless Chromium (Debian's `chromium`) driven by Playwright.

Runs in tox's `py` environment, which CI runs, or alone in `tox -e browser` (marker `browser`).
One site is rendered from a store holding several models across five suites, and a model label that carries
`<script>alert(1)</script>`; its pages are opened from disk, as a researcher opens a site they
just rendered, which is the stricter case (no fetch, scripts only). What it checks:

- no page logs a console error or throws, and none opens a dialog;
- every suite page is linked from the overview, and each link leads to its page;
- every plot (the gap plot and each suite's condition plots) loads and has a non-zero size;
- the error browser lists wrong examples and filters them by split, condition, text and seed,
  and shows every example when asked;
- at 390 px the body never scrolls sideways, and a number in the first list or table is visible;
- at 1400 px the first screen asks every family's question, and the full matrix opens with one click, where
  a family's link opens its table of suites;
- at 1400 and 390 px the navigation is one line and no badge breaks within its word;
- at 390 px the claims table is stacked cards, each cell named;
- at both widths, `index.html#claims` shows the claims in a screenshot (the heading at the top, dark text);
- the hostile label is shown as text on the overview, the suite page and the error browser;
- a plugin suite's `javascript:` source address is text, and clicking it opens no dialog.

Screenshots of the overview, the agreement-attractors page and an error browser at 1400 and
390 px go to `$STRUCTBENCH_SCREENSHOTS` (tox: `.tox/py/screenshots`), not to the repository.
"""

from __future__ import annotations

import os
import shutil
import urllib.parse
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from PIL import Image

from structbench import registry
from structbench.reports.render import write_report
from structbench.reports.views.format import safe_url
from structbench.runs.runner import Runner
from structbench.specs import ModelSpec
from structbench.store import Store
from tests.support.hostile import install_hostile_plugin

pytestmark = pytest.mark.browser
playwright_api = pytest.importorskip("playwright.sync_api", reason="pip install .[browser] for the browser tests")

HOSTILE = "<script>alert(1)</script>"
HOSTILE_LABEL = f'counting-copy[tag="{HOSTILE}"]'
SUITES = {
    "lookup-tables": ["oracle", "copy", "random", ("tests.support.helpers:CountingCopy", {"tag": HOSTILE})],
    "miniscan": ["oracle", "copy", "random"],
    "agreement-attractors": ["oracle", "ngram", "unigram"],
    "sentence-completion": ["oracle", "ngram", "unigram"],
    "pos-synthetic": ["oracle", "random", "majority"],
}
CHROMIUM_FLAGS = [
    "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run", "--disable-background-networking",
    "--disable-component-update", "--disable-sync",
]  # fmt: skip
"""Headless Chromium on a machine with no network: no background connections to time out on."""


def chromium() -> str:
    path = os.environ.get("STRUCTBENCH_CHROMIUM") or shutil.which("chromium") or shutil.which("chromium-browser")
    if path is None:
        pytest.fail("no Chromium found: install Debian's `chromium` package or set STRUCTBENCH_CHROMIUM to its path.")
    return path


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A site rendered from a store of several models on five suites, with a hostile model label."""
    folder = tmp_path_factory.mktemp("site")
    with Store(folder / "results.sqlite") as store:
        runner = Runner(store, progress=False)
        runner.log = lambda message: None
        for suite, models in SUITES.items():
            for model in models:
                name, params = (model, {}) if isinstance(model, str) else model
                runner.evaluate(suite, ModelSpec(name=name, params=params), [0, 1])
        return write_report(store, folder / "site").parent


@pytest.fixture(scope="module")
def browser() -> Iterator[Any]:
    with playwright_api.sync_playwright() as playwright:
        launched = playwright.chromium.launch(executable_path=chromium(), args=CHROMIUM_FLAGS)
        yield launched
        launched.close()


class Page:
    """A browser page that records console errors, uncaught exceptions and dialogs."""

    def __init__(self, browser: Any, width: int) -> None:
        self.page = browser.new_page(viewport={"width": width, "height": 900})
        self.problems: list[str] = []
        self.page.on("console", lambda m: self.problems.append(f"console: {m.text}") if m.type == "error" else None)
        self.page.on("pageerror", lambda error: self.problems.append(f"exception: {error}"))
        self.page.on("dialog", lambda dialog: (self.problems.append(f"dialog: {dialog.message}"), dialog.dismiss()))

    def open(self, path: Path, fragment: str = "") -> Any:
        self.page.goto(path.as_uri() + fragment)
        self.page.wait_for_load_state("load")
        return self.page

    def close(self) -> None:
        self.page.close()


@pytest.fixture
def wide(browser: Any) -> Iterator[Page]:
    page = Page(browser, 1400)
    yield page
    page.close()


@pytest.fixture
def narrow(browser: Any) -> Iterator[Page]:
    page = Page(browser, 390)
    yield page
    page.close()


def error_browser_ready(page: Any) -> str:
    """Wait for the error browser to finish loading; its status line."""
    page.wait_for_function("!document.getElementById('status').textContent.startsWith('Loading')")
    return str(page.locator("#status").text_content())


def test_every_suite_page_is_reachable_from_the_overview_and_no_page_errs(site: Path, wide: Page) -> None:
    overview = wide.open(site / "index.html")
    links = sorted(
        set(overview.eval_on_selector_all("a[href^='suites/']", "as => as.map(a => a.getAttribute('href'))"))
    )
    pages = sorted(f"suites/{p.name}" for p in (site / "suites").glob("*.html"))
    assert len(pages) == len(SUITES) and links == pages
    for link in links:
        overview = wide.open(site / "index.html")
        overview.click(f"#suites a[href='{link}']")  # the family tables' links are inside closed <details>
        overview.wait_for_load_state("load")
        assert urllib.parse.unquote(overview.url).endswith(link), overview.url
        assert (
            overview.locator("h1").text_content().strip().startswith(link.removeprefix("suites/").removesuffix(".html"))
        )
    for error_page in sorted((site / "errors").glob("*.html")):
        wide.open(error_page)
        error_browser_ready(wide.page)
    assert wide.problems == []


def test_plots_render_with_a_size(site: Path, wide: Page) -> None:
    seen = 0
    for path in [site / "index.html", *sorted((site / "suites").glob("*.html"))]:
        page = wide.open(path)
        for image in page.locator("figure img").all():
            image.scroll_into_view_if_needed()
            natural = image.evaluate("img => [img.complete, img.naturalWidth, img.naturalHeight]")
            box = image.bounding_box()
            assert natural[0] and natural[1] > 0 and natural[2] > 0, f"{path.name}: {image.get_attribute('src')}"
            assert box is not None and box["width"] > 100 and box["height"] > 50
            assert image.get_attribute("alt")
            seen += 1
    assert seen >= 5  # the gap plot, attractors, and the conditions of the other suites
    assert wide.problems == []


def test_the_error_browser_filters_by_split_condition_text_and_seed(site: Path, wide: Page) -> None:
    page = wide.open(site / "errors" / "agreement-attractors@2.0.0.html", "#model=ngram")
    status = error_browser_ready(page)
    assert page.locator("#model").input_value() == "ngram"
    wrong = int(status.split()[0])
    assert wrong > 0 and "wrong" in status
    rows = page.locator("#rows tr")
    assert rows.count() == min(wrong, 500)

    page.select_option("#split", "mixed")  # where ngram is right on some plural subjects and wrong on others
    splits = set(page.eval_on_selector_all("#rows tr td:nth-child(2)", "cells => cells.map(c => c.textContent)"))
    assert splits == {"mixed"}
    in_split = int(error_browser_ready(page).split()[0])
    assert 0 < in_split < wrong

    page.select_option("#condition", "subject_number=plural")
    conditions = page.eval_on_selector_all("#rows tr td:nth-child(6)", "cells => cells.map(c => c.textContent)")
    assert conditions and all("subject_number=plural" in text for text in conditions)
    plural = int(error_browser_ready(page).split()[0])
    assert 0 < plural <= in_split

    page.fill("#search", "the cats")
    inputs = page.eval_on_selector_all("#rows tr td:nth-child(3)", "cells => cells.map(c => c.textContent)")
    assert all("the cats" in text for text in inputs)
    assert int(error_browser_ready(page).split()[0]) <= plural

    page.fill("#search", "")
    page.check("#all")  # every example of the split and condition, right or wrong
    assert int(error_browser_ready(page).split()[0]) > plural

    page.select_option("#seed", "1")
    assert "seed 1" in page.locator("#seed option:checked").text_content()
    assert int(error_browser_ready(page).split()[0]) > 0
    assert wide.problems == []


def test_at_390_px_nothing_scrolls_sideways_and_numbers_are_visible(site: Path, narrow: Page) -> None:
    pages = [
        site / "index.html",
        site / "suites" / "agreement-attractors@2.0.0.html",
        site / "suites" / "lookup-tables@1.0.0.html",
    ]
    for path in pages:
        page = narrow.open(path)
        assert page.evaluate("document.documentElement.scrollWidth") <= 390, path.name
        # the overview's first ranked list with a model above the floor, a suite page's first table
        first = page.locator("ol.ranked:has(.headline .value), table").first
        first.scroll_into_view_if_needed()
        visible = first.evaluate(
            """list => Array.from(list.querySelectorAll('td .mean, .headline .value')).some(number => {
                 const box = number.getBoundingClientRect();
                 if (box.width === 0 || box.left < 0 || box.right > window.innerWidth) return false;
                 if (box.top < 0 || box.bottom > window.innerHeight) return false;
                 const hit = document.elementFromPoint(box.left + box.width / 2, box.top + box.height / 2);
                 return hit !== null && (hit === number || number.contains(hit)) && /\\d/.test(number.textContent);
               })"""
        )
        assert visible, f"{path.name}: no number of the first list or table is visible at 390 px"
    page = narrow.open(site / "errors" / "lookup-tables@1.0.0.html")
    error_browser_ready(page)
    assert page.evaluate("document.documentElement.scrollWidth") <= 390
    assert narrow.problems == []


def test_the_first_screen_at_1400_px_asks_every_familys_question_and_the_matrix_is_one_click_away(
    site: Path, wide: Page
) -> None:
    page = wide.open(site / "index.html")
    questions = page.locator("article.ranking h2")
    assert questions.count() == 5  # systematicity (miniscan), agreement, lookup, completion, POS induction
    for question in questions.all():
        box = question.bounding_box()
        assert box is not None and box["x"] + box["width"] <= 1400 and box["y"] + box["height"] <= 900
        assert question.inner_text().strip().endswith("?")
    numbers = page.locator("ol.ranked .headline .value").all()
    assert numbers and all((box := n.bounding_box()) is not None and box["y"] < 900 for n in numbers[:3])
    matrix = page.locator("details.matrix")
    assert not matrix.evaluate("details => details.open") and not page.locator("table.summary").is_visible()
    page.click("details.matrix > summary")
    assert page.locator("table.summary").is_visible()
    family = page.locator("details:has(#generalisation-lookup)")
    assert not family.evaluate("details => details.open")
    page.click("table.summary th.family a[href='#generalisation-lookup']")
    assert family.evaluate("details => details.open")  # the browser opens a <details> its link points into
    assert family.locator("a[href='suites/lookup-tables@1.0.0.html']").is_visible()
    assert wide.problems == []


@pytest.mark.parametrize("width", [1400, 390])
def test_the_navigation_is_one_line_and_no_badge_breaks_within_its_word(site: Path, browser: Any, width: int) -> None:
    holder = Page(browser, width)
    try:
        for path in [site / "index.html", site / "suites" / "lookup-tables@1.0.0.html"]:
            page = holder.open(path)
            tops = page.eval_on_selector_all("header.site nav a", "as => as.map(a => a.getBoundingClientRect().top)")
            assert len(tops) == 6 and max(tops) - min(tops) < 2, f"{path.name} at {width} px: nav in {tops}"
            broken = page.eval_on_selector_all(
                ".tag",
                """tags => tags.filter(tag => tag.getClientRects().length > 1
                          || tag.getBoundingClientRect().height > 1.9 * parseFloat(getComputedStyle(tag).fontSize))
                        .map(tag => tag.textContent)""",
            )
            assert broken == [], f"{path.name} at {width} px: badges broken over lines: {broken}"
        assert holder.problems == []
    finally:
        holder.close()


def test_at_390_px_the_claims_are_stacked_cards_each_cell_named(site: Path, narrow: Page) -> None:
    page = narrow.open(site / "index.html", "#claims")
    table = page.locator("table.claims")
    assert table.count() == 1
    assert page.evaluate("document.documentElement.scrollWidth") <= 390
    cells = page.eval_on_selector_all(
        "table.claims tbody td",
        "cells => cells.map(c => [getComputedStyle(c).display, c.getBoundingClientRect().width, c.dataset.label || ''])",
    )
    assert cells and all(display == "block" and width >= 300 for display, width, _ in cells), cells
    assert {label for _, _, label in cells} == {"", "status", "evidence (%)"}  # the statement, then named cells
    assert (
        not page.locator("table.claims thead").is_visible()
        or page.locator("table.claims thead").bounding_box()["height"] <= 1
    )


@pytest.mark.parametrize("width", [1400, 390])
def test_the_claims_anchor_shows_the_claims_in_a_headless_screenshot(
    site: Path, browser: Any, width: int, tmp_path: Path
) -> None:
    """Chromium's own `--screenshot` of `index.html#claims` is blank at any width, and so is that of a
    plain page of 300 paragraphs and a target at its end: the command captures before it scrolls to a
    fragment. A browser driven to the anchor shows the section's heading at the top, with the claims."""
    holder = Page(browser, width)
    try:
        page = holder.open(site / "index.html", "#claims")
        heading = page.locator("#claims h2").bounding_box()
        assert heading is not None and 0 < heading["y"] < 60  # just under the top edge (`scroll-margin-top`)
        shot = tmp_path / "claims.png"
        page.screenshot(path=str(shot))
        with Image.open(shot) as image:
            colours = image.convert("L").crop((0, 0, width, 900)).getextrema()
        assert colours[0] < 100 < colours[1]  # dark text on the light page, not one blank colour
        assert page.locator("table.claims td").first.is_visible()
        assert holder.problems == []
    finally:
        holder.close()


def test_a_hostile_model_label_is_shown_as_text(site: Path, wide: Page) -> None:
    for path, fragment in [
        (site / "index.html", ""),
        (site / "suites" / "lookup-tables@1.0.0.html", ""),
        (site / "errors" / "lookup-tables@1.0.0.html", ""),
    ]:
        page = wide.open(path, fragment)
        if "errors" in path.parts:
            error_browser_ready(page)
            assert HOSTILE_LABEL in page.locator("#model").inner_text()
        assert HOSTILE_LABEL in page.locator("body").inner_text(), path.name
        assert page.evaluate("document.querySelectorAll('script:not([src])').length") == 0
    assert wide.problems == []  # no alert dialog opened


def test_a_source_address_that_is_not_http_runs_nothing_when_clicked(
    runner: Runner, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, wide: Page
) -> None:
    install_hostile_plugin(tmp_path / "plugin", monkeypatch)
    try:
        runner.evaluate("reverse-words", ModelSpec(name="copy"), [0])
        index = write_report(runner.store, tmp_path / "hostile-site")
    finally:
        registry.clear_cache()
    page = wide.open(index.parent / "suites" / "reverse-words@1.0.0.html", "#card")
    page.locator("#card details summary").first.click()
    hrefs = page.eval_on_selector_all("a[href]", "as => as.map(a => a.getAttribute('href'))")
    assert hrefs and all(safe_url(href) == href for href in hrefs), hrefs
    page.get_by_text("javascript:alert('srcurl')").click()  # shown as text: a click runs nothing
    assert page.locator("a", has_text="https://example.org/fine.txt").get_attribute("href") == (
        "https://example.org/fine.txt?a=1&b=2"
    )
    assert wide.problems == []  # no alert dialog opened


def test_screenshots(site: Path, wide: Page, narrow: Page) -> None:
    """Screenshots for people to look at (CI keeps them under .tox/py/screenshots)."""
    folder = Path(os.environ.get("STRUCTBENCH_SCREENSHOTS") or site.parent / "screenshots")
    folder.mkdir(parents=True, exist_ok=True)
    shots = [
        ("overview", site / "index.html", ""),
        ("agreement-attractors", site / "suites" / "agreement-attractors@2.0.0.html", ""),
        ("agreement-attractors-plots", site / "suites" / "agreement-attractors@2.0.0.html", "#conditions"),
        ("errors-ngram", site / "errors" / "agreement-attractors@2.0.0.html", "#model=ngram"),
    ]
    for holder, width in ((wide, 1400), (narrow, 390)):
        for name, path, fragment in shots:
            page = holder.open(path, fragment)
            if "errors" in path.parts:
                error_browser_ready(page)
            target = folder / f"{name}-{width}.png"
            page.screenshot(path=str(target))
            assert target.stat().st_size > 10_000
    assert wide.problems == [] and narrow.problems == []
