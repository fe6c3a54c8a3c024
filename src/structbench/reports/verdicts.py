"""The claims as the site shows them: checked on the reference runs, and apart on the user's own.

A claim names its cells by plain model labels (`seq2seq-gru-attn`). Where the store holds reference
runs (labels with `REFERENCE_SUFFIX`, `structbench.store.bundle.with_reference`), each claim is
checked twice: on the reference runs alone, under their labels without the mark, and on the user's
own runs alone, so that neither decides a claim with the other's cells. The site shows the
reference runs' verdict, and the user's beside it where their runs measure the claim (a status
other than `not measured`). A store without reference runs is checked once, on every run, as before.
"""

from __future__ import annotations

from dataclasses import dataclass

import pandas as pd

from structbench.analysis.claims import Claim, Verdict, check_all, claim_cells
from structbench.store.bundle import is_reference, plain_label

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


def claim_checks(results: pd.DataFrame, runs: pd.DataFrame) -> list[ClaimCheck]:
    """Every claim on the report's cells (`results`) and runs (`runs`, as `claim_cells` takes them), in
    the claims file's order: on the reference runs and the user's apart where there are reference runs."""
    in_results = results.model.map(lambda label: is_reference(str(label))).astype(bool)
    in_runs = runs.model.map(lambda label: is_reference(str(label))).astype(bool)
    if not in_runs.any():
        return [ClaimCheck(verdict) for verdict in check_all(claim_cells(results, runs))]
    own = check_all(claim_cells(results[~in_results], runs[~in_runs]))
    reference = check_all(
        claim_cells(
            results[in_results].assign(model=results.model[in_results].map(plain_label)),
            runs[in_runs].assign(model=runs.model[in_runs].map(plain_label)),
        )
    )
    return [ClaimCheck(mine, theirs) for mine, theirs in zip(own, reference, strict=True)]
