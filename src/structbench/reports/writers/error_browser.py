"""The error browser's data files: each model's stored predictions and each suite's test examples, as scripts.

The build (`structbench.reports.builders.predictions`) gathers one run's predictions of one split as the zlib block
of JSON the store keeps (`pack_predictions`). The site copies those blocks as they are,
base64-encoded, into one script per (suite page, model) beside its page; the browser inflates them
(`DecompressionStream("deflate")`) and shows the examples a model got wrong. Decoding them here
instead would cost about 0.26 ms per block, 11.5 s on a 10,000-run store, and the page would carry
the same information. Copying them is still most of what a large site's writing costs (a 10,000-run
store: 150 MB of blocks), so the scripts are written by the report's worker processes while the report
writes its pages (`structbench.reports.worker.Tasks`). The examples (input, gold answer and the meta
keys the browser filters on) come from the suite's frozen split files where this structbench has them
built: a frozen file is already gzip (`structbench.data.freeze`), so it is checked against its SHA-256
and copied as it is, base64-encoded, and the browser inflates it with `DecompressionStream("gzip")`
(recompressing every test split cost a first report seconds). Each is named by the file's SHA-256, so
that every model's page shares it and a re-render into the same folder links the earlier site's into
the new one. Where the data is not built here, the browser shows example ids and predictions only.

Scripts rather than JSON files, because a page opened from disk (`file://`) may not fetch
files, while it may load scripts: each file calls `structbench.runs(...)` or
`structbench.examples(...)`, defined by `static/errors.js`. Every value in them is written by
`structbench.reports.escaping.script_json`, split names and model labels included: they come from a
store or a bundle, and a split name joined in by hand ran as script in Chromium (issue 45).
"""

from __future__ import annotations

import base64
import os
from concurrent.futures import Executor
from dataclasses import dataclass
from pathlib import Path

from structbench.data import freeze
from structbench.data.sources import sha256_bytes
from structbench.reports.builders.predictions import RunPredictions
from structbench.reports.builders.site import Site
from structbench.reports.escaping import script_json
from structbench.reports.views.pages import ErrorPage
from structbench.reports.worker import Tasks


def _write_examples(out_dir: Path, sha256: str, source: Path, earlier: Path | None) -> bool:
    """Write the examples script of one frozen split file unless it exists (linked from the site in
    `earlier` when that has it); False when the file on disk is missing or is not the data of
    `sha256` (changed since the manifest was written)."""
    name = f"data/examples-{sha256[:16]}.js"
    target = out_dir / name
    if target.is_file():
        return True
    if earlier is not None and (earlier / name).is_file():
        try:
            os.link(earlier / name, target)  # the same bytes: a script is never rewritten once written
            return True
        except OSError:
            pass  # gone meanwhile (another report replaced that site), or links not possible here: write it
    try:
        stored = source.read_bytes()
    except FileNotFoundError:
        return False
    data = freeze.frozen_lines(source, stored)
    if sha256_bytes(data) != sha256:
        return False
    # the frozen file is already a gzip of the examples: the browser inflates it as it is
    gzipped = stored if source.name.endswith(freeze.SPLIT_SUFFIX) else freeze.compress(data)
    blob = base64.b64encode(gzipped).decode()
    arguments = ", ".join(map(script_json, (sha256[:16], blob, "gzip")))
    target.write_text(f"structbench.examples({arguments});\n", encoding="utf-8")
    return True


@dataclass(frozen=True)
class RunsScript:
    """One (page, model)'s runs script as plain values, for whichever process writes it (`write_runs_scripts`)."""

    path: Path
    model: str
    runs: list[tuple[RunPredictions, dict[str, str]]]
    """Each run's predictions, with split -> the name of its examples script."""


SCRIPT_TASKS = 32
"""The tasks the runs scripts are handed out in: small enough that the report's own process, once it has
written its pages, finds some no worker has started and writes them too (`Tasks.finish`)."""


def write_error_data(
    site: Site,
    pages: list[ErrorPage],
    out_dir: Path,
    *,
    earlier: Path | None = None,
    worker: Executor | None = None,
) -> Tasks[None]:
    """Write the example scripts the pages need (reusing those of the site in `earlier`, if any) and hand
    the runs script of every (page, model) to `worker` (None: this process): the caller writes the rest
    of the site meanwhile, then calls `finish` on what this returns. Encoding hundreds of megabytes of
    blocks is most of a large report's writing, and the worker has nothing else to do by then."""
    (out_dir / "data").mkdir(parents=True, exist_ok=True)
    scripts = []
    for page in pages:
        (out_dir / "errors" / page.board.slug).mkdir(parents=True, exist_ok=True)
        predictions = site.predictions[page.board.slug]
        written: dict[tuple[int, str], str | None] = {}
        for data in page.models:
            runs = []
            for run in predictions.runs[data.model]:
                files = {}
                for split in run.blocks:
                    key = (run.draw, split)
                    if key not in written:
                        written[key] = _examples_script(out_dir, predictions.examples.get(key), earlier)
                    if (name := written[key]) is not None:
                        files[split] = name
                runs.append((run, files))
            scripts.append(RunsScript(out_dir / data.script, data.model, runs))
    tasks: Tasks[None] = Tasks()
    tasks.hand_parts(worker, write_runs_scripts, scripts, SCRIPT_TASKS if worker is not None else 1)
    return tasks


def _examples_script(out_dir: Path, examples: tuple[str, Path] | None, earlier: Path | None) -> str | None:
    """The name the runs scripts know the examples script of one split by, once it is written; None where
    the split is not built here or its frozen file is not what the manifest says."""
    if examples is None:
        return None
    sha256, source = examples
    return sha256[:16] if _write_examples(out_dir, sha256, source, earlier) else None


def write_runs_scripts(scripts: list[RunsScript]) -> None:
    """Write each runs script: its runs' blocks copied as they are, base64-encoded."""
    for script in scripts:
        parts = []
        for run, files in script.runs:
            # base64 needs no escaping: joined as text, which json.dumps would scan character by character
            # (megabytes of it on a large store); the split name beside it is a store's text, escaped
            encoded = ", ".join(
                f'{script_json(split)}: "{base64.b64encode(block).decode()}"' for split, block in run.blocks.items()
            )
            parts.append(
                f'{{"seed": {script_json(run.seed)}, "draw": {script_json(run.draw)}, "examples": {script_json(files)}, '
                f'"blocks": {{{encoded}}}}}'
            )
        text = f'structbench.runs({{"model": {script_json(script.model)}, "runs": [{", ".join(parts)}]}});\n'
        with open(script.path, "w", encoding="utf-8") as handle:
            handle.write(text)
