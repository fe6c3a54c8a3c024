"""How much of a suite's dev and test data a model could have seen in training: the overlap counts.

For every dev and test split of draw 0 the audit counts the examples that repeat a train example
exactly (same input and same gold answer), the examples whose input occurs in train whatever its
answer, and, where the gold answer is a whole sentence (minimal-pair, forced-choice), the examples
whose correct sentence occurs as a train input (train is language-model text there, so that is
the item a model could have memorised). A split a model has seen is no test of generalisation;
SCAN's add-primitive train files, for instance, repeat the lone primitive over a thousand times,
so the dev split carved out of them repeats train lines.

The counts depend only on the frozen data, so `structbench.data.freeze` makes them once, from the
examples it has just generated, and publishes them beside the manifest; the report reads them
there (`structbench.reports.builders.overlap_audits`, which also audits data built by an older
structbench). This module only counts: it reads no file and knows nothing of where data lives, so
that the build (below the registry) can count with it; finding, verifying and caching an audit
needs the registry, the built files and the home, which is why the report's reader is apart.
"""

from __future__ import annotations

from collections.abc import Hashable, Mapping, Sequence

from structbench.specs import Example, Frozen, SplitRole, SuiteSpec

AUDIT_VERSION = 1
"""Version of the counting rules; a stored audit of another version is recomputed."""
AUDITED_DRAW = 0
"""The draw whose splits are audited (one draw stands for the suite; generated suites' draws share their rules)."""


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

    def describes(self, spec: SuiteSpec, suite_hash: str) -> bool:
        """Whether this is an audit of `spec`'s data with `suite_hash`, by the current counting rules."""
        return (self.suite, self.version, self.suite_hash, self.audit_version) == (
            spec.id,
            spec.version,
            suite_hash,
            AUDIT_VERSION,
        )


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


def count_overlap(spec: SuiteSpec, splits: Mapping[str, Sequence[Example]], suite_hash: str) -> OverlapAudit:
    """Count what every dev and test split shares with train, given draw `AUDITED_DRAW`'s examples by split name.

    `splits` must hold every split `spec` declares; `suite_hash` is the hash of the data they come from.
    """
    trains = spec.splits_with_role("train")
    train_examples = splits[trains[0].name] if trains else []
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
        examples = splits[split.name]
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
        suite_hash=suite_hash,
        draw=AUDITED_DRAW,
        n_draws=spec.n_draws,
        train_split=trains[0].name if trains else None,
        train_size=len(train_examples),
        splits=records,
        note=note,
    )
