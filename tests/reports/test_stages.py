"""The report's stages: only the builders (`structbench.reports.builders.from_store` and the readers it
calls) read the store; the views and the writers work on a built `Site` and load nothing of the store,
not even through the values they import."""

from __future__ import annotations

import ast
import subprocess
import sys
from importlib import resources
from pathlib import Path

import pytest

from structbench.reports.builders import site

STAGES = ("views", "writers")


def _modules() -> list[Path]:
    root = Path(str(resources.files("structbench.reports")))
    return sorted(path for stage in STAGES for path in (root / stage).glob("*.py"))


def _imports(path: Path) -> set[str]:
    """Every module `path` imports, and every name it imports from one (as `module.name`)."""
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            found |= {alias.name for alias in node.names}
        elif isinstance(node, ast.ImportFrom) and node.module:
            found |= {node.module} | {f"{node.module}.{alias.name}" for alias in node.names}
    return found


def test_every_stage_has_modules() -> None:
    assert {path.parent.name for path in _modules()} == set(STAGES)


@pytest.mark.parametrize("path", _modules(), ids=lambda path: f"{path.parent.name}/{path.name}")
def test_views_and_writers_import_no_store(path: Path) -> None:
    store = {name for name in _imports(path) if name == "structbench.store" or name.startswith("structbench.store.")}
    assert not store, f"{path.parent.name}/{path.name} imports {sorted(store)}: only the build reads the store"


def test_views_and_writers_load_no_store_through_what_they_import() -> None:
    """What import-linter checks of the import graph, checked at run time: a fresh interpreter that
    imports every view and writer (and so every value of a `Site`) has loaded no module of the store."""
    modules = [f"structbench.reports.{path.parent.name}.{path.stem}" for path in _modules()]
    script = (
        "import importlib, sys\n"
        f"for name in {modules!r}:\n"
        "    importlib.import_module(name)\n"
        "print(sorted(m for m in sys.modules if m == 'structbench.store' or m.startswith('structbench.store.')))\n"
    )
    loaded = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, check=True, timeout=120)
    assert loaded.stdout.strip() == "[]", f"the views and writers load {loaded.stdout.strip()}"


def test_the_site_is_one_frozen_value() -> None:
    assert site.Site.__dataclass_params__.frozen  # type: ignore[attr-defined]
