"""The plots drawn as SVG: the same bytes whether drawn here or in workers (or here after a worker died), slanted labels inside the
plot, and learning curves with markers on a logarithmic axis."""

from __future__ import annotations

import itertools
import os
import re
import subprocess
import sys
import time
import xml.etree.ElementTree as ElementTree
from concurrent.futures.process import BrokenProcessPool
from pathlib import Path
from typing import Any

import pytest

from structbench.reports.builders.plots import CurvePlot, GapPlot, Line, LinePlot, Markers
from structbench.reports.writers import plots as plots_module
from structbench.reports.writers.plots import Drawing, _label_widths, draw, shown_ticks


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
    for dies_first in (True, False):  # its one worker killed (as for memory) before or while it draws
        for path in written:
            path.unlink()
        dying = Drawing(workers=1)
        worker = dying.worker()
        assert worker is not None
        killed = worker.submit(os._exit, 1)
        if dies_first:
            with pytest.raises(BrokenProcessPool):
                killed.result()
        assert sorted(dying.draw(plots).wait()) == written  # drawn here instead
        assert {path: path.read_bytes() for path in written} == pooled


def _busy_until(released: Path) -> None:
    """A worker's task that lasts until `released` exists (at most a minute): the worker busy with other work."""
    deadline = time.monotonic() + 60
    while not released.exists() and time.monotonic() < deadline:
        time.sleep(0.01)


def test_the_report_draws_the_plots_no_worker_has_started_while_it_waits(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Once the report has written its pages it waits for the plots; it draws those no worker has started
    meanwhile, the same bytes, and the worker the rest."""
    line = Line("m", "#1f77b4", [0.2, 0.5, 0.1], [0.1, 0.4, 0.0], [0.3, 0.6, 0.2])
    plots = {
        tmp_path / f"plot-{i}.svg": LinePlot("length", "accuracy (%)", ["1", "2", str(i)], [line]) for i in range(40)
    }
    alone = {path: draw(plot).encode() for path, plot in plots.items()}
    drawing = Drawing(workers=1)
    worker = drawing.worker()
    assert worker is not None
    released = tmp_path / "released"
    busy = worker.submit(_busy_until, released)  # forked before the patch below: the worker draws as shipped
    drawn_here: list[Path] = []
    shipped = plots_module._draw_to

    def here(jobs: list[tuple[Path, Any]]) -> list[Path]:
        drawn_here.extend(path for path, _ in jobs)
        written = shipped(jobs)
        if jobs:
            released.touch()  # then the worker is free for the plots it had started
        return written

    here.__qualname__ = here.__name__ = "_draw_to"  # handed to the worker by name: it draws with its own
    here.__module__ = plots_module.__name__
    monkeypatch.setattr(plots_module, "_draw_to", here)
    assert sorted(drawing.draw(plots).wait()) == sorted(plots)
    assert busy.done() and drawn_here and set(drawn_here) <= set(plots)
    assert {path: path.read_bytes() for path in plots} == alone


def test_slanted_category_labels_and_the_axis_label_under_them_stay_inside_the_plot() -> None:
    line = Line("m", "#1f77b4", [0.2, 0.5, 0.1], [0.1, 0.4, 0.0], [0.3, 0.6, 0.2])
    svg = draw(LinePlot("construction", "accuracy (%)", ["around", "around+opposite", "jump+around+opposite"], [line]))
    root = ElementTree.fromstring(svg)
    height = float(root.get("height", "0").removesuffix("pt"))
    texts = {text.text: float(text.get("y", "0")) for text in root.iter("{http://www.w3.org/2000/svg}text")}
    # matplotlib sets the axis label below the slanted labels: it was drawn past the foot of a fixed-size plot
    assert texts["around+opposite"] < texts["construction"] < height - 2


def test_a_label_with_a_line_break_is_measured_by_its_widest_line(recwarn: pytest.WarningsRecorder) -> None:
    """matplotlib draws it on two lines: measured as one, the break was a missing glyph (a warning) and the
    room kept for the labels that of both lines side by side."""
    one, two, both = _label_widths(["bcdef", "a\nbcdef", "abcdef"])
    assert one == two < both
    assert not [w for w in recwarn if "missing from font" in str(w.message)]


def test_curve_plot_draws_lines_markers_and_a_log_axis_through_zero() -> None:
    plot = CurvePlot(
        "k",
        "sequence_accuracy (%)",
        [0, 1, 16, 1024],
        True,
        [Line("m", "#1f77b4", [0.0, 0.1, None, 0.9], [0.0, 0.05, None, 0.8], [0.0, 0.15, None, 1.0])],
        [Markers("paper", "D", [None, 0.0286, None, 0.9344])],
    )
    svg = draw(plot)
    assert svg.startswith("<?xml") and "</svg>" in svg
    ticks = re.findall(r">(\d+)</text>", svg)
    assert {"0", "1", "16", "1024"} <= set(ticks)
    assert draw(plot) == svg  # deterministic bytes


def test_tick_labels_of_a_long_numeric_breakdown_never_overlap() -> None:
    """scan-length's `n_actions` runs from 24 to 48: 25 labels side by side overlapped on a 6.4-inch plot."""
    levels = [str(n) for n in range(24, 49)]
    line = Line("m", "#1f77b4", [0.0] * 25, [0.0] * 25, [0.49] * 25)
    root = ElementTree.fromstring(draw(LinePlot("n_actions", "sequence_accuracy (%)", levels, [line])))
    texts = [text for text in root.iter("{http://www.w3.org/2000/svg}text") if text.text in levels]
    foot = max(float(text.get("y", "0")) for text in texts)
    ticks = sorted((float(text.get("x", "0")), str(text.text)) for text in texts if float(text.get("y", "0")) == foot)
    assert ticks[0][1] == "24" and ticks[-1][1] == "48" and 5 <= len(ticks) < len(levels)
    width = 0.7 * 9  # a digit is at most 0.7 em of the plots' 9-point font
    for (x, label), (next_x, next_label) in itertools.pairwise(ticks):
        assert next_x - x >= width * (len(label) + len(next_label)) / 2, (label, next_label)


def test_shown_ticks_keeps_the_first_and_last_labels_and_leaves_room_between_those_it_keeps() -> None:
    assert shown_ticks([0, 50, 100], [10, 10, 10]) == [0, 1, 2]  # room for all
    assert shown_ticks([0, 10, 20, 30, 40], [12, 12, 12, 12, 12]) == [0, 2, 4]
    assert shown_ticks([0, 10, 20, 30], [12, 12, 12, 12]) == [0, 3]  # 20 gives way to the axis's end
    assert shown_ticks([], []) == []


def test_a_report_killed_outright_leaves_no_worker_behind() -> None:
    """A report killed with SIGKILL (by the out-of-memory killer, say) cannot stop its workers; each ends
    by itself, closing the output pipes it shares with the report, so that whoever ran the report is not
    left waiting on them."""
    script = (
        "import os, sys, time\n"
        "from structbench.reports.writers.plots import Drawing\n"
        "worker = Drawing(workers=1).worker()\n"
        "assert worker is not None\n"
        "print(worker.submit(os.getpid).result(), flush=True)\n"
        "time.sleep(600)\n"
    )
    report = subprocess.Popen([sys.executable, "-c", script], stdout=subprocess.PIPE, text=True)
    assert report.stdout is not None
    assert int(report.stdout.readline()) != report.pid  # the worker answered from its own process
    report.kill()
    report.communicate(timeout=120)  # returns once the worker, which holds the pipe too, has ended
