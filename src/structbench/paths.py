"""Where structbench keeps its files on this machine: one module, so that every path is computed once.

Everything lives under the home folder, `STRUCTBENCH_HOME` (default `~/.cache/structbench`):

- `results.sqlite`: the default results store (`--store` names another);
- `site/`: the leaderboard site `quickstart` and `report` write (`--out` names another folder), so
  that neither leaves anything in the folder it was started from;
- `suites/ID@VERSION/`: a built (frozen) suite, and `suites/.ID@VERSION.lock` its builders' lock;
- `sources/`: the cache of downloaded source files;
- `checkpoints/`: trained weights of the neural baselines;
- `audits/`: overlap audits the report made of suites built by an older structbench (a build
  stores its own beside its manifest);
- `reference/`: the reference bundle read into SQLite, one file per bundle content, made on first use.

`STRUCTBENCH_CHECKPOINTS` names another checkpoints folder (`reference verify` retrains in an empty
one), and `STRUCTBENCH_REFERENCE` another reference bundle than the one installed with structbench.

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


def default_site_dir() -> Path:
    """The folder `quickstart` and `report` write the leaderboard site into when no `--out` is given."""
    return structbench_home() / "site"


def built_suites_dir() -> Path:
    """The folder that holds every built suite (and the builders' lock files)."""
    return structbench_home() / "suites"


def built_suite_dir(key: str) -> Path:
    """The folder of one built suite, by its key `ID@VERSION`."""
    return built_suites_dir() / key


def sources_cache_dir() -> Path:
    """The cache of downloaded source files, laid out like the published reference data."""
    return structbench_home() / "sources"


CHECKPOINTS_VARIABLE = "STRUCTBENCH_CHECKPOINTS"
"""The environment variable that names another folder of checkpoints than the home's."""

REFERENCE_VARIABLE = "STRUCTBENCH_REFERENCE"
"""The environment variable that names another reference bundle than the installed one."""


def checkpoints_dir() -> Path:
    """The root of the neural baselines' per-run checkpoints: `STRUCTBENCH_CHECKPOINTS`, default the home's."""
    configured = os.environ.get(CHECKPOINTS_VARIABLE)
    return Path(configured).expanduser() if configured else structbench_home() / "checkpoints"


def reference_bundle_dir() -> Path:
    """The reference bundle: `STRUCTBENCH_REFERENCE`, default the one installed with structbench."""
    configured = os.environ.get(REFERENCE_VARIABLE)
    return Path(configured).expanduser() if configured else Path(__file__).resolve().parent / "reference_runs"


def reference_cache_dir() -> Path:
    """Where the reference bundle is kept read into SQLite, one file per bundle content."""
    return structbench_home() / "reference"


def drawn_plots_dir() -> Path:
    """The plots reports have drawn on this machine, by the key of what each shows, so that a report draws
    only plots no earlier report drew (`structbench.reports.writers.plots.reuse_drawn`)."""
    return structbench_home() / "plots"


def audits_dir() -> Path:
    """The cache of the overlap audits the report made itself (of data built without one)."""
    return structbench_home() / "audits"
