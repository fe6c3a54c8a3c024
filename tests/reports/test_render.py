"""`write_report`: the site a store gives, escaped, with its exports, written into its folder whole or not at all
(issue 34): a refused filter or a failed write leaves the earlier site as it was, and reports into one
folder at the same time each leave a complete site."""

from __future__ import annotations

import contextlib
import difflib
import fcntl
import multiprocessing
import os
import subprocess
import sys
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pandas as pd
import pytest
from scipy import stats

from structbench import __version__, registry
from structbench.cli import main
from structbench.errors import UserError
from structbench.reports import render
from structbench.reports.builders.boards import RESULT_COLUMNS
from structbench.reports.render import write_report
from structbench.reports.writers.plots import reuse_drawn
from structbench.runs.runner import Runner
from structbench.specs import ModelSpec
from structbench.store import Store
from tests.reports.support import row_of, suite_page
from tests.support.helpers import links_of, read_results

HOSTILE = "<script>alert(1)</script>"


ESCAPED = "&lt;script&gt;alert(1)&lt;/script&gt;"


LOOKUP_TESTS = [s.name for s in registry.suite("lookup-tables").spec.splits_with_role("test")]


@pytest.fixture
def report(runner: Runner, tmp_path: Path) -> Path:
    runner.evaluate("lookup-tables", ModelSpec(name="oracle"), [0, 1, 2])
    runner.evaluate("lookup-tables", ModelSpec(name="tests.support.helpers:CountingCopy", params={"tag": HOSTILE}), [0])
    runner.evaluate("lookup-tables", ModelSpec(name="tests.support.helpers:CrashOnSeed"), [0])
    return write_report(runner.store, tmp_path / "report")


def test_model_names_are_escaped_on_every_page(report: Path) -> None:
    label = f"counting-copy[tag=&#34;{ESCAPED}&#34;]"
    pages = [
        report,
        *sorted((report.parent / "suites").glob("*.html")),
        *sorted((report.parent / "errors").rglob("*.html")),
    ]
    assert len(pages) == 3  # overview, the suite, its error browser
    for page in pages:
        html = page.read_text()
        assert HOSTILE not in html
        assert "<script" not in html.replace('<script src="', "")  # the page's own scripts only
    assert label in suite_page(report) and label in report.read_text()
    # the error browser's data script carries the label as JSON text, which a script never runs as markup
    (data,) = [p for p in (report.parent / "errors").rglob("*.js") if "counting-copy" in p.read_text()]
    # the label travels as JSON whose < and > are escaped (reports/escaping.py), so no </script> can end the block
    assert '"model": "counting-copy[tag=\\"\\u003cscript\\u003ealert(1)\\u003c/script\\u003e\\"]"' in data.read_text()


def test_cells_show_mean_ci_and_seed_count(report: Path) -> None:
    html = suite_page(report)
    oracle = row_of(html, "oracle")
    assert oracle.count('<span class="mean">100.0</span>') == len(LOOKUP_TESTS) == 7
    # three seeds that agree: the Wilson interval over each split's items, not a zero-width one
    for split in registry.suite("lookup-tables").spec.splits_with_role("test"):
        low = stats.binomtest(split.size or 0, split.size or 0).proportion_ci(method="wilson").low
        assert f'<span class="ci">[{100 * low:.1f}, 100.0]</span>' in oracle
        assert f'<span class="seeds" title="Wilson over {split.size} items">n = 3 · Wilson</span>' in oracle
    assert "3 done" in oracle
    copy = row_of(html, f"counting-copy[tag=&#34;{ESCAPED}&#34;]")
    assert copy.count('<span class="mean">0.0</span>') == 7 and copy.count("n = 1 · Wilson") == 7
    crashed = row_of(html, "crash-on-seed")
    assert (
        "1 failed" in crashed
        and crashed.count('<td class="failed" data-value=""><a href="#problems">failed</a></td>') == 7
    )
    assert "seed 0, failed:" in html[html.index('<section id="problems">') :]
    # the oracle is a ceiling: set apart below the ranked models, never marked best
    assert html.index('data-value="counting-copy') < html.index('data-value="oracle"')
    assert '<span class="tag apart"' in oracle and "best</span>" not in oracle
    for split in LOOKUP_TESTS:
        assert split.replace("_", "_<wbr>") in html
    assert f"Rendered by structbench {__version__}" in html


def test_markdown_csv_and_json_hold_every_metric(report: Path) -> None:
    folder = report.parent
    assert sorted(p.name for p in folder.iterdir()) == [
        ".structbench-site", "data", "errors", "index.html", "leaderboard.md", "plots", "references.json", "results.csv", "results.json",
        "static", "suites",
    ]  # fmt: skip
    markdown = (folder / "leaderboard.md").read_text()
    assert "## lookup-tables@1.0.0 (sequence_accuracy" in markdown
    oracle_line = next(line for line in markdown.splitlines() if line.startswith("| oracle (ceiling, not ranked)"))
    assert oracle_line.count(", 100.0] (3 seeds, Wilson)") == 7

    rows = read_results(folder / "results.json")
    assert rows and all(list(row) == RESULT_COLUMNS for row in rows)
    keys = [(r["suite"], r["model"], r["split"], r["metric"], r["breakdown"], r["level"]) for r in rows]
    assert len(keys) == len(set(keys)), "one row per (suite, model, split, metric, condition)"
    oracle = [r for r in rows if r["model"] == "oracle"]
    assert {r["split"] for r in oracle} == set(LOOKUP_TESTS)
    for split in LOOKUP_TESTS:
        metrics = {r["metric"] for r in oracle if r["split"] == split}
        assert {"sequence_accuracy", "token_accuracy", "final_target_accuracy"} <= metrics
    assert all(r["n_seeds"] == 3 and r["per_seed"] == [1.0, 1.0, 1.0] and r["mean"] == 1.0 for r in oracle)
    assert not [r for r in rows if r["model"] == "crash-on-seed"]  # a failed run has no numbers

    table = pd.read_csv(folder / "results.csv")
    assert list(table.columns) == RESULT_COLUMNS
    from_csv = {
        (m, s, k): v for m, s, k, v in zip(table["model"], table["split"], table["metric"], table["mean"], strict=True)
    }
    from_json = {(r["model"], r["split"], r["metric"]): r["mean"] for r in rows}
    assert len(table) == len(rows) and from_csv == pytest.approx(from_json, abs=1e-9)


def test_the_report_never_writes_into_a_folder_of_other_files(runner: Runner, tmp_path: Path) -> None:
    runner.evaluate("lookup-tables", ModelSpec(name="copy"), [0])
    project = tmp_path / "project"
    (project / "suites").mkdir(parents=True)
    (project / "suites" / "mine.py").write_text("precious = True\n")
    with pytest.raises(UserError, match="holds files that no structbench report wrote"):
        write_report(runner.store, project)
    assert (project / "suites" / "mine.py").read_text() == "precious = True\n"
    site = tmp_path / "site"
    write_report(runner.store, site)
    write_report(runner.store, site)  # its own site: replaced
    assert (site / "suites" / "lookup-tables@1.0.0.html").is_file()


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


def differences(site: Path, other: Path) -> str:
    """Where two sites differ: the files only one has, and a unified diff of the first three that differ
    (what a failed comparison must show: a page differed once in ten runs, and pytest's dict diff hid how)."""
    one, two = snapshot(site), snapshot(other)
    changed = sorted(name for name in set(one) | set(two) if one.get(name) != two.get(name))
    shown = []
    for name in changed[:3]:
        before, after = [(files.get(name) or b"").decode(errors="replace").splitlines() for files in (one, two)]
        shown += [f"{name}:", *list(difflib.unified_diff(before, after, str(site), str(other), lineterm="", n=1))[:60]]
    return "\n".join([f"{len(changed)} files differ: {', '.join(changed[:20])}", *shown]) if changed else ""


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
        raise OSError(28, "No space left on device")  # as a write to a full disk raises it: no file named

    monkeypatch.setattr(render, "write_pages", disk_full)
    with pytest.raises(UserError) as refused:
        write_report(two_suites.store, site, suites=["lookup-*"])
    assert str(refused.value) == (
        f"the disk holding --out {site} is full (No space left on device); free some space, or pass --out a folder "
        "on another disk (the site there before is unchanged)."
    )
    assert snapshot(site) == before
    assert leftovers(tmp_path) == []


@pytest.mark.parametrize(
    ("error", "told"),
    [
        (lambda partial: OSError(5, "Input/output error", str(partial / "index.html")), "cannot write the site into"),
        (lambda partial: OSError(5, "Input/output error"), "cannot write the site into"),
        (lambda partial: OSError(2, "No such file or directory", "/elsewhere/data.json"), None),
    ],
)
def test_a_write_error_names_the_out_folder_and_one_on_another_file_names_that_file(
    two_suites: Runner,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    error: Callable[[Path], OSError],
    told: str | None,
) -> None:
    site = tmp_path / "site"

    def fails(site_value: object, partial: Path, **kwargs: object) -> Path:
        raise error(partial)

    monkeypatch.setattr(render, "write_site", fails)
    if told is None:  # a file the report reads: `main` names it, as any OS error on a named path
        with pytest.raises(OSError, match=r"/elsewhere/data\.json"):
            write_report(two_suites.store, site)
    else:
        with pytest.raises(UserError, match=f"^{told} --out {site} \\(Input/output error\\); check the disk it is on"):
            write_report(two_suites.store, site)
    assert not site.exists() and leftovers(tmp_path) == []


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


def _descriptors_of(path: Path) -> int:
    """How many of this process's descriptors have `path` open (as Linux lists them)."""
    found = 0
    for fd in os.listdir("/proc/self/fd"):
        with contextlib.suppress(OSError):  # closed meanwhile
            found += os.readlink(f"/proc/self/fd/{fd}") == str(path)
    return found


@pytest.mark.skipif(not Path("/proc/self/fd").is_dir(), reason="reads this process's descriptors from /proc")
def test_a_lock_file_deleted_while_a_report_waited_is_let_go_though_a_process_forked_meanwhile_holds_a_copy(
    tmp_path: Path,
) -> None:
    """A report waiting on the lock of a file its holder then deletes locks the new file instead; the old
    one it must unlock, not only close: a worker process another report forked meanwhile (a thread of one
    program, as `test_reports_into_one_folder_at_once_each_leave_a_complete_site` runs them) holds a copy
    of the descriptor, and the lock would stay held as long as that worker lives. That test hung on it."""
    site, lock = tmp_path / "site", tmp_path / ".site.lock"
    entered = threading.Event()

    def waiter() -> None:
        with render._locked(site):
            entered.set()

    with lock.open("a") as holder, lock.open("a") as later:
        fcntl.flock(holder.fileno(), fcntl.LOCK_EX)  # a report holding the lock
        waiting = threading.Thread(target=waiter)
        waiting.start()
        deadline = time.monotonic() + 60
        while _descriptors_of(lock) < 3:  # the holder's, `later` and the waiting report's
            assert time.monotonic() < deadline, "the waiting report never opened the lock file"
            time.sleep(0.01)
        worker = multiprocessing.get_context("fork").Process(target=time.sleep, args=(600,))
        worker.start()  # holds a copy of every descriptor above
        try:
            lock.unlink()  # the holder lets go as `_locked` does: delete, unlock
            fcntl.flock(holder.fileno(), fcntl.LOCK_UN)
            assert entered.wait(timeout=60)
            waiting.join(timeout=60)
            assert not waiting.is_alive()
            fcntl.flock(later.fileno(), fcntl.LOCK_EX | fcntl.LOCK_NB)  # the deleted file's lock is free
        finally:
            worker.kill()
            worker.join()


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


SHOWN = ["lookup-tables", "miniscan"]
"""The suites `two_suites` has runs on."""


def test_a_report_over_an_earlier_site_reuses_its_plots_until_what_they_show_changes(
    two_suites: Runner, tmp_path: Path
) -> None:
    """Only the suites with runs are shown: the list of the others says which are built on this machine, and
    another test process may build one between two reports (it did, once in ten runs)."""
    site = tmp_path / "site"
    write_report(two_suites.store, site, suites=SHOWN)
    plots = sorted((site / "plots").glob("*.svg"))
    assert plots
    drawn = {path.name: path.stat().st_ino for path in plots}
    write_report(two_suites.store, site, suites=SHOWN)
    assert {path.name: path.stat().st_ino for path in (site / "plots").glob("*.svg")} == drawn  # the same files
    two_suites.evaluate("lookup-tables", ModelSpec(name="majority"), [0])  # a second model on its plot
    write_report(two_suites.store, site, suites=SHOWN)
    assert all(path.stat().st_ino != drawn[path.name] for path in (site / "plots").glob("*.svg"))  # drawn again
    fresh = tmp_path / "fresh"
    write_report(two_suites.store, fresh, suites=SHOWN)
    assert not (differ := differences(site, fresh)), differ  # nothing stale, nothing missing


def test_the_card_of_a_suite_this_structbench_does_not_have_claims_nothing_about_its_sources(
    runner: Runner, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A stored suite that is not installed here (a user's suite, another release's version) has a card
    from its stored spec: where its data came from is unknown, not "generated by structbench"."""
    runner.evaluate("tests.support.fixtures.plugin.reverse_suite:ReverseWords", ModelSpec(name="oracle"), [0])
    runner.evaluate("lookup-tables", ModelSpec(name="oracle"), [0])
    monkeypatch.setattr(registry, "_LOADED_BY_PATH", {})  # what a later `report` process knows
    registry.clear_cache()
    index = write_report(runner.store, tmp_path / "report")
    card = suite_page(index, "reverse-words@1.0.0").split('<section id="card">')[1]
    assert "not known here (this structbench does not have this suite)" in card
    assert "generated by structbench" not in card
    assert "generated by structbench from its definition" in suite_page(index).split('<section id="card">')[1]


def test_a_report_into_another_folder_draws_only_plots_no_earlier_report_drew(
    two_suites: Runner, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Plots are kept under STRUCTBENCH_HOME by the key of what they show: a second site (another --out)
    draws none of them again, with the same bytes; a kept file that is not an SVG document is drawn again."""
    monkeypatch.setenv("STRUCTBENCH_HOME", str(tmp_path / "home"))
    first = write_report(two_suites.store, tmp_path / "first").parent
    to_draw: list[Path] = []

    def recorded(*args: Any, **kwargs: Any) -> dict[Path, Any]:
        jobs = reuse_drawn(*args, **kwargs)
        to_draw.extend(jobs)
        return jobs

    monkeypatch.setattr(render, "reuse_drawn", recorded)
    second = write_report(two_suites.store, tmp_path / "second").parent
    assert to_draw == [] and snapshot(first) == snapshot(second)
    kept = sorted((tmp_path / "home" / "plots").glob("*.svg"))
    assert len(kept) == len(list((first / "plots").glob("*.svg"))) > 0
    kept[0].write_text("<script>alert(1)</script>")  # damaged, or not ours: drawn again, never copied
    third = write_report(two_suites.store, tmp_path / "third").parent
    assert len(to_draw) == 1 and snapshot(third) == snapshot(first)
