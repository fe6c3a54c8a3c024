"""A grid's size is bounded before anything is expanded, and a grid file's before it is parsed."""

from __future__ import annotations

import os
import time
from pathlib import Path

import pytest

from structbench.cli import main
from structbench.errors import UserError
from structbench.store import Store
from structbench.sweep import grid as grid_module
from structbench.sweep.grid import count_runs, expand, load_grid
from tests.support.deadline import deadline


def grid_file(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "grid.yaml"
    path.write_text(text)
    return path


def seven_by_ten(tmp_path: Path) -> Path:
    axes = "".join(f"      a{i}: [{', '.join(str(v) for v in range(10))}]\n" for i in range(7))
    return grid_file(tmp_path, f"suites: [lookup-tables]\nmodels:\n  - name: copy\n    set:\n{axes}seeds: [0]\n")


def test_a_grid_of_ten_million_runs_is_refused_from_its_count_before_expanding(tmp_path: Path) -> None:
    path = seven_by_ten(tmp_path)
    started = time.monotonic()
    with pytest.raises(UserError, match=r"asks for 10,000,000 runs .* more than the 100,000 one sweep takes; split"):
        load_grid(path)
    # expanding ten million runs takes minutes and gigabytes: a generous deadline still tells the two apart
    assert time.monotonic() - started < 30


def test_sweep_refuses_a_grid_too_large_in_one_sentence(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    path = seven_by_ten(tmp_path)
    assert main(["sweep", str(path), "--store", str(tmp_path / "results.sqlite"), "--dry-run"]) == 2
    assert "10,000,000 runs" in capsys.readouterr().err


def test_the_count_is_what_expanding_makes(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    text = (
        "suites: [lookup-tables, miniscan]\nmodels:\n"
        "  - name: copy\n    set: {a: [1, 2, 3], b: [x, y], c: 4}\n"
        "  - name: copy\n    suites: [miniscan]\n    seeds: '0-4'\n"
        "seeds: [0, 1]\n"
    )
    path = grid_file(tmp_path, text)
    grid = load_grid(path)
    assert count_runs(grid) == len(expand(grid)) == 3 * 2 * 2 * 2 + 1 * 1 * 5
    monkeypatch.setattr(grid_module, "MAX_RUNS", 28)
    with pytest.raises(UserError, match="asks for 29 runs"):
        load_grid(path)
    monkeypatch.setattr(grid_module, "MAX_RUNS", 29)
    load_grid(path)


def test_a_grid_file_over_the_byte_limit_is_refused(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(grid_module, "MAX_GRID_BYTES", 100)
    small = "suites: [lookup-tables]\nmodels: [copy]\nseeds: [0]\n"
    assert len(load_grid(grid_file(tmp_path, small)).models) == 1
    path = grid_file(tmp_path, small + "#" * 100 + "\n")
    with pytest.raises(UserError, match=f"the grid file {path}: it holds 151 bytes, more than the 100 such a file"):
        load_grid(path)


def test_a_grid_file_not_utf8_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "grid.yaml"
    path.write_bytes(b"suites: [\xff]\n")
    with pytest.raises(UserError, match="is not UTF-8 text"):
        load_grid(path)


@pytest.mark.skipif(not Path("/dev/zero").exists(), reason="needs /dev/zero")
def test_sweep_of_dev_zero_is_refused_promptly(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    started = time.monotonic()
    assert main(["sweep", "/dev/zero", "--store", str(tmp_path / "results.sqlite"), "--dry-run"]) == 2
    assert time.monotonic() - started < 60  # catches a read of /dev/zero that never ends
    assert "the grid file /dev/zero: it is a character device, not a regular file" in capsys.readouterr().err


def test_sweep_and_export_of_a_fifo_are_refused_at_once(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    """A FIFO opened for reading waits for a writer: the grid's is opened without waiting, and refused."""
    fifo = tmp_path / "grid.yaml"
    os.mkfifo(fifo)
    store = tmp_path / "results.sqlite"
    with deadline():
        assert main(["sweep", str(fifo), "--store", str(store), "--dry-run", "--no-progress"]) == 2
    assert f"cannot read the grid file {fifo}: it is a FIFO, not a regular file" in capsys.readouterr().err
    Store(store).close()
    with deadline():
        assert main(["reference", "export", str(fifo), "--store", str(store), "--bundle", str(tmp_path / "b")]) == 2
    assert f"cannot read the grid file {fifo}: it is a FIFO" in capsys.readouterr().err
