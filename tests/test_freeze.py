"""Frozen data: tampering is caught, and published files are found or refused with a clear reason."""

from __future__ import annotations

import hashlib
from pathlib import Path

import pytest

from harness import freeze, registry
from harness.cli import main
from harness.errors import DataIntegrityError, UserError
from harness.sources import SourceFile, resolve


@pytest.fixture
def built_home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A private STRUCTBENCH_HOME, so that tampering does not leak into other tests."""
    monkeypatch.setenv("STRUCTBENCH_HOME", str(tmp_path / "home"))
    assert main(["build", "lookup-tables"]) == 0
    return tmp_path / "home" / "suites" / "lookup-tables@1.0.0"


def test_verify_passes_on_fresh_data(built_home: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["build", "lookup-tables", "--verify"]) == 0
    assert "ok lookup-tables@1.0.0" in capsys.readouterr().out


def test_verify_names_a_split_with_one_flipped_byte(built_home: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = built_home / "draw2" / "heldout_tables.jsonl"
    data = bytearray(path.read_bytes())
    data[100] ^= 0x01
    path.write_bytes(bytes(data))
    assert main(["build", "lookup-tables", "--verify"]) == 1
    assert "draw2/heldout_tables" in capsys.readouterr().err


def test_verify_catches_a_truncated_split(built_home: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = built_home / "draw0" / "train.jsonl"
    path.write_bytes(path.read_bytes()[:-40])
    assert main(["build", "lookup-tables", "--verify"]) == 1
    assert "draw0/train" in capsys.readouterr().err


def test_tampered_data_is_never_scored(built_home: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = built_home / "draw0" / "heldout_inputs.jsonl"
    path.write_bytes(path.read_bytes().replace(b'"000"', b'"111"', 1))
    code = main(["run", "--suite", "lookup-tables", "--model", "oracle", "--store", str(tmp_path / "r.sqlite")])
    assert code == 2
    assert "does not match the manifest" in capsys.readouterr().err
    suite = registry.suite("lookup-tables")
    with pytest.raises(DataIntegrityError):
        freeze.load_split(suite, freeze.expected_manifest(suite), 0, "heldout_inputs")  # type: ignore[arg-type]


def test_missing_source_offline_names_file_url_and_variable(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("STRUCTBENCH_SOURCE_DIR", str(tmp_path / "empty"))
    monkeypatch.setenv("STRUCTBENCH_HOME", str(tmp_path / "home"))
    source = SourceFile(path="scan/tasks.txt", url="http://127.0.0.1:9/tasks.txt", sha256="0" * 64)
    with pytest.raises(UserError) as caught:
        resolve(source)
    assert "scan/tasks.txt" in str(caught.value)
    assert "http://127.0.0.1:9/tasks.txt" in str(caught.value)
    assert "STRUCTBENCH_SOURCE_DIR" in str(caught.value)


def test_a_source_file_with_other_bytes_is_refused(tmp_path: Path) -> None:
    (tmp_path / "d").mkdir()
    (tmp_path / "d" / "f.tsv").write_text("edited\n")
    pinned = hashlib.sha256(b"original\n").hexdigest()
    source = SourceFile(path="d/f.tsv", url="http://127.0.0.1:9/f.tsv", sha256=pinned)
    with pytest.raises(UserError, match="pinned"):
        resolve(source, tmp_path)
    (tmp_path / "d" / "f.tsv").write_text("original\n")
    assert resolve(source, tmp_path) == tmp_path / "d" / "f.tsv"


def test_a_generator_change_under_a_released_version_is_refused(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.setenv("STRUCTBENCH_HOME", str(tmp_path / "home"))
    suite = registry.suite("lookup-tables")
    original = type(suite).generate

    def drifted(self, draw, files):  # type: ignore[no-untyped-def]
        splits = original(self, draw, files)
        splits["train"] = list(reversed(splits["train"]))
        return splits

    monkeypatch.setattr(type(suite), "generate", drifted)
    with pytest.raises(DataIntegrityError, match="new suite version"):
        freeze.build(suite)
