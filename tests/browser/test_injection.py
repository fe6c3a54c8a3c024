"""Hostile text in every field a store and a bundle carry runs no script on the site, starts no
formula in `results.csv` and breaks no table of `leaderboard.md` (issue 45).

A store is input: a shared one, or a bundle of runs someone sent, may hold any text where a split
name, an example id, a metric name, a breakdown key or level, a model label, a suite's text, a
failure message or an environment entry goes. Before, a split name reached the error browser's data
script unescaped and Chromium ran it. Here each of three payloads goes into every such field:

- `</script><script>window.__pwned=1</script>`, which ends a script block and opens another;
- `"><img src=x onerror=window.__pwned=1>`, which ends an attribute or a string and adds a tag;
- a spreadsheet formula with a pipe and a line break in it, for `results.csv` and Markdown tables;
- `x": "", "y": (window.__pwned=1), "z`, which ends a JSON string in a script and runs an expression
  (what a split name joined into the error browser's data script by hand did).

The runs are real (a plugin suite whose examples carry the payloads in their ids, condition keys and
levels and in its card's text; models labelled with them), then the store is edited as a shared one
could be (split and metric names, a failure message, an environment entry), and the same runs are
written as a reference bundle, so that the site shows them twice: as the user's and as reference
runs read from the bundle. Every page is opened in headless Chromium (every model of each error
browser chosen, which loads its data script) and must leave `window.__pwned` undefined, open no
dialog and log no error, while showing the payloads as text.
"""

from __future__ import annotations

import csv
import json
import re
import sqlite3
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from structbench import registry
from structbench.cli import main
from structbench.reports.escaping import FORMULA_STARTS
from structbench.runs.request import ModelRequest
from structbench.runs.runner import Runner
from structbench.specs import ModelSpec
from structbench.store import Store
from structbench.store.bundle import write_runs
from tests.browser.test_site import Page, browser, chromium  # noqa: F401  (fixtures)
from tests.support.hostile import install_plugin

pytestmark = pytest.mark.browser
pytest.importorskip("playwright.sync_api", reason="pip install .[browser] for the browser tests")

SCRIPT = "</script><script>window.__pwned=1</script>"
ATTRIBUTE = '"><img src=x onerror=window.__pwned=1>'
FORMULA = "=cmd|' /C calc'!A0\nnext | row"
STRING = 'x": "", "y": (window.__pwned=1), "z'
PAYLOADS = (SCRIPT, ATTRIBUTE, FORMULA, STRING)
TEXT = " ".join(PAYLOADS)
"""What goes into a suite's prose fields: every payload at once."""

HOSTILE_SUITE = f"""
import random

from reverse_suite import WORDS, ReverseWords
from structbench.specs import Example, SuiteSpec, dev_split, scored_split, train_split

PAYLOADS = {PAYLOADS!r}
TEXT = {TEXT!r}


def examples(rng, prefix, count, lengths):
    out = []
    for i in range(count):
        words = [rng.choice(WORDS) for _ in range(rng.choice(lengths))]
        payload = PAYLOADS[i % len(PAYLOADS)]
        meta = {{PAYLOADS[0]: PAYLOADS[len(words) % 4], PAYLOADS[1]: len(words) % 2, PAYLOADS[2]: payload, PAYLOADS[3]: 0}}
        out.append(Example(id=f"{{payload}} {{prefix}}-{{i}}", input=words, target=words[::-1], meta=meta))
    return out


class HostileText(ReverseWords):
    spec = SuiteSpec(
        id="reverse-words",
        version="1.0.0",
        family="systematicity",
        protocol="transduction",
        description=TEXT,
        citation=TEXT,
        how_checked=TEXT,
        deviations=TEXT,
        changelog=[TEXT],
        primary_metric="sequence_accuracy",
        splits=[
            train_split(40),
            dev_split(10),
            scored_split("test_short", 12, "in-distribution", TEXT),
            scored_split("test", 12, "generalisation", TEXT),
            scored_split("test_long", 12, "generalisation", TEXT),
            scored_split("test_odd", 12, "generalisation", TEXT),
            scored_split("test_js", 12, "generalisation", TEXT),
        ],
    )
    breakdown_keys = PAYLOADS

    def generate(self, draw, files):
        rng = random.Random(draw)
        return {{
            "train": examples(rng, "train", 40, range(1, 5)),
            "dev": examples(rng, "dev", 10, range(1, 5)),
            "test_short": examples(rng, "short", 12, range(1, 5)),
            "test": examples(rng, "test", 12, range(5, 9)),
            "test_long": examples(rng, "long", 12, range(5, 9)),
            "test_odd": examples(rng, "odd", 12, range(1, 9)),
            "test_js": examples(rng, "js", 12, range(1, 9)),
        }}
"""
SPLITS = {"test": SCRIPT, "test_long": ATTRIBUTE, "test_odd": FORMULA, "test_js": STRING}
"""Split -> the name a shared store gives it (`test_short` keeps its name, so that its examples, with
their hostile ids and conditions, are shown from the built data)."""
METRICS = {"token_accuracy": SCRIPT, "final_target_accuracy": ATTRIBUTE}
"""Metric -> the name a shared store gives it."""
ONE_LINE = FORMULA.split("\n")[0]
MODELS: list[tuple[str, dict[str, Any], str | None]] = [
    ("copy", {}, SCRIPT),
    ("oracle", {}, ATTRIBUTE),
    ("random", {}, ONE_LINE),
    ("tests.support.helpers:CountingCopy", {"tag": TEXT}, None),
    ("tests.support.helpers:CrashOnSeed", {"crash_seed": 0}, None),
]
"""(model, settings, --name): the labels carry the payloads (the name, or the settings in the label);
`--name` takes one line, so a shared store gives `random` the formula's whole text (`LABELS`)."""
LABELS = {ONE_LINE: FORMULA}


@pytest.fixture(scope="module")
def hostile_site(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    """The site of a store (and a bundle of its runs) holding the payloads in every field."""
    folder = tmp_path_factory.mktemp("injection")
    with pytest.MonkeyPatch.context() as monkeypatch:
        install_plugin(folder / "plugin", "hostile_text:HostileText", monkeypatch, {"hostile_text.py": HOSTILE_SUITE})
        try:
            store_path = folder / "shared.sqlite"
            with Store(store_path) as store:
                runner = Runner(store, progress=False)
                runner.log = lambda message: None
                for name, params, label in MODELS:
                    request = ModelRequest.of(ModelSpec(name=name, params=params), name=label)
                    runner.evaluate("reverse-words", request, [0, 1])
            edit_as_a_shared_store(store_path)
            bundle = folder / "bundle"
            with Store(store_path) as store:
                runs = store.runs()
                assert write_runs(store, runs[runs.status == "done"].id.tolist(), bundle) > 0
            monkeypatch.setenv("STRUCTBENCH_REFERENCE", str(bundle))
            site = folder / "site"
            assert main(["report", "--store", str(store_path), "--out", str(site), "--title", TEXT]) == 0
            yield site
        finally:
            registry.clear_cache()


def edit_as_a_shared_store(path: Path) -> None:
    """What a shared store may hold that no run wrote: other split and metric names (in its scores,
    predictions and suite spec alike), a label on two lines, a failure message and an environment entry."""
    with sqlite3.connect(path) as connection:
        for old, new in SPLITS.items():
            for table in ("scores", "predictions"):
                connection.execute(f"UPDATE {table} SET split = ? WHERE split = ?", (new, old))
        for old, new in METRICS.items():
            connection.execute("UPDATE scores SET metric = ? WHERE metric = ?", (new, old))
        for key, version, suite_hash, text in connection.execute("SELECT suite, version, suite_hash, spec FROM suites"):
            spec = json.loads(text)
            for split in spec["splits"]:
                split["name"] = SPLITS.get(split["name"], split["name"])
            connection.execute(
                "UPDATE suites SET spec = ? WHERE suite = ? AND version = ? AND suite_hash = ?",
                (json.dumps(spec), key, version, suite_hash),
            )
        for old, new in LABELS.items():
            connection.execute("UPDATE runs SET model = ? WHERE model = ?", (new, old))
        connection.execute("UPDATE runs SET error = ? WHERE status = 'failed'", (TEXT,))
        connection.execute("UPDATE runs SET environment = json_set(environment, '$.platform', ?)", (TEXT,))


@pytest.fixture
def page(browser: Any) -> Iterator[Page]:  # noqa: F811
    opened = Page(browser, 1400)
    yield opened
    opened.close()


def loaded_or_run(view: Any) -> None:
    """Wait until the error browser has drawn what it loaded, or a payload ran (then it never may)."""
    view.wait_for_function(
        "window.__pwned !== undefined || !document.getElementById('status').textContent.startsWith('Loading')"
    )


def pages(site: Path) -> list[Path]:
    return [site / "index.html", *sorted((site / "suites").glob("*.html")), *sorted((site / "errors").glob("*.html"))]


def test_no_page_runs_a_payload_and_each_shows_them_as_text(hostile_site: Path, page: Page) -> None:
    opened = pages(hostile_site)
    assert len(opened) == 3  # the overview, the suite page, its error browser
    shown = ""
    for path in opened:
        view = page.open(path)
        if "errors" in path.parts:
            models = view.eval_on_selector_all("#model option", "options => options.map(o => o.value)")
            assert len(models) == 2 * len(MODELS)  # each model's runs as the user's and as the bundle's
            for model in models:  # each choice loads the model's data script, where the split names are
                view.select_option("#model", model)
                loaded_or_run(view)
                splits = view.eval_on_selector_all("#split option", "options => options.map(o => o.textContent)")
                assert set(SPLITS.values()) <= set(splits), splits
                assert view.evaluate("typeof window.__pwned") == "undefined", f"{path.name}, model {model}"
            view.check("#all")
            loaded_or_run(view)
        assert view.evaluate("typeof window.__pwned") == "undefined", path.name
        shown += view.locator("body").inner_text()
    for payload in (SCRIPT, ATTRIBUTE, ONE_LINE):
        assert payload in shown  # the payloads reached the pages, as text
    assert page.problems == []  # no dialog, no error, no exception: no script broken or injected


def test_results_csv_starts_no_formula(hostile_site: Path) -> None:
    with (hostile_site / "results.csv").open(newline="", encoding="utf-8") as handle:
        rows = list(csv.DictReader(handle))
    texts = [value for row in rows for value in row.values() if value]
    formulas = [t for t in texts if t.startswith(FORMULA_STARTS) and not re.fullmatch(r"[-+]?[\d.]+(e[-+]?\d+)?", t)]
    assert formulas == []
    assert "'" + FORMULA in texts  # a split, metric or label given as a formula is shown as text
    assert {row["split"] for row in rows} >= {SCRIPT, ATTRIBUTE, "'" + FORMULA}


def test_leaderboard_md_keeps_its_tables_and_holds_no_tag(hostile_site: Path) -> None:
    text = (hostile_site / "leaderboard.md").read_text(encoding="utf-8")
    assert "<script" not in text and "<img" not in text
    tables = re.findall(r"(?:^\|.*\n)+", text, flags=re.MULTILINE)
    assert tables
    for table in tables:
        widths = {len(re.findall(r"(?<!\\)\|", line)) for line in table.splitlines()}
        assert len(widths) == 1, table  # every row has as many cells as the header
    assert "=cmd\\|&#39; /C calc&#39;!A0 next \\| row" in text  # the formula as text, pipes escaped, on one line


def test_the_data_scripts_hold_no_tag_and_read_back_as_json(hostile_site: Path) -> None:
    # what a split name reached before: every value is JSON whose text holds no `<` or `>`
    for script in (hostile_site / "data").glob("*.js"):
        assert "<" not in script.read_text(encoding="utf-8")
    for script in (hostile_site / "errors").glob("*/*.js"):
        body = script.read_text(encoding="utf-8")
        assert "<" not in body and ">" not in body
        payload = json.loads(body.removeprefix("structbench.runs(").removesuffix(");\n"))
        assert set(SPLITS.values()) <= {split for run in payload["runs"] for split in run["blocks"]}
