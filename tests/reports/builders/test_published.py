"""Published runs on the suite page: rows marked "published" with their provenance, apart from the measured
rows and never ranked; a row's values are its seeds' shares of items right, its score as a measured row's."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from structbench.reports.builders.published import published_row
from structbench.reports.render import write_report
from structbench.runs.runner import Runner
from structbench.specs import ModelSpec
from structbench.store.published import PublishedRun

HOSTILE = "<script>alert(1)</script>"


def published(seed: int, right: int, split: str = "test") -> PublishedRun:
    items = {f"{split}-0{i}": (i < right, None) for i in range(10)}
    source = {"paper": f"Someone 2020 {HOSTILE}", "file": "r.csv", "sha256": "ab" * 32, "url": "javascript:alert(1)"}
    return PublishedRun("miniscan", "1.0.0", "", "published:gpt-2", seed, source, {split: items})


def test_a_row_averages_its_seeds_and_scores_as_a_measured_row() -> None:
    row = published_row([published(0, 7), published(1, 4)], ["test"])
    assert (row.name, row.seeds, row.values, row.score) == (
        "gpt-2",
        2,
        {"test": pytest.approx(0.55)},
        pytest.approx(0.55),
    )
    assert len(row.sources) == 1
    assert published_row([published(0, 7)], ["test", "other"]).score is None  # a score split it does not report


def test_the_suite_page_marks_published_rows_apart_with_their_provenance(runner: Runner, tmp_path: Path) -> None:
    runner.evaluate("miniscan", ModelSpec(name="oracle"), [0])
    suite_hash = str(runner.store.runs().suite_hash.iloc[0])
    runner.store.add_published([PublishedRun(**{**published(0, 7).__dict__, "suite_hash": suite_hash})])
    site = write_report(runner.store, tmp_path / "report")
    page = (site.parent / "suites" / "miniscan@1.0.0.html").read_text(encoding="utf-8")
    section = page[page.index('<section id="published-runs">') :]
    section = section[: section.index("</section>")]
    (row,) = re.findall(r'<tr class="reported published">(.*?)</tr>', section, re.S)
    assert 'gpt-2<span class="tag">published</span>' in row and "70.0" in row and "r.csv" in row
    assert HOSTILE not in page and "&lt;script&gt;" in row  # the paper's text is escaped
    assert 'href="javascript' not in page  # a source's URL is shown as text, never a link
    measured = page[: page.index('<section id="published-runs">')]
    assert "published:gpt-2" not in measured and "gpt-2<span" not in measured  # not among the ranked rows
