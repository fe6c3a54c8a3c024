"""Where each file of a bundle of runs lives: the layout its writer follows and its reader checks.

- `bundle.json`: `{"format": 1}`, the layout's version (`FORMAT`);
- `suites/ID@VERSION-HASH12.json`: the spec of each suite's data the runs were made on;
- `runs/ID@VERSION/MODEL-HASH12.json`: one model configuration on one suite's data (`HASH12` starts
  its model hash), every seed's run;
- `predictions/ID@VERSION/MODEL-HASH12/seedN.json.gz`: a run's predictions.

Every name is made from the content it holds, so a reader checks a file's name against what the
file says it is (`structbench.store.bundle_reader`): a run file cannot name another suite's folder.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

FORMAT = 1
"""The bundle layout this code writes and reads."""


def _slug(text: str) -> str:
    return re.sub(r"[^A-Za-z0-9_.-]+", "-", text).strip("-") or "model"


@dataclass(frozen=True)
class BundleCell:
    """The paths of one cell's files in a bundle."""

    runs: Path
    predictions: Path


def cell_paths(folder: Path, suite: str, version: str, model: str, model_hash: str) -> BundleCell:
    """Where the runs of model `model` (its name) with hash `model_hash` on `suite@version` live in the
    bundle at `folder`."""
    stem = f"{_slug(model)}-{model_hash[:12]}"
    return BundleCell(
        folder / "runs" / f"{suite}@{version}" / f"{stem}.json", folder / "predictions" / f"{suite}@{version}" / stem
    )


def suite_path(folder: Path, suite: str, version: str, suite_hash: str) -> Path:
    """Where the spec of `suite@version`'s data `suite_hash` lives in the bundle at `folder`."""
    return folder / "suites" / f"{suite}@{version}-{suite_hash[:12]}.json"


def run_files(folder: Path) -> list[Path]:
    """The run files of the bundle at `folder` (`runs/ID@VERSION/*.json`), in path order."""
    return sorted((folder / "runs").glob("*/*.json"))


def suite_files(folder: Path) -> list[Path]:
    """The suites' spec files of the bundle at `folder` (`suites/*.json`), in path order."""
    return sorted((folder / "suites").glob("*.json"))


def predictions_files(folder: Path) -> list[Path]:
    """The predictions files of the bundle at `folder` (`predictions/ID@VERSION/STEM/seedN.json.gz`)."""
    return sorted((folder / "predictions").glob("*/*/seed*.json.gz"))


def layout_files(folder: Path) -> list[Path]:
    """Every file the layout names in the bundle at `folder` (what there is of them), in path order:
    what the bundle's digest covers, and nothing else that lies in its folder."""
    marker = folder / "bundle.json"
    return sorted([marker, *suite_files(folder), *run_files(folder), *predictions_files(folder)])
