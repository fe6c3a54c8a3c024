"""The determinism matrix: one tiny cell per model family, run in one process the way a user runs it.

`python -m tests.support.determinism serial|sweep STORE` runs every cell of `CELLS` into STORE,
serially (one `structbench run` per cell, in this process) or as one `structbench sweep --workers 2`.
`tests/runs/test_determinism.py` starts it under different hash seeds, CPU sets and executors and
asserts that every store holds the same bits; `stored` reads what it compares.
"""

from __future__ import annotations

import json
import sqlite3
import sys
from pathlib import Path
from typing import Any

import yaml

CELLS: tuple[tuple[str, str, dict[str, Any]], ...] = (
    # one epoch of the cpu-small recipe: big enough that oneDNN splits some matrix products by thread
    ("scan-length", "seq2seq-gru-attn", {"epochs": 1}),
    # decoding stops at 12 symbols (targets have at most 6): an untrained network never ends its output,
    # and decoding it to the default 64 took most of the cell's time
    (
        "lookup-tables",
        "transformer",
        {"epochs": 2, "d_model": 16, "heads": 2, "feedforward": 32, "batch_size": 16, "max_length": 12},
    ),
    (
        "agreement-attractors",
        "lstm-lm",
        {"epochs": 1, "layers": 1, "embedding": 16, "hidden": 16, "batch_size": 64, "dev_limit": 200},
    ),
    (
        "agreement-attractors-number",
        "lstm-number",
        {"epochs": 1, "layers": 1, "d_model": 16, "train_limit": 2000, "dev_limit": 200},
    ),
    ("pos-synthetic", "nhmm", {"epochs": 1, "inner_loops": 2}),
    ("dsr", "lstm-g", {"max_trials": 300}),
    ("pos-synthetic", "hmm", {"iterations": 5}),
    ("pos-synthetic", "brown", {}),
    ("agreement-attractors", "ngram", {}),
)
"""(suite, model, settings): a seq2seq, a Transformer, a language model, a classifier, nhmm, lstm-g,
hmm, brown and ngram, each at a budget that trains in seconds on one core. At these sizes most
answer the same whatever the thread count; the seq2seq cell does not (on one thread and on two it
stores different predictions), which is what the matrix must catch."""
SEED = 1


def grid() -> dict[str, Any]:
    """`CELLS` as a sweep grid file."""
    return {"seeds": [SEED], "models": [{"name": m, "suites": [s], "set": dict(v)} for s, m, v in CELLS]}


def run(mode: str, store: Path) -> int:
    from structbench.cli import main

    if mode == "sweep":
        path = store.with_suffix(".yaml")
        path.write_text(yaml.safe_dump(grid()))
        return main(["sweep", str(path), "--store", str(store), "--workers", "2", "--no-progress"])
    codes = []
    for suite, model, settings in CELLS:
        options = [part for key, value in settings.items() for part in ("--set", f"{key}={value}")]
        args = ["run", "--suite", suite, "--model", model, *options, "--seeds", str(SEED), "--store", str(store)]
        codes.append(main([*args, "--no-progress"]))
    return max(codes)


Stored = dict[tuple[str, str, int], dict[str, Any]]


def stored(path: Path) -> Stored:
    """(suite, model label, seed) -> status, model hash, every score and every predictions block."""
    with sqlite3.connect(path) as db:
        runs = db.execute("SELECT id, suite, model, seed, status, model_hash FROM runs").fetchall()
        return {
            (suite, model, seed): {
                "status": status,
                "model_hash": model_hash,
                "scores": db.execute(
                    "SELECT split, metric, breakdown, level, value FROM scores WHERE run_id=? ORDER BY 1, 2, 3, 4",
                    (run_id,),
                ).fetchall(),
                "predictions": db.execute(
                    "SELECT split, block FROM predictions WHERE run_id=? ORDER BY split", (run_id,)
                ).fetchall(),
            }
            for run_id, suite, model, seed, status, model_hash in runs
        }


def differences(expected: Stored, got: Stored) -> list[str]:
    """One line per run that is missing, extra or stored with other bits."""
    lines = [f"{key}: missing" for key in expected.keys() - got.keys()]
    lines += [f"{key}: not expected" for key in got.keys() - expected.keys()]
    for key in sorted(expected.keys() & got.keys()):
        for field in ("status", "model_hash", "scores", "predictions"):
            if expected[key][field] != got[key][field]:
                detail = json.dumps(got[key]["scores"][:3]) if field == "scores" else ""
                lines.append(f"{key}: {field} differs {detail}".rstrip())
    return lines


if __name__ == "__main__":
    sys.exit(run(sys.argv[1], Path(sys.argv[2])))
