"""Golden results: every baseline on the offline suites with fixed seeds, per seed and split.

- The trivial and classical baselines (oracle, copy, random, majority; n-gram, unigram, HMM at
  5 EM steps, Brown by Liang's objective and by within-sentence bigrams) on every suite that
  builds from the published data. Pairs a model does not serve are recorded as `n/a` (a change
  there is drift too).
- Each neural baseline on one suite it applies to, at its cpu-small budget where that trains
  in seconds and at a tiny fixed budget otherwise.

Every value is compared exactly (tolerance 0): a run's numbers are a function of its key
(docs/architecture.md, "Determinism") at the library versions `constraints.txt` pins and the
SIMD level tox pins (AVX2 kernels for torch and numpy). What the table was made with is recorded
beside it (`golden.environment.json`, `made_with`), and `structbench check` says whether this
machine differs from it when a cell moves.

The AVX2 pin makes the table repeat on CPUs of one vendor, not across vendors: on an Intel Xeon
(AVX-512) the table written on an AMD EPYC moved in one cell (attentive guidance at 4 epochs on
lookup-tables-mt, near chance, where a last-bit difference flips a few answers), and neither MKL's
reproducibility branches (`MKL_CBWR`) nor oneDNN's ISA cap gave the AMD numbers back. So the cells
that differ on another vendor's CPUs are kept beside the table, by vendor (`BY_VENDOR`), and
`expected` is the table as this machine should reproduce it.

`golden_file` is the table as `structbench check` reads it: the regression test checks the
numbers through that command, the one a model author runs on their own golden file, and
`coverage` only says which suites, models and cells are new. `python -m tests.regression.golden`
rewrites `golden.json` from the code under test; `python -m tests.regression.golden --vendor`
writes, for this machine's CPU vendor, the cells where it differs from `golden.json` into
`BY_VENDOR`. Do either only for an intended change or a new vendor, review the diff, and commit it
with the reason.
"""

from __future__ import annotations

import json
import sys
import tempfile
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from structbench import __version__, registry
from structbench.analysis.golden import GoldenCell, GoldenEntry, GoldenFile, environment
from structbench.data import freeze
from structbench.errors import SourceUnavailable
from structbench.runs.provenance import cpuinfo_field
from structbench.runs.runner import Runner
from structbench.specs import ModelSpec, ResultRecord
from structbench.store import Store

GOLDEN = Path(__file__).with_name("golden.json")
MADE_WITH = GOLDEN.with_name("golden.environment.json")
"""The machine and library versions `golden.json` was made with (`made_with`), written beside it."""
BY_VENDOR = GOLDEN.with_name("golden.by-vendor.json")
"""CPU vendor (`/proc/cpuinfo`'s vendor_id) -> `made_with` (that machine) and `cells` (suite -> model
label -> cell): the cells of `golden.json` whose values that vendor's CPUs give otherwise."""
FAST = (
    ModelSpec(name="oracle"),
    ModelSpec(name="copy"),
    ModelSpec(name="random"),
    ModelSpec(name="majority"),
    ModelSpec(name="ngram"),
    ModelSpec(name="unigram"),
    ModelSpec(name="hmm", params={"iterations": 5}),
    ModelSpec(name="brown"),
    ModelSpec(name="brown", params={"objective": "sentence-bigrams"}),  # brown's default before Liang's objective
)
TINY_SEQ2SEQ = {"epochs": 2, "hidden": 16, "embedding": 8, "batch_size": 16}
SMALL_SEQ2SEQ = {"epochs": 4, "hidden": 32, "embedding": 16, "batch_size": 8}
"""Where two epochs of TINY_SEQ2SEQ leave every token of lookup-tables-mt wrong, which no drift would change."""
NEURAL = {
    # the cpu-small budget where it trains in seconds ...
    "lstm-thrush": ("miniscan", {}),
    "lla-lstm": ("miniscan", {}),
    # ... and a tiny one elsewhere (the lookup-tables-mt recipes of the next three took 2-7 minutes each, most of
    # this table's time, and drift in the shared trainer and networks shows at any budget that learns something)
    "seq2seq-gru-attn": ("lookup-tables-mt", SMALL_SEQ2SEQ),
    "attentive-guidance": ("lookup-tables-mt", SMALL_SEQ2SEQ),
    "seq2attn": ("lookup-tables-mt", {**SMALL_SEQ2SEQ, "embedding": 32}),  # its full context needs embedding = hidden
    "seq2seq": ("lookup-tables-mt", TINY_SEQ2SEQ),
    "seq2seq-lstm": ("lookup-tables", TINY_SEQ2SEQ),
    "seq2seq-srn": ("lookup-tables", TINY_SEQ2SEQ),
    "attentive-guidance-oracle": ("lookup-tables", TINY_SEQ2SEQ),
    "transformer": ("lookup-tables", {"epochs": 2, "d_model": 16, "heads": 2, "feedforward": 32, "batch_size": 16}),
    "lla-lstm-noadv": ("miniscan", {"epochs": 3, "hidden": 16, "embedding": 8, "lexicon_epochs": 2}),
}
"""Neural baseline -> (suite, settings of a tiny budget on top of its cpu-small recipe)."""
NEURAL_SPECS = [ModelSpec(name=name, params=settings) for name, (_, settings) in NEURAL.items()]
NEURAL_LABELS = {spec.label for spec in NEURAL_SPECS}
"""A neural baseline runs on seed 0 alone (`compute`)."""
MODELS: dict[str, tuple[ModelSpec, float | None]] = {
    **{spec.label: (spec, None) for spec in FAST},
    **{spec.label: (spec, None) for spec in NEURAL_SPECS},
}
"""The table's model labels -> what `--model`/`--set` ask for, and a tolerance (none: every cell is exact)."""


def seeds_of(suite: str) -> tuple[int, ...]:
    """Three seeds (three data draws) where a suite has several draws, else seed 0."""
    return (0, 1, 2) if registry.suite(suite).spec.n_draws > 1 else (0,)


def offline_suites() -> list[str]:
    """The suites that build from the published data (not those whose files a user supplies)."""
    names = []
    for name in registry.suite_names():
        try:
            freeze.ensure_built(registry.suite(name))
        except SourceUnavailable:
            continue
        names.append(name)
    return names


def _per_seed(record: ResultRecord, split: str) -> dict[str, list[float]]:
    """metric (breakdowns as `metric[key=level]`) -> per-seed values of one split."""
    values = {metric: stats.per_seed for metric, stats in record.scores[split].items()}
    for metric, by_key in record.breakdowns.get(split, {}).items():
        for key, by_level in by_key.items():
            values.update({f"{metric}[{key}={level}]": stats.per_seed for level, stats in by_level.items()})
    return values


def _cell(record: ResultRecord) -> Any:
    """A model's entry: split -> metric -> per-seed values, or its status where no seed finished."""
    if not any(status == "done" for status in record.status.values()):
        return sorted(set(record.status.values()))[0]  # `n/a` or `failed`
    return {split: _per_seed(record, split) for split in record.scores}


def compute(store_path: Path | None = None) -> dict[str, Any]:
    """suite -> {suite_hash, model label -> split -> metric -> per-seed values, or `n/a`}, from the
    store at `store_path` where it holds the runs (a fresh one where None)."""
    with tempfile.TemporaryDirectory() as folder:
        return _table(store_path or Path(folder) / "golden.sqlite")


def _table(store_path: Path) -> dict[str, Any]:
    table: dict[str, Any] = {}
    with Store(store_path) as store:
        runner = Runner(store, progress=False)
        runner.log = lambda message: None
        for suite in offline_suites():
            entry: dict[str, Any] = {}
            for model in FAST:
                record = runner.evaluate(suite, model, seeds_of(suite))
                entry["suite_hash"] = record.suite_hash
                entry[model.label] = _cell(record)
            table[suite] = entry
        for name, (suite, settings) in NEURAL.items():
            model = ModelSpec(name=name, params=settings)
            table[suite][model.label] = _cell(runner.evaluate(suite, model, (0,)))
    return table


def golden_file(table: Mapping[str, Any], models: Mapping[str, tuple[ModelSpec, float | None]] = MODELS) -> GoldenFile:
    """`table` (as `golden.json` holds it) as the golden file `structbench check` reads: one entry per
    suite x model of `models` (label -> spec and tolerance), each cell's per-seed values pinned, a
    pair where no seed finished as its status. Models `models` does not name are left to `coverage`."""
    entries = []
    for suite, by_model in sorted(table.items()):
        key = registry.suite(suite).spec.key
        for label, cell in sorted(by_model.items()):
            if label not in models:
                continue
            spec, tolerance = models[label]
            cells = []
            if not isinstance(cell, str):
                cells = [
                    GoldenCell(split=split, metric=metric, mean=sum(values) / len(values), per_seed=values)
                    for split, by_metric in sorted(cell.items())
                    for metric, values in sorted(by_metric.items())
                ]
            entries.append(
                GoldenEntry(
                    suite=key,
                    suite_hash=by_model["suite_hash"],
                    model=spec.name,
                    settings=dict(spec.params),
                    seeds=[0] if label in NEURAL_LABELS else list(seeds_of(suite)),
                    cells=cells,
                    status=cell if isinstance(cell, str) else None,
                    tolerance=tolerance,
                )
            )
    return GoldenFile(structbench=__version__, tolerance=0.0, entries=entries, environment=made_with())


def coverage(expected: Mapping[str, Any], actual: Mapping[str, Any]) -> list[str]:
    """One line per suite, model or cell that one table has and the other lacks (what `check`, which
    asks only for the cells of the golden file, cannot see): the table is to be written anew."""
    lines = []
    for suite in sorted(set(expected) | set(actual)):
        was, now = expected.get(suite), actual.get(suite)
        if was is None or now is None:
            lines.append(f"{suite}: {'new suite' if was is None else 'no longer computed'}")
            continue
        for model in sorted((set(was) | set(now)) - {"suite_hash"}):
            old, new = was.get(model), now.get(model)
            if old is None or new is None:
                lines.append(f"{suite} {model}: {'new model' if old is None else 'no longer computed'}")
            elif isinstance(old, dict) and isinstance(new, dict):
                lines.extend(
                    f"{suite} {model} {split} {metric}: new cell"
                    for split in sorted(new)
                    for metric in sorted(new[split])
                    if metric not in old.get(split, {})
                )
    return lines


def machine() -> dict[str, Any]:
    """This process's environment as a golden file records it (`structbench.analysis.golden.environment`:
    CPU, SIMD levels, Python and package versions), less the git revision: the table is committed
    after the code that made it, often from a tree with changes."""
    return {key: value for key, value in environment(with_torch=True).items() if key != "git"}


def made_with() -> dict[str, Any]:
    """What the committed table was made with (`MADE_WITH`)."""
    recorded: dict[str, Any] = json.loads(MADE_WITH.read_text())
    return recorded


def cpu_vendor() -> str:
    """This machine's CPU vendor as Linux names it (`GenuineIntel`, `AuthenticAMD`); "" where
    /proc/cpuinfo does not say."""
    return cpuinfo_field("vendor_id")


def expected(vendor: str | None = None) -> dict[str, Any]:
    """`golden.json` with the cells `BY_VENDOR` holds for `vendor`'s CPUs (this machine's where None)
    in place of its own: what a run on this machine must reproduce."""
    table: dict[str, Any] = json.loads(GOLDEN.read_text())
    by_vendor: dict[str, Any] = json.loads(BY_VENDOR.read_text())
    for suite, cells in by_vendor.get(cpu_vendor() if vendor is None else vendor, {}).get("cells", {}).items():
        table[suite].update(cells)
    return table


def vendor_cells(table: Mapping[str, Any]) -> dict[str, Any]:
    """suite -> model label -> cell: where `table` (computed here) differs from `golden.json`."""
    committed = json.loads(GOLDEN.read_text())
    return {
        suite: moved
        for suite, by_model in table.items()
        if (moved := {label: cell for label, cell in by_model.items() if committed.get(suite, {}).get(label) != cell})
    }


if __name__ == "__main__":
    if sys.argv[1:] == ["--vendor"]:
        recorded = json.loads(BY_VENDOR.read_text())
        recorded[cpu_vendor()] = {"cells": vendor_cells(compute()), "made_with": machine()}
        BY_VENDOR.write_text(json.dumps(recorded, indent=1, sort_keys=True) + "\n")
        print(f"wrote the cells of {cpu_vendor()} CPUs to {BY_VENDOR}", file=sys.stderr)
    else:
        GOLDEN.write_text(json.dumps(compute(), indent=1, sort_keys=True) + "\n")
        MADE_WITH.write_text(json.dumps(machine(), indent=1, sort_keys=True) + "\n")
        print(f"wrote {GOLDEN} and {MADE_WITH}", file=sys.stderr)
