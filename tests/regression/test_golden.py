"""Any drift of a baseline's numbers on any offline suite fails here (tox, or tox -e regression alone),
naming the cell that moved and by how much.

The numbers are checked by `structbench check`, the command a model author runs on their own
golden file: the committed table (`golden.json`) is handed to it as a golden file that pins every
seed's value (`tests.regression.golden.golden_file`), at zero tolerance. What `check` cannot see, a suite, model or cell the table lacks,
is `coverage`'s."""

from __future__ import annotations

import json
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import pytest

from structbench.cli import main
from structbench.specs import ModelSpec
from tests.regression.golden import BY_VENDOR, GOLDEN, MODELS, compute, coverage, expected, golden_file

pytestmark = pytest.mark.regression

PREFIX = "structbench check: "


def checked(
    table: Mapping[str, Any],
    folder: Path,
    capsys: pytest.CaptureFixture[str],
    models: Mapping[str, tuple[ModelSpec, float | None]] = MODELS,
) -> tuple[int, list[str]]:
    """`structbench check` of `table` on a fresh store in `folder`: its exit code, and one line per
    cell that moved (`SUITE@VERSION x MODEL, SPLIT METRIC seed N: moved from A to B (tolerance T)`)."""
    path, store = folder / "golden.json", folder / "golden.sqlite"
    path.write_text(golden_file(table, models).model_dump_json(indent=1))
    capsys.readouterr()
    code = main(["check", str(path), "--store", str(store), "--no-progress"])
    err = capsys.readouterr().err.splitlines()
    moved = [line.removeprefix(PREFIX) for line in err if line.startswith(PREFIX)]
    if code != 0 and not moved:
        moved = err[-5:]  # check itself failed (an error, not a cell): say what it said
    return code, moved


@pytest.mark.long_running(seconds=260)
def test_results_match_golden_table(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    table = expected()  # golden.json, with this CPU vendor's own cells where it has any
    code, moved = checked(table, tmp_path, capsys)
    moved += coverage(table, compute(tmp_path / "golden.sqlite"))  # every run is in the store by now
    assert code == 0 and not moved, (
        f"{len(moved)} cells drifted from tests/regression/golden.json (with {BY_VENDOR.name}'s cells for this CPU vendor):\n"
        + "\n".join(moved[:40])
    )


def test_check_names_the_cell_and_the_change(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """The committed values of three fast models on lookup-tables, one of them moved: copy at zero
    tolerance, random at a tolerance of its own (0.02), ngram (which does not speak transduction) as n/a."""
    models = {
        "copy": (ModelSpec(name="copy"), None),
        "random": (ModelSpec(name="random"), 0.02),
        "ngram": (ModelSpec(name="ngram"), None),
    }
    committed = json.loads(GOLDEN.read_text())["lookup-tables"]
    table = {"lookup-tables": {key: committed[key] for key in ("suite_hash", *models)}}
    assert table["lookup-tables"]["ngram"] == "n/a"
    assert checked(table, tmp_path, capsys, models) == (0, [])

    moved = json.loads(json.dumps(table))
    cells = moved["lookup-tables"]
    copy, random = (
        cells["copy"]["heldout_inputs"]["sequence_accuracy"],
        cells["random"]["longer_3"]["sequence_accuracy"],
    )
    was_copy, was_random = copy[1], random[0]
    copy[1] += 0.05
    random[0] += 0.01  # within its tolerance
    cells["ngram"] = "failed"
    code, lines = checked(moved, tmp_path, capsys, models)
    assert code == 1
    assert lines[:2] == [
        f"lookup-tables@1.0.0 x copy, heldout_inputs sequence_accuracy seed 1: moved from {was_copy + 0.05:.6f} "
        f"to {was_copy:.6f} (tolerance 0)",
        "lookup-tables@1.0.0 x ngram, status: every seed ended failed; now n/a",
    ]
    # then whether this machine is the one the table was made on (golden.environment.json)
    assert len(lines) == 3 and lines[2].startswith(("this machine matches", "the golden file was made on another"))
    random[0] = was_random - 0.05
    assert (
        f"lookup-tables@1.0.0 x random, longer_3 sequence_accuracy seed 0: moved from {was_random - 0.05:.6f} "
        f"to {was_random:.6f} (tolerance 0.02)"
    ) in checked(moved, tmp_path, capsys, models)[1]


def test_coverage_names_what_the_table_lacks() -> None:
    cell = {"test": {"accuracy": [0.5]}}
    expected = {"toy": {"suite_hash": "a" * 64, "copy": cell}, "gone": {"suite_hash": "b" * 64}}
    actual = {"toy": {"suite_hash": "a" * 64, "copy": {"test": {"accuracy": [0.5], "f1": [0.1]}}, "ngram": "n/a"}}
    assert coverage(expected, actual) == [
        "gone: no longer computed",
        "toy copy test f1: new cell",
        "toy ngram: new model",
    ]


def test_a_vendors_cells_stand_in_only_for_cells_the_table_has() -> None:
    """Each CPU vendor's own cells replace cells golden.json holds, with other values (a stale one, of a
    suite or model the table no longer has, or equal to the table's, fails here); a vendor without
    cells of its own must reproduce golden.json itself."""
    committed = json.loads(GOLDEN.read_text())
    for vendor, recorded in json.loads(BY_VENDOR.read_text()).items():
        table = expected(vendor)
        for suite, cells in recorded["cells"].items():
            assert set(cells) <= set(committed[suite]) - {"suite_hash"}, (vendor, suite)
            for label, cell in cells.items():
                assert cell != committed[suite][label] and table[suite][label] == cell, (vendor, suite, label)
    assert expected("a vendor with no cells of its own") == committed
