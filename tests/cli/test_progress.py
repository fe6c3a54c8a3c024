"""The overall progress of `run`, `quickstart`, `build` and `report` as a log sees it (stderr not a
terminal: one plain line per finished step), and its silence under `--json` and `--no-progress`."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from structbench.cli import main
from tests.support.helpers import offline

RUN = ["run", "--suite", "lookup-tables", "--model", "copy,oracle", "--seeds", "0,1"]


def progress_lines(err: str) -> list[str]:
    """The lines of finished steps."""
    return [line for line in err.splitlines() if line.startswith("[") and ": started" not in line]


def started_lines(err: str) -> list[str]:
    """The lines of steps announced as they start (of unknown or long time)."""
    return [line for line in err.splitlines() if line.startswith("[") and ": started" in line]


def test_run_prints_one_line_per_seed_naming_its_model_position_and_outcome(
    capsys: pytest.CaptureFixture[str], store_path: Path
) -> None:
    assert main(["build", "lookup-tables", "--no-progress"]) == 0  # built: no build step
    assert main([*RUN, "--store", str(store_path)]) == 0
    err = capsys.readouterr().err
    assert err.startswith(f"new results store at {store_path}\nrun: 4 steps\n")  # nothing timed yet: no estimate
    lines = progress_lines(err)
    assert [line.split(":")[0] for line in lines] == [
        "[1/4] suite lookup-tables, model 1 of 2 copy, seed 0",
        "[2/4] suite lookup-tables, model 1 of 2 copy, seed 1",
        "[3/4] suite lookup-tables, model 2 of 2 oracle, seed 0",
        "[4/4] suite lookup-tables, model 2 of 2 oracle, seed 1",
    ]
    assert all(": done in " in line and "elapsed" in line for line in lines)
    assert "\r" not in err
    # never timed: each model's first seed is announced; the next seeds are timed by it (quick)
    assert started_lines(err) == [
        "[1/4] suite lookup-tables, model 1 of 2 copy, seed 0: started",
        "[3/4] suite lookup-tables, model 2 of 2 oracle, seed 0: started",
    ]

    assert main([*RUN, "--seeds", "0,1,2", "--store", str(store_path)]) == 0
    again = capsys.readouterr().err
    assert again.startswith("run: 6 steps; ETA ")  # copy and oracle have been timed on this suite
    assert "[1/6] suite lookup-tables, model 1 of 2 copy, seed 0: done (from the store)" in again
    assert "[3/6] suite lookup-tables, model 1 of 2 copy, seed 2: done in " in again


def test_run_json_prints_no_progress_and_stays_parseable(capsys: pytest.CaptureFixture[str], store_path: Path) -> None:
    assert main([*RUN, "--store", str(store_path), "--json"]) == 0
    captured = capsys.readouterr()
    assert [record["model"] for record in json.loads(captured.out)] == ["copy", "oracle"]
    assert "steps" not in captured.err and "[" not in captured.err and "%|" not in captured.err


def test_no_progress_silences_run(capsys: pytest.CaptureFixture[str], store_path: Path) -> None:
    assert main([*RUN, "--store", str(store_path), "--no-progress"]) == 0
    err = capsys.readouterr().err
    assert "steps" not in err and "[" not in err


def test_quickstart_counts_builds_runs_and_the_report_and_skips_a_suite_it_cannot_build(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    offline(tmp_path, monkeypatch, "no network here")  # nothing built yet, no files to build lookup-tables-mt from
    store, out = str(tmp_path / "r.sqlite"), str(tmp_path / "o")
    assert (
        main(["quickstart", "lookup-tables", "lookup-tables-mt", "--store", store, "--out", out, "--seeds", "0"]) == 0
    )
    lines = progress_lines(capsys.readouterr().err)
    assert lines[0].startswith("[1/11] suite 1 of 2 lookup-tables, build: built in ")
    assert lines[1].startswith("[2/11] suite 1 of 2 lookup-tables, model 1 of 4 oracle, seed 0: done in ")
    assert lines[4].startswith("[5/11] suite 1 of 2 lookup-tables, model 4 of 4 majority, seed 0: done in ")
    assert lines[5] == (
        "[10/11] skipped 5: suite 2 of 2 lookup-tables-mt, build .. suite 2 of 2 lookup-tables-mt, "
        "model 4 of 4 majority, seed 0 (source files unavailable)"
    )
    assert lines[6].startswith("[11/11] write the report: written in ")


def test_build_and_report_count_their_steps(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], store_path: Path
) -> None:
    assert main(["run", "--suite", "lookup-tables", "--model", "copy", "--store", str(store_path), "--json"]) == 0
    capsys.readouterr()
    assert main(["report", "--store", str(store_path), "--out", str(tmp_path / "site")]) == 0
    lines = progress_lines(capsys.readouterr().err)
    assert [line.split(" in ")[0] for line in lines] == ["[1/2] read the store: read", "[2/2] write the site: written"]

    monkeypatch.setenv("STRUCTBENCH_HOME", str(tmp_path / "home"))
    assert main(["build", "lookup-tables"]) == 0
    captured = capsys.readouterr()
    assert captured.out.startswith("built lookup-tables@1.0.0 ")
    assert progress_lines(captured.err)[0].startswith("[1/1] suite lookup-tables, build: built in ")
    assert main(["build", "lookup-tables", "--no-progress"]) == 0
    assert capsys.readouterr().err == ""


def test_sweep_prints_one_line_per_finished_run_and_nothing_under_json(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], store_path: Path
) -> None:
    grid = tmp_path / "grid.yaml"
    grid.write_text("suites: [lookup-tables]\nmodels: [copy]\nseeds: [0, 1]\n")
    assert main(["sweep", str(grid), "--store", str(store_path), "--workers", "1"]) == 0
    lines = progress_lines(capsys.readouterr().err)
    assert sorted(line.split(";")[0].split(" in ")[0] for line in lines) == [
        "[1/2] lookup-tables@1.0.0 x copy seed 0: done",
        "[2/2] lookup-tables@1.0.0 x copy seed 1: done",
    ]
    grid.write_text("suites: [lookup-tables]\nmodels: [copy]\nseeds: [0, 1, 2]\n")
    assert main(["sweep", str(grid), "--store", str(store_path), "--workers", "1", "--json"]) == 0
    captured = capsys.readouterr()
    assert json.loads(captured.out)["done"] == 1
    assert "[" not in captured.err and "steps" not in captured.err
