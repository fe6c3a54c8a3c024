"""Finding suites and models: entry points, module:Class paths, duplicates, close names."""

from __future__ import annotations

from collections.abc import Iterator
from importlib.metadata import EntryPoint

import pytest

from harness import registry
from harness.errors import UserError
from harness.runner import Runner
from harness.specs import ModelSpec


@pytest.fixture(autouse=True)
def fresh_registry() -> Iterator[None]:
    registry.clear_cache()
    yield
    registry.clear_cache()


def fake_entry_points(monkeypatch: pytest.MonkeyPatch, *points: tuple[str, str]) -> None:
    real = registry._entry_points

    def patched(group: str) -> list[EntryPoint]:
        extra = [EntryPoint(name, value, group) for name, value in points] if group == registry.MODEL_GROUP else []
        return real(group) + extra

    monkeypatch.setattr(registry, "_entry_points", patched)


def test_unknown_model_suggests_close_names() -> None:
    with pytest.raises(UserError, match=r"unknown model 'majorty'; did you mean majority\?"):
        registry.model_factory("majorty")


def test_unknown_name_without_close_match_lists_the_known_ones() -> None:
    with pytest.raises(UserError, match=r"known models: .*oracle"):
        registry.model_factory("zzzzzz")


def test_a_plugin_reusing_a_builtin_name_is_rejected(monkeypatch: pytest.MonkeyPatch) -> None:
    fake_entry_points(monkeypatch, ("oracle", "somewhere.else:Oracle"))
    with pytest.raises(UserError, match="two plugins register 'oracle'"):
        registry.model_factory("copy")


def test_the_same_entry_point_seen_twice_is_not_a_duplicate(monkeypatch: pytest.MonkeyPatch) -> None:
    fake_entry_points(monkeypatch, ("oracle", "baselines.trivial:Oracle"))
    assert registry.model_factory("oracle").__name__ == "Oracle"


def test_plugins_register_through_entry_points(monkeypatch: pytest.MonkeyPatch) -> None:
    fake_entry_points(monkeypatch, ("counting", "tests.helpers:CountingCopy"))
    assert "counting" in registry.model_names()
    assert registry.model_factory("counting").__name__ == "CountingCopy"


def test_module_class_paths_load_without_registration() -> None:
    assert registry.model_factory("tests.helpers:CountingCopy").__name__ == "CountingCopy"
    with pytest.raises(UserError, match="has no 'Nope'"):
        registry.model_factory("tests.helpers:Nope")


def test_versions_must_match_the_installed_suite() -> None:
    assert registry.suite("lookup-tables@1.0.0").spec.version == "1.0.0"
    with pytest.raises(UserError, match=r"lookup-tables@9\.9\.9 is not installed"):
        registry.suite("lookup-tables@9.9.9")


def test_a_suite_path_must_name_a_suite_class() -> None:
    with pytest.raises(UserError, match="not a structbench Suite subclass"):
        registry.suite("tests.helpers:CountingCopy")


def test_the_oracle_finds_a_suite_loaded_by_module_path(runner: Runner) -> None:
    record = runner.evaluate("suites.lookup_tables:LookupTables", ModelSpec(name="oracle"), [0])
    assert record.status == {"0": "done"}
    assert record.scores["new_compositions"]["sequence_accuracy"].mean == 1.0
