"""The error browser's data: each run's stored predictions as they are, and the frozen examples they
were made on, the same whichever process writes them."""

from __future__ import annotations

import base64
import gzip
import json
import os
import zlib
from concurrent.futures.process import BrokenProcessPool
from pathlib import Path

import pytest

from structbench import registry
from structbench.data import freeze
from structbench.reports.builders.from_store import build_site
from structbench.reports.render import write_report
from structbench.reports.views.pages import pages
from structbench.reports.writers.error_browser import write_error_data
from structbench.reports.writers.plots import Drawing
from structbench.runs.runner import Runner
from structbench.specs import ModelSpec


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


def _files(folder: Path) -> dict[str, bytes]:
    return {str(path.relative_to(folder)): path.read_bytes() for path in sorted(folder.rglob("*")) if path.is_file()}


def test_the_error_browser_scripts_are_the_same_written_by_a_worker_here_or_after_the_worker_died(
    runner: Runner, tmp_path: Path
) -> None:
    """A report hands the runs scripts to its worker processes while it writes its pages; a worker killed
    (as for memory) before or while it writes leaves its scripts to the report, and every file is the same."""
    for model in ("random", "copy"):
        runner.evaluate("miniscan", ModelSpec(name=model), [0, 1, 2])
    site = build_site(runner.store)
    views = pages(site)
    here = tmp_path / "here"
    write_error_data(site, views.errors, here).finish()
    written = _files(here)
    assert {"errors/miniscan@1.0.0/random.js", "errors/miniscan@1.0.0/copy.js"} <= set(written)
    for killed in (None, "before", "while"):
        out = tmp_path / f"worker-{killed}"
        drawing = Drawing(workers=1)
        worker = drawing.worker()
        assert worker is not None
        if killed == "before":
            with pytest.raises(BrokenProcessPool):
                worker.submit(os._exit, 1).result()
        elif killed == "while":
            worker.submit(os._exit, 1)  # dies once it starts on what is handed to it next
        try:
            write_error_data(site, views.errors, out, worker=worker).finish()
        finally:
            drawing.close()
        assert _files(out) == written, killed
