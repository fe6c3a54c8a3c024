"""Hostile grid files end `structbench sweep` in one sentence naming the file and the fix, never a
traceback (issue 34): the files of `tests/support/fixtures/hostile_grids`, nesting thousands deep,
and the strict reading of YAML (a key given twice, a boolean where a seed goes)."""

from __future__ import annotations

import codecs
from pathlib import Path

import pytest

from structbench.cli import main
from structbench.errors import UserError
from structbench.sweep.grid import expand, load_grid

HOSTILE = Path(__file__).resolve().parents[1] / "support" / "fixtures" / "hostile_grids"
GRID = "suites: [lookup-tables]\nmodels: [copy]\nseeds: [0, 1]\n"

REFUSALS = {
    "latin-1.yaml": "is not UTF-8 text (byte 56); save it as UTF-8 YAML",
    "utf-16-without-bom.yaml": "holds NUL bytes (byte 1): not text, or UTF-16 without its byte-order mark",
    "overflowing-seed-range.yaml": "asks for more than 10000 seeds",
    "seed-past-int64.yaml": "must be integers from 0 to 2**63-1",
    "duplicate-key.yaml": "gives the key 'seeds' twice (line 4)",
    "duplicate-setting.yaml": "gives the key 'hidden' twice (line 4)",
    "boolean-seeds.yaml": "`true`, `yes` or `on` is a YAML boolean",
    "boolean-seed.yaml": "`true`, `yes` or `on` is a YAML boolean",
    "float-seed.yaml": "seeds.0: Input should be a valid integer",
    "boolean-limit.yaml": "limit: Input should be a valid integer",
    "python-tag.yaml": "is not valid YAML at line 1 (could not determine a constructor",
    "nul-byte.yaml": "holds NUL bytes (byte 23)",
    "top-level-list.yaml": "must be a mapping with suites, models and seeds",
    "empty.yaml": "must be a mapping with suites, models and seeds",
}


def test_every_hostile_file_has_its_expected_sentence() -> None:
    assert sorted(path.name for path in HOSTILE.glob("*.yaml")) == sorted(REFUSALS)


@pytest.mark.parametrize("name", sorted(REFUSALS))
def test_a_hostile_grid_file_is_refused_in_one_sentence(
    name: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = HOSTILE / name
    with pytest.raises(UserError) as refused:
        load_grid(path)
    message = str(refused.value)
    assert REFUSALS[name] in message and str(path) in message and "\n" not in message
    assert main(["sweep", str(path), "--store", str(tmp_path / "results.sqlite"), "--dry-run"]) == 2
    assert capsys.readouterr().err.count("\n") == 1


@pytest.mark.parametrize("opening", ["[", "{a: "])
def test_a_grid_nested_a_hundred_thousand_deep_is_refused(opening: str, tmp_path: Path) -> None:
    closing = "]" if opening == "[" else "}"
    path = tmp_path / "deep.yaml"
    path.write_text(f"suites: {opening * 100_000}1{closing * 100_000}\n")
    with pytest.raises(UserError, match="nests lists or mappings thousands deep"):
        load_grid(path)


@pytest.mark.parametrize("bom", [codecs.BOM_UTF16_LE, codecs.BOM_UTF16_BE, codecs.BOM_UTF8])
def test_a_grid_with_a_byte_order_mark_is_read(bom: bytes, tmp_path: Path) -> None:
    encoding = {codecs.BOM_UTF16_LE: "utf-16-le", codecs.BOM_UTF16_BE: "utf-16-be", codecs.BOM_UTF8: "utf-8"}[bom]
    path = tmp_path / "grid.yaml"
    path.write_bytes(bom + GRID.encode(encoding))
    assert [(run.suite, run.seed) for run in expand(load_grid(path))] == [("lookup-tables", 0), ("lookup-tables", 1)]


def test_merge_keys_may_override_what_they_merge(tmp_path: Path) -> None:
    path = tmp_path / "grid.yaml"
    path.write_text(
        "suites: [lookup-tables]\nmodels:\n  - &copy {name: copy, seeds: [0]}\n  - {<<: *copy, seeds: [1]}\n"
    )
    assert [run.seed for run in expand(load_grid(path))] == [0, 1]
