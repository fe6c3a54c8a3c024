"""Where a bundle's files live: every name is made from the content it holds, and stays one path
component of its folder whatever a model's name holds."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from structbench.store.bundle_layout import cell_paths, layout_files, run_files, suite_path

HASH = "ab" * 32


@pytest.mark.parametrize(
    "model", ["random", "tests.support.helpers:CountingCopy", "../../etc/passwd", "a/b\\c", "..", ""]
)
def test_a_models_name_never_leaves_its_suites_folder(model: str, tmp_path: Path) -> None:
    cell = cell_paths(tmp_path, "lookup-tables", "1.0.0", model, HASH)
    assert cell.runs.parent == tmp_path / "runs" / "lookup-tables@1.0.0"
    assert cell.predictions.parent == tmp_path / "predictions" / "lookup-tables@1.0.0"
    assert cell.runs.name.endswith(f"-{HASH[:12]}.json") and cell.runs.stem == cell.predictions.name


def test_the_layout_names_only_its_own_files(tmp_path: Path) -> None:
    cell = cell_paths(tmp_path, "lookup-tables", "1.0.0", "random", HASH)
    spec = suite_path(tmp_path, "lookup-tables", "1.0.0", HASH)
    for path in (tmp_path / "bundle.json", cell.runs, cell.predictions / "seed0.json.gz", spec):
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(json.dumps({}))
    for stray in (cell.runs.with_name(".x.json.1234.partial"), tmp_path / "notes.txt", cell.predictions / "x.gz"):
        stray.write_text("")
    assert run_files(tmp_path) == [cell.runs]
    assert layout_files(tmp_path) == sorted(
        [tmp_path / "bundle.json", cell.runs, cell.predictions / "seed0.json.gz", spec]
    )
