"""A report replaces a site whole or not at all: a refused filter or a failed write leaves the earlier
site as it was, and reports into one folder at the same time each leave a complete site (issue 34)."""

from __future__ import annotations

import fcntl
import os
import subprocess
import sys
import threading
from pathlib import Path

import pytest

from structbench.cli import main
from structbench.errors import UserError
from structbench.reports import render
from structbench.reports.render import write_report
from structbench.runs.runner import Runner
from structbench.specs import ModelSpec
from structbench.store import Store
from tests.support.helpers import links_of


def broken_links(site: Path) -> list[str]:
    """Every link of every page of `site` to a file of the site that is not there."""
    broken = []
    for page in site.rglob("*.html"):
        for target in links_of(page):
            path = target.split("#")[0]
            if path and not path.startswith(("http://", "https://")) and not (page.parent / path).is_file():
                broken.append(f"{page.relative_to(site)} -> {target}")
    return broken


def leftovers(folder: Path) -> list[str]:
    """What a report left beside its site in `folder` (a half-written or an old site), less the lock
    file that stays there on purpose."""
    return sorted(
        path.name for path in folder.iterdir() if path.name.startswith(".site.") and path.name != ".site.lock"
    )


def snapshot(site: Path) -> dict[str, bytes]:
    """Every file of `site` by its path, with its bytes."""
    return {str(path.relative_to(site)): path.read_bytes() for path in sorted(site.rglob("*")) if path.is_file()}


@pytest.fixture
def two_suites(runner: Runner) -> Runner:
    runner.evaluate("lookup-tables", ModelSpec(name="copy"), [0])
    runner.evaluate("miniscan", ModelSpec(name="random"), [0])
    return runner


def test_a_refused_filter_leaves_the_site_there_byte_for_byte(
    two_suites: Runner, store_path: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    site = tmp_path / "site"
    write_report(two_suites.store, site)
    before = snapshot(site)
    assert any(name.startswith("suites/") for name in before) and any(name.startswith("errors/") for name in before)
    with pytest.raises(UserError, match=r"no runs in .* match --suites typo"):
        write_report(two_suites.store, site, suites=["typo"])
    two_suites.store.close()
    assert main(["report", "--store", str(store_path), "--out", str(site), "--models", "nobody", "--no-progress"]) == 2
    assert capsys.readouterr().err.count("\n") == 1  # one sentence
    assert snapshot(site) == before
    assert leftovers(tmp_path) == []


def test_a_write_that_fails_halfway_leaves_the_earlier_site(
    two_suites: Runner, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    site = tmp_path / "site"
    write_report(two_suites.store, site)
    before = snapshot(site)

    def disk_full(*args: object, **kwargs: object) -> None:
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(render, "write_pages", disk_full)
    with pytest.raises(OSError, match="No space left"):
        write_report(two_suites.store, site, suites=["lookup-*"])
    assert snapshot(site) == before
    assert leftovers(tmp_path) == []


def test_a_new_report_replaces_the_pages_of_the_last_and_reuses_its_example_data(
    two_suites: Runner, tmp_path: Path
) -> None:
    site = tmp_path / "site"
    write_report(two_suites.store, site)
    examples = {path.name: path.read_bytes() for path in (site / "data").glob("examples-*.js")}
    assert examples
    write_report(two_suites.store, site, suites=["miniscan"])
    assert [path.name for path in (site / "suites").iterdir()] == ["miniscan@1.0.0.html"]
    assert not (site / "errors" / "lookup-tables@1.0.0.html").exists() and not broken_links(site)
    kept = {path.name: path.read_bytes() for path in (site / "data").glob("examples-*.js")}
    assert kept and kept.items() <= examples.items()  # the examples of miniscan, as written before


def test_reports_into_one_folder_at_once_each_leave_a_complete_site(
    two_suites: Runner, store_path: Path, tmp_path: Path
) -> None:
    reference = tmp_path / "reference"
    write_report(two_suites.store, reference)
    expected = set(snapshot(reference))
    site = tmp_path / "site"
    write_report(two_suites.store, site)  # an earlier site, which every report replaces
    start = threading.Barrier(4)
    failures: list[BaseException] = []

    def report() -> None:
        try:
            with Store(store_path) as store:
                start.wait()
                for _ in range(2):
                    assert write_report(store, site) == site / "index.html"
        except BaseException as error:  # every failure, whatever its type, is the finding
            failures.append(error)

    threads = [threading.Thread(target=report) for _ in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert failures == []
    assert set(snapshot(site)) == expected and not broken_links(site)
    assert leftovers(tmp_path) == []


def test_a_relative_out_and_the_current_folder_are_replaced_in_place(
    two_suites: Runner, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    assert write_report(two_suites.store, Path("site")) == Path("site") / "index.html"
    monkeypatch.chdir(tmp_path / "site")
    index = write_report(two_suites.store, Path("."), suites=["miniscan"])
    assert index.resolve() == (tmp_path / "site" / "index.html").resolve()
    assert [path.name for path in (tmp_path / "site" / "suites").iterdir()] == ["miniscan@1.0.0.html"]
    assert leftovers(tmp_path) == []


def test_a_report_waits_for_the_lock_another_report_holds_on_its_out(
    two_suites: Runner, store_path: Path, tmp_path: Path
) -> None:
    site = tmp_path / "site"
    written: list[Path] = []

    def report() -> None:
        with Store(store_path) as store:
            written.append(write_report(store, site))

    with (tmp_path / ".site.lock").open("a") as held:
        fcntl.flock(held.fileno(), fcntl.LOCK_EX)  # what a report writing into `site` holds
        waiting = threading.Thread(target=report)
        waiting.start()
        waiting.join(timeout=3)
        assert waiting.is_alive() and not site.exists()  # built its site, and waits to write it
        fcntl.flock(held.fileno(), fcntl.LOCK_UN)
    waiting.join()
    assert written == [site / "index.html"] and not broken_links(site)


def test_a_killed_reports_partial_folder_is_deleted_by_the_next_report_once_its_process_is_gone(
    two_suites: Runner, tmp_path: Path
) -> None:
    gone = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"], capture_output=True, text=True)
    dead_pid = int(gone.stdout)
    left = [tmp_path / f".site.partial-{dead_pid}-{'a' * 12}", tmp_path / f".site.old-{dead_pid}-{'b' * 12}"]
    live = tmp_path / f".site.partial-{os.getppid()}-{'c' * 12}"  # a live process: pytest's parent
    foreign = tmp_path / ".site.partial-notes"  # not a name a report makes: never touched
    for folder in [*left, live, foreign]:
        (folder / "suites").mkdir(parents=True)
        (folder / "index.html").write_text("half a site")
    write_report(two_suites.store, tmp_path / "site")
    assert not any(folder.exists() for folder in left)
    assert live.exists() and foreign.exists()


def test_a_suite_pattern_that_matches_nothing_is_refused_even_beside_one_that_matches(
    two_suites: Runner, tmp_path: Path
) -> None:
    site = tmp_path / "site"
    with pytest.raises(UserError, match=r"--suites 'lookup-tabels' matches no suite .*did you mean 'lookup-tables'"):
        write_report(two_suites.store, site, suites=["mini*", "lookup-tabels"])
    with pytest.raises(UserError, match=r"--models 'cpy' matches no model label .*did you mean 'copy'"):
        write_report(two_suites.store, site, models=["random", "cpy"])
    assert not site.exists()
    # a pattern matching an installed suite without runs is kept: the site lists it as without results
    write_report(two_suites.store, site, suites=["mini*", "scan-*"])
    assert [path.name for path in (site / "suites").iterdir()] == ["miniscan@1.0.0.html"]


def test_a_report_over_an_earlier_site_reuses_its_plots_until_what_they_show_changes(
    two_suites: Runner, tmp_path: Path
) -> None:
    site = tmp_path / "site"
    write_report(two_suites.store, site)
    plots = sorted((site / "plots").glob("*.svg"))
    assert plots
    drawn = {path.name: path.stat().st_ino for path in plots}
    write_report(two_suites.store, site)
    assert {path.name: path.stat().st_ino for path in (site / "plots").glob("*.svg")} == drawn  # the same files
    two_suites.evaluate("lookup-tables", ModelSpec(name="majority"), [0])  # a second model on its plot
    write_report(two_suites.store, site)
    assert all(path.stat().st_ino != drawn[path.name] for path in (site / "plots").glob("*.svg"))  # drawn again
    fresh = tmp_path / "fresh"
    write_report(two_suites.store, fresh)
    assert snapshot(site) == snapshot(fresh)  # nothing stale, nothing missing
