"""How much of a suite's dev and test data a model could have seen in training: the overlap audit.

For every dev and test split of draw 0 the audit counts the examples that repeat a train example
exactly (same input and same gold answer), the examples whose input occurs in train whatever its
answer, and, where the gold answer is a whole sentence (minimal-pair, forced-choice), the examples
whose correct sentence occurs as a train input (train is language-model text there, so that is
the item a model could have memorised). A split a model has seen is no test of generalisation;
SCAN's add-primitive train files, for instance, repeat the lone primitive over a thousand times,
so the dev split carved out of them repeats train lines.

An audit reads the frozen data through `structbench.data.freeze` (verified against its manifest) and
never builds any: a report must not start a build. It is made only when the data built here has
the suite hash the card asks about, and cached as JSON under
`STRUCTBENCH_HOME/audits/ID@VERSION-HASH.json`: the hash fixes the data, so a cached audit stays
valid for as long as `AUDIT_VERSION` (the counting rules) does.

Cost (one process on the 2-core development machine; sets of token tuples, one pass per split):
logic-bowman-le12, the largest suite (190,534 train, 21,168 dev and 74,722 test examples), audits
in about 4 s, most of it `load_split` parsing the frozen JSON lines (2 s for train alone), with a
peak of about 550 MB (the parsed examples, which `freeze` keeps in its cache of recent splits);
question-formation and symbol-rewriting in about 2 s; every other suite in at most 1.2 s. A cached
audit is read in well under a millisecond.
"""

from __future__ import annotations

import os
import re
import tempfile
from collections.abc import Hashable
from pathlib import Path

from structbench import registry
from structbench.data import freeze
from structbench.data.freeze import Manifest
from structbench.errors import DataIntegrityError, UserError
from structbench.paths import audits_dir
from structbench.specs import Example, Frozen, SplitRole, SuiteSpec
from structbench.suite import Suite

AUDIT_VERSION = 1
"""Version of the counting rules; a cached audit of another version is recomputed."""
AUDITED_DRAW = 0
"""The draw whose splits are audited (one draw stands for the suite; generated suites' draws share their rules)."""
_HASH = re.compile(r"[0-9a-f]{64}")
_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9._+-]*")


class SplitOverlap(Frozen):
    """What one dev or test split shares with the train split of the same draw."""

    name: str
    """Split name."""
    role: SplitRole
    """`dev` or `test`."""
    n_examples: int
    """Examples in the split."""
    exact_duplicates: int
    """Examples equal to some train example in input and gold answer (target, candidates and answer,
    label, tags): everything but id, meta and attention targets, which are a training aid, not an answer."""
    input_in_train: int
    """Examples whose input is the input of some train example, whatever the answers: for tag
    induction every example (train is the test's sentences without tags, by the task's protocol)."""
    gold_sequence_in_train: int | None
    """Minimal-pair and forced-choice suites: examples whose correct candidate is the input of some
    train example (a sentence of the language-model training text), or, where candidates continue the
    example's input (`SuiteSpec.continuations`), whose input followed by the correct continuation
    begins a train sentence; None for other protocols."""


class OverlapAudit(Frozen):
    """The overlap audit of one suite version's frozen data (one suite hash), draw `draw`."""

    audit_version: int = AUDIT_VERSION
    """Version of the counting rules (`AUDIT_VERSION`) the audit was made with."""
    suite: str
    """Suite id."""
    version: str
    """Suite version."""
    suite_hash: str
    """Hash of the frozen data audited; the audit holds for this data only."""
    draw: int
    """The draw audited (0): other draws of a generated suite follow the same rules with other items."""
    n_draws: int
    """How many draws the suite has."""
    train_split: str | None
    """Name of the train split; None when the suite declares none."""
    train_size: int
    """Examples in the train split of the audited draw."""
    splits: list[SplitOverlap]
    """One record per dev and test split, in the suite's declared order."""
    note: str = ""
    """Why every count is 0 when nothing can overlap (no train split, or an empty one); else empty."""


def _tokens(sequence: list[str] | None) -> tuple[str, ...] | None:
    return None if sequence is None else tuple(sequence)


def _answer_key(example: Example) -> tuple[Hashable, ...]:
    """The example as a model is asked and scored on it: everything but id, meta and attention."""
    candidates = None if example.candidates is None else tuple(tuple(c) for c in example.candidates)
    return (
        tuple(example.input),
        _tokens(example.target),
        candidates,
        example.answer,
        example.label,
        _tokens(example.tags),
    )


def _gold_sequence(example: Example, continued: bool) -> tuple[str, ...] | None:
    """The correct candidate, after the example's input where candidates are continuations of it."""
    if example.candidates is None or example.answer is None or not 0 <= example.answer < len(example.candidates):
        return None
    return (
        (*example.input, *example.candidates[example.answer])
        if continued
        else tuple(example.candidates[example.answer])
    )


def audit(suite: Suite, manifest: Manifest) -> OverlapAudit:
    """Count what every dev and test split of draw 0 shares with train, reading the frozen data of `manifest`.

    Splits are read with `freeze.load_split`, which checks every file against the manifest;
    a missing or altered split raises (UserError, DataIntegrityError), never an audit of other data.
    """
    spec = suite.spec
    trains = spec.splits_with_role("train")
    train_examples = freeze.load_split(suite, manifest, AUDITED_DRAW, trains[0].name).examples if trains else []
    answers = {_answer_key(e) for e in train_examples}
    inputs = {tuple(e.input) for e in train_examples}
    with_candidates = spec.protocol in ("minimal-pair", "forced-choice")
    # where candidates continue the input, a gold continuation was read if some train sentence begins with it
    read = (
        {tuple(e.input[:end]) for e in train_examples for end in range(1, len(e.input) + 1)}
        if spec.continuations
        else inputs
    )
    records = []
    for split in spec.splits:
        if split.role == "train":
            continue
        examples = freeze.load_split(suite, manifest, AUDITED_DRAW, split.name).examples
        records.append(
            SplitOverlap(
                name=split.name,
                role=split.role,
                n_examples=len(examples),
                exact_duplicates=sum(_answer_key(e) in answers for e in examples),
                input_in_train=sum(tuple(e.input) in inputs for e in examples),
                gold_sequence_in_train=sum(_gold_sequence(e, spec.continuations) in read for e in examples)
                if with_candidates
                else None,
            )
        )
    if not trains:
        note = f"{spec.id} has no train split, so nothing can overlap one."
    elif not train_examples:
        note = f"{spec.id}'s train split is empty (models bring their own training), so nothing can overlap it."
    else:
        note = ""
    return OverlapAudit(
        suite=spec.id,
        version=spec.version,
        suite_hash=manifest.suite_hash,
        draw=AUDITED_DRAW,
        n_draws=spec.n_draws,
        train_split=trains[0].name if trains else None,
        train_size=len(train_examples),
        splits=records,
        note=note,
    )


def cache_path(spec: SuiteSpec, suite_hash: str) -> Path:
    """Where the audit of `spec`'s data with `suite_hash` is cached."""
    return audits_dir() / f"{spec.key}-{suite_hash}.json"


def _read_cache(path: Path, spec: SuiteSpec, suite_hash: str) -> OverlapAudit | None:
    """The cached audit if it is readable, valid and of this data and counting rules; None otherwise."""
    try:
        cached = OverlapAudit.model_validate_json(path.read_bytes())
    except (OSError, ValueError):  # missing, unreadable, not JSON, or not an audit (pydantic's ValidationError)
        return None
    if (cached.suite, cached.version, cached.suite_hash, cached.audit_version) != (
        spec.id,
        spec.version,
        suite_hash,
        AUDIT_VERSION,
    ):
        return None
    return cached


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

    Answered from the cache when it holds a valid audit of that hash; otherwise computed, if this
    structbench has the suite version and its data is built here with that very hash, and cached.
    A cache file that is damaged or of other counting rules is recomputed (and replaced), never an error.
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
