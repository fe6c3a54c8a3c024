"""The leaderboard renders what the store holds, escaped, with mean, CI and seed count."""

from __future__ import annotations

from pathlib import Path

import pandas as pd
import pytest
from scipy import stats

from structbench import __version__, registry
from structbench.baselines.trivial import Oracle
from structbench.cli import main
from structbench.reports.boards import RESULT_COLUMNS, aggregate, boards
from structbench.reports.render import write_report
from structbench.runs.arguments import parse_settings
from structbench.runs.runner import Runner
from structbench.scoring import Score, SplitScores
from structbench.specs import ModelSpec
from tests.support.helpers import read_results

HOSTILE = "<script>alert(1)</script>"
ESCAPED = "&lt;script&gt;alert(1)&lt;/script&gt;"
LOOKUP_TESTS = [s.name for s in registry.suite("lookup-tables").spec.splits_with_role("test")]


class Flag:
    """Copies its input, or reverses it when `reverse` is truthy."""

    name = "flag"
    protocols = ("transduction",)

    def __init__(self, reverse: object = False) -> None:
        self.reverse = bool(reverse)

    def transduce(self, inputs: list[list[str]]) -> list[list[str]]:
        return [list(reversed(t)) if self.reverse else list(t) for t in inputs]


class PeekingOracle(Oracle):
    """The suite's own solver, declared as seeing test-time information."""

    comparable = False


@pytest.fixture
def report(runner: Runner, tmp_path: Path) -> Path:
    runner.evaluate("lookup-tables", ModelSpec(name="oracle"), [0, 1, 2])
    runner.evaluate("lookup-tables", ModelSpec(name="tests.support.helpers:CountingCopy", params={"tag": HOSTILE}), [0])
    runner.evaluate("lookup-tables", ModelSpec(name="tests.support.helpers:CrashOnSeed"), [0])
    return write_report(runner.store, tmp_path / "report")


def suite_page(index: Path, key: str = "lookup-tables@1.0.0") -> str:
    """The HTML of one suite's page in the site whose overview is `index`."""
    return (index.parent / "suites" / f"{key}.html").read_text()


def row_of(html: str, model: str) -> str:
    """The table row of `model` (as the page escapes it) in a suite page's results table."""
    start = html.index(f'<th scope="row" data-value="{model}">')
    return html[start : html.index("</tr>", start)]


def test_model_names_are_escaped_on_every_page(report: Path) -> None:
    label = f"counting-copy[tag=&#34;{ESCAPED}&#34;]"
    pages = [
        report,
        *sorted((report.parent / "suites").glob("*.html")),
        *sorted((report.parent / "errors").rglob("*.html")),
    ]
    assert len(pages) == 3  # overview, the suite, its error browser
    for page in pages:
        html = page.read_text()
        assert HOSTILE not in html
        assert "<script" not in html.replace('<script src="', "")  # the page's own scripts only
    assert label in suite_page(report) and label in report.read_text()
    # the error browser's data script carries the label as JSON text, which a script never runs as markup
    (data,) = [p for p in (report.parent / "errors").rglob("*.js") if "counting-copy" in p.read_text()]
    assert '"model": "counting-copy[tag=\\"<script>alert(1)</script>\\"]"' in data.read_text()


def test_cells_show_mean_ci_and_seed_count(report: Path) -> None:
    html = suite_page(report)
    oracle = row_of(html, "oracle")
    assert oracle.count('<span class="mean">100.0</span>') == len(LOOKUP_TESTS) == 7
    # three seeds that agree: the Wilson interval over each split's items, not a zero-width one
    for split in registry.suite("lookup-tables").spec.splits_with_role("test"):
        low = stats.binomtest(split.size or 0, split.size or 0).proportion_ci(method="wilson").low
        assert f'<span class="ci">[{100 * low:.1f}, 100.0]</span>' in oracle
        assert f'<span class="seeds" title="Wilson over {split.size} items">n = 3 · Wilson</span>' in oracle
    assert "3 done" in oracle
    copy = row_of(html, f"counting-copy[tag=&#34;{ESCAPED}&#34;]")
    assert copy.count('<span class="mean">0.0</span>') == 7 and copy.count("n = 1 · Wilson") == 7
    crashed = row_of(html, "crash-on-seed")
    assert (
        "1 failed" in crashed
        and crashed.count('<td class="failed" data-value=""><a href="#problems">failed</a></td>') == 7
    )
    assert "seed 0, failed:" in html[html.index('<section id="problems">') :]
    # the oracle is a ceiling: set apart below the ranked models, never marked best
    assert html.index('data-value="counting-copy') < html.index('data-value="oracle"')
    assert '<span class="tag apart"' in oracle and "best</span>" not in oracle
    for split in LOOKUP_TESTS:
        assert split.replace("_", "_<wbr>") in html
    assert f"Rendered by structbench {__version__}" in html


def test_markdown_csv_and_json_hold_every_metric(report: Path) -> None:
    folder = report.parent
    assert sorted(p.name for p in folder.iterdir()) == [
        ".structbench-site", "data", "errors", "index.html", "leaderboard.md", "plots", "references.json", "results.csv", "results.json",
        "static", "suites",
    ]  # fmt: skip
    markdown = (folder / "leaderboard.md").read_text()
    assert "## lookup-tables@1.0.0 (sequence_accuracy" in markdown
    oracle_line = next(line for line in markdown.splitlines() if line.startswith("| oracle (ceiling, not ranked)"))
    assert oracle_line.count(", 100.0] (3 seeds, Wilson)") == 7

    rows = read_results(folder / "results.json")
    assert rows and all(list(row) == RESULT_COLUMNS for row in rows)
    keys = [(r["suite"], r["model"], r["split"], r["metric"], r["breakdown"], r["level"]) for r in rows]
    assert len(keys) == len(set(keys)), "one row per (suite, model, split, metric, condition)"
    oracle = [r for r in rows if r["model"] == "oracle"]
    assert {r["split"] for r in oracle} == set(LOOKUP_TESTS)
    for split in LOOKUP_TESTS:
        metrics = {r["metric"] for r in oracle if r["split"] == split}
        assert {"sequence_accuracy", "token_accuracy", "final_target_accuracy"} <= metrics
    assert all(r["n_seeds"] == 3 and r["per_seed"] == [1.0, 1.0, 1.0] and r["mean"] == 1.0 for r in oracle)
    assert not [r for r in rows if r["model"] == "crash-on-seed"]  # a failed run has no numbers

    table = pd.read_csv(folder / "results.csv")
    assert list(table.columns) == RESULT_COLUMNS
    from_csv = {
        (m, s, k): v for m, s, k, v in zip(table["model"], table["split"], table["metric"], table["mean"], strict=True)
    }
    from_json = {(r["model"], r["split"], r["metric"]): r["mean"] for r in rows}
    assert len(table) == len(rows) and from_csv == pytest.approx(from_json, abs=1e-9)


def test_report_command_writes_the_four_files(
    runner: Runner, store_path: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    runner.evaluate("lookup-tables-mt", ModelSpec(name="copy"), [0, 1])
    runner.store.close()
    out = tmp_path / "out"
    assert main(["report", "--store", str(store_path), "--out", str(out)]) == 0
    assert capsys.readouterr().out.strip() == str(out / "index.html")
    for name in ("index.html", "leaderboard.md", "results.csv", "results.json"):
        assert (out / name).is_file()
    assert "lookup-tables-mt@1.0.0" in (out / "index.html").read_text()
    assert "n = 2 · Wilson</span>" in suite_page(out / "index.html", "lookup-tables-mt@1.0.0")


def test_report_writes_where_quickstart_does_when_no_folder_is_given(
    runner: Runner, store_path: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    runner.evaluate("lookup-tables", ModelSpec(name="copy"), [0])
    runner.store.close()
    monkeypatch.chdir(tmp_path)
    assert main(["report", "--store", str(store_path)]) == 0
    assert "lookup-tables@1.0.0" in (tmp_path / "structbench-report" / "index.html").read_text()


def test_numbers_from_different_data_never_share_a_cell(runner: Runner, tmp_path: Path) -> None:
    runner.evaluate("lookup-tables", ModelSpec(name="copy"), [0])
    # the same suite id and version built from other data, stored by an older checkout
    suite = registry.suite("lookup-tables")
    other_hash = "f" * 64
    runner.store.record_suite(suite.spec, other_hash)
    claim = runner.store.claim_run(
        {
            "suite": "lookup-tables", "version": "1.0.0", "suite_hash": other_hash, "model": "copy",
            "model_spec": '{"name":"copy","params":{}}', "model_hash": "0" * 64, "config_hash": None,
            "comparable": True, "seed": 0, "draw": 0, "harness_version": __version__, "git_commit": None,
            "environment": "{}",
        }
    )  # fmt: skip
    scores = SplitScores(scores=[Score("sequence_accuracy", 0.5, 2)], correct=[True, False])
    runner.store.finish_run(claim, {"heldout_tables": (scores, ["a", "b"], [["x"], ["y"]])}, 0.0, 0.0)

    report = write_report(runner.store, tmp_path / "report")
    rows = read_results(report.parent / "results.json")
    cells = [r for r in rows if r["model"] == "copy" and r["split"] == "heldout_tables"]
    cells = [r for r in cells if r["metric"] == "sequence_accuracy" and not r.get("breakdown")]
    assert sorted((r["suite_hash"] == other_hash, r["mean"], r["n_seeds"]) for r in cells) == [
        (False, 0.0, 1),
        (True, 0.5, 1),
    ]
    pages = sorted(p.name for p in (report.parent / "suites").glob("*.html"))
    assert pages == ["lookup-tables@1.0.0-ffffffff.html", "lookup-tables@1.0.0.html"]
    assert f"<code>{other_hash}</code>" in suite_page(report, "lookup-tables@1.0.0-ffffffff")
    assert other_hash not in suite_page(report)


def test_report_command_refuses_a_missing_store(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["report", "--store", str(tmp_path / "none.sqlite"), "--out", str(tmp_path / "out")]) == 2
    assert "no results store" in capsys.readouterr().err
    assert not (tmp_path / "none.sqlite").exists()
    assert not (tmp_path / "out").exists()


def test_models_that_differ_only_in_a_settings_type_are_not_merged(runner: Runner, tmp_path: Path) -> None:
    as_bool = ModelSpec(name="tests.reports.test_report:Flag", params=parse_settings(["reverse=false"]))
    as_text = ModelSpec(name="tests.reports.test_report:Flag", params=parse_settings(["reverse=False"]))
    assert as_bool != as_text  # the harness stores them as two models ...
    runner.evaluate("lookup-tables", as_bool, [0])
    runner.evaluate("lookup-tables", as_text, [0])
    assert len(runner.store.runs()) == 2
    report = write_report(runner.store, tmp_path / "report")
    rows = read_results(report.parent / "results.json")
    flag = [r for r in rows if r["model"].startswith("flag")]
    # ... so no cell may pool the two: each holds the one seed of one model
    assert flag and all(r["n_seeds"] == 1 for r in flag)


def test_a_model_that_is_not_comparable_is_flagged_and_ranked_last(runner: Runner, tmp_path: Path) -> None:
    runner.evaluate("lookup-tables", ModelSpec(name="tests.reports.test_report:PeekingOracle"), [0])
    runner.evaluate("lookup-tables", ModelSpec(name="copy"), [0])
    report = write_report(runner.store, tmp_path / "report")
    html = suite_page(report)
    assert html.index('data-value="copy"') < html.index('data-value="PeekingOracle"')  # 0 above 1
    assert ">not comparable</span>" in row_of(html, "PeekingOracle")
    assert "not comparable" not in row_of(html, "copy")
    markdown = (report.parent / "leaderboard.md").read_text()
    assert "PeekingOracle (not comparable, not ranked)" in markdown


def test_the_report_presents_a_suite_as_installed_not_as_first_stored(runner: Runner, tmp_path: Path) -> None:
    """A corrected primary metric or ranking reaches stores whose runs predate it."""
    runner.evaluate("lookup-tables", ModelSpec(name="oracle"), [0])
    installed = registry.suite("lookup-tables").spec
    (suite_hash,) = {key[2] for key in runner.store.suite_specs()}
    runner.store._db.execute(
        "UPDATE suites SET spec = ? WHERE suite = 'lookup-tables'",
        (installed.variant(primary_metric="token_accuracy").model_dump_json(),),
    )
    runner.store._db.commit()
    markdown = (write_report(runner.store, tmp_path / "site").parent / "leaderboard.md").read_text()
    assert f"## lookup-tables@1.0.0 ({installed.primary_metric}, %; data {suite_hash[:12]})" in markdown


def test_the_report_marks_the_best_and_the_models_a_paired_bootstrap_cannot_tell_from_it(
    runner: Runner, tmp_path: Path
) -> None:
    for order in (2, 4, 5):
        runner.evaluate("agreement-attractors@1.0.0", ModelSpec(name="ngram", params={"order": order}), [0])
    (board,) = boards(runner.store, aggregate(runner.store))
    assert board.ties_note == ""
    # attractors-1: order 2 is best (18.0); order 5 (17.4) cannot be told from it; order 4 (13.4)
    # can, although its Wilson interval overlaps the best's: the paired comparison is sharper (order 4 is
    # ngram's default, so its label is the bare name)
    cells = {model: row["attractors-1"] for model, row in board.rows}
    assert board.best["attractors-1"] == "ngram[order=2]"
    assert board.ties["attractors-1"] == {"ngram[order=5]"}
    best, excluded = cells["ngram[order=2]"], cells["ngram"]
    assert best is not None and excluded is not None and excluded.ci_high > best.ci_low  # type: ignore[operator]
    markdown = (write_report(runner.store, tmp_path / "out").parent / "leaderboard.md").read_text()
    assert "17.4 [14.3, 21.0] (1 seed, Wilson) ≈best" in markdown and "≈best" in markdown
    html = suite_page(tmp_path / "out" / "index.html", "agreement-attractors@1.0.0")
    assert html.count('<td class="best"') == sum(1 for split in board.ranked if split in board.best)


def test_a_board_whose_metric_has_no_verdict_per_example_says_why_it_is_not_compared(runner: Runner) -> None:
    # two models above the trivial floor (`random`'s V-measure), which a paired comparison would be asked about
    runner.evaluate("pos-synthetic", ModelSpec(name="hmm", params={"iterations": 1}), [0])
    runner.evaluate("pos-synthetic", ModelSpec(name="hmm", params={"iterations": 2}), [0])
    (board,) = boards(runner.store, aggregate(runner.store))
    assert "not a right/wrong verdict per example" in board.ties_note
    assert board.ties == {split: set() for split in board.best}
