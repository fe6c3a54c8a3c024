"""The suite card: what a suite page of the leaderboard says about the suite itself.

One record per suite version and data hash, made from the stored spec (so a card exists for every
suite the store has results of) and, where this structbench has that suite version, from its
class and module: licence, published source files, the module docstring's account of how the
suite was checked against the published data, and an overlap audit of its built data
(`structbench.reports.overlap`). The renderer only formats a card; nothing here renders.
"""

from __future__ import annotations

import inspect
import re
import sys

from structbench import registry
from structbench.data.sources import SourceFile
from structbench.errors import UserError
from structbench.reports.overlap import OverlapAudit, cached_audit
from structbench.specs import Frozen, ProtocolName, SplitSpec, SuiteSpec
from structbench.suite import Suite

_CHECKED = re.compile(r"(?:\A|(?<=[.!?)]\s))How it was checked\b")
"""The phrase that opens a suite module's account of its checks, at the start of a sentence."""
_DEVIATION = re.compile(r"(?<=[.!?)])\s+Deviations?\b")
"""A sentence on deviations, which some modules append to the checks' paragraph; it is not a check."""
_CONTINUATION = re.compile(r"[ \t]|[-*•] |\d+[.)] ")
"""How a paragraph that continues the previous one starts: indented, or a list item."""


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
    """Research question: systematicity, agreement, lookup, completion, pos-induction."""
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
    """How the suite was checked against the published data: the module docstring's paragraph that
    says "How it was checked", with any list or indented block continuing it, and without a trailing
    sentence on deviations (that belongs to `about`); empty when the docstring has none."""
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


def how_it_was_checked(docstring: str) -> str:
    """The account of a suite's checks in its module docstring, or "" when it has none.

    Suite modules state how they were checked in a paragraph that starts with, or (after a sentence
    naming what is checked, as in `suites/scan.py`) contains a sentence that starts with, "How it was
    checked". That whole paragraph is taken, with the paragraphs that continue it (a list or an
    indented block, or anything after a paragraph ending in a colon), up to the next paragraph that
    does not. A "Deviation(s)" sentence that some modules append to the same paragraph ends it.
    """
    paragraphs = [p.strip("\n") for p in re.split(r"\n[ \t]*\n", inspect.cleandoc(docstring))]
    found = next(((i, match) for i, p in enumerate(paragraphs) if (match := _CHECKED.search(p))), None)
    if found is None:
        return ""
    index, opening = found
    taken = [paragraphs[index]]
    for following in paragraphs[index + 1 :]:
        if not (taken[-1].rstrip().endswith(":") or _CONTINUATION.match(following)):
            break
        taken.append(following)
    text = "\n\n".join(taken)
    deviation = _DEVIATION.search(text, opening.end())
    return (text[: deviation.start()] if deviation else text).strip()


def module_docstring(suite_class: type[Suite]) -> str:
    """The cleaned docstring of the module that defines `suite_class`; "" when it has none."""
    module = sys.modules.get(suite_class.__module__)
    return inspect.cleandoc(module.__doc__) if module is not None and module.__doc__ else ""


def suite_card(spec: SuiteSpec, suite_hash: str) -> SuiteCard:
    """The card of `spec` (as stored with results) whose data has `suite_hash`.

    The spec's own fields come from `spec`; licence, sources and the docstring from the installed
    class of `spec.key` (via the registry), when this structbench has that version. The overlap
    audit is the cached one, or is made from data already built here; no data is ever built.
    """
    installed_note = ""
    suite_class: type[Suite] | None
    try:
        suite_class = type(registry.suite(spec.key))
    except UserError as error:
        suite_class = None
        installed_note = f"This card is built from the stored spec alone: {error}"
    about = module_docstring(suite_class) if suite_class is not None else ""
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
        how_checked=how_it_was_checked(about),
        about=about,
        splits=list(spec.splits),
        suite_hash=suite_hash,
        changelog=list(spec.changelog),
        installed=suite_class is not None,
        installed_note=installed_note,
        audit=audit,
        audit_note=audit_note,
    )
