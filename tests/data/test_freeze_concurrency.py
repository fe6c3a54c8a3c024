"""Several processes building one suite at the same moment all succeed, with the same data.

Each repetition starts PROCESSES spawned workers on one fresh STRUCTBENCH_HOME behind a
barrier; half call `freeze.build` (as `structbench build` does), half `freeze.ensure_built`
(as `structbench run` does), and all then read every split. Even repetitions start from
nothing, odd ones from a stale build (other data under the same version, as left by older
code), so that publishing has to move a folder aside while others are reading.
"""

from __future__ import annotations

import multiprocessing
import os
import queue
import shutil
import time
from dataclasses import dataclass
from multiprocessing.synchronize import Barrier
from pathlib import Path
from typing import Any

from structbench import registry
from structbench.data import freeze
from structbench.data.sources import sha256_bytes

SUITE = "miniscan"
PROCESSES = 4
REPETITIONS = 6


@dataclass(frozen=True)
class Outcome:
    """What one worker saw in one repetition."""

    worker: int
    repetition: int
    error: str | None
    suite_hash: str | None


def _worker(worker: int, base: str, repetitions: int, barrier: Barrier, results: Any) -> None:
    """Build (even workers) or ensure-build (odd workers) the suite once per repetition, then read it."""
    suite = registry.suite(SUITE)
    for repetition in range(repetitions):
        os.environ["STRUCTBENCH_HOME"] = str(Path(base) / f"rep{repetition}")
        barrier.wait(timeout=120)
        try:
            manifest = freeze.build(suite) if worker % 2 == 0 else freeze.ensure_built(suite)
            for draw in range(suite.spec.n_draws):
                for split in suite.spec.splits:
                    freeze.load_split(suite, manifest, draw, split.name)
            results.put(Outcome(worker, repetition, None, manifest.suite_hash))
        except Exception as error:
            results.put(Outcome(worker, repetition, f"{type(error).__name__}: {error}", None))


def _stale_build(folder: Path) -> None:
    """Make the built suite at `folder` a stale one: one split changed, its manifest consistent with that."""
    suite = registry.suite(SUITE)
    manifest = freeze.Manifest.model_validate_json((folder / "manifest.json").read_bytes())
    key = sorted(manifest.splits)[0]
    split = folder / f"{key}{freeze.SPLIT_SUFFIX}"
    blob = b"".join(freeze.read_frozen(split).splitlines(keepends=True)[1:])
    split.write_bytes(freeze.compress(blob))
    splits = dict(manifest.splits)
    splits[key] = freeze.SplitDigest(sha256=sha256_bytes(blob), n_examples=blob.count(b"\n"))
    stale = freeze.Manifest(
        suite=suite.spec.id,
        version=suite.spec.version,
        n_draws=suite.spec.n_draws,
        suite_hash=freeze.suite_hash(splits),
        splits=splits,
    )
    (folder / "manifest.json").write_text(stale.model_dump_json(indent=2) + "\n")


def race(base: Path, processes: int = PROCESSES, repetitions: int = REPETITIONS) -> list[Outcome]:
    """Run the repetitions under `base` (one home per repetition) and return every worker's outcome.

    Sets STRUCTBENCH_HOME in this process while preparing the stale builds and restores it.
    """
    saved = os.environ.get("STRUCTBENCH_HOME")
    try:
        template = base / "template"
        os.environ["STRUCTBENCH_HOME"] = str(template)
        suite = registry.suite(SUITE)
        freeze.build(suite)
        _stale_build(freeze.suite_dir(suite))
        for repetition in range(1, repetitions, 2):
            shutil.copytree(template / "suites", base / f"rep{repetition}" / "suites")
    finally:
        if saved is None:
            os.environ.pop("STRUCTBENCH_HOME", None)
        else:
            os.environ["STRUCTBENCH_HOME"] = saved
    context = multiprocessing.get_context("spawn")
    barrier = context.Barrier(processes)
    results = context.Queue()
    workers = [
        context.Process(target=_worker, args=(worker, str(base), repetitions, barrier, results))
        for worker in range(processes)
    ]
    for process in workers:
        process.start()
    outcomes: list[Outcome] = []
    deadline = time.monotonic() + 120
    while len(outcomes) < processes * repetitions and time.monotonic() < deadline:
        try:
            outcomes.append(results.get(timeout=1))
        except queue.Empty:
            if not any(process.is_alive() for process in workers):
                break  # a worker died: its barrier partners fail fast, nothing more is coming
    for process in workers:
        process.join(30)
        if process.is_alive():
            process.kill()
            process.join()
    for worker, process in enumerate(workers):
        if process.exitcode != 0:
            outcomes.append(Outcome(worker, -1, f"worker exited with {process.exitcode}", None))
    return outcomes


def problems_on_disk(base: Path, repetitions: int) -> list[str]:
    """What `freeze.verify` finds in each repetition's home, plus leftover staging or stale folders."""
    saved = os.environ.get("STRUCTBENCH_HOME")
    suite = registry.suite(SUITE)
    problems: list[str] = []
    try:
        for repetition in range(repetitions):
            os.environ["STRUCTBENCH_HOME"] = str(base / f"rep{repetition}")
            problems += [f"rep{repetition}: {problem}" for problem in freeze.verify(suite)]
            folder = freeze.suite_dir(suite).parent
            problems += [
                f"rep{repetition}: leftover {p.name}"
                for p in (folder.iterdir() if folder.is_dir() else ())
                if p.name.startswith(".") and not p.name.endswith(".lock")
            ]
    finally:
        if saved is None:
            os.environ.pop("STRUCTBENCH_HOME", None)
        else:
            os.environ["STRUCTBENCH_HOME"] = saved
    return problems


def test_concurrent_builds_of_one_suite_all_succeed_with_the_same_data(tmp_path: Path) -> None:
    released = freeze.expected_manifest(registry.suite(SUITE))
    assert released is not None  # the suite is released, so "the same data" means its manifest
    outcomes = race(tmp_path)
    failures = [o for o in outcomes if o.error is not None]
    assert failures == []
    assert len(outcomes) == PROCESSES * REPETITIONS
    assert {o.suite_hash for o in outcomes} == {released.suite_hash}
    assert problems_on_disk(tmp_path, REPETITIONS) == []
