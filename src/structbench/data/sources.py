"""Finding the published files a suite is built from, and proving they are the right ones.

A suite names each external file by a path relative to a source folder laid out like the
project's reference data (e.g. `lookup_tables/sample1/train.tsv`), a pinned URL and the
file's SHA-256. Lookup order: an explicit `--source-dir`, the environment
variable `STRUCTBENCH_SOURCE_DIR`, the cache under `STRUCTBENCH_HOME`, and last a download
from the pinned URL into the cache. Whatever is found must match the pinned hash.

A file no copy of which was at hand when its suite was written (COGS's generalisation set) is
pinned instead by its git blob id, the name git gives the file's bytes in the pinned commit's tree
(the SHA-1 of `blob <size in bytes>`, a NUL byte and the bytes), which `git ls-tree` lists without
the file being downloaded. It is checked the same way, on a local copy and on a download.

A file found nowhere is told in one sentence that names every folder searched and the fix that
applies: to set `STRUCTBENCH_SOURCE_DIR` where it is unset, and where it is set, that it is set to
a folder that does not hold the file (`searched`, `where_to_put`).
"""

from __future__ import annotations

import hashlib
import http.client
import os
import urllib.error
import urllib.request
from pathlib import Path

from pydantic import Field

from structbench.errors import SourceUnavailable, UserError
from structbench.paths import sources_cache_dir
from structbench.specs import Frozen

SOURCE_DIR_VARIABLE = "STRUCTBENCH_SOURCE_DIR"


class SourceFile(Frozen):
    """One published file a suite needs."""

    path: str
    """Path relative to a source folder, e.g. `lookup_tables/sample1/train.tsv`."""
    url: str
    """Pinned download address (a fixed commit, never a branch); empty when none exists."""
    origin: str = ""
    """Where to get the file when there is no download address (e.g. a paper's supplement)."""
    sha256: str
    """SHA-256 of the file's bytes; empty for a file the user supplies (licensed data), not checked,
    and for a file pinned by its `git_blob` instead."""
    git_blob: str = Field("", pattern=r"^([0-9a-f]{40})?$")
    """Git blob id of the file in the pinned commit (SHA-1 of `blob <size>`, a NUL byte and the bytes):
    the pin of a file whose SHA-256 was never computed from a copy; empty for the others. Checked like
    `sha256` (both, where both are given)."""

    @property
    def pinned(self) -> bool:
        """Whether the file's bytes are pinned (by SHA-256 or git blob id): False for a user's own copy."""
        return bool(self.sha256 or self.git_blob)

    def pins(self) -> list[tuple[str, str]]:
        """(kind, expected digest) of every pin the file has: `SHA-256` and/or `git blob id`."""
        return [(kind, digest) for kind, digest in (("SHA-256", self.sha256), ("git blob id", self.git_blob)) if digest]


def sha256_bytes(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def sha256_file(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as handle:
        for block in iter(lambda: handle.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def git_blob_bytes(data: bytes) -> str:
    """The git blob id of `data`: what `git hash-object` prints for a file holding these bytes."""
    return hashlib.sha1(b"blob %d\0" % len(data) + data, usedforsecurity=False).hexdigest()


def git_blob_file(path: Path) -> str:
    """The git blob id of the file at `path`, read in blocks."""
    digest = hashlib.sha1(b"blob %d\0" % path.stat().st_size, usedforsecurity=False)
    with path.open("rb") as handle:
        for block in iter(lambda: handle.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


_OF_FILE = {"SHA-256": sha256_file, "git blob id": git_blob_file}
_OF_BYTES = {"SHA-256": sha256_bytes, "git blob id": git_blob_bytes}


def _check(path: Path, source: SourceFile, origin: str) -> Path:
    for kind, expected in source.pins():
        actual = _OF_FILE[kind](path)
        if actual != expected:
            fix = (
                "delete it, and it is downloaded again"
                if origin == "the cache"
                else f"point {origin} at an unmodified copy of the published data"
            )
            raise UserError(
                f"{path} (from {origin}) has {kind} {actual[:12]}… but {source.path} is pinned to "
                f"{expected[:12]}…; {fix}."
            )
    return path


def _folders(source_dir: Path | None) -> list[tuple[Path, str]]:
    """The folders a source file is looked for in, in lookup order, each with what names it."""
    candidates: list[tuple[Path, str]] = []
    if source_dir is not None:
        candidates.append((Path(source_dir), "--source-dir"))
    if env_dir := os.environ.get(SOURCE_DIR_VARIABLE):
        candidates.append((Path(env_dir), SOURCE_DIR_VARIABLE))
    candidates.append((sources_cache_dir(), "the cache"))
    return candidates


def searched(source_dir: Path | None = None) -> str:
    """The folders searched, for a message: `/data (STRUCTBENCH_SOURCE_DIR) or /home/sources (the cache)`."""
    return " or ".join(f"{folder} ({origin})" for folder, origin in _folders(source_dir))


def where_to_put(source_dir: Path | None = None, what: str = "it") -> str:
    """The fix for source files (`what`: `it`, `them`) found in no folder searched: set
    STRUCTBENCH_SOURCE_DIR where it is unset; where it (or `--source-dir`) is set, say to what, and
    that the folder does not hold them (or does not exist)."""
    if source_dir is not None:
        given, name = Path(source_dir), "--source-dir"
    elif env_dir := os.environ.get(SOURCE_DIR_VARIABLE):
        given, name = Path(env_dir), SOURCE_DIR_VARIABLE
    else:
        return f"set {SOURCE_DIR_VARIABLE} to a folder that holds {what}"
    if not given.is_dir():
        return f"{name} is set to {given}, which does not exist: make it and put {what} there, or point {name} at a folder that holds {what}"
    return f"{name} is set to {given}, which does not hold {what}: put {what} there, or point {name} at a folder that holds {what}"


def _local(source: SourceFile, source_dir: Path | None) -> tuple[Path, str] | None:
    """The first local copy of `source` in lookup order, with where it was found; None without one."""
    for folder, origin in _folders(source_dir):
        if (folder / source.path).is_file():
            return folder / source.path, origin
    return None


def is_local(source: SourceFile, source_dir: Path | None = None) -> bool:
    """Whether a copy of `source` is on this machine (not checked against its hash, not downloaded)."""
    return _local(source, source_dir) is not None


def resolve(source: SourceFile, source_dir: Path | None = None) -> Path:
    """Return a local, hash-checked path of `source`, downloading it into the cache if needed."""
    found = _local(source, source_dir)
    if found is not None:
        path, origin = found
        return _check(path, source, origin)
    try:
        return _download(source, sources_cache_dir() / source.path)
    except SourceUnavailable as error:
        raise SourceUnavailable(
            f"{source.path} is not in {searched(source_dir)}, {error}; {where_to_put(source_dir)}.",
            short=error.short,  # the reason alone: a list of skipped suites names the folders and the fix once
        ) from None


def _download(source: SourceFile, destination: Path) -> Path:
    """Download `source` into `destination` and check it; a `SourceUnavailable` whose message is the
    reason alone, to follow the folders searched (`resolve` names them and the fix)."""
    if not source.url:
        raise SourceUnavailable(
            f"and it has no download address (it comes from {source.origin})",
            short=f"{source.path} was not found locally and has no download address (it comes from {source.origin})",
        )
    try:
        with urllib.request.urlopen(source.url, timeout=60) as response:
            data = response.read()
    except (urllib.error.URLError, TimeoutError, OSError, http.client.HTTPException) as error:
        reason = error.reason if isinstance(error, urllib.error.URLError) else error
        raise SourceUnavailable(
            f"and it could not be downloaded from {source.url} ({reason}): download it yourself, or run online",
            short=f"{source.path} was not found locally and could not be downloaded ({reason})",
        ) from None
    for kind, expected in source.pins() or [("SHA-256", "")]:  # a download without a pin is never trusted
        actual = _OF_BYTES[kind](data)
        if actual != expected:
            raise SourceUnavailable(
                f"and its download from {source.url} has {kind} {actual[:12]}… instead of the pinned "
                f"{expected[:12]}… (the upstream file changed): a copy of the pinned version is needed",
                short=f"the download of {source.path} is not the pinned file ({kind} {actual[:12]}…)",
            )
    destination.parent.mkdir(parents=True, exist_ok=True)
    partial = destination.with_suffix(destination.suffix + ".part")
    partial.write_bytes(data)
    partial.replace(destination)
    return destination
