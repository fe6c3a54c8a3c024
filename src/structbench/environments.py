"""Which entries of a run's recorded environment describe its machine, and how two environments differ in them.

A run records the process that made it (`structbench.runs.provenance.environment`). Two runs of one
key whose machine entries differ (CPU, SIMD level, threads, Python, library versions) may hold
different numbers without any change of code; `differing` names those entries. It lives below the
runs and the store so that the reports, which never import the runner, can say so too.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

PACKAGES = ("numpy", "torch", "scipy", "scikit-learn", "pydantic")
"""The libraries whose version a run records: those the baselines' numbers are computed with."""
MACHINE_FIELDS = ("cpu", "simd_numpy", "simd_torch", "threads", "python", *PACKAGES)
"""The environment entries that, when two runs of one key differ in them, explain different numbers
without any change of code (`differing`)."""


def differing(made: Mapping[str, Any], here: Mapping[str, Any]) -> list[str]:
    """The machine entries (`MACHINE_FIELDS`) in which `here` differs from `made`, as `name A -> B`
    (an entry a run did not record, e.g. one stored before it was, is not compared)."""
    return [
        f"{name} {made[name]} -> {here.get(name)}"
        for name in MACHINE_FIELDS
        if made.get(name) is not None and here.get(name) is not None and made[name] != here[name]
    ]
