"""What the error browser shows, gathered at build time: each model's stored predictions on a board and
the board's test examples where this structbench has them built (but never those of a split the suite
declares unpublished, `Suite.unpublished_splits`).

The store keeps one run's predictions of one split as a zlib block of JSON (`pack_predictions`);
the build reads the blocks of the current finished runs as they are (`Store.prediction_blocks`),
this module sorts them by board and model, and the error browser's writer
(`structbench.reports.writers.error_browser`) copies them into the site. The examples are the suite's frozen split files, found
through the manifest of the very data hash the board shows; where that data is not built here the
browser shows example ids and predictions only. Runs are the current runs
(`structbench.cells.current_runs`), as on the board.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path

import pandas as pd

from structbench import registry
from structbench.data import freeze
from structbench.errors import DataIntegrityError, UserError
from structbench.reports.builders.suite_board import SuiteBoard


@dataclass(frozen=True)
class RunPredictions:
    """One finished run's predictions as stored."""

    seed: int
    draw: int
    blocks: dict[str, bytes]
    """split -> its predictions' zlib block."""


@dataclass(frozen=True)
class BoardPredictions:
    """One board's predictions and examples."""

    runs: dict[str, list[RunPredictions]]
    """model -> its finished runs in seed order, for the board's models that have any (in board order)."""
    examples: dict[tuple[int, str], tuple[str, Path]] = field(default_factory=dict)
    """(draw, split) -> (SHA-256, frozen file) of the test splits built here with the board's hash."""


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
    for draw in draws:
        for split in board.splits:
            if split in suite.unpublished_splits:  # the authors keep its text from crawlers: ids and predictions only
                continue
            key = freeze.split_key(draw, split)
            if key in manifest.splits:
                out[(draw, split)] = (manifest.splits[key].sha256, freeze.split_file(suite, key))
    return out


def board_predictions(
    blocks: Mapping[int, dict[str, bytes]], current: pd.DataFrame, board_list: list[SuiteBoard]
) -> dict[str, BoardPredictions]:
    """board slug -> its predictions and examples, for the boards with finished runs among `current`
    (current runs); `blocks` holds run id -> split -> predictions block of the finished ones."""
    done = current[current.status == "done"]
    by_cell: dict[tuple[str, str, str, str], list[tuple[int, int, int]]] = {}
    columns = (done[c].tolist() for c in ("suite", "version", "suite_hash", "model", "id", "seed", "draw"))
    for suite, version, suite_hash, model, run_id, seed, draw in zip(*columns, strict=True):
        by_cell.setdefault((suite, version, suite_hash, model), []).append((int(seed), int(run_id), int(draw)))
    out = {}
    for board in board_list:
        key = (board.spec.id, board.spec.version, board.suite_hash)
        wanted = {model: sorted(by_cell[(*key, model)]) for model, _ in board.rows if (*key, model) in by_cell}
        if not wanted:
            continue
        draws = sorted({draw for runs_of in wanted.values() for _, _, draw in runs_of})
        out[board.slug] = BoardPredictions(
            {
                model: [RunPredictions(seed, draw, blocks.get(run_id, {})) for seed, run_id, draw in runs_of]
                for model, runs_of in wanted.items()
            },
            _examples_by_split(board, draws),
        )
    return out
