"""The claims as the site shows them: checked on the reference runs, and apart on the user's own.

A claim names its cells by plain model labels (`seq2seq-gru-attn`). Where the store holds reference
runs (labels with `REFERENCE_SUFFIX`, `structbench.store.bundle.with_reference`), each claim is
checked twice: on the reference runs alone, under their labels without the mark, and on the user's
own runs alone, so that neither decides a claim with the other's cells. The site shows the
reference runs' verdict, and the user's beside it where their runs measure the claim (a status
other than `not measured`). A store without reference runs is checked once, on every run, as before.
The checks are made by `structbench.reports.builders.reference_runs.claim_checks`.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

if TYPE_CHECKING:  # types only: their module also reads stores, which no view may import
    from structbench.analysis.claims import Claim, Verdict

REFERENCE_RUNS = "reference runs"
OWN_RUNS = "your runs"


@dataclass(frozen=True)
class ClaimCheck:
    """One claim checked on the runs the site shows."""

    own: Verdict
    """On the user's runs (on every run where the store holds no reference run)."""
    reference: Verdict | None = None
    """On the reference runs, where the store holds any."""

    @property
    def claim(self) -> Claim:
        return self.own.claim

    @property
    def shown(self) -> list[tuple[str, Verdict]]:
        """(whose runs, the verdict on them) as the site shows them: the reference runs' verdict, then
        the user's where their runs measure the claim; with no reference runs, the one verdict ("")."""
        if self.reference is None:
            return [("", self.own)]
        measured = self.own.status != "not measured"
        return [(REFERENCE_RUNS, self.reference), *([(OWN_RUNS, self.own)] if measured else [])]
