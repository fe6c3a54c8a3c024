"""The model labels a store holds, each with its suite version, configuration and seeds (the rows of
`structbench runs`), and the did-you-mean of every command that takes a stored label.

`compare` and `samples` name models by the label the report shows (`ngram[order=3]`, a `--name`),
which is not always a name `run --model` takes. A user who mistypes one needs the labels that are
stored, not a `run` command that would fail; so an unknown label is answered with the closest
stored labels (difflib) and the `structbench runs` command that lists them all.
"""

from __future__ import annotations

import difflib
import fnmatch
import json
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from structbench import registry
from structbench.paths import default_store_path
from structbench.specs import SuiteSpec
from structbench.store import StoreReader


@dataclass(frozen=True)
class StoredModel:
    """The runs of one model configuration on one suite version, under one label."""

    label: str
    suite: str
    version: str
    name: str
    """The model's name as `run --model` takes it (registry name, module:Class or command)."""
    params: dict[str, Any]
    """Its `--set` values."""
    configuration: dict[str, Any] | None
    """Its resolved configuration (a neural baseline's recipe), where it has one."""
    status: dict[int, str] = field(default_factory=dict)
    """seed -> `done`, `failed`, `n/a` or `running`, the newest run of that seed."""

    @property
    def key(self) -> str:
        return f"{self.suite}@{self.version}"

    @property
    def arguments(self) -> str:
        """The configuration as `run` takes it: `--model NAME --set key=value ...`."""
        sets = " ".join(f"--set {key}={json.dumps(value)}" for key, value in sorted(self.params.items()))
        return f"--model {self.name}" + (f" {sets}" if sets else "")

    def as_json(self) -> dict[str, Any]:
        return {
            "label": self.label,
            "suite": self.suite,
            "version": self.version,
            "model": {"name": self.name, "params": self.params},
            "configuration": self.configuration,
            "seeds": sorted(self.status),
            "status": {str(seed): status for seed, status in sorted(self.status.items())},
        }


def stored_models(store: StoreReader, suite: str | None = None, model: str | None = None) -> list[StoredModel]:
    """Every (label, suite version, configuration) the store holds runs of, in the order first run.

    `suite` is `ID` or `ID@VERSION`; `model` a label or model name, or a shell pattern of either
    (`'ngram*'`); a label is matched as itself first, since `ngram[order=3]` is also a pattern."""
    runs = store.runs()
    suite_id, _, version = (suite or "").partition("@")
    found: dict[tuple[str, str, str, str], StoredModel] = {}
    for row in runs.to_dict("records"):
        if (suite_id and row["suite"] != suite_id) or (version and row["version"] != version):
            continue
        record = json.loads(row["model_spec"])
        name, label = str(record.get("name", "")), str(row["model"])
        if model and model not in (label, name) and not any(fnmatch.fnmatchcase(n, model) for n in (label, name)):
            continue
        key = (label, str(row["suite"]), str(row["version"]), str(row["model_hash"]))
        if key not in found:
            found[key] = StoredModel(
                label=label,
                suite=str(row["suite"]),
                version=str(row["version"]),
                name=name,
                params=dict(record.get("params") or {}),
                configuration=record.get("configuration"),
            )
        found[key].status[int(row["seed"])] = str(row["status"])  # runs come in id order: the newest wins
    return list(found.values())


def store_option(path: Path) -> str:
    """` --store PATH` where `path` is not the default store, so that a suggested command reads the same store."""
    return "" if Path(path) == default_store_path() else f" --store {path}"


def did_you_mean(given: Sequence[str], labels: Sequence[str]) -> str:
    """`did you mean 'a' or 'b'? ` for the stored labels closest to each of `given` (difflib); empty
    where none is close."""
    close = [match for name in given for match in difflib.get_close_matches(name, labels, n=3, cutoff=0.5)]
    return f"did you mean {' or '.join(map(repr, dict.fromkeys(close)))}? " if close else ""


def unknown_label(store: StoreReader, spec: SuiteSpec, label: str) -> str:
    """Why `label` has no runs on `spec` in `store`, and what to do: the closest stored labels, the
    `structbench runs` command that lists them, and `run` only where `label` is a name it takes."""
    labels = sorted({m.label for m in stored_models(store, spec.key)})
    where = f"no runs of model {label!r} on {spec.key} in {store.path}"
    listing = f"`structbench runs --suite {spec.key}{store_option(store.path)}`"
    run = f"`structbench run --suite {spec.key} --model {label}{store_option(store.path)}`"
    runnable = label in registry.model_names()
    if not labels:
        then = run if runnable else f"`structbench run --suite {spec.key} --model NAME` (`structbench models`)"
        return f"{where}, which holds no runs on that suite; run a model on it first, e.g. {then}."
    guess = did_you_mean([label], labels)
    also = f", or run it with {run}" if runnable else ""
    return f"{where}; {guess}{listing} lists the labels stored for it{also}."
