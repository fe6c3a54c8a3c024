"""The error browser's data: each run's stored predictions as they are, and the frozen examples they
were made on."""

from __future__ import annotations

import base64
import gzip
import json
import zlib
from pathlib import Path

from structbench import registry
from structbench.data import freeze
from structbench.reports.render import write_report
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
