"""The page's sections: which paper (or family of papers) each (suite, model) cell of reference runs
belongs to, in page order; a cell belongs to the first section that holds it, and the last holds
every cell, so that no reference run is left off the page."""

from __future__ import annotations

import fnmatch
from collections.abc import Sequence
from dataclasses import dataclass


@dataclass(frozen=True)
class Layout:
    """One section of the page: a paper (or family of papers) and the cells it reports."""

    slug: str
    """The key of the section's prose in the template."""
    title: str
    cells: tuple[tuple[str, str], ...]
    """(suite id, model label) shell patterns of the cells the section shows."""
    published_on: tuple[tuple[str, str], ...] = ()
    """(suite id pattern, suite id): the published numbers of the second suite stand beside the cells
    of the first too (Tran's part-of-speech numbers are on the WSJ, our suites on UD English)."""
    elsewhere: tuple[tuple[str, str], ...] = ()
    """(suite id, label): what the published column says beside that suite's numbers in another suite's
    rows, so that a number measured on another corpus says so where it is read, not only in its source."""

    def holds(self, suite: str, model: str) -> bool:
        return any(fnmatch.fnmatchcase(suite, s) and fnmatch.fnmatchcase(model, m) for s, m in self.cells)

    def published_suites(self, suite: str) -> list[str]:
        return [suite, *(other for pattern, other in self.published_on if fnmatch.fnmatchcase(suite, pattern))]


SECTIONS = (
    Layout(
        "korrel-scan",
        "Korrel 2018: SCAN experiments 5 and 6, and learned guidance on scan-length",
        (
            ("scan-filler-*", "*"),
            ("scan-fewshot-*", "*"),
            ("scan-template-*", "*"),
            ("scan-length", "attentive-guidance*"),
            ("scan-length", "seq2seq-lstm*"),
            ("scan-*", "seq2attn*"),
        ),
    ),
    Layout(
        "seq2seq",
        "Lake & Baroni 2018 and McCoy et al. 2020: a GRU with attention on SCAN and question formation",
        (("scan-*", "*"), ("question-formation*", "*")),
    ),
    Layout("lookup", "Hupkes et al. 2018 and Korrel 2018: lookup tables", (("lookup-tables*", "*"),)),
    Layout("miniscan", "Thrush 2020: MiniSCAN", (("miniscan*", "*"),)),
    Layout(
        "agreement",
        "Linzen et al. 2016, Gulordava et al. 2018 and Tran 2018 ch. 5: subject-verb agreement",
        (("agreement-*", "*"),),
    ),
    Layout("logic", "Tran 2018 ch. 5: logical relations (Bowman et al.'s data)", (("logic-*", "*"),)),
    Layout(
        "completion",
        "Tran 2018 ch. 4: sentence completion",
        (("sentence-completion*", "*"), ("msr-sentence-completion*", "*")),
    ),
    Layout(
        "pos",
        "Tran 2018 ch. 6: part-of-speech induction",
        (("pos-*", "*"),),
        published_on=(("pos-*", "pos-wsj"),),
        elsewhere=(("pos-wsj", "WSJ, another corpus"),),
    ),
    Layout(
        "monner", "Monner 2011: Distracted Sequence Recall and grounded language", (("dsr*", "*"), ("grounded-*", "*"))
    ),
    Layout(
        "semantic-parsing",
        "Kim & Linzen 2020 and Li et al. 2023: COGS and SLOG",
        (("cogs*", "*"), ("slog*", "*")),
    ),
    Layout("other", "Other reference runs", (("*", "*"),)),
)
"""The page's sections in order; a cell belongs to the first that holds it."""


def section_of(suite: str, model: str, layouts: Sequence[Layout] = SECTIONS) -> Layout:
    """The first section that holds the cell (the last section holds every cell)."""
    return next(layout for layout in layouts if layout.holds(suite, model))
