"""The overlap audit a suite card shows: read where the build stored it, or made here for data built before that.

What is counted is `structbench.data.overlap`'s business. A suite built by this structbench carries
its audit beside its manifest (`freeze.built_audit`): counted once, from the examples the build had
just generated, so the report only reads a small JSON file. Data built by an older structbench has
none; its audit is made here from the frozen data (verified against its manifest) and cached as JSON
under `STRUCTBENCH_HOME/audits/ID@VERSION-HASH.json`: the hash fixes the data, so a cached audit
stays valid for as long as `AUDIT_VERSION` (the counting rules) does.

A report never builds data: an audit is read or made only when the data built here has the suite
hash the card asks about.

Cost of an audit made here (one process on the 2-core development machine; sets of token tuples,
one pass per split): logic-bowman-le12, the largest suite (190,534 train, 21,168 dev and 74,722 test
examples), in about 4 s, most of it `load_split` parsing the frozen JSON lines, with a peak of about
550 MB; every other suite in at most 2 s. A stored audit is read in well under a millisecond.
"""

from __future__ import annotations

import os
import re
import tempfile
from pathlib import Path

from structbench import registry
from structbench.data import freeze
from structbench.data.freeze import Manifest
from structbench.data.overlap import AUDIT_VERSION, AUDITED_DRAW, OverlapAudit, SplitOverlap, count_overlap
from structbench.errors import DataIntegrityError, UserError
from structbench.paths import audits_dir
from structbench.specs import SuiteSpec
from structbench.suite import Suite

__all__ = ["AUDITED_DRAW", "AUDIT_VERSION", "OverlapAudit", "SplitOverlap", "audit", "cache_path", "cached_audit"]

_HASH = re.compile(r"[0-9a-f]{64}")
_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9._+-]*")


def audit(suite: Suite, manifest: Manifest) -> OverlapAudit:
    """Count what every dev and test split of draw 0 shares with train, reading the frozen data of `manifest`.

    Splits are read with `freeze.load_split`, which checks every file against the manifest;
    a missing or altered split raises (UserError, DataIntegrityError), never an audit of other data.
    """
    splits = {s.name: freeze.load_split(suite, manifest, AUDITED_DRAW, s.name).examples for s in suite.spec.splits}
    return count_overlap(suite.spec, splits, manifest.suite_hash)


def cache_path(spec: SuiteSpec, suite_hash: str) -> Path:
    """Where the audit of `spec`'s data with `suite_hash` is cached."""
    return audits_dir() / f"{spec.key}-{suite_hash}.json"


def _read_cache(path: Path, spec: SuiteSpec, suite_hash: str) -> OverlapAudit | None:
    """The cached audit if it is readable, valid and of this data and counting rules; None otherwise."""
    try:
        cached = OverlapAudit.model_validate_json(path.read_bytes())
    except (OSError, ValueError):  # missing, unreadable, not JSON, or not an audit (pydantic's ValidationError)
        return None
    return cached if cached.describes(spec, suite_hash) else None


def _write_cache(path: Path, result: OverlapAudit) -> None:
    """Write atomically (a temporary file renamed into place); a cache that cannot be written is skipped."""
    temporary: Path | None = None
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        with tempfile.NamedTemporaryFile("wb", dir=path.parent, prefix=f".{path.name}.", delete=False) as handle:
            temporary = Path(handle.name)
            handle.write(result.model_dump_json(indent=2).encode() + b"\n")
        os.replace(temporary, path)
    except OSError:
        if temporary is not None:
            temporary.unlink(missing_ok=True)


def cached_audit(spec: SuiteSpec, suite_hash: str) -> tuple[OverlapAudit | None, str]:
    """The audit of `spec`'s data with `suite_hash`, or None and one sentence saying why there is none.

    Answered from the cache when it holds a valid audit of that hash, else from the audit the build
    stored beside the data built here with that very hash (no split file is read); otherwise computed,
    if this structbench has the suite version and its data is built here with that hash, and cached.
    A cache file or stored audit that is damaged or of other counting rules is recomputed, never an error.
    """
    if not _HASH.fullmatch(suite_hash):
        return None, f"not audited: {suite_hash!r} is not the hash of a built suite."
    # a plugin's id could hold characters that have no place in a file name: such audits are not cached
    path = cache_path(spec, suite_hash) if _NAME.fullmatch(spec.id) and _NAME.fullmatch(spec.version) else None
    cached = _read_cache(path, spec, suite_hash) if path is not None else None
    if cached is not None:
        return cached, ""
    try:
        suite = registry.suite(spec.key)
    except UserError:
        return None, f"not audited: this structbench does not have {spec.key}, so its data cannot be read here."
    try:
        stored = freeze.built_audit(suite, suite_hash)
    except DataIntegrityError:  # a damaged manifest: verify below names it
        stored = None
    if stored is not None:
        return stored, ""
    try:
        problems = freeze.verify(suite)
        if problems and not (freeze.suite_dir(suite) / freeze.MANIFEST).is_file():
            return None, f"not built here: run `structbench build {spec.id}` to audit its splits."
        if problems:
            return None, f"not audited: {problems[0]}"
        manifest = freeze.expected_manifest(suite)
        if manifest is None:
            return None, f"not built here: run `structbench build {spec.id}` to audit its splits."
        if manifest.suite_hash != suite_hash:
            return None, (
                f"not audited: the data of {spec.key} built here has hash {manifest.suite_hash[:12]}…, "
                f"not {suite_hash[:12]}… (the data these results were made with)."
            )
        result = audit(suite, manifest)
    except (UserError, DataIntegrityError) as error:  # the data changed after it was verified (a rebuild)
        return None, f"not audited: {error}"
    except OSError as error:
        return None, f"not audited: the data of {spec.key} cannot be read ({error.strerror})."
    if path is not None:
        _write_cache(path, result)
    return result, ""
