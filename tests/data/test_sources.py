"""The git-blob-id pin: a source file known by its id in a pinned commit's tree, checked on a local copy
and on a download as a SHA-256 pin is."""

from __future__ import annotations

import io
import os
import subprocess
import urllib.request
from pathlib import Path

import pytest
from pydantic import ValidationError

from structbench.data.sources import SourceFile, git_blob_bytes, git_blob_file, resolve
from structbench.errors import SourceUnavailable, UserError

UPSTREAM_BLOBS = {
    "cogs/train.tsv": "eb101d5755415c4eea7071fb37d32ed56e610ef8",
    "cogs/dev.tsv": "a1b43fa194defad85fe8e3bbcfbae2f6d10e56ee",
    "slog/generalization_sets.zip": "3ad76c5ad2a1662aee7eb0bb46a7bf5fbabbde1f",
}
"""`git ls-tree -r` of github.com/najoungkim/COGS at 165a7b6 and github.com/bingzhilee/SLOG at 1c55df8."""


def test_a_blob_id_is_what_git_names_the_bytes() -> None:
    assert git_blob_bytes(b"") == "e69de29bb2d1d6434b8b29ae775ad8c2e48c5391"  # git's empty blob
    assert git_blob_bytes(b"hello\n") == "ce013625030ba8dba906f756967f9e9ca394464a"
    for path, blob in UPSTREAM_BLOBS.items():
        assert git_blob_file(Path(os.environ["STRUCTBENCH_SOURCE_DIR"]) / path) == blob


def test_a_file_read_in_blocks_has_the_blob_id_of_its_bytes(tmp_path: Path) -> None:
    data = bytes(range(256)) * 9_000  # over two 1 MiB blocks
    (tmp_path / "f.bin").write_bytes(data)
    assert git_blob_file(tmp_path / "f.bin") == git_blob_bytes(data)
    try:
        by_git = subprocess.run(["git", "hash-object", str(tmp_path / "f.bin")], capture_output=True, text=True)
    except FileNotFoundError:
        return  # no git on this machine: the known ids above stand for it
    assert by_git.stdout.strip() == git_blob_bytes(data)


def test_a_local_copy_is_checked_against_its_blob_id(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("STRUCTBENCH_HOME", str(tmp_path / "home"))
    (tmp_path / "d").mkdir()
    (tmp_path / "d" / "gen.tsv").write_bytes(b"published\n")
    pinned = SourceFile(path="d/gen.tsv", url="", origin="a paper", sha256="", git_blob=git_blob_bytes(b"published\n"))
    assert pinned.pinned and resolve(pinned, tmp_path) == tmp_path / "d" / "gen.tsv"
    (tmp_path / "d" / "gen.tsv").write_bytes(b"edited\n")
    edited = git_blob_bytes(b"edited\n")
    with pytest.raises(UserError) as caught:
        resolve(pinned, tmp_path)
    message = str(caught.value)
    assert f"has git blob id {edited[:12]}…" in message
    assert f"d/gen.tsv is pinned to {pinned.git_blob[:12]}…" in message and "--source-dir" in message


def test_a_download_is_checked_against_its_blob_id_and_cached_only_when_it_matches(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("STRUCTBENCH_HOME", str(tmp_path / "home"))
    monkeypatch.setenv("STRUCTBENCH_SOURCE_DIR", str(tmp_path / "empty"))
    served = {"body": b"upstream changed\n"}
    monkeypatch.setattr(urllib.request, "urlopen", lambda *_, **__: io.BytesIO(served["body"]))
    source = SourceFile(
        path="cogs/gen.tsv", url="https://example.org/gen.tsv", sha256="", git_blob=git_blob_bytes(b"gen\n")
    )
    with pytest.raises(SourceUnavailable) as caught:
        resolve(source)
    assert (
        caught.value.short
        == f"the download of cogs/gen.tsv is not the pinned file (git blob id {git_blob_bytes(served['body'])[:12]}…)"
    )
    assert not (tmp_path / "home" / "sources" / "cogs").exists()
    served["body"] = b"gen\n"
    cached = tmp_path / "home" / "sources" / "cogs" / "gen.tsv"
    assert resolve(source) == cached and cached.read_bytes() == b"gen\n"


def test_a_blob_id_must_be_40_hex_digits_and_a_file_without_pins_is_the_users_own() -> None:
    with pytest.raises(ValidationError):
        SourceFile(path="x", url="", sha256="", git_blob="a54a3c9b")
    assert not SourceFile(path="x", url="", sha256="").pinned
    both = SourceFile(path="x", url="", sha256="0" * 64, git_blob="1" * 40)
    assert both.pins() == [("SHA-256", "0" * 64), ("git blob id", "1" * 40)]


MISSING = SourceFile(path="linzen/agr.tsv", url="", origin="the authors' page", sha256="0" * 64)
"""A file no folder holds and nothing downloads: each missing-data message is about it."""


def test_a_missing_file_names_the_folders_searched_and_advises_setting_the_variable_only_when_unset(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    cache = tmp_path / "home" / "sources"
    monkeypatch.setenv("STRUCTBENCH_HOME", str(tmp_path / "home"))
    monkeypatch.delenv("STRUCTBENCH_SOURCE_DIR", raising=False)
    with pytest.raises(SourceUnavailable) as unset:
        resolve(MISSING)
    assert str(unset.value) == (
        f"linzen/agr.tsv is not in {cache} (the cache), and it has no download address (it comes from the authors' "
        "page); set STRUCTBENCH_SOURCE_DIR to a folder that holds it."
    )
    empty = tmp_path / "data"
    empty.mkdir()
    monkeypatch.setenv("STRUCTBENCH_SOURCE_DIR", str(empty))
    with pytest.raises(SourceUnavailable) as set_there:
        resolve(MISSING)
    assert str(set_there.value) == (
        f"linzen/agr.tsv is not in {empty} (STRUCTBENCH_SOURCE_DIR) or {cache} (the cache), and it has no download "
        f"address (it comes from the authors' page); STRUCTBENCH_SOURCE_DIR is set to {empty}, which does not hold "
        "it: put it there, or point STRUCTBENCH_SOURCE_DIR at a folder that holds it."
    )
    monkeypatch.setenv("STRUCTBENCH_SOURCE_DIR", str(tmp_path / "typo"))
    with pytest.raises(
        SourceUnavailable, match=r"STRUCTBENCH_SOURCE_DIR is set to \S+typo, which does not exist: make"
    ):
        resolve(MISSING)
    with pytest.raises(SourceUnavailable) as given:
        resolve(MISSING, empty)
    assert f"is not in {empty} (--source-dir) or {tmp_path / 'typo'} (STRUCTBENCH_SOURCE_DIR) or {cache}" in str(
        given.value
    )
    assert str(given.value).endswith(f"--source-dir is set to {empty}, which does not hold it: put it there, or "
                                     "point --source-dir at a folder that holds it.")  # fmt: skip
    assert (
        given.value.short
        == "linzen/agr.tsv was not found locally and has no download address (it comes from the authors' page)"
    )
