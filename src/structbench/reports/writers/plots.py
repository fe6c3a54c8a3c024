"""The site's plots (`structbench.reports.builders.plots`), drawn by matplotlib as SVG files when the site is written.

Three kinds: the primary metric against one condition, one colour per model, and its 95%
interval: against a number (attractor count, operator count, composition length) as lines with
bands, against categories (relative-clause type, subject number) as points with error bars; the
learning curve of a series of suites (`structbench.reports.builders.series`): the same lines and bands against
the series' number, on a linear or logarithmic axis, with published numbers as grey markers; and the
generalisation-gap scatter (in-distribution against generalisation, one point per model and
suite). Legends are not drawn into the SVG: the page shows them as text beside the plot, in the same colours (`palette`), which keeps them readable
at any width and saves a quarter of matplotlib's drawing time.

Plots are independent, so they are drawn in worker processes, one on each core but the one the
report writes its pages on. A report starts its workers before it reads the store (`Drawing.worker`)
and hands them other work of its own meanwhile (`structbench.reports.worker`), then matplotlib's import
(`Drawing.warm`, about half a second), so that both overlap the build instead of following it. A worker
ends by itself once its report is gone, and a report draws here what a dead worker did not.

The SVG bytes are deterministic (a fixed id salt and no date), so a plot need not be drawn again
while what it is drawn from is unchanged: each site lists the key
of every plot's inputs (`inputs_key`: the plot's values, the drawing code and matplotlib's version)
in `plots/drawn-from.json`, and a report into the same folder links each plot whose key is unchanged
from the earlier site (`reuse_drawn`) and draws only the others.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import math
import multiprocessing
import os
import shutil
import threading
import time
from collections.abc import Mapping
from concurrent.futures import Executor, ProcessPoolExecutor
from functools import cache
from importlib import metadata
from pathlib import Path
from typing import Any

from structbench import paths
from structbench.reports.builders import plots as plot_values
from structbench.reports.builders.plots import DASHES, CurvePlot, GapPlot, LinePlot, Plot
from structbench.reports.worker import Tasks, submit

POOL_FROM = 8
"""Fewer plots than this are drawn in this process: workers would cost more than they save."""
CHUNKS_PER_WORKER = 16
"""The tasks the plots are handed to each worker in: small enough that the report's own process, once it
has written the pages, finds some not yet started and draws them too (`Drawing.wait`)."""
DRAWN_FROM = "plots/drawn-from.json"
"""The site's list of what each plot was drawn from: path relative to the site root -> `inputs_key`."""


def _numeric(levels: list[str]) -> list[float] | None:
    try:
        return [float(level) for level in levels]
    except ValueError:
        return None


FONT_SIZE = 9
"""The plots' font size in points."""
SLANT = 30
"""The angle (degrees) of tick labels too long to stand side by side."""
BOTTOM, TOP = 0.17, 0.05
"""The margins below and above the axes, as fractions of a plot's standard height."""


def _setup() -> None:
    import matplotlib

    matplotlib.use("svg")
    matplotlib.rcParams["svg.hashsalt"] = "structbench"  # stable element ids
    matplotlib.rcParams["svg.fonttype"] = "none"  # text stays text: selectable, and the page's font
    matplotlib.rcParams["font.size"] = FONT_SIZE


def _figure(width: float, height: float, left: float = 0.1, below: float = 0.0) -> Any:
    """A figure of `width` x `height` inches, `below` inches taller to hold slanted tick labels, and its axes."""
    _setup()
    from matplotlib.figure import Figure

    total = height + below
    figure = Figure(figsize=(width, total))
    bottom = (BOTTOM * height + below) / total
    axes = figure.add_axes((left, bottom, 0.96 - left, 1 - bottom - TOP * height / total))
    axes.spines[["top", "right"]].set_visible(False)
    axes.grid(axis="y", color="#e3e6ec", linewidth=0.6)
    axes.set_axisbelow(True)
    return figure, axes


def _slanted_depth(labels: list[str]) -> float:
    """How far (inches) the longest of `labels`, slanted by `SLANT` and ending under its tick, reaches
    below the standard margin's room for one line of labels: measured from the font (no drawing pass),
    so that `around+opposite` is not cut at the foot of the plot."""
    widest = max(_label_widths(labels), default=0)
    reach = widest * math.sin(math.radians(SLANT)) + FONT_SIZE * math.cos(math.radians(SLANT))  # points
    return max(0.0, (reach - FONT_SIZE) / 72)


TICK_GAP = 6.0
"""The least room (points) between two tick labels standing side by side."""


def _label_widths(labels: list[str]) -> list[float]:
    """Each label's width in points at the plots' font size, measured from the font (no drawing pass): its
    widest line, as matplotlib draws a label with line breaks (a model label may hold one) on several lines."""
    _setup()
    from matplotlib.font_manager import FontProperties
    from matplotlib.textpath import TextToPath

    font = FontProperties(size=FONT_SIZE)
    measure = TextToPath()
    return [
        max(measure.get_text_width_height_descent(line, font, ismath=False)[0] for line in label.split("\n"))
        for label in labels
    ]


def shown_ticks(centres: list[float], widths: list[float]) -> list[int]:
    """Which of the tick labels centred at `centres` (points along the axis, ascending) with `widths`
    (points) to draw so that no two overlap: the first, then each one that clears the last drawn by
    `TICK_GAP`, and the last where it clears the one before it (replacing that one where it does not)."""
    shown: list[int] = []
    for index, (centre, width) in enumerate(zip(centres, widths, strict=True)):
        if not shown or centre - width / 2 >= centres[shown[-1]] + widths[shown[-1]] / 2 + TICK_GAP:
            shown.append(index)
    last = len(centres) - 1
    if shown and shown[-1] != last and len(shown) > 1:
        shown[-1] = last  # the axis's end is worth more than the label before it
    return shown


def _set_numeric_ticks(axes: Any, xs: Any, labels: list[str]) -> None:
    """Ticks at `xs` with `labels`, leaving out those that would overlap their neighbours (a long
    breakdown such as scan-length's 24 to 48 actions): positions read from the axes' own transform,
    so a logarithmic axis is thinned where its ticks crowd."""
    import numpy as np

    figure = axes.get_figure()
    axes.set_xticks(xs, labels)
    axes.get_xlim()  # brings the view's limits up to date with what was plotted, before the transform is read
    points = axes.transData.transform(np.column_stack([xs, np.zeros(len(xs))]))[:, 0] * 72 / figure.dpi
    keep = shown_ticks([float(p) for p in points], _label_widths(labels))
    axes.set_xticks([xs[i] for i in keep], [labels[i] for i in keep])


def _line_svg(plot: LinePlot) -> str:
    import numpy as np

    slanted = max(map(len, plot.levels), default=0) > 6  # long labels slant, each ending under its own tick
    figure, axes = _figure(6.4, 3.0, below=_slanted_depth(plot.levels) if slanted else 0.0)
    numbers = _numeric(plot.levels)
    x = np.array(numbers if numbers is not None else range(len(plot.levels)), dtype=float)
    for index, line in enumerate(plot.lines):
        means = np.array([np.nan if v is None else 100 * v for v in line.means])
        lows = np.array([np.nan if v is None else 100 * v for v in line.lows])
        highs = np.array([np.nan if v is None else 100 * v for v in line.highs])
        if numbers is not None:  # an ordered quantity: a line, its interval a band
            axes.plot(x, means, color=line.colour, linestyle=line.dash, marker="o", markersize=3.5, linewidth=1.4)
            if np.isfinite(lows).any():
                axes.fill_between(x, lows, highs, color=line.colour, alpha=0.15, linewidth=0)
        else:  # categories: no line between them; models side by side, intervals as error bars
            shifted = x + (index - (len(plot.lines) - 1) / 2) * min(0.6 / max(len(plot.lines), 1), 0.12)
            errors = np.vstack([np.nan_to_num(means - lows), np.nan_to_num(highs - means)])
            marker = DASHES[line.dash][0]  # no line to dash: the model's marker tells it from one of its colour
            axes.errorbar(
                shifted, means, yerr=errors, color=line.colour, fmt=marker, markersize=4, capsize=2, linewidth=1
            )
    if numbers is None:
        axes.set_xlim(-0.6, len(plot.levels) - 0.4)
    if slanted:
        axes.set_xticks(x, plot.levels, rotation=SLANT, ha="right", rotation_mode="anchor")
    elif numbers is not None:
        _set_numeric_ticks(axes, x, plot.levels)
    else:
        axes.set_xticks(x, plot.levels)
    axes.set_ylim(-2, 102)
    axes.set_xlabel(plot.x_label)
    axes.set_ylabel(plot.y_label)
    return _svg(figure)


def _number(value: float) -> str:
    return str(int(value)) if float(value).is_integer() else f"{value:g}"


def _curve_svg(plot: CurvePlot) -> str:
    import numpy as np

    figure, axes = _figure(6.4, 3.0)
    x = np.array(plot.xs, dtype=float)
    for line in plot.lines:
        means = np.array([np.nan if v is None else 100 * v for v in line.means])
        lows = np.array([np.nan if v is None else 100 * v for v in line.lows])
        highs = np.array([np.nan if v is None else 100 * v for v in line.highs])
        known = np.isfinite(means)  # a suite a model was not run on: the line joins its neighbours
        axes.plot(
            x[known], means[known], color=line.colour, linestyle=line.dash, marker="o", markersize=3.5, linewidth=1.4
        )
        banded = known & np.isfinite(lows)
        if banded.any():
            axes.fill_between(x[banded], lows[banded], highs[banded], color=line.colour, alpha=0.15, linewidth=0)
    for markers in plot.markers:
        values = np.array([np.nan if v is None else 100 * v for v in markers.values])
        axes.scatter(
            x, values, marker=markers.symbol, s=30, facecolors="none", edgecolors="#3a3f4b", linewidths=1.1, zorder=3
        )
    if plot.log_axis:
        axes.set_xscale("symlog", base=2, linthresh=1, linscale=0.5)
    _set_numeric_ticks(axes, x, [_number(value) for value in plot.xs])
    axes.minorticks_off()
    axes.set_ylim(-2, 102)
    axes.set_xlabel(plot.x_label)
    axes.set_ylabel(plot.y_label)
    return _svg(figure)


def _gap_svg(plot: GapPlot) -> str:
    figure, axes = _figure(4.6, 4.0, left=0.15)
    axes.plot([0, 100], [0, 100], color="#9aa1ae", linewidth=0.8, linestyle="--")
    for within, general, colour, marker in plot.points:
        axes.scatter(100 * within, 100 * general, color=colour, marker=marker, s=22, edgecolors="white", linewidths=0.5)
    axes.set_xlim(-2, 102)
    axes.set_ylim(-2, 102)
    axes.set_xlabel("in-distribution (%)")
    axes.set_ylabel("generalisation (%)")
    return _svg(figure)


def _svg(figure: Any) -> str:
    import io

    buffer = io.StringIO()
    figure.savefig(buffer, format="svg", metadata={"Date": None})
    return buffer.getvalue()


def draw(plot: Plot) -> str:
    """The SVG text of one plot."""
    if isinstance(plot, LinePlot):
        return _line_svg(plot)
    return _curve_svg(plot) if isinstance(plot, CurvePlot) else _gap_svg(plot)


@cache
def _drawing_code() -> bytes:
    """What a plot's SVG depends on besides its values: this module, the plot values' module (their
    markers and dashes) and matplotlib's version, read from its metadata (importing it takes a second)."""
    sources = Path(plot_values.__file__ or "").read_bytes() + Path(__file__).read_bytes()
    return sources + metadata.version("matplotlib").encode()


def inputs_key(plot: Plot) -> str:
    """A key of everything `plot`'s SVG is drawn from (SHA-256 of its values, whose `repr` gives every
    number exactly, and of `_drawing_code`): two plots of one key have the same bytes."""
    return hashlib.sha256(_drawing_code() + repr(plot).encode()).hexdigest()


def _earlier_keys(earlier: Path) -> dict[str, str]:
    """The earlier site's `DRAWN_FROM`, or nothing where it has none or it cannot be read."""
    try:
        keys = json.loads((earlier / DRAWN_FROM).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    return keys if isinstance(keys, dict) else {}


def reuse_drawn(plots: Mapping[str, Plot], out_dir: Path, earlier: Path | None) -> dict[Path, Plot]:
    """Write `DRAWN_FROM` of `plots` (path relative to the site root -> plot) into `out_dir`, put into it
    each plot that the site in `earlier`, or any earlier report on this machine (`paths.drawn_plots_dir`),
    drew from the same inputs, and return those still to draw (path -> plot)."""
    keys = {path: inputs_key(plot) for path, plot in plots.items()}
    before = _earlier_keys(earlier) if earlier is not None else {}
    jobs = {}
    for path, plot in plots.items():
        if earlier is not None and before.get(path) == keys[path] and _linked(earlier / path, out_dir / path):
            continue
        if _copied_from_drawn(keys[path], out_dir / path):
            continue
        jobs[out_dir / path] = plot
    (out_dir / DRAWN_FROM).write_text(json.dumps(keys, indent=0, sort_keys=True), encoding="utf-8")
    return jobs


def _linked(source: Path, target: Path) -> bool:
    """Whether `target` is now a hard link of `source`: the same bytes, since a plot file is never rewritten."""
    try:
        os.link(source, target)
    except OSError:  # gone (another report replaced that site), or links not possible here: draw it
        return False
    return True


MAX_DRAWN = 5_000
"""Plots kept in `paths.drawn_plots_dir()`; the least recently used beyond this are deleted."""
MAX_SVG_BYTES = 4 * 1024 * 1024
"""A kept plot larger than this is not a plot this module drew (its largest are tens of kilobytes)."""


def _copied_from_drawn(key: str, target: Path) -> bool:
    """Whether the plot of `key` that an earlier report drew is now at `target`. The kept file is checked
    as far as a plot's bytes can be without drawing it (an SVG document, bounded): anything else is drawn."""
    kept = paths.drawn_plots_dir() / f"{key}.svg"
    try:
        with kept.open("rb") as file:
            data = file.read(MAX_SVG_BYTES + 1)
    except OSError:
        return False
    if len(data) > MAX_SVG_BYTES or not data.startswith(b"<?xml") or b"<svg" not in data[:2048]:
        return False
    target.write_bytes(data)
    with contextlib.suppress(OSError):
        os.utime(kept)  # recently used: kept longest
    return True


def keep_drawn(out_dir: Path, drawn: list[Path]) -> None:
    """Keep the plots just drawn into `out_dir` (`drawn`) for later reports, by the keys of `DRAWN_FROM`,
    then delete the least recently used beyond `MAX_DRAWN`. Nothing here fails a report: a plot that
    cannot be kept is drawn again next time."""
    folder = paths.drawn_plots_dir()
    keys = _earlier_keys(out_dir)
    try:
        folder.mkdir(parents=True, exist_ok=True)
        for path in drawn:
            key = keys.get(path.relative_to(out_dir).as_posix())
            if isinstance(key, str) and len(key) == 64 and all(c in "0123456789abcdef" for c in key):
                partial = folder / f".{key}.{os.getpid()}.partial"
                shutil.copyfile(path, partial)
                os.replace(partial, folder / f"{key}.svg")  # whole or not at all, whoever else keeps it
        kept = sorted(folder.glob("*.svg"), key=lambda file: file.stat().st_mtime)
        for old in kept[: max(len(kept) - MAX_DRAWN, 0)]:
            old.unlink(missing_ok=True)
    except (OSError, ValueError):
        return


def _draw_to(jobs: list[tuple[Path, Plot]]) -> list[Path]:
    for path, plot in jobs:
        path.write_text(draw(plot), encoding="utf-8")
    return [path for path, _ in jobs]


ORPHAN_CHECK_SECONDS = 0.5
"""How often a worker checks that the report that forked it is still there."""


def _ready(report: int) -> None:
    """A worker's start: a watch that ends it once the report process `report` is gone."""
    threading.Thread(target=_end_when_orphaned, args=(report,), daemon=True).start()


def warm() -> None:
    """matplotlib imported and one empty figure drawn (its fonts loaded): what a worker does before its
    first plot, handed to it after the report's other work (`Drawing.warm`), which the report waits for."""
    _svg(_figure(1.0, 1.0)[0])


def _end_when_orphaned(report: int) -> None:
    """End this worker once its parent is no longer `report`: the report was killed (SIGKILL, the
    out-of-memory killer), and the worker, which holds its own copy of the pipe it reads tasks from,
    would otherwise wait for a task forever, keeping its memory and the report's output pipes open."""
    while os.getppid() == report:
        time.sleep(ORPHAN_CHECK_SECONDS)
    os._exit(1)


def _forks() -> bool:
    return "fork" in multiprocessing.get_all_start_methods()


def default_workers() -> int:
    """How many worker processes draw the plots: every core but the one this process writes the pages
    on (none on one core, where a worker would only take turns with this process)."""
    return max((os.cpu_count() or 1) - 1, 0)


class Drawing:
    """Plots being written to their paths: handed over by `draw` (to worker processes when there are
    many, so that the caller goes on with its own work), finished by `wait`.

    `workers` worker processes (`default_workers()` if None; 0 draws every plot in this process).
    `worker()` starts them at once, before the plots are known, for the caller's other work
    (`structbench.reports.worker`), and `warm()` has them import matplotlib after it, while the caller
    builds what the plots show; otherwise they start when `draw` is given `POOL_FROM` plots or more.
    Either way only with `fork`: they start with this process's imports, not a second import of the
    harness."""

    def __init__(self, workers: int | None = None) -> None:
        self._workers = default_workers() if workers is None else workers
        self._pool: ProcessPoolExecutor | None = None
        self._plots: Tasks[list[Path]] = Tasks()

    def _start(self, workers: int) -> None:
        if workers >= 1 and _forks():
            context = multiprocessing.get_context("fork")
            self._pool = ProcessPoolExecutor(workers, mp_context=context, initializer=_ready, initargs=(os.getpid(),))
            self._pool.submit(list)  # the pool forks its workers on its first task

    def warm(self) -> None:
        """Have the workers, once they are done with what they were given before, import matplotlib (`warm`),
        so that the plots do not wait for it; nothing where there are none yet."""
        if self._pool is not None:
            submit(self._pool, warm)  # not waited for: a plot given after it raises what it would raise

    def worker(self) -> Executor | None:
        """The worker processes (started now if they are not yet), for other work of the report while this
        process builds the site; None where there are none (one core, or no `fork`)."""
        if self._pool is None:
            self._start(self._workers)
        return self._pool

    def running(self) -> Executor | None:
        """The worker processes if they have started, else None (not started for this: for work that is
        worth a process only where one is there already)."""
        return self._pool

    def draw(self, jobs: Mapping[Path, Plot]) -> Drawing:
        """Start drawing `jobs` (path -> plot); `wait` returns once they are written."""
        items = list(jobs.items())
        if self._pool is None and len(items) >= POOL_FROM:
            self._start(min(len(items), self._workers))
        if self._pool is None:
            self._plots.hand(None, _draw_to, items)
            return self
        # many per worker, so that one slow plot holds back little and `wait` finds some not yet started
        self._plots.hand_parts(self._pool, _draw_to, items, max(self._workers, 1) * CHUNKS_PER_WORKER)
        return self

    def wait(self) -> list[Path]:
        """Every path written (drawing here those no worker draws, or whose worker died). This process has
        nothing else left to do by then, so it also draws the plots no worker has started, from the last
        while the workers go on from the first (`Tasks.finish`): a report of many new plots draws them on
        every core."""
        try:
            written = [path for drawn in self._plots.finish() for path in drawn]
            if self._pool is not None:
                self._pool.shutdown()  # every plot is in: the workers exit before the site is swapped in
        finally:
            self.close()
        return written

    def close(self) -> None:
        """Stop the workers, dropping the plots they have not started: after an error, or once `wait` has
        every plot."""
        if self._pool is not None:
            self._pool.shutdown(wait=False, cancel_futures=True)
            self._pool = None
