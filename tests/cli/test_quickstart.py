"""`structbench quickstart`: the README's main job, end to end."""

from __future__ import annotations

from pathlib import Path

import pytest

from structbench import registry
from structbench.cli import main
from structbench.data import sources
from structbench.errors import UserError
from tests.support.helpers import offline


@pytest.mark.long_running(seconds=110)
def test_quickstart_evaluates_every_family_and_renders_the_leaderboard(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "report"
    assert main(["quickstart", "--store", str(tmp_path / "r.sqlite"), "--out", str(out), "--seeds", "0"]) == 0
    captured = capsys.readouterr()
    assert f"leaderboard written to {out / 'index.html'}" in captured.out
    every = registry.suite_names()
    evaluated = [name for name in every if f"suite {registry.suite(name).spec.key} " in captured.err]
    # every research family, every suite of its own, and the first member of each suite set
    assert {registry.suite(name).spec.family for name in evaluated} == {
        registry.suite(name).spec.family for name in every
    }
    members = registry.suite_sets()
    in_a_family = {member for ids in members.values() for member in ids}
    assert set(evaluated) == set(every) - in_a_family | {ids[0] for ids in members.values()}
    assert len(evaluated) < len(every)
    assert (
        f"{len(every) - len(evaluated)} more suites, the other members of each suite set, are built on first use: "
        "`structbench quickstart --all` evaluates them too."
    ) in captured.err.splitlines()
    html = (out / "index.html").read_text()
    for model in ("oracle", "copy", "random", "majority"):
        assert f'<th scope="row" data-value="{model}">{model}' in html or f'<th scope="row">{model}<span' in html
    # a page for every suite evaluated, less those skipped: the user-data suites, and cogs where its gen file
    # can be neither found nor downloaded (it is not among the reference data)
    skipped = [name for name in evaluated if f"suite {registry.suite(name).spec.key} skipped: " in captured.err]
    assert (
        {"pos-wsj", "msr-sentence-completion", "agreement-linzen-number"}
        <= set(skipped)
        <= {
            "pos-wsj",
            "msr-sentence-completion",
            "agreement-linzen-number",
            "cogs",
        }
    )
    assert len(list((out / "suites").glob("*.html"))) == len(evaluated) - len(skipped)


def test_quickstart_all_evaluates_every_registered_suite(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setattr(registry, "suite_names", lambda: ["miniscan", "scan-filler-0", "scan-filler-1"])
    store, out = str(tmp_path / "r.sqlite"), str(tmp_path / "o")
    assert main(["quickstart", "--store", store, "--out", out, "--seeds", "0"]) == 0
    err = capsys.readouterr().err
    assert "suite scan-filler-0@" in err and "suite scan-filler-1@" not in err
    assert main(["quickstart", "--all", "--store", store, "--out", out, "--seeds", "0"]) == 0
    err = capsys.readouterr().err
    assert all(f"suite {name}@" in err for name in ("miniscan", "scan-filler-0", "scan-filler-1"))
    assert err.splitlines()[-1] == "evaluated 3 of 3 suites."
    assert main(["quickstart", "miniscan", "--all", "--store", store, "--out", out]) == 2
    assert "quickstart takes suite ids or --all, not both" in capsys.readouterr().err


def test_quickstart_skips_a_suite_whose_files_cannot_be_found(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv("STRUCTBENCH_HOME", str(tmp_path / "home"))
    monkeypatch.setenv("STRUCTBENCH_SOURCE_DIR", str(tmp_path / "empty"))

    def offline(source: sources.SourceFile, destination: Path) -> Path:
        raise UserError(f"{source.path} is not available offline")

    monkeypatch.setattr(sources, "_download", offline)
    store, out = str(tmp_path / "r.sqlite"), str(tmp_path / "o")
    assert (
        main(["quickstart", "lookup-tables", "lookup-tables-mt", "--store", store, "--out", out, "--seeds", "0"]) == 0
    )
    err = capsys.readouterr().err
    assert "suite lookup-tables-mt@1.0.0 skipped: lookup_tables/sample1/train.tsv is not available offline" in err
    html = (tmp_path / "o" / "index.html").read_text()
    assert '<th scope="row">oracle<span class="tag apart">ceiling</span>' in html
    # the skipped suite is listed with the reason
    assert (
        "<li><code>lookup-tables-mt@1.0.0</code>: not built here: 45 published files are not on this machine "
        "(lookup_tables/sample1/train.tsv, …)"
    ) in html


def test_offline_quickstart_ends_with_what_it_skipped_and_the_fix_and_the_site_as_an_absolute_path(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    offline(tmp_path, monkeypatch, "[Errno -3] Temporary failure in name resolution")
    monkeypatch.chdir(tmp_path)
    assert main(["quickstart", "--store", "r.sqlite", "--out", "site", "--seeds", "0"]) == 0
    captured = capsys.readouterr()
    assert captured.out.splitlines()[-1] == f"leaderboard written to {tmp_path / 'site' / 'index.html'}"
    err = captured.err.splitlines()
    skips = [line for line in err if " skipped: " in line]
    assert skips == [
        "suite agreement-linzen-number@2.0.0 skipped: linzen/agr_50_mostcommon_10K.tsv was not found locally and "
        "has no download address (it comes from github.com/TalLinzen/rnn_agreement (download "
        "agr_50_mostcommon_10K.tsv yourself))",
        "suite scan-simple@2.0.0 skipped: scan/tasks_train_simple.txt was not found locally and could not be "
        "downloaded ([Errno -3] Temporary failure in name resolution)",
    ]
    empty, cache = tmp_path / "empty", tmp_path / "home" / "sources"
    assert err[-1] == (
        f"evaluated 1 of 3 suites; skipped 2, whose source files are not in {empty} (STRUCTBENCH_SOURCE_DIR) or "
        f"{cache} (the cache) and could not be downloaded (reasons above): agreement-linzen-number, scan-simple. "
        f"STRUCTBENCH_SOURCE_DIR is set to {empty}, which does not exist: make it and put them there, or point "
        "STRUCTBENCH_SOURCE_DIR at a folder that holds them; or run online to download those that have a download "
        "address."
    )


def test_quickstart_neural_adds_the_neural_baselines_at_their_small_budget(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "report"
    store = str(tmp_path / "r.sqlite")
    assert main(["quickstart", "miniscan", "--neural", "--store", store, "--out", str(out), "--seeds", "0"]) == 0
    err = capsys.readouterr().err
    for model in ("lstm-thrush", "lla-lstm"):
        assert f"  {model}" in err
        assert f'<th scope="row" data-value="{model}">{model}' in (out / "suites" / "miniscan@1.0.0.html").read_text()
    main(["quickstart", "miniscan", "--store", store, "--out", str(out), "--seeds", "0"])
    assert "lla-lstm" not in capsys.readouterr().err  # without --neural only the fast baselines run


def test_quickstart_leaves_nothing_in_the_folder_it_ran_in(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """Its site is the home's `site/` and its lock is gone at the end (issue 46: a `.structbench-report.lock`
    stayed in the current folder and showed in `git status`)."""
    home, work = tmp_path / "home", tmp_path / "work"
    work.mkdir()
    monkeypatch.setenv("STRUCTBENCH_HOME", str(home))
    monkeypatch.chdir(work)
    assert main(["quickstart", "lookup-tables", "--seeds", "0", "--no-reference", "--no-progress"]) == 0
    captured = capsys.readouterr()
    assert captured.out.splitlines()[-1] == f"leaderboard written to {home / 'site' / 'index.html'}"
    assert "new results store" not in captured.err  # quickstart makes the home's store: no news
    assert list(work.iterdir()) == []
    assert sorted(path.name for path in home.iterdir() if path.name.startswith(".")) == []  # no lock, no partial
    assert (home / "results.sqlite").is_file()
