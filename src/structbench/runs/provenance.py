"""What a run records of the code and the machine that made it: the git revision and the environment.

Neither is part of the run key: they say where a stored number came from, so that a cell that moves
can be told apart as "this machine differs" (CPU, SIMD level, library versions, threads) or "the
code changed" (structbench version, git revision). A sweep's worker also compares its git revision
with the driver's before it runs anything.
"""

from __future__ import annotations

import importlib
import importlib.metadata as metadata
import json
import os
import platform
import subprocess
import sys
from functools import cache
from pathlib import Path
from typing import Any

from structbench import __version__
from structbench.environments import PACKAGES


@cache
def git_commit() -> str | None:
    """The git revision of this structbench checkout; None for an installed copy (no git)."""
    try:
        out = subprocess.run(
            ["git", "rev-parse", "HEAD"],
            cwd=Path(__file__).resolve().parent,
            capture_output=True,
            text=True,
            timeout=5,
            check=False,
        )
    except (OSError, subprocess.TimeoutExpired):
        return None
    return out.stdout.strip() or None


@cache
def cpuinfo_field(name: str) -> str:
    """The first value of field `name` in Linux's /proc/cpuinfo (`model name`, `vendor_id`); "" where
    there is no such file or field."""
    try:
        for line in Path("/proc/cpuinfo").read_text(encoding="utf-8", errors="replace").splitlines():
            if line.startswith(name):
                return line.partition(":")[2].strip()
    except OSError:
        pass
    return ""


def cpu_model() -> str:
    """The CPU's model name (Linux: /proc/cpuinfo), else what `platform` knows of it."""
    return cpuinfo_field("model name") or platform.processor() or platform.machine()


def numpy_simd() -> str | None:
    """The widest SIMD extension numpy dispatches to in this process (e.g. `AVX512_ICL`, `X86_V3`):
    numpy's kernels round differently from one to the next. None where numpy does not say."""
    try:  # numpy 2's record of what it dispatches to; not a public module, hence read defensively
        umath = importlib.import_module("numpy._core._multiarray_umath")
    except ImportError:
        return None
    dispatch, features = getattr(umath, "__cpu_dispatch__", []), getattr(umath, "__cpu_features__", {})
    enabled = [feature for feature in dispatch if features.get(feature)]
    return enabled[-1] if enabled else "baseline"


def torch_simd() -> str | None:
    """The SIMD level torch's CPU kernels run at (e.g. `AVX512`, `AVX2`); None where the run did not load torch."""
    torch = sys.modules.get("torch")
    if torch is None:
        return None
    return str(torch.backends.cpu.get_cpu_capability())


@cache
def _versions() -> dict[str, str | None]:
    versions: dict[str, str | None] = {}
    for package in PACKAGES:
        try:
            versions[package] = metadata.version(package)
        except metadata.PackageNotFoundError:
            versions[package] = None
    return versions


def environment(threads: int) -> dict[str, Any]:
    """What a run records of the process that made it, for a run on `threads` CPU threads: Python,
    platform, CPU model and count, the SIMD levels numpy and torch compute at, package versions,
    structbench's version and git revision."""
    return {
        "python": sys.version.split()[0],
        "platform": platform.platform(),
        "cpu": cpu_model(),
        "cpus": os.cpu_count(),
        "simd_numpy": numpy_simd(),
        "simd_torch": torch_simd(),
        "threads": threads,
        "structbench": __version__,
        "git": git_commit(),
        **_versions(),
    }


def environment_json(threads: int) -> str:
    """`environment(threads)` as the store's `environment` column holds it."""
    return json.dumps(environment(threads), sort_keys=True)
