"""Finding the published files a suite is built from, and proving they are the right ones.

A suite names each external file by a path relative to a source folder laid out like the
project's reference data (e.g. `lookup_tables/sample1/train.tsv`), a pinned URL and the
file's SHA-256. Lookup order: an explicit `--source-dir`, the environment
variable `STRUCTBENCH_SOURCE_DIR`, the cache under `STRUCTBENCH_HOME`, and last a download
from the pinned URL into the cache. Whatever is found must match the pinned hash.
"""

from __future__ import annotations

import hashlib
import http.client
import os
import urllib.error
import urllib.request
from pathlib import Path

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
    """SHA-256 of the file's bytes; empty for a file the user supplies (licensed data), not checked."""


def sha256_bytes(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def sha256_file(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as handle:
        for block in iter(lambda: handle.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def _check(path: Path, source: SourceFile, origin: str) -> Path:
    if not source.sha256:
        return path
    actual = sha256_file(path)
    if actual != source.sha256:
        raise UserError(
            f"{path} (from {origin}) has SHA-256 {actual[:12]}… but {source.path} is pinned to "
            f"{source.sha256[:12]}…; point {origin} at an unmodified copy of the published data."
        )
    return path


def _local(source: SourceFile, source_dir: Path | None) -> tuple[Path, str] | None:
    """The first local copy of `source` in lookup order, with where it was found; None without one."""
    candidates: list[tuple[Path, str]] = []
    if source_dir is not None:
        candidates.append((Path(source_dir), "--source-dir"))
    if env_dir := os.environ.get(SOURCE_DIR_VARIABLE):
        candidates.append((Path(env_dir), SOURCE_DIR_VARIABLE))
    candidates.append((sources_cache_dir(), "the cache"))
    for folder, origin in candidates:
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
    return _download(source, sources_cache_dir() / source.path)


def _download(source: SourceFile, destination: Path) -> Path:
    if not source.url:
        raise SourceUnavailable(
            f"{source.path} was not found locally and has no download address (it comes from {source.origin}); "
            f"set {SOURCE_DIR_VARIABLE} to a folder that contains it.",
            short=f"{source.path} was not found locally and has no download address (it comes from {source.origin})",
        )
    try:
        with urllib.request.urlopen(source.url, timeout=60) as response:
            data = response.read()
    except (urllib.error.URLError, TimeoutError, OSError, http.client.HTTPException) as error:
        reason = error.reason if isinstance(error, urllib.error.URLError) else error
        raise SourceUnavailable(
            f"{source.path} was not found locally and could not be downloaded from {source.url} "
            f"({reason}); download it yourself or set {SOURCE_DIR_VARIABLE} to a folder that contains it.",
            short=f"{source.path} was not found locally and could not be downloaded ({reason})",
        ) from None
    actual = sha256_bytes(data)
    if actual != source.sha256:
        raise SourceUnavailable(
            f"the download of {source.url} has SHA-256 {actual[:12]}… instead of the pinned "
            f"{source.sha256[:12]}…; the upstream file changed, so set {SOURCE_DIR_VARIABLE} to a copy "
            "of the pinned version.",
            short=f"the download of {source.path} is not the pinned file (SHA-256 {actual[:12]}…)",
        )
    destination.parent.mkdir(parents=True, exist_ok=True)
    partial = destination.with_suffix(destination.suffix + ".part")
    partial.write_bytes(data)
    partial.replace(destination)
    return destination
