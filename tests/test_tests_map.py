"""Each module's tests can be found from its name.

A maintainer changing `runs/identity.py` looks for `test_identity.py`. A module whose behaviour is
only reachable through another (a template helper, a data table, a CLI command exercised end to
end) is listed in `tests/README.md` with the test files that cover it instead. This test keeps
both honest: every module has a test file named after it or a line in that list, and the list
names only modules that exist and test files that exist.
"""

from __future__ import annotations

import re
from pathlib import Path

REPOSITORY = Path(__file__).resolve().parents[1]
PACKAGE = REPOSITORY / "src" / "structbench"
TESTS = REPOSITORY / "tests"


def modules() -> list[str]:
    return sorted(
        path.relative_to(PACKAGE).as_posix()
        for path in PACKAGE.rglob("*.py")
        if path.name not in {"__init__.py", "__main__.py"} and "reference_runs" not in path.parts
    )


def stems_of_test_files() -> set[str]:
    return {path.stem.removeprefix("test_") for path in TESTS.rglob("test_*.py")}


def listed() -> dict[str, list[str]]:
    """`tests/README.md`'s table: module path -> the test files that cover it."""
    text = (TESTS / "README.md").read_text(encoding="utf-8")
    rows = re.findall(r"^\| `([\w/]+\.py)` \| (.+?) \|$", text, re.MULTILINE)
    return {module: re.findall(r"`(tests/[\w/]+\.py)`", where) for module, where in rows}


def named_after(module: str, stems: set[str]) -> bool:
    stem = Path(module).stem
    return any(s == stem or s.startswith(f"{stem}_") for s in stems)


def test_every_module_has_a_test_named_after_it_or_a_line_in_the_readme() -> None:
    stems, table = stems_of_test_files(), listed()
    orphans = [m for m in modules() if not named_after(m, stems) and m not in table]
    assert not orphans, f"no test file is named after, and tests/README.md lists no tests for: {', '.join(orphans)}"


def test_the_readme_lists_only_modules_and_test_files_that_exist() -> None:
    table, present = listed(), set(modules())
    assert set(table) <= present, f"tests/README.md lists modules that are gone: {sorted(set(table) - present)}"
    missing = sorted({f for files in table.values() for f in files if not (REPOSITORY / f).is_file()})
    assert not missing, f"tests/README.md points at test files that are gone: {missing}"
    assert all(table.values()), "every module listed in tests/README.md names at least one test file"
