"""The site's parts a reader relies on: overview cells, conditions, filters, skipped suites, the
error browser's data, plots, and escaping in `leaderboard.md` (the browser checks are in tests/browser)."""

from __future__ import annotations

import base64
import gzip
import json
import re
import xml.etree.ElementTree as ElementTree
import zlib
from pathlib import Path

import numpy as np
import pytest
from scipy import stats

from structbench import registry
from structbench.cli import main
from structbench.data import freeze
from structbench.errors import UserError
from structbench.reports.boards import SuiteBoard, aggregate, boards
from structbench.reports.conditions import conditions
from structbench.reports.figures import GapPlot, Line, LinePlot
from structbench.reports.render import write_report
from structbench.reports.writers.markdown import leaderboard_markdown
from structbench.reports.writers.plots import Drawing, draw
from structbench.runs.runner import Runner
from structbench.specs import ModelSpec, SplitSpec
from tests.support.helpers import read_results


def test_an_overview_cell_is_the_mean_over_seeds_of_the_mean_over_ranked_generalisation_splits(
    runner: Runner, tmp_path: Path
) -> None:
    runner.evaluate("lookup-tables", ModelSpec(name="random"), [0, 1, 2])
    index = write_report(runner.store, tmp_path / "site")
    spec = registry.suite("lookup-tables").spec
    general = [s.name for s in spec.ranked_splits if s.test_role == "generalisation"]
    rows = [r for r in read_results(tmp_path / "site" / "results.json") if r["metric"] == "sequence_accuracy"]
    per_seed = np.mean([r["per_seed"] for r in rows if not r["breakdown"] and r["split"] in general], axis=0)
    mean = float(per_seed.mean())
    half = stats.t.ppf(0.975, 2) * per_seed.std(ddof=1) / np.sqrt(3)
    expected = f"{100 * mean:.1f}"
    html = index.read_text()
    cell = re.search(r'<td class="heat" data-value="([^"]+)"[^>]*title="([^"]+)"', html)
    assert cell is not None and float(cell.group(1)) == pytest.approx(mean, abs=1e-12)
    assert f"{expected} [{100 * max(mean - half, 0):.1f}, {100 * (mean + half):.1f}], 3 seeds, t over 3 seeds" in (
        cell.group(2)
    )


def test_attractor_splits_become_one_condition_and_breakdown_keys_another(runner: Runner) -> None:
    runner.evaluate("agreement-attractors", ModelSpec(name="ngram"), [0])
    results = aggregate(runner.store)
    (board,) = boards(runner.store, results)
    mine = results[(results.breakdown != "") & (results.metric == "accuracy")]
    found = {c.axis: c for c in conditions(board, mine)}
    attractors = found["attractors"]
    assert attractors.levels == ["0", "1", "2", "3", "4"]
    ngram = dict(board.rows)["ngram"]
    assert attractors.cells["ngram"] == [ngram[f"attractors-{k}"] for k in range(5)]
    number = found["subject number"]
    assert number.levels == ["plural", "singular"] and number.plotted
    # `mixed` stacks constructions into over a hundred combinations: the plot takes the split of most
    # levels that a plot can still show, here the nine pairs of two intervening constructions
    construction = found["construction"]
    assert construction.plotted and construction.title.endswith("on test split attractors-2")
    kinds = ("orc", "pp", "src")
    assert construction.levels == [f"{a}+{b}" for a in kinds for b in kinds]


def test_filters_keep_debugging_runs_out_and_a_filter_that_matches_nothing_says_so(
    runner: Runner, tmp_path: Path
) -> None:
    runner.evaluate("lookup-tables", ModelSpec(name="copy"), [0])
    runner.evaluate("lookup-tables", ModelSpec(name="random"), [0])
    runner.evaluate("miniscan", ModelSpec(name="copy"), [0])
    site = tmp_path / "site"
    write_report(runner.store, site, models=["cop*"], suites=["lookup-*"], title="My <lab>")
    assert {r["model"] for r in read_results(site / "results.json")} == {"copy"}
    assert {r["suite"] for r in read_results(site / "results.json")} == {"lookup-tables"}
    assert sorted(p.name for p in (site / "suites").iterdir()) == ["lookup-tables@1.0.0.html"]
    rows = [line for line in (site / "leaderboard.md").read_text().splitlines() if line.startswith("| ")]
    assert [row for row in rows if row.startswith("| copy")] and not [row for row in rows if row.startswith("| random")]
    assert "<title>My &lt;lab&gt;</title>" in (site / "index.html").read_text()
    with pytest.raises(UserError, match=r"no runs in .* match --models nothing-like-this"):
        write_report(runner.store, site, models=["nothing-like-this"])


def test_the_report_command_takes_comma_lists_and_patterns(runner: Runner, store_path: Path, tmp_path: Path) -> None:
    runner.evaluate("lookup-tables", ModelSpec(name="copy"), [0])
    runner.evaluate("lookup-tables", ModelSpec(name="random"), [0])
    runner.store.close()
    out = tmp_path / "out"
    assert main(["report", "--store", str(store_path), "--out", str(out), "--models", "copy,rand*"]) == 0
    assert {r["model"] for r in read_results(out / "results.json")} == {"copy", "random"}


def test_suites_without_results_are_listed_with_the_reason(runner: Runner, tmp_path: Path) -> None:
    runner.evaluate("lookup-tables", ModelSpec(name="copy"), [0])
    html = write_report(runner.store, tmp_path / "site").read_text()
    assert "<li><code>pos-wsj@2.0.0</code>: needs your own copy of licensed data (penn_wsj/wsj.conll)</li>" in html
    assert "<li><code>lookup-tables@1.0.0</code>" not in html


def test_the_error_browser_data_is_the_stored_predictions_and_the_frozen_examples(
    runner: Runner, tmp_path: Path
) -> None:
    runner.evaluate("miniscan", ModelSpec(name="random"), [0, 1])
    site = tmp_path / "site"
    write_report(runner.store, site)
    script = (site / "errors" / "miniscan@1.0.0" / "random.js").read_text()
    payload = json.loads(script.removeprefix("structbench.runs(").removesuffix(");\n"))
    runs = runner.store.runs()
    assert payload["model"] == "random" and [run["seed"] for run in payload["runs"]] == [0, 1]
    for run in payload["runs"]:
        run_id = int(runs[runs.seed == run["seed"]]["id"].iloc[0])
        ids, predictions, verdicts = json.loads(zlib.decompress(base64.b64decode(run["blocks"]["test"])))
        stored = runner.store.stored_predictions(run_id)["test"]
        assert (ids, predictions, [None if v is None else bool(v) for v in verdicts]) == stored
    suite = registry.suite("miniscan")
    manifest = freeze.ensure_built(suite)
    digest = manifest.splits["draw0/test"].sha256
    assert payload["runs"][0]["examples"] == {"test": digest[:16]}
    examples = (site / "data" / f"examples-{digest[:16]}.js").read_text()
    blob = examples.split('", "')[1].removesuffix('", "gzip");\n')
    # the frozen file itself, which is gzip: nothing is compressed again
    assert base64.b64decode(blob) == freeze.split_file(suite, "draw0/test").read_bytes()
    assert gzip.decompress(base64.b64decode(blob)) == freeze.read_frozen(freeze.split_file(suite, "draw0/test"))
    assert (
        '<option value="random" data-script="../errors/miniscan@1.0.0/random.js">random</option>'
        in (site / "errors" / "miniscan@1.0.0.html").read_text()
    )


def test_plots_are_svg_and_the_same_whether_drawn_here_or_in_workers(tmp_path: Path) -> None:
    line = Line("m", "#1f77b4", [0.2, 0.5, None], [0.1, 0.4, None], [0.3, 0.6, None])
    plots = {
        tmp_path / f"plot-{i}.svg": LinePlot("attractors", "accuracy (%)", ["0", "1", "2"], [line]) for i in range(8)
    }
    plots[tmp_path / "gap.svg"] = GapPlot([(0.9, 0.2, "#1f77b4", "o")])
    plots[tmp_path / "categories.svg"] = LinePlot("kind", "accuracy (%)", ["aux", "lexical", "pp"], [line])
    written = sorted(Drawing(workers=2).draw(plots).wait())
    assert written == sorted(plots)
    pooled = {path: path.read_bytes() for path in written}
    for path in written:
        root = ElementTree.fromstring(pooled[path])
        assert root.tag.endswith("svg") and float(root.get("width", "0").removesuffix("pt")) > 0
    Drawing(workers=0).draw(plots).wait()
    assert {path: path.read_bytes() for path in written} == pooled


def test_markdown_escapes_suite_ids_and_split_names() -> None:
    spec = registry.suite("lookup-tables").spec
    hostile_split = SplitSpec(name="<b>|x", role="test", size=1, test_role="generalisation")
    hostile = spec.variant(id="<i>suite", splits=[*spec.splits_with_role("train"), hostile_split])
    board = SuiteBoard(spec=hostile, suite_hash="a" * 64, splits=["<b>|x"], ranked=["<b>|x"])
    markdown = leaderboard_markdown([board], [])
    assert "<b>" not in markdown and "<i>" not in markdown
    assert "## &lt;i&gt;suite@1.0.0 (sequence_accuracy" in markdown and "&lt;b&gt;\\|x" in markdown


def test_the_report_never_writes_into_a_folder_of_other_files(runner: Runner, tmp_path: Path) -> None:
    runner.evaluate("lookup-tables", ModelSpec(name="copy"), [0])
    project = tmp_path / "project"
    (project / "suites").mkdir(parents=True)
    (project / "suites" / "mine.py").write_text("precious = True\n")
    with pytest.raises(UserError, match="holds files that no structbench report wrote"):
        write_report(runner.store, project)
    assert (project / "suites" / "mine.py").read_text() == "precious = True\n"
    site = tmp_path / "site"
    write_report(runner.store, site)
    write_report(runner.store, site)  # its own site: replaced
    assert (site / "suites" / "lookup-tables@1.0.0.html").is_file()


def test_slanted_category_labels_and_the_axis_label_under_them_stay_inside_the_plot() -> None:
    line = Line("m", "#1f77b4", [0.2, 0.5, 0.1], [0.1, 0.4, 0.0], [0.3, 0.6, 0.2])
    svg = draw(LinePlot("construction", "accuracy (%)", ["around", "around+opposite", "jump+around+opposite"], [line]))
    root = ElementTree.fromstring(svg)
    height = float(root.get("height", "0").removesuffix("pt"))
    texts = {text.text: float(text.get("y", "0")) for text in root.iter("{http://www.w3.org/2000/svg}text")}
    # matplotlib sets the axis label below the slanted labels: it was drawn past the foot of a fixed-size plot
    assert texts["around+opposite"] < texts["construction"] < height - 2
