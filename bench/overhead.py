"""Harness overhead: `oracle` through the runner vs the same solver called directly.

Both sides evaluate the same seeds on the same frozen splits. Direct: build the suite's
oracle solver from each draw's splits (by name, as the runner hands them), transduce every
test split's inputs, count exact matches. Harness: `Runner.evaluate` into a fresh SQLite store
(so nothing is answered from the store), which also loads and hash-checks the JSON lines,
computes every metric and breakdown, stores per-example predictions and aggregates the seeds
into cells (mean and 95% interval, `structbench.cells`). Supervised: the same, with each seed run
in a worker process (`structbench.execution.supervised`, as `structbench run` does), the worker started
afresh for each repeat, as for each command. Then the whole command a user types, `structbench run
--suite SUITE --model oracle --seeds 0-4` into a fresh store, supervised and with `--in-process`,
each in a fresh process (imports included).

    STRUCTBENCH_SOURCE_DIR=/path/to/data python bench/overhead.py [--repeats 5] [--before OTHER/src] [--smoke]

`--smoke` (one repeat, seeds 0 and 1, lookup-tables only) runs the same code in a few seconds.

A second table splits the per-example part of the harness into its stages on one draw's test splits:
reading a split read before (the hash-checked file's identity), the protocol's checks of a ready set of
answers, scoring them and packing the predictions block; their sum is the floor of the overhead per
example, whatever the runner's fixed costs per seed and per command.

`--before TREE/src` times the harness of another source tree too: one process per tree (its `src`
first on PYTHONPATH, this file's `harness`), the two asked in turns, `--repeats` x 4 times each, so
that a change in the machine's speed reaches both alike; it prints each tree's median and the ratio.

The last column, harness time per example beyond the model's own, is the number that
transfers: a model slower than 10x that per example is evaluated at under 1.10x its own cost.
"""

from __future__ import annotations

import argparse
import contextlib
import os
import statistics
import subprocess
import sys
import tempfile
import time
import timeit
from pathlib import Path

from structbench import registry
from structbench.data import freeze
from structbench.execution.supervised import SupervisedWorker
from structbench.protocols import ask
from structbench.runs.runner import Runner
from structbench.specs import ModelSpec, Split
from structbench.store import Store
from structbench.store.codec import pack_predictions

SEEDS = (0, 1, 2, 3, 4)
SUITES = ("lookup-tables", "lookup-tables-mt")
SMOKE_SEEDS = (0, 1)
SMOKE_SUITES = ("lookup-tables",)


def load(suite_id: str) -> dict[int, dict[str, Split]]:
    """Every frozen split of every draw, by draw and then by name (as the runner hands the oracle)."""
    suite = registry.suite(suite_id)
    manifest = freeze.ensure_built(suite)
    return {
        draw: {s.name: freeze.load_split(suite, manifest, draw, s.name) for s in suite.spec.splits}
        for draw in range(suite.spec.n_draws)
    }


def direct(suite_id: str, splits: dict[int, dict[str, Split]], seeds: tuple[int, ...]) -> float:
    suite = registry.suite(suite_id)
    tests = [s.name for s in suite.spec.splits_with_role("test")]
    started = time.perf_counter()
    for seed in seeds:
        draw = seed % suite.spec.n_draws
        solver = suite.oracle(splits[draw])
        for split in (splits[draw][name] for name in tests):
            outputs = solver.transduce([e.input for e in split.examples])  # type: ignore[attr-defined]
            correct = sum(o == e.target for o, e in zip(outputs, split.examples, strict=True))
            assert correct == len(split.examples)
    return time.perf_counter() - started


class Answering:
    """A transducer whose answers are ready: what the harness costs around a model, without the model."""

    protocols = ("transduction",)

    def __init__(self, answers: list[list[str]]) -> None:
        self.answers = answers

    def transduce(self, inputs: list[list[str]]) -> list[list[str]]:
        return [list(answer) for answer in self.answers[: len(inputs)]]


def stages(suite_id: str, splits: dict[str, Split], repeats: int) -> dict[str, float]:
    """Microseconds per test example of each per-example stage of the harness on one draw's test splits
    (best of `repeats`): reading a split it has read before, the protocol's checks of the answers
    (`ask`, around a model whose answers are ready), scoring them and packing the predictions block."""
    suite = registry.suite(suite_id)
    manifest = freeze.ensure_built(suite)
    tests = [splits[s.name] for s in suite.spec.splits_with_role("test")]
    n = sum(len(split) for split in tests)
    solver = suite.oracle(splits)
    answers = [solver.transduce([list(e.input) for e in split.examples]) for split in tests]  # type: ignore[attr-defined]
    scored = [suite.score(split, outputs) for split, outputs in zip(tests, answers, strict=True)]
    work = {
        "read": lambda: [freeze.load_split(suite, manifest, split.draw, split.name) for split in tests],
        "checks": lambda: [
            ask(Answering(outputs), suite.spec, split.examples) for split, outputs in zip(tests, answers, strict=True)
        ],
        "score": lambda: [suite.score(split, outputs) for split, outputs in zip(tests, answers, strict=True)],
        "pack": lambda: [
            pack_predictions([e.id for e in split.examples], outputs, scores.correct)
            for split, outputs, scores in zip(tests, answers, scored, strict=True)
        ],
    }
    return {name: 1e6 * min(timeit.repeat(run, number=1, repeat=repeats)) / n for name, run in work.items()}


def harness(suite_id: str, seeds: tuple[int, ...], *, supervised: bool = False) -> float:
    with tempfile.TemporaryDirectory() as folder, Store(Path(folder) / "bench.sqlite") as store:
        started = time.perf_counter()
        with SupervisedWorker(command="run", progress=False) if supervised else contextlib.nullcontext() as supervisor:
            runner = Runner(store, progress=False, supervisor=supervisor)
            runner.evaluate(suite_id, ModelSpec(name="oracle"), seeds)
        return time.perf_counter() - started


def command(suite_id: str, seeds: tuple[int, ...], *options: str) -> float:
    """Wall time of `structbench run` of the oracle into a fresh store, as a user types it."""
    with tempfile.TemporaryDirectory() as folder:
        run = [sys.executable, "-m", "structbench.cli", "run", "--suite", suite_id, "--model", "oracle"]
        run += ["--seeds", ",".join(map(str, seeds)), "--store", str(Path(folder) / "r.sqlite"), "--no-progress"]
        started = time.perf_counter()
        subprocess.run([*run, *options], check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        return time.perf_counter() - started


class Harnesses:
    """One process per source tree, each timing `harness` of one suite when asked (`--serve`)."""

    def __init__(self, suite_id: str, seeds: tuple[int, ...], trees: list[Path | None]) -> None:
        self.processes = []
        for tree in trees:
            environment = dict(os.environ)
            if tree is not None:
                environment["PYTHONPATH"] = os.pathsep.join(filter(None, [str(tree), os.environ.get("PYTHONPATH")]))
            serve = [sys.executable, __file__, "--serve", suite_id, "--seeds", ",".join(map(str, seeds))]
            self.processes.append(
                subprocess.Popen(serve, stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True, env=environment)
            )

    def rounds(self, times: int) -> list[float]:
        """Each tree's median harness seconds over `times` turns, the trees taking turns."""
        measured: list[list[float]] = [[] for _ in self.processes]
        for _ in range(times):
            for process, seconds in zip(self.processes, measured, strict=True):
                assert process.stdin is not None and process.stdout is not None
                process.stdin.write("go\n")
                process.stdin.flush()
                seconds.append(float(process.stdout.readline()))
        return [statistics.median(seconds) for seconds in measured]

    def close(self) -> None:
        for process in self.processes:
            assert process.stdin is not None
            process.stdin.close()
            process.wait(timeout=60)


def serve(suite_id: str, seeds: tuple[int, ...]) -> None:
    """Time `harness` once per line read from stdin, printing the seconds (the structbench on PYTHONPATH)."""
    harness(suite_id, seeds)  # warm-up: imports, first build
    for _ in sys.stdin:
        print(harness(suite_id, seeds), flush=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--smoke", action="store_true", help="one repeat, 2 seeds, one suite: a few seconds")
    parser.add_argument("--before", type=Path, help="also time the harness of this source tree (its src folder)")
    parser.add_argument("--serve", help=argparse.SUPPRESS)
    parser.add_argument("--seeds", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.serve:
        serve(args.serve, tuple(int(seed) for seed in args.seeds.split(",")))
        return
    repeats, seeds, suites = (1, SMOKE_SEEDS, SMOKE_SUITES) if args.smoke else (args.repeats, SEEDS, SUITES)
    print(
        f"{'suite':<18} {'examples':>9} {'direct ms':>10} {'harness ms':>11} {'ratio':>7} {'overhead us/ex':>15}"
        f" {'supervised ms':>14} {'sup/harness':>12} {'run s':>7} {'--in-process s':>15} {'ratio':>7}"
    )
    for suite_id in suites:
        splits = load(suite_id)
        tests = [s.name for s in registry.suite(suite_id).spec.splits_with_role("test")]
        n = sum(len(splits[seed % len(splits)][name]) for seed in seeds for name in tests)
        harness(suite_id, seeds)  # warm-up: imports, first build
        direct_s = statistics.median(direct(suite_id, splits, seeds) for _ in range(repeats))
        harness_s = statistics.median(harness(suite_id, seeds) for _ in range(repeats))
        supervised_s = statistics.median(harness(suite_id, seeds, supervised=True) for _ in range(repeats))
        run_s = statistics.median(command(suite_id, seeds) for _ in range(repeats))
        in_process_s = statistics.median(command(suite_id, seeds, "--in-process") for _ in range(repeats))
        overhead = 1e6 * (harness_s - direct_s) / n
        print(
            f"{suite_id:<18} {n:>9} {1e3 * direct_s:>10.1f} {1e3 * harness_s:>11.1f} {harness_s / direct_s:>7.2f}"
            f" {overhead:>15.1f} {1e3 * supervised_s:>14.1f} {supervised_s / harness_s:>12.2f} {run_s:>7.2f}"
            f" {in_process_s:>15.2f} {run_s / in_process_s:>7.2f}"
        )
    print(
        f"\n{'suite':<18} {'read us/ex':>11} {'checks us/ex':>13} {'score us/ex':>12} {'pack us/ex':>11} {'sum':>6}  (one draw, best of {5 * repeats})"
    )
    for suite_id in suites:
        per_example = stages(suite_id, load(suite_id)[0], 5 * repeats)
        cells = " ".join(
            f"{value:>{width}.2f}" for value, width in zip(per_example.values(), (11, 13, 12, 11), strict=True)
        )
        print(f"{suite_id:<18} {cells} {sum(per_example.values()):>6.2f}")
    if args.before is not None:
        print(
            f"\n{'suite':<18} {'harness ms, before':>19} {'harness ms, now':>16} {'before/now':>11}  (medians of turns)"
        )
        for suite_id in suites:
            harnesses = Harnesses(suite_id, seeds, [args.before.resolve(), None])
            try:
                before_s, now_s = harnesses.rounds(4 * repeats)
            finally:
                harnesses.close()
            print(f"{suite_id:<18} {1e3 * before_s:>19.1f} {1e3 * now_s:>16.1f} {before_s / now_s:>11.2f}")


if __name__ == "__main__":
    main()
