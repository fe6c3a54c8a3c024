"""`structbench check` says which machine a golden file was made on when its cells move: another
one (the cells may be the machine) or this one (they come from the code or the data)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import numpy
import pytest

from structbench import __version__
from structbench.cli import main
from structbench.runs import provenance


@pytest.fixture
def written(tmp_path: Path, store_path: Path) -> Path:
    """A golden file of copy on lookup-tables, seed 0, as `check --write` makes it."""
    golden = tmp_path / "golden.json"
    write = ["check", str(golden), "--write", "--suite", "lookup-tables", "--model", "copy", "--seeds", "0"]
    assert main([*write, "--store", str(store_path), "--no-progress"]) == 0
    return golden


def checked(golden: Path, store_path: Path, capsys: pytest.CaptureFixture[str], **changes: Any) -> list[str]:
    """The stderr lines of `check` of `golden` with every mean moved by 0.5 and `changes` to its
    environment (None: drop the environment)."""
    content = json.loads(golden.read_text())
    for entry in content["entries"]:
        for cell in entry["cells"]:
            cell["mean"] += 0.5
    if "environment" in changes and changes["environment"] is None:
        del content["environment"]
    else:
        content["environment"] |= changes
    golden.write_text(json.dumps(content))
    capsys.readouterr()
    assert main(["check", str(golden), "--store", str(store_path), "--no-progress"]) == 1
    return capsys.readouterr().err.splitlines()


def test_write_records_the_machine_and_code_it_ran_on(written: Path) -> None:
    environment = json.loads(written.read_text())["environment"]
    assert "threads" not in environment
    assert environment["cpu"] == provenance.cpu_model() and environment["simd_numpy"] == provenance.numpy_simd()
    assert environment["simd_torch"] == provenance.torch_simd() is not None  # torch loaded to read it
    assert (environment["numpy"], environment["structbench"]) == (numpy.__version__, __version__)


def test_moved_cells_on_another_machine_name_what_differs(
    written: Path, store_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    lines = checked(written, store_path, capsys, simd_numpy="SSE42", numpy="1.26.4")
    assert lines[-1].endswith(": 7 moved.") and lines[-3].startswith("structbench check: lookup-tables@1.0.0 x copy")
    assert lines[-2] == (
        f"structbench check: the golden file was made on another machine (simd_numpy SSE42 -> "
        f"{provenance.numpy_simd()}, numpy 1.26.4 -> {numpy.__version__}); the moved cells may be the machine, "
        "not the code."
    )


def test_moved_cells_on_the_same_machine_say_so(
    written: Path, store_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    made = json.loads(written.read_text())["environment"]
    assert checked(written, store_path, capsys)[-2] == (
        f"structbench check: this machine matches the one the golden file was made on (cpu {made['cpu']}, "
        f"simd_numpy {made['simd_numpy']}, simd_torch {made['simd_torch']}, numpy {made['numpy']}, "
        f"torch {made['torch']}); the moved cells come from the code or the data."
    )


def test_a_file_without_an_environment_says_nothing_of_machines(
    written: Path, store_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    lines = checked(written, store_path, capsys, environment=None)
    assert lines[-2].startswith("structbench check: lookup-tables@1.0.0 x copy")
    assert not any("machine" in line for line in lines)


def test_no_sentence_when_nothing_moved(written: Path, store_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    capsys.readouterr()
    assert main(["check", str(written), "--store", str(store_path), "--no-progress"]) == 0
    lines = capsys.readouterr().err.splitlines()
    assert lines[-1] == f"7 cells checked against {written}: 0 moved." and not any("machine" in x for x in lines)


@pytest.mark.parametrize("tolerance", ["nan", "inf", "-0.1", "1e400"])
def test_a_tolerance_that_is_not_a_finite_number_of_at_least_0_is_refused(
    written: Path, store_path: Path, tolerance: str, capsys: pytest.CaptureFixture[str]
) -> None:
    """`--tolerance nan` once passed a table whose every cell moved (every comparison with NaN is False)."""
    with pytest.raises(SystemExit) as refused:
        main(["check", str(written), "--store", str(store_path), "--tolerance", tolerance])
    assert refused.value.code == 2
    line = capsys.readouterr().err.strip().splitlines()[-1]
    assert (
        line
        == f"structbench check: error: argument --tolerance: {tolerance!r} is not a finite number of at least 0, e.g. 0.005"
    )


@pytest.mark.parametrize("value", ["NaN", "Infinity", "1e400"])
def test_a_golden_file_holding_a_mean_that_is_not_finite_is_refused_naming_it(
    written: Path, store_path: Path, value: str, capsys: pytest.CaptureFixture[str]
) -> None:
    text = written.read_text()
    first = json.loads(text)["entries"][0]["cells"][0]["mean"]
    written.write_text(text.replace(f'"mean": {json.dumps(first)}', f'"mean": {value}', 1))
    assert main(["check", str(written), "--store", str(store_path), "--no-progress"]) == 2
    assert capsys.readouterr().err.strip() == (
        f"structbench: error: {written} is not a structbench golden file (entries.0.cells.0.mean: Input should be a "
        "finite number); write it anew with --write."
    )


def test_a_value_that_is_not_finite_moved() -> None:
    from structbench.analysis.golden import _moved

    assert _moved(0.5, float("nan"), 0.1) and _moved(0.5, float("inf"), 0.1) and not _moved(0.5, 0.55, 0.1)
