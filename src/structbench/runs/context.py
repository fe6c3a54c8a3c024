"""What one model on one suite, and then one seed of it, is to the harness: every fact made once.

`ModelOnSuite` is a requested model on a suite: it refuses a model that has the suite's protocol
method but declares no protocols, and makes its runs' model key (`structbench.runs.key.ModelKey`),
the label they are shown under and the threads they compute on, once per (suite, model), before any
data is built. `SeedRun` is one seed of it on the built data: its run key (`RunKey`), its draw
(`seed % n_draws`), the fields `Store.claim_run` takes, and how log lines name it. `structbench run`,
a sweep's planner and its workers, `check` and the Python API all make these two values and nothing
else computes those facts, so that every one of them keys, labels and draws a run alike.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from structbench import __version__
from structbench.data import freeze
from structbench.errors import UserError
from structbench.protocols import undeclared
from structbench.runs.key import ModelKey, RunKey
from structbench.runs.provenance import environment_json, git_commit
from structbench.runs.request import ModelRequest, model_label
from structbench.runs.threads import run_threads
from structbench.suite import Suite


@dataclass(frozen=True)
class ModelOnSuite:
    """One requested model on one suite: its runs' model key, label and threads."""

    suite: Suite
    request: ModelRequest
    key: ModelKey
    """The model's part of its runs' keys on this suite."""
    label: str
    """The label its runs are shown under, as asked (`ModelRequest.shown`; a model that names itself
    may replace it once built)."""
    threads: int
    """The CPU threads its runs compute on (`structbench.runs.threads`)."""

    @classmethod
    def of(cls, suite: Suite, request: ModelRequest) -> ModelOnSuite:
        """`request` on `suite`, after refusing a protocol method without a `protocols` declaration:
        the last of what can be refused before any data is built or any model trained (its settings
        were checked when it was asked, `ModelRequest.of`)."""
        if missing := undeclared(
            request.factory if request.instance is None else request.instance, suite.spec.protocol
        ):
            raise UserError(missing)
        key = ModelKey.of(suite.spec.id, request)
        label = request.label
        if key.dropped_defaults and not request.named:
            label = model_label(key.spec, request.factory)  # an explicit default is shown as the default
        threads = run_threads(key.spec.params, key.facts.get("configuration"))
        return cls(suite, request, key, request.shown(label), threads)

    def seed_run(self, manifest: freeze.Manifest, seed: int) -> SeedRun:
        """The run of `seed` on the built data `manifest` describes."""
        spec = self.suite.spec
        key = RunKey.of(spec, manifest.suite_hash, self.key, seed)
        draw = seed % spec.n_draws
        claim_fields = {
            **key.stored_fields(),
            "model": self.label,
            "draw": draw,
            "harness_version": __version__,
            "git_commit": git_commit(),
            "environment": environment_json(self.threads),
        }
        return SeedRun(self, manifest, key, draw, claim_fields, f"{spec.key} x {self.label} seed {seed}")


@dataclass(frozen=True)
class SeedRun:
    """One seed of a model on a suite's built data: its key, and what claiming, running and recording it read."""

    model: ModelOnSuite
    manifest: freeze.Manifest
    key: RunKey
    draw: int
    """The data draw the seed evaluates: `seed % n_draws`."""
    claim_fields: dict[str, Any]
    """Everything `Store.claim_run` needs: the run key's fields (`RunKey.stored_fields`) and what is
    recorded with it (label, draw, harness version, git revision, environment)."""
    where: str
    """The run in a log line: `SUITE@VERSION x LABEL seed N`."""

    @property
    def seed(self) -> int:
        return self.key.seed

    @property
    def suite(self) -> Suite:
        return self.model.suite

    @property
    def request(self) -> ModelRequest:
        return self.model.request
