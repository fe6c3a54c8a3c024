"""What one model on one suite, and then one seed of it, is to the harness: every fact made once.

`Keyed` is an asked model on a suite as the store keys its runs: it refuses a model that has the
suite's protocol method but declares no protocols, reads the model's facts (`model_facts`) and
hashes its key, once per (suite, model), before any data is built. `SeedContext` is one seed
of it on the built data: its draw (`seed % n_draws`), the fields `Store.claim_run` takes, and
how log lines name it. `structbench run`, a sweep's planner and its workers, `check` and the
Python API all make these two values and nothing else computes those facts, so that every one of
them keys, labels and draws a run alike.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from structbench import __version__
from structbench.data import freeze
from structbench.errors import UserError
from structbench.protocols import undeclared
from structbench.runs.identity import Asked, model_facts, model_label, model_record_json, record_hash
from structbench.runs.provenance import environment_json, git_commit
from structbench.runs.settings import without_defaults
from structbench.runs.threads import run_threads
from structbench.specs import ModelSpec
from structbench.store import config_hash
from structbench.suite import Suite


@dataclass(frozen=True)
class Keyed:
    """One asked model on one suite, as the store keys its runs."""

    suite: Suite
    asked: Asked
    facts: dict[str, Any]
    """`model_facts`, plus `limit` (and `comparable: False`) for a partial run."""
    spec: ModelSpec
    """The spec the run key holds (`Asked.keyed`: without the settings that change no answer), less
    the values that ask for the model's defaults on this suite (`without_defaults`)."""
    record: str
    """The model as the store's `model_spec` column holds it (`model_record_json`)."""
    model_hash: str
    """The model's part of the run key: SHA-256 of `record`."""
    label: str
    """The label its runs are shown under, as asked (`Asked.shown`; a model that names itself may
    replace it once built)."""
    threads: int
    """The CPU threads its runs compute on (`structbench.runs.threads`)."""

    @classmethod
    def of(cls, suite: Suite, asked: Asked) -> Keyed:
        """`asked` on `suite`, after refusing a protocol method without a `protocols` declaration:
        the last of what can be refused before any data is built or any model trained (its settings
        were checked when it was asked, `Asked.of`)."""
        if missing := undeclared(asked.factory if asked.instance is None else asked.instance, suite.spec.protocol):
            raise UserError(missing)
        spec, label = asked.keyed, asked.label
        if asked.instance is None:
            spec = without_defaults(spec, asked.factory, suite.spec.id)
            if spec != asked.keyed and not asked.named:
                label = model_label(spec, asked.factory)
        facts = model_facts(spec, suite.spec.id, asked.factory)
        if asked.limit is not None:
            facts["limit"], facts["comparable"] = asked.limit, False  # a partial run is its own, never ranked
        record = model_record_json(spec, facts)
        threads = run_threads(spec.params, facts.get("configuration"))
        return cls(suite, asked, facts, spec, record, record_hash(record), asked.shown(label), threads)

    def seed(self, manifest: freeze.Manifest, seed: int) -> SeedContext:
        """The run of `seed` on the built data `manifest` describes."""
        spec = self.suite.spec
        draw = seed % spec.n_draws
        fields = {
            "suite": spec.id,
            "version": spec.version,
            "suite_hash": manifest.suite_hash,
            "model": self.label,
            "model_spec": self.record,
            "model_hash": self.model_hash,
            "config_hash": config_hash(self.facts.get("configuration")),
            "comparable": self.facts.get("comparable", True),
            "seed": seed,
            "draw": draw,
            "harness_version": __version__,
            "git_commit": git_commit(),
            "environment": environment_json(self.threads),
        }
        return SeedContext(self, manifest, seed, draw, fields, f"{spec.key} x {self.label} seed {seed}")


@dataclass(frozen=True)
class SeedContext:
    """One seed of a keyed model on a suite's built data: what claiming, running and recording it read."""

    keyed: Keyed
    manifest: freeze.Manifest
    seed: int
    draw: int
    """The data draw the seed evaluates: `seed % n_draws`."""
    fields: dict[str, Any]
    """Everything `Store.claim_run` needs: the run key (suite data, model spec and facts, seed) and
    what is recorded with it (label, draw, harness version, git revision, environment)."""
    where: str
    """The run in a log line: `SUITE@VERSION x LABEL seed N`."""

    @property
    def suite(self) -> Suite:
        return self.keyed.suite

    @property
    def asked(self) -> Asked:
        return self.keyed.asked
