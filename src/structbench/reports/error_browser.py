"""The error browser's data: each model's stored predictions and each suite's test examples, as scripts.

The store keeps one run's predictions of one split as a zlib block of JSON (`pack_predictions`).
The site copies those blocks as they are, base64-encoded, into one script per (suite page,
model) beside its page; the browser inflates them (`DecompressionStream("deflate")`) and shows
the examples a model got wrong. Decoding them here instead would cost about 0.26 ms per block,
11.5 s on a 10,000-run store, and the page would carry the same information. The examples
(input, gold answer and the meta keys the browser filters on) come from the suite's frozen
split files where this structbench has them built, compressed once per file and named by the
file's SHA-256, so that every model's page shares them and a re-render into the same folder
rewrites none of them. Where the data is not built here, the browser shows example ids and
predictions only.

Scripts rather than JSON files, because a page opened from disk (`file://`) may not fetch
files, while it may load scripts: each file calls `structbench.runs(...)` or
`structbench.examples(...)`, defined by `static/errors.js`.
"""

from __future__ import annotations

import base64
import json
import zlib
from collections.abc import Iterable
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path

import pandas as pd

from structbench import registry
from structbench.data import freeze
from structbench.data.sources import sha256_bytes
from structbench.errors import DataIntegrityError, UserError
from structbench.reports.boards import SuiteBoard, slug
from structbench.store import Store


@dataclass(frozen=True)
class ModelData:
    """One model's runs on a suite page, as its error browser loads them."""

    model: str
    script: str
    """Its runs' script, relative to the site root."""
    seeds: list[int]


@dataclass(frozen=True)
class ErrorPage:
    """One suite page's error browser: where it is and the models it can show."""

    board: SuiteBoard
    path: str
    """The page, relative to the site root."""
    models: list[ModelData]
    has_examples: bool
    """Whether the suite's inputs and answers are there (built here with this hash)."""

    def shows(self, model: str) -> bool:
        return any(data.model == model for data in self.models)

    def link(self, model: str) -> str:
        """The page, opened on `model`."""
        return f"{self.path}#model={slug(model)}"


def _examples_by_split(board: SuiteBoard, draws: Iterable[int]) -> dict[tuple[int, str], tuple[str, Path]]:
    """(draw, split) -> (SHA-256, frozen file) of the board's test splits, where they are built
    here with this very hash; empty otherwise."""
    try:
        suite = registry.suite(board.spec.key)
    except UserError:
        return {}
    try:
        manifest = freeze.built_manifest(suite, board.suite_hash)
    except DataIntegrityError:  # a damaged manifest: the browser shows ids and predictions only
        return {}
    if manifest is None:
        return {}
    out = {}
    folder = freeze.suite_dir(suite)
    for draw in draws:
        for split in board.splits:
            key = freeze.split_key(draw, split)
            if key in manifest.splits:
                out[(draw, split)] = (manifest.splits[key].sha256, folder / f"{key}.jsonl")
    return out


def _write_examples(out_dir: Path, sha256: str, source: Path) -> bool:
    """Write the examples script of one frozen split file unless it exists; False when the file on
    disk is missing or is not the data of `sha256` (changed since the manifest was written)."""
    target = out_dir / f"data/examples-{sha256[:16]}.js"
    if target.is_file():
        return True
    try:
        data = source.read_bytes()
    except FileNotFoundError:
        return False
    if sha256_bytes(data) != sha256:
        return False
    blob = base64.b64encode(zlib.compress(data, 6)).decode()
    target.write_text(f'structbench.examples("{sha256[:16]}", "{blob}");\n', encoding="utf-8")
    return True


def write_error_data(store: Store, runs: pd.DataFrame, board_list: list[SuiteBoard], out_dir: Path) -> list[ErrorPage]:
    """Write every (board, model) runs script and the example scripts they need; return the pages to render."""
    (out_dir / "data").mkdir(parents=True, exist_ok=True)
    done = runs[runs.status == "done"]
    by_cell: dict[tuple[str, str, str, str], list[tuple[int, int, int]]] = {}
    columns = (done[c].tolist() for c in ("suite", "version", "suite_hash", "model", "id", "seed", "draw"))
    for suite, version, suite_hash, model, run_id, seed, draw in zip(*columns, strict=True):
        by_cell.setdefault((suite, version, suite_hash, model), []).append((int(seed), int(run_id), int(draw)))
    blocks = store.prediction_blocks(done["id"].tolist())
    pages = []
    # thousands of files: their writes overlap in threads (file system calls release the GIL)
    writes: list[Future[None]] = []
    with ThreadPoolExecutor(4) as writer:
        for board in board_list:
            pages += _board_data(board, by_cell, blocks, out_dir, writer, writes)
    for write in writes:
        write.result()  # a failed write raises here
    return pages


def _board_data(
    board: SuiteBoard,
    by_cell: dict[tuple[str, str, str, str], list[tuple[int, int, int]]],
    blocks: dict[int, dict[str, bytes]],
    out_dir: Path,
    writer: ThreadPoolExecutor,
    writes: list[Future[None]],
) -> list[ErrorPage]:
    """One board's runs scripts (handed to `writer`, their futures to `writes`) and its error page, if it has
    finished runs."""
    key = (board.spec.id, board.spec.version, board.suite_hash)
    wanted = {model: sorted(by_cell[(*key, model)]) for model, _ in board.rows if (*key, model) in by_cell}
    if not wanted:
        return []
    examples = _examples_by_split(board, sorted({draw for runs_of in wanted.values() for _, _, draw in runs_of}))
    (out_dir / "errors" / board.slug).mkdir(parents=True, exist_ok=True)
    models = []
    for model, runs_of in wanted.items():
        parts = []
        for seed, run_id, draw in runs_of:
            splits = blocks.get(run_id, {})
            files = {}
            for split in splits:
                if (draw, split) in examples:
                    sha256, source = examples[(draw, split)]
                    if _write_examples(out_dir, sha256, source):
                        files[split] = sha256[:16]
            # base64 needs no JSON escaping: joined as text, which json.dumps would scan character by character
            encoded = ", ".join(f'"{split}": "{base64.b64encode(block).decode()}"' for split, block in splits.items())
            parts.append(
                f'{{"seed": {seed}, "draw": {draw}, "examples": {json.dumps(files)}, "blocks": {{{encoded}}}}}'
            )
        script = f"errors/{board.slug}/{slug(model)}.js"
        text = f'structbench.runs({{"model": {json.dumps(model)}, "runs": [{", ".join(parts)}]}});\n'
        writes.append(writer.submit(_write, out_dir / script, text))
        models.append(ModelData(model, script, [seed for seed, _, _ in runs_of]))
    return [ErrorPage(board, f"errors/{board.slug}.html", models, bool(examples))]


def _write(path: Path, text: str) -> None:
    with open(path, "w", encoding="utf-8") as handle:
        handle.write(text)
