"""The reference bundle from the command line: a sweep grows it and resumes from it; `claims` and
`report` read it beside the user's store, and leave it out with --no-reference."""

from __future__ import annotations

import errno
import json
import sqlite3
from pathlib import Path

import pytest

from structbench.cli import main
from structbench.paths import reference_cache_dir
from structbench.store import Store, StoreReader
from structbench.store import bundle as bundle_module
from structbench.store.bundle import read_runs, reference_store

GRID = "seeds: [0, 1]\nmodels:\n  - name: random\n    suites: [lookup-tables]\n"


def _sweep(grid: Path, store: Path, bundle: Path, capsys: pytest.CaptureFixture[str]) -> str:
    assert main(["sweep", str(grid), "--store", str(store), "--no-progress", "--reference", str(bundle)]) == 0
    return capsys.readouterr().err


@pytest.fixture
def grown(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> Path:
    """A bundle that one sweep of `GRID` wrote."""
    grid = tmp_path / "grid.yaml"
    grid.write_text(GRID)
    bundle = tmp_path / "bundle"
    err = _sweep(grid, tmp_path / "first.sqlite", bundle, capsys)
    assert "2 runs of the grid written to the reference bundle" in err
    return bundle


def test_a_sweep_resumes_from_the_bundle_and_grows_it(
    grown: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    grid = tmp_path / "grid.yaml"
    grid.write_text(GRID.replace("[0, 1]", "[0, 1, 2]"))
    store = tmp_path / "second.sqlite"
    err = _sweep(grid, store, grown, capsys)
    assert "2 runs read from the reference bundle" in err
    assert "3 runs of the grid written to the reference bundle" in err
    with Store(store) as opened:
        runs = opened.runs()
    # seeds 0 and 1 came from the bundle (no claim, no owner); only seed 2 was made
    assert sorted(runs[runs["owner"].notna()]["seed"]) == [2]
    assert sorted(run.row["seed"] for run in read_runs(grown)) == [0, 1, 2]


def test_claims_read_the_bundle_without_a_store_of_the_users(
    grown: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv("STRUCTBENCH_REFERENCE", str(grown))
    missing = tmp_path / "none.sqlite"
    assert main(["claims", "--store", str(missing)]) == 0
    out = capsys.readouterr().out
    assert "reference runs" in out.splitlines()[0]
    assert "claims on the reference runs: " in out
    assert not missing.exists()
    assert main(["claims", "--store", str(missing), "--no-reference"]) == 2
    assert f"no results store at {missing}" in capsys.readouterr().err


def test_claims_show_the_users_verdicts_apart(
    grown: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv("STRUCTBENCH_REFERENCE", str(grown))
    store = tmp_path / "mine.sqlite"
    assert main(["run", "--suite", "lookup-tables", "--model", "random", "--store", str(store), "--in-process"]) == 0
    capsys.readouterr()
    assert main(["claims", "--store", str(store), "--json"]) == 0
    verdicts = json.loads(capsys.readouterr().out)
    assert {verdict["runs"] for verdict in verdicts} == {"reference"}
    assert main(["claims", "--store", str(store), "--json", "--no-reference"]) == 0
    assert all("runs" not in verdict for verdict in json.loads(capsys.readouterr().out))


def test_the_report_shows_reference_runs_beside_the_users_unless_asked_not_to(
    grown: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv("STRUCTBENCH_REFERENCE", str(grown))
    store = tmp_path / "mine.sqlite"
    assert main(["run", "--suite", "lookup-tables", "--model", "random", "--store", str(store), "--in-process"]) == 0
    with_reference, without = tmp_path / "with", tmp_path / "without"
    assert main(["report", "--store", str(store), "--out", str(with_reference), "--no-progress"]) == 0
    assert main(["report", "--store", str(store), "--out", str(without), "--no-progress", "--no-reference"]) == 0
    capsys.readouterr()
    shown = (with_reference / "leaderboard.md").read_text()
    assert "random (reference)" in shown and "| random " in shown
    assert "random (reference)" not in (without / "leaderboard.md").read_text()
    with Store(store) as opened:  # the user's store was only read
        assert sorted(opened.runs()["model"]) == ["random"]


def test_the_reproductions_page_is_written_from_the_bundle(
    grown: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "reproductions.md"
    assert main(["reference", "tables", "--bundle", str(grown), "--out", str(out)]) == 0
    page = out.read_text()
    assert "structbench run --suite lookup-tables@1.0.0 --model random --seeds 0,1" in page
    assert "structbench reference verify --suite lookup-tables@1.0.0 --model random" in page
    # the page's own command selects the runs it names
    assert (
        main(["reference", "verify", "--bundle", str(grown), "--suite", "lookup-tables@1.0.0", "--model", "random"])
        == 0
    )
    assert capsys.readouterr().out.rstrip().endswith("2 runs: 2 identical")


def test_a_model_filter_keeps_the_reference_runs_of_that_model(
    grown: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv("STRUCTBENCH_REFERENCE", str(grown))
    out = tmp_path / "site"
    assert main(["report", "--store", str(tmp_path / "none.sqlite"), "--out", str(out), "--models", "random"]) == 0
    capsys.readouterr()
    assert "random (reference)" in (out / "leaderboard.md").read_text()


def test_quickstart_shows_the_reference_runs_beside_its_own(
    grown: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv("STRUCTBENCH_REFERENCE", str(grown))
    out, store = tmp_path / "site", tmp_path / "quick.sqlite"
    assert main(["quickstart", "lookup-tables", "--seeds", "0", "--store", str(store), "--out", str(out)]) == 0
    capsys.readouterr()
    shown = (out / "leaderboard.md").read_text()
    assert "random (reference)" in shown and "| random " in shown  # its own random beside the bundled one
    with Store(store) as opened:
        assert "random (reference)" not in set(opened.runs()["model"])


def test_verify_reads_a_label_with_several_settings_as_one_label() -> None:
    from structbench.cli.options import patterns

    assert patterns(["seq2attn[embedding_values=false,gumbel=false],ngram", "copy"]) == [
        "seq2attn[embedding_values=false,gumbel=false]",
        "ngram",
        "copy",
    ]


def _tamper(bundle: Path) -> Path:
    """Seed 0's status in the bundle's run file made `weird`: that run is left out as it is read."""
    (cell,) = (bundle / "runs").glob("*/*.json")
    cell.write_text(cell.read_text().replace('"status": "done"', '"status": "weird"', 1))
    return cell


def test_claims_name_what_the_bundle_left_out_and_read_the_rest(
    grown: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv("STRUCTBENCH_REFERENCE", str(grown))
    cell = _tamper(grown)
    for _ in range(2):  # told again by every command that reads the bundle's copy, not only the one that made it
        assert main(["claims", "--store", str(tmp_path / "none.sqlite")]) == 0
        err = capsys.readouterr().err
        assert f"structbench: 1 entry of the reference bundle {grown} left out or made again:" in err
        assert f"the bundle's {cell} had its runs[0] (seed 0) left out: runs[0].status: Input should be 'done'" in err
    with StoreReader(reference_store() or Path()) as copy:
        assert sorted(copy.runs()["seed"]) == [1]


def test_a_damaged_copy_of_the_bundle_is_made_again_and_the_users_store_is_not_blamed(
    grown: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv("STRUCTBENCH_REFERENCE", str(grown))
    store = tmp_path / "mine.sqlite"
    assert main(["run", "--suite", "lookup-tables", "--model", "copy", "--store", str(store), "--in-process"]) == 0
    copy = reference_store()
    assert copy is not None
    data = bytearray(copy.read_bytes())
    data[4096:] = bytes(byte ^ 0x5A for byte in data[4096:])  # every page but the first
    copy.write_bytes(bytes(data))
    capsys.readouterr()
    assert main(["report", "--store", str(store), "--out", str(tmp_path / "site"), "--no-progress"]) == 0
    err = capsys.readouterr().err
    assert f"the reference runs' copy {copy} was damaged, and is made again from the bundle {grown}." in err
    assert str(store) not in err
    assert "random (reference)" in (tmp_path / "site" / "leaderboard.md").read_text()
    assert main(["report", "--store", str(store), "--out", str(tmp_path / "site"), "--no-progress"]) == 0
    assert "damaged" not in capsys.readouterr().err  # made again once: sound since


def _full() -> sqlite3.OperationalError:
    error = sqlite3.OperationalError("database or disk is full")
    error.sqlite_errorname = "SQLITE_FULL"
    return error


@pytest.mark.parametrize(
    ("error", "told"),
    [
        (OSError(errno.ENOSPC, "No space left on device"), "is full (No space left on device), so the reference runs"),
        (OSError(errno.EROFS, "Read-only file system"), "cannot be written here (Read-only file system), so the"),
        (_full(), "is full (database or disk is full), so the reference runs"),  # once told as the user's store's
    ],
)
def test_a_home_that_cannot_hold_the_bundles_copy_is_named_not_the_users_store(
    grown: Path,
    tmp_path: Path,
    error: Exception,
    told: str,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    monkeypatch.setenv("STRUCTBENCH_REFERENCE", str(grown))
    store = tmp_path / "mine.sqlite"
    assert main(["run", "--suite", "lookup-tables", "--model", "copy", "--store", str(store), "--in-process"]) == 0

    def fails(*_: object) -> int:
        raise error

    monkeypatch.setattr(bundle_module, "read_into", fails)
    capsys.readouterr()
    assert main(["report", "--store", str(store), "--out", str(tmp_path / "site"), "--no-progress"]) == 2
    err = capsys.readouterr().err.strip()
    assert err.startswith("structbench: error: ") and str(store) not in err
    assert f"structbench's home ({reference_cache_dir()})" in err and told in err and err.endswith("--no-reference.")
