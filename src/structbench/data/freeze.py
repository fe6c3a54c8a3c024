"""Freezing suites: build once into JSON lines, hash, and verify on every read.

Layout under `STRUCTBENCH_HOME/suites/ID@VERSION/`: `draw{k}/{split}.jsonl.gz`, `manifest.json`
(SHA-256 and size per split, one suite hash over them) and `overlap.json` (the suite's overlap
audit, `structbench.data.overlap`: a fact of the data alone, counted once here from the examples
just generated, so that a report reads it instead of parsing every split). A released suite
version ships its manifest in the repository; a build whose output differs from it in any
split is refused, because different data under the same version would silently change numbers.

The digests are of the JSON-lines bytes, not of the files: a split is stored gzip-compressed
(level 1, about a seventh of the size, and fast to write), and every read decompresses it and
hashes what it holds. A suite's hash is therefore a fact of its content, the same whatever the
storage; a folder written by a structbench that stored plain `{split}.jsonl` still reads.

Every manifest read (released or local) is checked for its own consistency: its suite hash
must be the hash of its split digests, so a manifest edited by hand or damaged is reported
by name instead of passing a build and then failing every run.

Builds are safe under concurrency (several `run`s or `build`s of one suite at once): a
builder holds an exclusive `flock` on `STRUCTBENCH_HOME/suites/.ID@VERSION.lock` while it
publishes, and publishing is atomic (a complete staging folder renamed into place; a stale
folder is renamed aside first and deleted afterwards), so a published folder is never
modified in place and readers never see a half-written one. A builder that finds, under
the lock, the very data it would write already published leaves it alone: "built by
someone else" is success.
"""

from __future__ import annotations

import fcntl
import gc
import gzip
import os
import shutil
import tempfile
import zlib
from collections import OrderedDict
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from pathlib import Path

from pydantic import ValidationError

from structbench.data.overlap import AUDITED_DRAW, OverlapAudit, count_overlap
from structbench.data.sources import sha256_bytes
from structbench.errors import DataIntegrityError, UserError
from structbench.paths import built_suite_dir, built_suites_dir
from structbench.specs import Example, Frozen, Split
from structbench.suite import SourceFiles, Suite


class SplitDigest(Frozen):
    """Fingerprint of one frozen split file."""

    sha256: str
    """SHA-256 of the JSON-lines bytes."""
    n_examples: int
    """Number of lines (examples)."""


class Manifest(Frozen):
    """Fingerprint of one suite version's data."""

    suite: str
    """Suite id."""
    version: str
    """Suite version."""
    n_draws: int
    """Number of data draws."""
    suite_hash: str
    """SHA-256 over the sorted `name:sha256` lines of all splits."""
    splits: dict[str, SplitDigest]
    """`draw{k}/{split}` -> digest."""


MANIFEST = "manifest.json"
AUDIT = "overlap.json"
"""The overlap audit of the published data, beside its manifest."""
SPLIT_SUFFIX = ".jsonl.gz"
"""How a split file is named after its key: gzip-compressed JSON lines."""
_PLAIN_SUFFIX = ".jsonl"
"""How structbench before compression named split files; still read."""
_GZIP_LEVEL = 1
"""Level 1: about 7x smaller on this data at some 50 MB/s; level 6 is a further 1.6x for a 5x slower build."""


def split_key(draw: int, name: str) -> str:
    return f"draw{draw}/{name}"


def suite_dir(suite: Suite) -> Path:
    return built_suite_dir(suite.spec.key)


def lock_path(suite: Suite) -> Path:
    """The lock file that serialises building and publishing one suite version (never deleted)."""
    return built_suites_dir() / f".{suite.spec.key}.lock"


def suite_hash(splits: dict[str, SplitDigest]) -> str:
    lines = "".join(f"{key}:{digest.sha256}\n" for key, digest in sorted(splits.items()))
    return sha256_bytes(lines.encode())


def serialise(examples: list[Example]) -> bytes:
    """A split's JSON lines: each example's `model_dump_json(exclude_none=True)`, as UTF-8 bytes straight
    from pydantic's serialiser (a third less time than through the str, over millions of examples)."""
    to_json = Example.__pydantic_serializer__.to_json
    return b"".join([to_json(e, exclude_none=True) + b"\n" for e in examples])


def compress(blob: bytes) -> bytes:
    """The stored form of a split's JSON lines: gzip without a timestamp, so the same data gives the same file."""
    return gzip.compress(blob, compresslevel=_GZIP_LEVEL, mtime=0)


def split_file(suite: Suite, key: str) -> Path:
    """The file that holds split `key` (`draw{k}/{name}`) of the published build: the compressed one,
    or the plain JSON lines of a folder published before compression when only that exists."""
    folder = suite_dir(suite)
    stored = folder / f"{key}{SPLIT_SUFFIX}"
    if stored.exists():
        return stored
    plain = folder / f"{key}{_PLAIN_SUFFIX}"
    return plain if plain.exists() else stored


def read_frozen(path: Path) -> bytes:
    """The JSON-lines bytes a split file holds (decompressed when it is gzip), for hashing against its digest.

    Raises OSError (FileNotFoundError when it is missing)."""
    return frozen_lines(path, path.read_bytes())


def frozen_lines(path: Path, stored: bytes) -> bytes:
    """The JSON-lines bytes of `stored`, the content of the split file `path`: decompressed when the
    file is gzip. A compressed file too damaged to decompress is returned as it is: its bytes match
    no digest, so callers refuse it exactly as they refuse any other altered file."""
    if path.name.endswith(SPLIT_SUFFIX):
        try:
            return gzip.decompress(stored)
        except (OSError, EOFError, zlib.error):  # gzip.BadGzipFile is an OSError
            return stored
    return stored


@contextmanager
def _locked(suite: Suite, *, shared: bool = False) -> Iterator[None]:
    """Hold the suite's lock: exclusive for builders, shared for a reader waiting out a publish.

    `flock` locks belong to an open file, so two opens in one process exclude each other too;
    never nest this for the same suite. The lock is released when the file is closed, also
    when the process dies, so a crashed builder cannot leave the suite locked.
    """
    path = lock_path(suite)
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("a") as handle:
        fcntl.flock(handle.fileno(), fcntl.LOCK_SH if shared else fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(handle.fileno(), fcntl.LOCK_UN)


def _read_manifest(suite: Suite, path: Path, *, released: bool) -> Manifest:
    """Parse a manifest file and check that it is one of this suite and consistent with itself.

    Raises DataIntegrityError with one sentence naming the file and the fix: for a released
    manifest, restoring it from git (it is part of the release); for a local one, a rebuild.
    FileNotFoundError passes through (a local folder may be renamed aside by a publisher).
    """
    key = suite.spec.key
    if released:
        fix = f"this released manifest was edited by hand or damaged: restore it with `git checkout -- {path}` (or reinstall structbench)"
    else:
        fix = f"run `structbench build {suite.spec.id}` to rebuild it (or delete {path.parent})"
    try:
        data = path.read_bytes()
    except FileNotFoundError:
        raise
    except OSError as error:
        raise DataIntegrityError(f"{path} cannot be read ({error.strerror}); {fix}.") from None
    try:
        manifest = Manifest.model_validate_json(data)
    except ValueError as error:  # pydantic's ValidationError (bad JSON or fields) is a ValueError
        raise DataIntegrityError(f"{path} is not a valid manifest ({_first_problem(error)}); {fix}.") from None
    if (manifest.suite, manifest.version) != (suite.spec.id, suite.spec.version):
        raise DataIntegrityError(f"{path} describes {manifest.suite}@{manifest.version}, not {key}; {fix}.")
    if manifest.suite_hash != suite_hash(manifest.splits):
        raise DataIntegrityError(
            f"{path} is inconsistent (its suite_hash is not the hash of its split digests); {fix}."
        )
    return manifest


def _first_problem(error: ValueError) -> str:
    """A one-line reason from a pydantic ValidationError (or any ValueError), without the input."""
    if isinstance(error, ValidationError):
        problems = error.errors(include_url=False, include_input=False)
        where = ".".join(str(part) for part in problems[0]["loc"])
        reason = f"{where}: {problems[0]['msg']}" if where else problems[0]["msg"]
        if len(problems) > 1:
            reason += f", and {len(problems) - 1} more"
    else:
        reason = str(error)
    return " ".join(reason.split()).rstrip(".")


def _released(suite: Suite) -> Manifest | None:
    """The manifest committed with this suite version, checked; None for an unreleased version."""
    path = suite.released_manifest()
    return _read_manifest(suite, path, released=True) if path else None


def _local(suite: Suite) -> Manifest | None:
    """The manifest of the published local build, checked; None when nothing is published."""
    try:
        return _read_manifest(suite, suite_dir(suite) / MANIFEST, released=False)
    except FileNotFoundError:
        return None


def _declared_keys(suite: Suite) -> set[str]:
    return {split_key(draw, s.name) for draw in range(suite.spec.n_draws) for s in suite.spec.splits}


def _generate(suite: Suite, source_dir: Path | None) -> tuple[dict[str, bytes], Mapping[str, list[Example]]]:
    """Every split's JSON lines by key, and the audited draw's examples by split name (for its audit)."""
    spec = suite.spec
    files = SourceFiles(suite.sources, source_dir)
    blobs: dict[str, bytes] = {}
    audited: Mapping[str, list[Example]] = {}
    for draw in range(spec.n_draws):
        generated = suite.generate(draw, files)
        declared = {s.name for s in spec.splits}
        if set(generated) != declared:
            raise ValueError(
                f"{spec.key} draw {draw} generated splits {sorted(generated)}, declared {sorted(declared)}"
            )
        for split in spec.splits:
            examples = generated[split.name]
            if split.size is not None and len(examples) != split.size:
                raise ValueError(
                    f"{spec.key} draw {draw} split {split.name}: {len(examples)} examples, declared {split.size}"
                )
            if len({e.id for e in examples}) != len(examples):
                raise ValueError(f"{spec.key} draw {draw} split {split.name}: example ids are not unique")
            blobs[split_key(draw, split.name)] = serialise(examples)
        if draw == AUDITED_DRAW:
            audited = generated
    return blobs, audited


def manifest_of(suite: Suite, blobs: dict[str, bytes]) -> Manifest:
    digests = {key: SplitDigest(sha256=sha256_bytes(b), n_examples=b.count(b"\n")) for key, b in blobs.items()}
    return Manifest(
        suite=suite.spec.id,
        version=suite.spec.version,
        n_draws=suite.spec.n_draws,
        suite_hash=suite_hash(digests),
        splits=digests,
    )


def _differing(expected: Manifest, actual: Manifest) -> list[str]:
    """Split keys whose digest differs between two manifests, or that only one of them has."""
    keys = set(expected.splits) | set(actual.splits)
    return sorted(k for k in keys if expected.splits.get(k) != actual.splits.get(k))


def _fresh(suite: Suite, source_dir: Path | None) -> tuple[Manifest, dict[str, bytes], OverlapAudit]:
    """Generate the suite's data and refuse it unless every split matches the released manifest;
    with its overlap audit, counted on the examples just generated.

    Comparing every split digest (not only the suite hash) means a build can never succeed
    into data that `run` then refuses. The released manifest is read first, so a damaged one
    is reported before the (possibly slow) generation.
    """
    released = _released(suite)
    with _collector_paused():
        blobs, audited = _generate(suite, source_dir)
        manifest = manifest_of(suite, blobs)
        if released is not None and (changed := _differing(released, manifest)):
            path = suite.released_manifest()
            raise DataIntegrityError(
                f"{suite.spec.key} built from this code differs from its released manifest {path} in "
                f"{', '.join(changed)}; a change to a suite's data needs a new suite version "
                f"(if the manifest was edited instead, restore it with `git checkout -- {path}`)."
            )
        return manifest, blobs, count_overlap(suite.spec, audited, manifest.suite_hash)


@contextmanager
def _collector_paused() -> Iterator[None]:
    """Python's cyclic garbage collector off while a suite's examples are made or parsed.

    Examples are acyclic (lists, strings, frozen models), so the collector frees none of them,
    yet each of its passes walks every object alive: in a process already holding other suites
    (a test session, `quickstart`) those passes took a third of a build and of a parse.
    """
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if enabled:
            gc.enable()


def _audit_bytes(audit: OverlapAudit) -> bytes:
    return audit.model_dump_json(indent=2).encode() + b"\n"


def _intact(suite: Suite, manifest: Manifest, audit: OverlapAudit) -> bool:
    """Whether the published folder holds exactly `manifest`'s data (every split re-hashed), stored
    compressed, with `audit` beside it (a folder of an older structbench is published anew)."""
    try:
        if _local(suite) != manifest:
            return False
    except DataIntegrityError:
        return False
    folder = suite_dir(suite)
    try:
        if (folder / AUDIT).read_bytes() != _audit_bytes(audit):
            return False
        for key, digest in manifest.splits.items():
            if sha256_bytes(read_frozen(folder / f"{key}{SPLIT_SUFFIX}")) != digest.sha256:
                return False
    except OSError:
        return False
    return True


def _publish(suite: Suite, manifest: Manifest, blobs: dict[str, bytes], audit: OverlapAudit) -> None:
    """Make `blobs` (and their `audit`) the suite's published data atomically; call only while holding `_locked(suite)`.

    Nothing is touched when the same data is already published (another process built it).
    Otherwise the data is written into a staging folder next to the target, a stale target is
    renamed aside, the staging folder renamed into place, and the stale one deleted: the
    target path is always either absent or a complete folder, never one being written.
    Leftovers of builders that crashed mid-publish are removed here, since under the lock no
    other builder of this suite can be using them.
    """
    if _intact(suite, manifest, audit):
        return
    target = suite_dir(suite)
    parent = target.parent
    parent.mkdir(parents=True, exist_ok=True)
    for leftover in [*parent.glob(f".{suite.spec.key}.staging-*"), *parent.glob(f".{suite.spec.key}.stale-*")]:
        shutil.rmtree(leftover, ignore_errors=True)
    staging = Path(tempfile.mkdtemp(prefix=f".{suite.spec.key}.staging-", dir=parent))
    aside: Path | None = None
    try:
        for key, blob in blobs.items():
            path = staging / f"{key}{SPLIT_SUFFIX}"
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_bytes(compress(blob))
        (staging / AUDIT).write_bytes(_audit_bytes(audit))
        (staging / MANIFEST).write_text(manifest.model_dump_json(indent=2) + "\n")
        if target.is_symlink() or target.is_file():
            target.unlink()
        elif target.exists():
            aside = Path(tempfile.mkdtemp(prefix=f".{suite.spec.key}.stale-", dir=parent))
            os.rename(target, aside / "old")
        os.rename(staging, target)
    except BaseException:
        shutil.rmtree(staging, ignore_errors=True)
        raise
    finally:
        if aside is not None:
            shutil.rmtree(aside, ignore_errors=True)


def build(suite: Suite, source_dir: Path | None = None) -> Manifest:
    """Generate, check against the released manifest, and publish the suite's frozen data.

    Always regenerates (this is how a changed generator is caught); generation needs no lock,
    publishing takes the suite's lock and keeps data that another process already published
    if it is byte for byte what this build produced.
    """
    manifest, blobs, audit = _fresh(suite, source_dir)
    with _locked(suite):
        _publish(suite, manifest, blobs, audit)
    return manifest


def expected_manifest(suite: Suite) -> Manifest | None:
    """The released manifest, else the one written by the last local build, else None.

    Either is checked for consistency; a damaged one raises DataIntegrityError naming it.
    """
    released = _released(suite)
    if released is not None:
        return released
    return _local(suite)


def _usable(suite: Suite) -> Manifest | None:
    """The manifest to read the published data with, or None when it must be (re)built.

    None when nothing is published, or the published build is stale: other splits than the
    spec declares, or other data than the released manifest. A damaged manifest raises; split
    files are not re-hashed here, `load_split` checks each one it reads.
    """
    released = _released(suite)
    local = _local(suite)
    if local is None or set(local.splits) != _declared_keys(suite):
        return None
    if released is not None and local != released:
        return None
    return local


def verify(suite: Suite) -> list[str]:
    """Every problem with the built data on disk, one sentence each; empty when it matches."""
    key = suite.spec.key
    try:
        released = _released(suite)
        local = _local(suite)
    except DataIntegrityError as error:
        return [str(error)]
    if local is None:
        return [f"{key} is not built; run `structbench build {suite.spec.id}`."]
    if set(local.splits) != _declared_keys(suite):
        return [
            f"{key} was built for other splits than it declares; run `structbench build {suite.spec.id}` to rebuild it."
        ]
    if released is not None and (changed := _differing(released, local)):
        return [
            f"{key} was built with other data than its released manifest ({', '.join(changed)}); "
            f"run `structbench build {suite.spec.id}` to rebuild it."
        ]
    problems = []
    for split, digest in sorted(local.splits.items()):
        path = split_file(suite, split)
        try:
            blob = read_frozen(path)
        except FileNotFoundError:
            problems.append(f"{key} split {split} is missing ({path}); run `structbench build {suite.spec.id}`.")
            continue
        if sha256_bytes(blob) != digest.sha256:
            problems.append(f"{key} split {split} does not match its manifest ({path}); rebuild it.")
    return problems


def is_built(suite: Suite) -> bool:
    return not verify(suite)


def built_manifest(suite: Suite, suite_hash: str | None = None) -> Manifest | None:
    """The manifest of the data built here if it is current (and has `suite_hash`, when given), else None.

    For readers of a few splits (the report's error browser, `samples`): unlike `is_built`, no split
    file is re-hashed here, since `load_split` checks each file it reads."""
    manifest = _usable(suite)
    if manifest is None or (suite_hash is not None and manifest.suite_hash != suite_hash):
        return None
    return manifest


def ensure_built(suite: Suite, source_dir: Path | None = None) -> Manifest:
    """Build the suite on first use (or when the published build is stale) and return its manifest.

    Safe when several processes do this at once: the check is repeated under the suite's
    lock, so only the first one builds and the others use what it published. Tampered split
    files are not repaired here: `load_split` refuses them.
    """
    manifest = _usable(suite)
    if manifest is not None:
        return manifest
    with _locked(suite):
        manifest = _usable(suite)
        if manifest is None:
            manifest, blobs, audit = _fresh(suite, source_dir)
            _publish(suite, manifest, blobs, audit)
    return manifest


def built_audit(suite: Suite, suite_hash: str) -> OverlapAudit | None:
    """The overlap audit published with the current build of `suite` if that build has `suite_hash`;
    None when there is none (not built, other data, or built by a structbench that stored no audit),
    or it is unreadable or of other counting rules. No split file is read: the audit was counted on
    the very data the manifest fingerprints, and published with it in one rename.

    Raises DataIntegrityError for a damaged manifest, as `built_manifest` does."""
    if built_manifest(suite, suite_hash) is None:
        return None
    try:
        stored = OverlapAudit.model_validate_json((suite_dir(suite) / AUDIT).read_bytes())
    except (OSError, ValueError):  # missing, unreadable, not JSON, or not an audit (pydantic's ValidationError)
        return None
    return stored if stored.describes(suite.spec, suite_hash) else None


_FileIdentity = tuple[int, int, int, int]
"""A file's device, inode, size and modification time (ns): it changes when the file is replaced or written."""


def _read_split(suite: Suite, key: str) -> tuple[Path, bytes | None, _FileIdentity | None]:
    """The split file, its JSON lines (None when it is missing) and the identity of the file they were read from."""
    path = split_file(suite, key)
    try:
        with path.open("rb") as handle:
            status = os.fstat(handle.fileno())
            stored = handle.read()
    except FileNotFoundError:
        return path, None, None
    return path, frozen_lines(path, stored), (status.st_dev, status.st_ino, status.st_size, status.st_mtime_ns)


_VERIFIED: dict[Path, tuple[_FileIdentity, str]] = {}
"""Split file -> its identity when this process last read it and found it to be the data of the SHA-256."""


def _verified_before(path: Path, sha256: str) -> list[Example] | None:
    """The parsed examples of `path` if this process has verified it as the data of `sha256` and the
    file has not been replaced or written since; None when it must be read and hashed (again)."""
    known = _VERIFIED.get(path)
    if known is None or known[1] != sha256 or sha256 not in _PARSED:
        return None
    try:
        status = path.stat()
    except OSError:
        return None
    if known[0] != (status.st_dev, status.st_ino, status.st_size, status.st_mtime_ns):
        return None
    _PARSED.move_to_end(sha256)
    return _PARSED[sha256]


def load_split(suite: Suite, manifest: Manifest, draw: int, name: str) -> Split:
    """Read one frozen split, checking its bytes against the manifest first.

    A file that is missing or differs may be a publish in progress (the folder is renamed
    aside for an instant): the read is retried once under the suite's shared lock, which
    waits for the publisher, before the data is refused.

    A file this process has already verified is not read, decompressed and hashed again while
    it is the same file, unwritten (same inode, size and modification time): quickstart reads
    each test split once per model and seed, and re-reading cost it about 10 s.
    """
    key = split_key(draw, name)
    digest = manifest.splits.get(key)
    if digest is None:
        raise UserError(
            f"the manifest of {suite.spec.key} has no split {key}; run `structbench build {suite.spec.id}`."
        )
    role = suite.spec.split(name).role
    examples = _verified_before(split_file(suite, key), digest.sha256)
    if examples is not None:
        return Split(suite=suite.spec.key, name=name, role=role, draw=draw, examples=examples)
    path, blob, identity = _read_split(suite, key)
    if blob is None or sha256_bytes(blob) != digest.sha256:
        with _locked(suite, shared=True):
            path, blob, identity = _read_split(suite, key)
    if blob is None:
        raise UserError(f"{suite.spec.key} split {key} is missing; run `structbench build {suite.spec.id}`.")
    if sha256_bytes(blob) != digest.sha256:
        raise DataIntegrityError(
            f"{path} does not match the manifest of {suite.spec.key}; "
            f"run `structbench build {suite.spec.id}` to rebuild it."
        )
    examples = _parse(digest.sha256, blob)
    if identity is not None:
        _VERIFIED[path] = (identity, digest.sha256)
    return Split(suite=suite.spec.key, name=name, role=role, draw=draw, examples=examples)


_PARSED: OrderedDict[str, list[Example]] = OrderedDict()
_PARSED_LIMIT = 64


def _parse(sha256: str, blob: bytes) -> list[Example]:
    """Examples of a verified split file; kept by content hash so that every model and seed of
    one process (e.g. quickstart) parses each file once. Examples are frozen, so sharing is safe."""
    examples = _PARSED.get(sha256)
    if examples is None:
        validate = Example.__pydantic_validator__.validate_json  # `model_validate_json` without its wrapper
        with _collector_paused():
            examples = [validate(line) for line in blob.splitlines()]
        _PARSED[sha256] = examples
        if len(_PARSED) > _PARSED_LIMIT:
            _PARSED.popitem(last=False)
    else:
        _PARSED.move_to_end(sha256)
    return examples
