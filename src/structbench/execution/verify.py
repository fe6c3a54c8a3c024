"""`structbench reference verify`: bundled reference runs made again here, and compared bit for bit.

A reference run is a claim that its key (suite data, model configuration, seed) gives its numbers on
any machine. Verifying makes each chosen run again from its key, in a supervised worker as `run`
does, into a temporary store and with an empty checkpoints folder (a cached checkpoint would reload
the weights instead of training them), and compares everything the run computed: each score of each
split and condition, each prediction, and the statistics and convergence the model reported (not
their wall-clock seconds). A run differs when any of these does, or when its key does (the suite's
data or the model's resolved configuration changed since it was bundled); the verdict then names the
first difference and the machine entries (`structbench.environments.differing`) in which this
process differs from the one that made the run.

The SIMD level is one of those entries, and the one a user can set: torch's and numpy's AVX-512
kernels round differently from their AVX2 ones. Runs recorded at AVX2 are verified with both
libraries pinned to AVX2 (as tox pins them), unless `ATEN_CPU_CAPABILITY` is set already. The CPU
model is another, which no setting makes equal: under that pin an Intel and an AMD CPU have trained
a network to other last bits, so a trained run made on one vendor's CPU may differ on the other's.

A bundle never runs code by itself (`refusal`): a run is made again only where its model is one
an installed package registers (an entry point of `structbench.models`), or a `module:Class` the
user named (`reference verify --allow-model-code`); a `command` model's run is never made again,
since its command line would come from the bundle. The command lists what it will run first.
"""

from __future__ import annotations

import contextlib
import json
import os
import tempfile
from collections.abc import Callable, Collection, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from structbench import registry
from structbench.environments import differing
from structbench.execution.supervised import SupervisedWorker
from structbench.paths import CHECKPOINTS_VARIABLE
from structbench.runs.request import ModelRequest
from structbench.runs.runner import Runner
from structbench.specs import ModelSpec
from structbench.store import Store
from structbench.store.codec import unpack_predictions
from structbench.store.database import StoredRun

AVX2_PIN = {"ATEN_CPU_CAPABILITY": "avx2", "NPY_DISABLE_CPU_FEATURES": "X86_V4 AVX512_ICL AVX512_SPR"}
"""The environment that keeps torch's and numpy's kernels at AVX2 on a CPU with AVX-512 (tox's)."""
TIMING_FIELDS = ("seconds",)
"""Entries of a run's convergence report that measure wall-clock time, not what was computed."""


@dataclass(frozen=True)
class Verdict:
    """How one bundled run compared with the same run made again here."""

    run: StoredRun
    status: Literal["identical", "differs", "failed", "refused"]
    detail: str
    """The first difference, why the run could not be made, or why it was not (`refusal`); '' when identical."""

    @property
    def where(self) -> str:
        row = self.run.row
        return f"{row['suite']}@{row['version']} x {row['model']} seed {row['seed']}"


def _environment(run: StoredRun) -> dict[str, Any]:
    try:
        value = json.loads(run.row["environment"])
    except (TypeError, ValueError):
        return {}
    return value if isinstance(value, dict) else {}


def simd_pin(runs: Sequence[StoredRun]) -> dict[str, str]:
    """The variables that make this machine's kernels those the runs recorded: the AVX2 pin when every
    run that loaded torch recorded AVX2 and the caller has not chosen a level; else nothing."""
    levels = {_environment(run).get("simd_torch") for run in runs} - {None}
    if levels != {"AVX2"} or "ATEN_CPU_CAPABILITY" in os.environ:
        return {}
    return AVX2_PIN


@contextmanager
def _environ(values: dict[str, str]) -> Iterator[None]:
    """`values` set in this process's environment for the block (the workers it starts inherit them)."""
    earlier = {name: os.environ.get(name) for name in values}
    os.environ.update(values)
    try:
        yield
    finally:
        for name, value in earlier.items():
            if value is None:
                os.environ.pop(name, None)
            else:
                os.environ[name] = value


def _first_score_difference(bundled: StoredRun, made: StoredRun) -> str | None:
    """The first score (split, metric, condition) whose value or item count differs, as a sentence."""
    want = {tuple(score[:4]): score[4:] for score in bundled.scores}
    have = {tuple(score[:4]): score[4:] for score in made.scores}
    for key in sorted(set(want) | set(have), key=str):
        if want.get(key) != have.get(key):
            split, metric, breakdown, level = key
            where = f"{split} {metric}" + (f" [{breakdown}={level}]" if breakdown else "")
            shown = [("absent" if v is None else f"{v[0]!r} over {v[1]}") for v in (want.get(key), have.get(key))]
            return f"{where}: bundled {shown[0]}, made here {shown[1]}"
    return None


def _first_prediction_difference(bundled: StoredRun, made: StoredRun) -> str | None:
    """The first example whose prediction or verdict differs, where the bundle holds predictions."""
    if not bundled.predictions:
        return None
    mine = {split: unpack_predictions(block) for split, _, block in made.predictions}
    for split, _, block in bundled.predictions:
        ids, predictions, correct = unpack_predictions(block)
        if split not in mine:
            return f"{split}: no predictions made here"
        other_ids, other_predictions, other_correct = mine[split]
        if other_ids != ids:
            return f"{split}: the examples differ ({len(ids)} bundled, {len(other_ids)} made here)"
        for example, a, b, ok_a, ok_b in zip(ids, predictions, other_predictions, correct, other_correct, strict=True):
            if a != b or ok_a != ok_b:
                return f"{split} example {example}: bundled {json.dumps(a)[:60]}, made here {json.dumps(b)[:60]}"
    return None


def _reports(run: StoredRun) -> dict[str, Any]:
    """What the model reported of its training, without wall-clock times."""
    found = _environment(run)
    convergence = found.get("convergence")
    if isinstance(convergence, dict):
        convergence = {k: v for k, v in convergence.items() if k not in TIMING_FIELDS}
    return {"statistics": found.get("statistics"), "convergence": convergence}


def compare(bundled: StoredRun, made: StoredRun) -> Verdict:
    """The verdict on `made`, the run of `bundled`'s key made again."""
    differences = []
    for column, what in (("suite_hash", "the suite's data"), ("model_hash", "the model's resolved configuration")):
        if bundled.row[column] != made.row[column]:
            differences.append(f"{what} changed since the run was bundled ({column} {str(made.row[column])[:12]})")
    if not differences:
        found = _first_score_difference(bundled, made) or _first_prediction_difference(bundled, made)
        if found is None and _reports(bundled) != _reports(made):
            found = f"the model's report of its training: bundled {_reports(bundled)}, made here {_reports(made)}"
        if found is not None:
            differences.append(found)
    if not differences:
        return Verdict(bundled, "identical", "")
    machine = differing(_environment(bundled), _environment(made))
    shown = "; ".join(differences) + (f" (this machine differs in {', '.join(machine)})" if machine else "")
    return Verdict(bundled, "differs", shown)


COMMAND_MODEL = "command"
"""The model whose settings hold a command line to run (`structbench.adapters.command`)."""


def refusal(run: StoredRun, allowed: Collection[str] = ()) -> str | None:
    """Why the bundled `run` is not made again here, or None where it may be: its model must be
    registered by an installed package, or be a `module:Class` named in `allowed` (the user's own
    word that its code may run); a `command` model never is, since its command line is the bundle's."""
    name = str(json.loads(run.row["model_spec"]).get("name", ""))
    if name == COMMAND_MODEL:
        return (
            "a command model runs the command line its bundled settings hold, and a bundle never names a command to "
            "run; run it yourself with `structbench run --model command` if you trust that command"
        )
    if name in allowed:
        return None
    if ":" in name:
        return f"{name} is code of the bundle's, not a model an installed package registers; pass --allow-model-code {name} to run it"
    if name not in registry.model_names():
        return f"{name!r} is not a model an installed package registers (`structbench models` lists them)"
    return None


def verify(
    runs: Sequence[StoredRun],
    *,
    allowed: Collection[str] = (),
    source_dir: Path | None = None,
    timeout: float | None = None,
    log: Callable[[str], None] = lambda _: None,
    ended: Callable[[Verdict], None] = lambda _: None,
) -> list[Verdict]:
    """Make each of `runs` again and compare it (see the module docstring), in order; a run `refusal`
    refuses (`allowed`: the `module:Class` models the user allows to run) is `refused` and not made.
    `ended` hears each verdict."""
    refused = {index: reason for index, run in enumerate(runs) if (reason := refusal(run, allowed)) is not None}
    made = [run for index, run in enumerate(runs) if index not in refused]
    pin = simd_pin(made)
    if pin:
        log("the runs were made with torch's and numpy's kernels at AVX2: pinning them to AVX2 here too")
    verdicts = []
    with contextlib.ExitStack() as stack:
        runner: Runner | None = None
        for index, run in enumerate(runs):
            if index in refused:
                verdict = Verdict(run, "refused", refused[index])
            else:
                if runner is None:  # the worker starts only where a run is made
                    folder = stack.enter_context(tempfile.TemporaryDirectory(prefix="structbench-verify-"))
                    stack.enter_context(_environ({**pin, CHECKPOINTS_VARIABLE: str(Path(folder) / "checkpoints")}))
                    store = stack.enter_context(Store(Path(folder) / "verify.sqlite"))
                    supervisor = stack.enter_context(
                        SupervisedWorker(
                            command="reference verify", timeout=timeout, source_dir=source_dir, progress=False
                        )
                    )
                    runner = Runner(store, source_dir=source_dir, progress=False, supervisor=supervisor)
                verdict = _made_again(runner, runner.store, run)
            ended(verdict)
            verdicts.append(verdict)
    return verdicts


def _made_again(runner: Runner, store: Store, run: StoredRun) -> Verdict:
    row = run.row
    spec = json.loads(row["model_spec"])
    asked = ModelRequest.of(ModelSpec(name=spec["name"], params=spec.get("params") or {}), name=row["model"])
    evaluation = runner.evaluation(f"{row['suite']}@{row['version']}", asked, [int(row["seed"])])
    status = evaluation.record.status.get(str(row["seed"]))
    if status != "done":
        error = evaluation.record.errors.get(str(row["seed"]), "")
        return Verdict(run, "failed", f"the run ended {status} here: {error}")
    made = store.runs()
    made = made[(made["seed"] == row["seed"]) & (made["status"] == "done")]
    return compare(run, store.stored_run(int(made["id"].iloc[-1])))
