"""Freezing suites: build once into JSON lines, hash, and verify on every read.

Layout under `STRUCTBENCH_HOME/suites/ID@VERSION/`: `draw{k}/{split}.jsonl` and
`manifest.json` (SHA-256 and size per split, one suite hash over them). A released suite
version ships its manifest in the repository; a build whose output differs from it is
refused, because different data under the same version would silently change numbers.
"""

from __future__ import annotations

import shutil
import tempfile
from collections import OrderedDict
from pathlib import Path

from structbench.errors import DataIntegrityError, UserError
from structbench.sources import sha256_bytes, structbench_home
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


def split_key(draw: int, name: str) -> str:
    return f"draw{draw}/{name}"


def suite_dir(suite: Suite) -> Path:
    return structbench_home() / "suites" / suite.spec.key


def suite_hash(splits: dict[str, SplitDigest]) -> str:
    lines = "".join(f"{key}:{digest.sha256}\n" for key, digest in sorted(splits.items()))
    return sha256_bytes(lines.encode())


def serialise(examples: list[Example]) -> bytes:
    return b"".join(e.model_dump_json(exclude_none=True).encode() + b"\n" for e in examples)


def _released(suite: Suite) -> Manifest | None:
    path = suite.released_manifest()
    return Manifest.model_validate_json(path.read_bytes()) if path else None


def _generate(suite: Suite, source_dir: Path | None) -> dict[str, bytes]:
    spec = suite.spec
    files = SourceFiles(suite.sources, source_dir)
    blobs: dict[str, bytes] = {}
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
    return blobs


def manifest_of(suite: Suite, blobs: dict[str, bytes]) -> Manifest:
    digests = {key: SplitDigest(sha256=sha256_bytes(b), n_examples=b.count(b"\n")) for key, b in blobs.items()}
    return Manifest(
        suite=suite.spec.id,
        version=suite.spec.version,
        n_draws=suite.spec.n_draws,
        suite_hash=suite_hash(digests),
        splits=digests,
    )


def build(suite: Suite, source_dir: Path | None = None) -> Manifest:
    """Generate, check against the released manifest, and write the suite's frozen data."""
    blobs = _generate(suite, source_dir)
    manifest = manifest_of(suite, blobs)
    released = _released(suite)
    if released is not None and released.suite_hash != manifest.suite_hash:
        changed = sorted(k for k in manifest.splits if released.splits.get(k) != manifest.splits[k])
        raise DataIntegrityError(
            f"{suite.spec.key} built from this code differs from its released manifest in {', '.join(changed)}; "
            "a change to a suite's data needs a new suite version."
        )
    target = suite_dir(suite)
    target.parent.mkdir(parents=True, exist_ok=True)
    staging = Path(tempfile.mkdtemp(prefix=f".{suite.spec.key}.", dir=target.parent))
    for key, blob in blobs.items():
        path = staging / f"{key}.jsonl"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(blob)
    (staging / "manifest.json").write_text(manifest.model_dump_json(indent=2) + "\n")
    if target.exists():
        shutil.rmtree(target)
    staging.replace(target)
    return manifest


def expected_manifest(suite: Suite) -> Manifest | None:
    """The released manifest, else the one written by the last local build, else None."""
    released = _released(suite)
    if released is not None:
        return released
    local = suite_dir(suite) / "manifest.json"
    return Manifest.model_validate_json(local.read_bytes()) if local.is_file() else None


def verify(suite: Suite) -> list[str]:
    """Every problem with the built data on disk, one sentence each; empty when it matches."""
    manifest = expected_manifest(suite)
    if manifest is None:
        return [f"{suite.spec.key} is not built; run `structbench build {suite.spec.id}`."]
    problems = []
    for key, digest in sorted(manifest.splits.items()):
        path = suite_dir(suite) / f"{key}.jsonl"
        if not path.is_file():
            problems.append(f"{suite.spec.key} split {key} is missing ({path}).")
        elif sha256_bytes(path.read_bytes()) != digest.sha256:
            problems.append(f"{suite.spec.key} split {key} does not match its manifest ({path}); rebuild it.")
    return problems


def is_built(suite: Suite) -> bool:
    return expected_manifest(suite) is not None and not verify(suite)


def ensure_built(suite: Suite, source_dir: Path | None = None) -> Manifest:
    """Build the suite on first use; refuse data on disk that does not match its manifest."""
    manifest = expected_manifest(suite)
    if manifest is None or not (suite_dir(suite) / "manifest.json").is_file():
        return build(suite, source_dir)
    return manifest


def load_split(suite: Suite, manifest: Manifest, draw: int, name: str) -> Split:
    """Read one frozen split, checking its bytes against the manifest first."""
    key = split_key(draw, name)
    path = suite_dir(suite) / f"{key}.jsonl"
    try:
        blob = path.read_bytes()
    except FileNotFoundError:
        raise UserError(f"{suite.spec.key} split {key} is missing; run `structbench build {suite.spec.id}`.") from None
    if sha256_bytes(blob) != manifest.splits[key].sha256:
        raise DataIntegrityError(
            f"{path} does not match the manifest of {suite.spec.key}; "
            f"run `structbench build {suite.spec.id}` to rebuild it."
        )
    role = suite.spec.split(name).role
    return Split(
        suite=suite.spec.key, name=name, role=role, draw=draw, examples=_parse(manifest.splits[key].sha256, blob)
    )


_PARSED: OrderedDict[str, list[Example]] = OrderedDict()
_PARSED_LIMIT = 64


def _parse(sha256: str, blob: bytes) -> list[Example]:
    """Examples of a verified split file; kept by content hash so that every model and seed of
    one process (e.g. quickstart) parses each file once. Examples are frozen, so sharing is safe."""
    examples = _PARSED.get(sha256)
    if examples is None:
        examples = [Example.model_validate_json(line) for line in blob.splitlines()]
        _PARSED[sha256] = examples
        if len(_PARSED) > _PARSED_LIMIT:
            _PARSED.popitem(last=False)
    else:
        _PARSED.move_to_end(sha256)
    return examples
