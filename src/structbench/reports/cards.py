"""The suite card: what a suite page of the leaderboard says about the suite itself.

One record per suite version and data hash, made from the stored spec (so a card exists for every
suite the store has results of) and, where this structbench has that suite version, from its
class and module: licence, published source files, the module docstring, and an overlap audit of
its built data (`structbench.reports.overlap`). How the suite was checked and where it deviates
from its paper are the spec's declared fields (`SuiteSpec.checked`, `SuiteSpec.deviations`), so
a card says "not declared" rather than guess them from prose. The renderer only formats a card;
nothing here renders.
"""

from __future__ import annotations

import inspect
import sys

from structbench import registry
from structbench.data.sources import SourceFile
from structbench.errors import UserError
from structbench.reports.overlap import OverlapAudit, cached_audit
from structbench.specs import Frozen, ProtocolName, SplitSpec, SuiteSpec
from structbench.suite import Suite

NOT_DECLARED = "not declared"
"""What a card says for a check or deviation account the suite's spec does not declare."""


class SuiteCard(Frozen):
    """Everything a suite page shows about one suite version and its data, before any result."""

    suite: str
    """Suite id."""
    version: str
    """Suite version."""
    description: str
    """What the suite tests, one paragraph (the spec's)."""
    citation: str
    """The paper(s) the suite reproduces."""
    family: str
    """Research question: systematicity, agreement, lookup, completion, pos-induction, memory, syntax."""
    protocol: ProtocolName
    """How models are asked."""
    primary_metric: str
    """The metric the leaderboard ranks on."""
    higher_is_better: bool
    """Direction of the primary metric."""
    n_draws: int
    """Independent data draws; seed s is evaluated on draw s mod n_draws."""
    licence: str
    """The licence of the data as its publisher states it (`Suite.licence`); empty when unknown or not installed."""
    sources: list[SourceFile]
    """The published files the suite is built from: path, pinned URL or where to get it, SHA-256
    (empty for a file the user supplies); empty for generated suites and when not installed."""
    how_checked: str
    """How the suite was checked against its paper's published data or definition: the spec's declared
    `checked`; `NOT_DECLARED` when neither the stored spec nor this structbench's spec of that version
    declares it."""
    deviations: str
    """Where the suite departs from its paper, and why: the spec's declared `deviations`; `NOT_DECLARED`
    when neither the stored spec nor this structbench's spec of that version declares any."""
    about: str
    """The whole docstring of the suite's module (cleaned of indentation), for an expandable section."""
    splits: list[SplitSpec]
    """Declared splits in display order: name, role, test role, size, ranked, description."""
    suite_hash: str
    """Hash of the frozen data the card's results were made with."""
    changelog: list[str]
    """One line per version since the first: what changed in the data and why."""
    installed: bool
    """Whether this structbench has this exact suite version; if not, the card holds the stored spec alone."""
    installed_note: str
    """Empty when installed; otherwise why not, and that licence, sources and checks are unknown here."""
    audit: OverlapAudit | None
    """What the dev and test splits share with train (draw 0); None when it could not be made here."""
    audit_note: str
    """Empty with an audit; otherwise one sentence saying why there is none and how to get one."""


def declared(stored: str, installed: str) -> str:
    """A declared account: the stored spec's, else the installed spec's of the same version (a spec
    stored before the field existed has it empty), else `NOT_DECLARED`."""
    return stored or installed or NOT_DECLARED


def module_docstring(suite_class: type[Suite]) -> str:
    """The cleaned docstring of the module that defines `suite_class`; "" when it has none."""
    module = sys.modules.get(suite_class.__module__)
    return inspect.cleandoc(module.__doc__) if module is not None and module.__doc__ else ""


def suite_card(spec: SuiteSpec, suite_hash: str) -> SuiteCard:
    """The card of `spec` (as stored with results) whose data has `suite_hash`.

    The spec's own fields come from `spec`; licence, sources and the docstring from the installed
    class of `spec.key` (via the registry), when this structbench has that version, which also
    supplies `checked` and `deviations` where the stored spec declares none. The overlap audit is the
    cached one, or is made from data already built here; no data is ever built.
    """
    installed_note = ""
    suite_class: type[Suite] | None
    try:
        suite_class = type(registry.suite(spec.key))
    except UserError as error:
        suite_class = None
        installed_note = f"This card is built from the stored spec alone: {error}"
    about = module_docstring(suite_class) if suite_class is not None else ""
    installed_spec = suite_class.spec if suite_class is not None else None
    audit, audit_note = cached_audit(spec, suite_hash)
    return SuiteCard(
        suite=spec.id,
        version=spec.version,
        description=spec.description,
        citation=spec.citation,
        family=spec.family,
        protocol=spec.protocol,
        primary_metric=spec.primary_metric,
        higher_is_better=spec.higher_is_better,
        n_draws=spec.n_draws,
        licence=suite_class.licence if suite_class is not None else "",
        sources=list(suite_class.sources) if suite_class is not None else [],
        how_checked=declared(spec.checked, installed_spec.checked if installed_spec is not None else ""),
        deviations=declared(spec.deviations, installed_spec.deviations if installed_spec is not None else ""),
        about=about,
        splits=list(spec.splits),
        suite_hash=suite_hash,
        changelog=list(spec.changelog),
        installed=suite_class is not None,
        installed_note=installed_note,
        audit=audit,
        audit_note=audit_note,
    )
