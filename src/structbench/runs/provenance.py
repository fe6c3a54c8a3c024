"""What a run records of the code and the process that made it: the git revision and the environment.

Neither is part of the run key: they say where a stored number came from, and a sweep's worker
compares its git revision with the driver's before it runs anything.
"""

from __future__ import annotations

import json
import os
import platform
import subprocess
import sys
from functools import cache
from pathlib import Path


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
def environment_json() -> str:
    """What a run records of the process that made it: python, platform, CPUs and package versions (JSON)."""
    import importlib.metadata as metadata

    versions: dict[str, str | None] = {}
    for package in ("numpy", "torch", "scipy", "pydantic"):
        try:
            versions[package] = metadata.version(package)
        except metadata.PackageNotFoundError:
            versions[package] = None
    return json.dumps(
        {"python": sys.version.split()[0], "platform": platform.platform(), "cpus": os.cpu_count(), **versions},
        sort_keys=True,
    )
