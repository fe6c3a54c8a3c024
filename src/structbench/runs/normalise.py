"""Stored runs asked with an explicit default, moved to the default run's key.

Before structbench 0.x keyed runs without the `--set` values that ask for a model's defaults
(`structbench.runs.key.RunKey.of`), `--set depth=2` on a model whose default depth is 2
was a run of its own, shown as `shallow-composer[depth=2]` beside `shallow-composer`. Opening a
store for `run`, `sweep`, `check`, `report` or the Python API moves such runs to the key (and the
label) the same settings get today, so that they answer the default run and the leaderboard shows
one row. A run whose default twin is already stored stays where it is: both are kept, nothing is lost.
"""

from __future__ import annotations

import json
from collections.abc import Callable

from structbench import registry
from structbench.errors import UserError
from structbench.runs.key import ModelKey
from structbench.runs.request import model_label
from structbench.specs import ModelSpec
from structbench.store import Store


def normalise_store(store: Store, log: Callable[[str], None] | None = None) -> int:
    """Move every stored run of a built-in or importable model asked with an explicit default to the
    key its settings have without it (see the module docstring); the number of runs moved. A model
    that cannot be found (an uninstalled plugin) is left as it is."""
    moved_total = 0
    for suite, old_hash, record_json, label in store.model_specs():
        try:
            record = json.loads(record_json)
        except (TypeError, ValueError, RecursionError):  # a damaged row: the readers of runs name it
            continue
        params = record.get("params") if isinstance(record, dict) else None
        if not params or not isinstance(params, dict):
            continue
        try:
            key = ModelKey.of_stored(suite, record)
        except (UserError, KeyError, ImportError, ValueError):
            continue
        if not key.dropped_defaults:
            continue
        factory = registry.model_factory(key.spec.name)
        asked = ModelSpec(name=key.spec.name, params=params)
        new_label = model_label(key.spec, factory) if label == model_label(asked, factory) else None
        moved, left = store.rekey(suite, old_hash, key.record_json, key.model_hash, new_label)
        moved_total += moved
        if left and log is not None:
            log(
                f"{suite} x {label}: {left} stored runs ask for the model's defaults and the store also holds "
                "them under the default key; both are kept."
            )
    return moved_total
