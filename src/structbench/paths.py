"""Where structbench keeps its files on this machine: one module, so that every path is computed once.

Everything lives under the home folder, `STRUCTBENCH_HOME` (default `~/.cache/structbench`):

- `results.sqlite`: the default results store (`--store` names another);
- `suites/ID@VERSION/`: a built (frozen) suite, and `suites/.ID@VERSION.lock` its builders' lock;
- `sources/`: the cache of downloaded source files;
- `checkpoints/`: trained weights of the neural baselines;
- `audits/`: overlap audits the report made of suites built by an older structbench (a build
  stores its own beside its manifest).

The home is read from the environment at each call, never cached, so that a test or a sweep's
worker that sets `STRUCTBENCH_HOME` sees its own folder.
"""

from __future__ import annotations

import os
from pathlib import Path

HOME_VARIABLE = "STRUCTBENCH_HOME"
"""The environment variable that names the home folder."""


def structbench_home() -> Path:
    """The data directory: `STRUCTBENCH_HOME`, default `~/.cache/structbench`."""
    configured = os.environ.get(HOME_VARIABLE)
    return Path(configured).expanduser() if configured else Path.home() / ".cache" / "structbench"


def default_store_path() -> Path:
    """The results store commands read and write when no `--store` is given."""
    return structbench_home() / "results.sqlite"


def built_suites_dir() -> Path:
    """The folder that holds every built suite (and the builders' lock files)."""
    return structbench_home() / "suites"


def built_suite_dir(key: str) -> Path:
    """The folder of one built suite, by its key `ID@VERSION`."""
    return built_suites_dir() / key


def sources_cache_dir() -> Path:
    """The cache of downloaded source files, laid out like the published reference data."""
    return structbench_home() / "sources"


def checkpoints_dir() -> Path:
    """The root of the neural baselines' per-run checkpoints."""
    return structbench_home() / "checkpoints"


def audits_dir() -> Path:
    """The cache of the overlap audits the report made itself (of data built without one)."""
    return structbench_home() / "audits"
