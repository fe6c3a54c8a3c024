"""What pinning a run to one CPU thread costs, and whether torch's deterministic-algorithms mode changes anything.

Every run computes on a fixed thread count (`structbench.runs.threads`: 1 unless `threads=N`
says otherwise, and a count other than 1 keys the run), because a number trained on two threads
need not equal one trained on one. This bench measures, side by side in one run, for three neural
baselines at their `cpu-small` recipe cut to `epochs=1` (`seq2seq-gru-attn` on scan-length,
`lstm-lm` on agreement-attractors, `nhmm` on pos-synthetic):

1. training examples per second at `threads=1` and at `threads=2`, their ratio, and whether the
   stored predictions of the two are bit-identical;
2. the same at `threads=1` with `torch.use_deterministic_algorithms(True)` set in the process
   before the run, against the plain `threads=1` run: the ratio, and whether its predictions are
   bit-identical.

Each measurement is one seed (0) of `structbench.evaluate(SUITE, MODEL, settings=...)` in a fresh
process with a STRUCTBENCH_HOME and a store of its own (the built suites linked in), so that no
checkpoint is reused and no setting leaks from one measurement into the next; the process is this
script started with `--worker`, which switches deterministic algorithms on where asked. Per
repetition the runs go 1 thread, 2 threads, 1 thread deterministic (`--repeats`, default 2), so
that a shared machine's slow moments hit all three alike; the best of the repetitions is shown.

Training examples per second are the examples trained on over the run's `fit_seconds` in the
store (the harness's timing of `fit`, which for `seq2seq-gru-attn` includes its end-of-epoch dev
evaluation on 500 examples): epochs x the train split for `seq2seq-gru-attn` and `lstm-lm`. `nhmm`
trains in `induce`, which the harness calls as a prediction (its `fit` only keeps the sentences),
so its time is `fit_seconds + predict_seconds` (training, then Viterbi tagging of the 3,000 test
sentences) and its examples are the sentences it trains on: the train split and the test sentences
it has not seen, those of at most `max_train_length` words. The `timed` column says which. Two runs'
predictions are identical when every stored prediction block (example ids, predictions and their
correctness, compressed JSON) is equal byte for byte; `n/N` counts the repetitions where they were.

    STRUCTBENCH_SOURCE_DIR=/path/to/data python bench/threads.py [--repeats 2] [--epochs 1]

`--smoke` runs the same code in seconds on one tiny network (`seq2seq-gru-attn` of 8 units on
lookup-tables-mt), one repetition; its figures then mean nothing.
"""

from __future__ import annotations

import argparse
import json
import os
import sqlite3
import subprocess
import sys
import tempfile
from dataclasses import dataclass
from itertools import pairwise
from pathlib import Path
from typing import Any

from tabulate import tabulate

REPOSITORY = Path(__file__).resolve().parents[1]

MEASURED: tuple[tuple[str, str, dict[str, Any]], ...] = (
    ("seq2seq-gru-attn", "scan-length", {}),
    ("lstm-lm", "agreement-attractors", {}),
    ("nhmm", "pos-synthetic", {}),
)
"""(model, suite, settings beyond `epochs` and `threads`) of the full bench: the recipe's cpu-small."""

SMOKE: tuple[tuple[str, str, dict[str, Any]], ...] = (
    ("seq2seq-gru-attn", "lookup-tables-mt", {"hidden": 8, "embedding": 8}),
)
"""One of the three models on a tiny network and a tiny suite: seconds of training, most of the smoke's
time being its three fresh processes' imports (torch's among them). The other two go through the same
code but for the neural HMM's timing (fit and prediction), which only the full bench exercises."""

TRAINS_IN_PREDICTION = frozenset({"nhmm"})
"""Models that train when asked to predict (tag induction: `induce` is given K), not in `fit`."""

MODES = ("1 thread", "2 threads", "1 thread, deterministic")
"""The runs of one repetition, in the order they are made."""


@dataclass(frozen=True)
class Measured:
    """One stored run of a measurement."""

    seconds: float
    """fit_seconds, plus predict_seconds for a model that trains in prediction."""
    blocks: dict[str, bytes]
    """split -> its stored prediction block."""
    threads: int
    """The thread count its stored environment records."""
    deterministic: bool
    """Whether deterministic algorithms were on in its process (the worker's report)."""


def worker(suite: str, model: str, settings: dict[str, Any], store: Path, deterministic: bool) -> None:
    """One seed of `model` on `suite` into `store`, with deterministic algorithms on if asked;
    prints whether they were on after the run (so that the parent knows the switch held)."""
    import torch

    import structbench

    if deterministic:
        torch.use_deterministic_algorithms(True)
    record = structbench.evaluate(suite, model, [0], settings=settings, store=store, progress=False)
    if record.status.get("0") != "done":
        sys.exit(f"{model} on {suite} with {settings}: status {record.status}")
    print(json.dumps({"deterministic": torch.are_deterministic_algorithms_enabled()}))


def measure(
    base: Path, built: Path, name: str, suite: str, model: str, settings: dict[str, Any], deterministic: bool
) -> Measured:
    """Run `worker` in a fresh process with a home and store of its own; the run as stored."""
    home = base / name
    home.mkdir()
    (home / "suites").symlink_to(built, target_is_directory=True)
    store = home / "results.sqlite"
    threads = str(settings.get("threads", 1))  # what the run pins torch and BLAS to, from torch's import on
    environment = {**os.environ, "STRUCTBENCH_HOME": str(home), "OMP_NUM_THREADS": threads}
    command = [sys.executable, str(Path(__file__).resolve()), "--worker", suite, model, json.dumps(settings)]
    command += ["--store", str(store)] + (["--deterministic"] if deterministic else [])
    done = subprocess.run(command, cwd=REPOSITORY, env=environment, capture_output=True, text=True, check=False)
    if done.returncode != 0:
        sys.exit(f"{model} on {suite} ({name}) failed:\n{done.stderr[-3000:]}")
    report = json.loads(done.stdout.strip().splitlines()[-1])
    db = sqlite3.connect(store)
    try:
        ((run_id, fit, predict, environment_json),) = db.execute(
            "SELECT id, fit_seconds, predict_seconds, environment FROM runs"
        ).fetchall()
        blocks = dict(db.execute("SELECT split, block FROM predictions WHERE run_id=?", (run_id,)).fetchall())
    finally:
        db.close()
    seconds = fit + predict if model in TRAINS_IN_PREDICTION else fit
    threads = json.loads(environment_json)["threads"]
    return Measured(seconds, blocks, threads, bool(report["deterministic"]))


def examples_trained(model: str, suite: str, settings: dict[str, Any]) -> int:
    """The training examples one run sees: epochs x the train split, or for a model that trains
    in prediction, the sentences `nhmm` trains on (see the module's docstring)."""
    import structbench
    from structbench import registry

    resolved, _ = registry.model_factory(model)(**settings).resolve(suite)
    loaded = structbench.load_suite(suite)
    train = [list(e.input) for e in loaded.split("train").examples]
    if model not in TRAINS_IN_PREDICTION:
        return int(resolved.epochs) * len(train)
    known = {tuple(s) for s in train}
    tests = [s.name for s in loaded.spec.splits_with_role("test")]
    unseen = [list(e.input) for t in tests for e in loaded.split(t).examples if tuple(e.input) not in known]
    limit = resolved.max_train_length
    return int(resolved.epochs) * sum(1 for s in train + unseen if s and (limit is None or len(s) <= limit))


def identical(runs: list[tuple[Measured, Measured]]) -> str:
    """`yes n/n`, or `no k/n`: the repetitions whose two runs' prediction blocks are equal byte for byte."""
    same = sum(a.blocks == b.blocks for a, b in runs)
    return f"{'yes' if same == len(runs) else 'no'} {same}/{len(runs)}"


def bench(measured: tuple[tuple[str, str, dict[str, Any]], ...], repeats: int, epochs: int) -> None:
    import torch

    import structbench
    from structbench import registry
    from structbench.data import freeze
    from structbench.paths import built_suites_dir

    for suite in sorted({suite for _, suite, _ in measured}):
        freeze.ensure_built(registry.suite(suite))
    built = built_suites_dir()
    loads = [os.getloadavg()[0]]
    speed_rows, deterministic_rows = [], []
    with tempfile.TemporaryDirectory(prefix="threads-bench-") as folder:
        base = Path(folder)
        for model, suite, extra in measured:
            examples = examples_trained(model, suite, {**extra, "epochs": epochs})
            runs: dict[str, list[Measured]] = {mode: [] for mode in MODES}
            for repeat in range(repeats):
                for mode in MODES:
                    settings = {**extra, "epochs": epochs, "threads": 2 if mode == "2 threads" else 1}
                    name = f"{model}-{repeat}-{MODES.index(mode)}"
                    run = measure(base, built, name, suite, model, settings, mode.endswith("deterministic"))
                    if run.threads != settings["threads"] or run.deterministic != mode.endswith("deterministic"):
                        sys.exit(
                            f"{model} {mode}: the run recorded {run.threads} threads, deterministic {run.deterministic}"
                        )
                    runs[mode].append(run)
                    loads.append(os.getloadavg()[0])
            best = {mode: examples / min(r.seconds for r in runs[mode]) for mode in MODES}
            one, two, strict = (runs[mode] for mode in MODES)
            timed = "fit+predict" if model in TRAINS_IN_PREDICTION else "fit"
            speed_rows.append(
                [
                    model, suite, f"{examples:,}", timed, f"{best[MODES[0]]:.1f}", f"{best[MODES[1]]:.1f}",
                    f"{best[MODES[1]] / best[MODES[0]]:.2f}", identical(list(zip(one, two, strict=True))),
                    identical(list(pairwise(one))) if repeats > 1 else "-",
                ]
            )  # fmt: skip
            deterministic_rows.append(
                [
                    model, suite, f"{best[MODES[0]]:.1f}", f"{best[MODES[2]]:.1f}",
                    f"{best[MODES[2]] / best[MODES[0]]:.2f}", identical(list(zip(one, strict, strict=True))),
                ]
            )  # fmt: skip
    print(
        f"torch {torch.__version__}, structbench {structbench.__version__}, cpus {os.cpu_count()}, "
        f"epochs={epochs}, seed 0, best of {repeats}, 1-minute load average {min(loads):.1f} to {max(loads):.1f}"
    )
    print()
    print("threads: training examples per second")
    headers = ["model", "suite", "examples", "timed", "1 thread ex/s", "2 threads ex/s", "2 / 1"]
    headers += ["predictions 1 = 2", "1 = 1 across repeats"]
    print(tabulate(speed_rows, headers=headers, disable_numparse=True))
    print()
    print("torch.use_deterministic_algorithms(True), 1 thread")
    headers = ["model", "suite", "plain ex/s", "deterministic ex/s", "det / plain", "predictions plain = det"]
    print(tabulate(deterministic_rows, headers=headers, disable_numparse=True))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--repeats", type=int, default=2, help="repetitions of the 1, 2, 1-deterministic runs")
    parser.add_argument("--epochs", type=int, default=1, help="training epochs of every run")
    parser.add_argument("--smoke", action="store_true", help="tiny networks, one repetition: seconds")
    parser.add_argument("--worker", nargs=3, metavar=("SUITE", "MODEL", "SETTINGS"), help=argparse.SUPPRESS)
    parser.add_argument("--store", type=Path, help=argparse.SUPPRESS)
    parser.add_argument("--deterministic", action="store_true", help=argparse.SUPPRESS)
    arguments = parser.parse_args()
    if arguments.worker:
        suite, model, settings = arguments.worker
        worker(suite, model, json.loads(settings), arguments.store, arguments.deterministic)
    elif arguments.smoke:
        bench(SMOKE, 1, 1)
    else:
        bench(MEASURED, arguments.repeats, arguments.epochs)


if __name__ == "__main__":
    main()
