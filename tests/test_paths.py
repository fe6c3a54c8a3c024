"""structbench.paths: every folder under STRUCTBENCH_HOME where the rest of structbench has always put it."""

from __future__ import annotations

from pathlib import Path

import pytest

from structbench import paths, registry
from structbench.data import freeze


def test_the_home_is_read_from_the_environment_at_each_call(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(paths.HOME_VARIABLE, str(tmp_path / "one"))
    assert paths.structbench_home() == tmp_path / "one"
    monkeypatch.setenv(paths.HOME_VARIABLE, str(tmp_path / "two"))
    assert paths.structbench_home() == tmp_path / "two"
    monkeypatch.setenv(paths.HOME_VARIABLE, "~/elsewhere")
    assert paths.structbench_home() == Path.home() / "elsewhere"
    monkeypatch.delenv(paths.HOME_VARIABLE)
    assert paths.structbench_home() == Path.home() / ".cache" / "structbench"


def test_every_folder_sits_where_it_always_has(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("STRUCTBENCH_HOME", str(tmp_path))
    assert paths.default_store_path() == tmp_path / "results.sqlite"
    assert paths.built_suite_dir("miniscan@1.0.0") == tmp_path / "suites" / "miniscan@1.0.0"
    assert paths.sources_cache_dir() == tmp_path / "sources"
    assert paths.checkpoints_dir() == tmp_path / "checkpoints"
    assert paths.audits_dir() == tmp_path / "audits"
    suite = registry.suite("miniscan")
    assert freeze.suite_dir(suite) == tmp_path / "suites" / suite.spec.key
    assert freeze.lock_path(suite) == tmp_path / "suites" / f".{suite.spec.key}.lock"
