"""`leaderboard.md`: every board as a GitHub Markdown table, with the claims and published rows.

Every string that comes from a user or a store (model labels, suite ids, split names, published
rows' text) goes through `structbench.reports.escaping.markdown_text`: HTML escaped (GitHub renders
HTML in Markdown), table pipes escaped, line breaks made spaces.
"""

from __future__ import annotations

from tabulate import tabulate

from structbench.analysis.significance import RULE as VERDICT_RULE
from structbench.reports.builders.suite_board import SuiteBoard
from structbench.reports.builders.verdicts import ClaimCheck
from structbench.reports.escaping import markdown_text
from structbench.reports.views.format import UNDEFINED, method, percent
from structbench.specs import SeedStats

MARKS = {"best": " **best**", "tie": " ≈best", "": ""}
TIES_LEGEND = (
    "On each ranked split, **best** marks the best ranked model and ≈best those a paired bootstrap "
    "(seeds and examples, 95%) cannot tell from it; neither marks a value that does not beat the trivial baselines "
    "on that split (the best of copy, random and majority run there) or, where higher is better, is 0."
)

REFERENCE_CLAIMS = (
    " Each claim is checked on the reference runs shipped with structbench and, apart, on your own runs "
    "where they measure it; neither decides a claim with the other's cells."
)


def markdown_cell(cell: SeedStats) -> str:
    """`mean [low, high] (n seeds, method)` in percent."""
    interval = (
        "" if cell.ci_low is None or cell.ci_high is None else f" [{percent(cell.ci_low)}, {percent(cell.ci_high)}]"
    )
    seeds = f"{cell.n_seeds} seed{'s' if cell.n_seeds > 1 else ''}"
    return f"{percent(cell.mean)}{interval} ({seeds}, {method(cell)})"


def _whose(whose: str, text: str) -> str:
    return f"{whose}: {text}" if whose else text


def _claims_markdown(checks: list[ClaimCheck]) -> list[str]:
    """The claims section: one row per claim, the reference runs' verdict and the user's apart."""
    if not checks:
        return []
    rows = [
        [
            markdown_text(check.claim.statement),
            markdown_text(check.claim.source),
            "; ".join(_whose(whose, verdict.status) for whose, verdict in check.shown),
            markdown_text("; ".join(_whose(whose, verdict.evidence) for whose, verdict in check.shown)),
            markdown_text(check.claim.caveat),
        ]
        for check in checks
    ]
    return [
        "## Claims",
        "",
        "Published findings checked on the measured cells. "
        + VERDICT_RULE
        + " A caveat says where the check differs from the paper's own (a handicap one model carries here, a step "
        "of the paper's test not taken): read the status with it."
        + (REFERENCE_CLAIMS if any(check.reference is not None for check in checks) else ""),
        "",
        tabulate(rows, headers=["claim", "source", "status", "evidence (%)", "caveat"], tablefmt="github"),
        "",
    ]


def _apart(board: SuiteBoard, model: str) -> str:
    """The note on a row shown below the ranked ones, or on an under-trained one."""
    if model in board.ceilings:
        return " (ceiling, not ranked)"
    if model in board.partial:
        return " (partial, not ranked)"
    if model in board.not_comparable:
        return " (not comparable, not ranked)"
    return f" ({markdown_text(board.under_trained[model])})" if model in board.under_trained else ""


def _made(board: SuiteBoard, model: str) -> str:
    """What made a row of reference runs, after its label (which carries the reference mark)."""
    found = board.reference_runs.get(model)
    return f" ({markdown_text(found.made)})" if found else ""


def leaderboard_markdown(board_list: list[SuiteBoard], checks: list[ClaimCheck]) -> str:
    parts = ["# structbench leaderboard", "", *_claims_markdown(checks)]
    for board in board_list:
        parts += [
            f"## {markdown_text(board.spec.key)} ({markdown_text(board.spec.primary_metric)}, %; "
            f"data {markdown_text(board.suite_hash[:12])})",
            "",
            "Cells: mean over seeds [95% interval] (seeds, method: t over seeds; Wilson over the test items "
            "for one seed or seeds that agree). Ranked by the suite score: per seed, the mean over "
            + ", ".join(map(markdown_text, board.generalisation))
            + ", then the mean over seeds"
            + ("" if board.spec.higher_is_better else " (lower is better)")
            + "; split roles: "
            + ", ".join(f"{markdown_text(s)} {markdown_text(str(board.spec.split(s).test_role))}" for s in board.splits)
            + ". "
            + TIES_LEGEND
            + (f" ({markdown_text(board.ties_note)})" if board.ties_note else ""),
            "",
        ]
        table = []
        for model, row_cells in board.rows:
            row = [markdown_text(model) + _made(board, model) + _apart(board, model)]
            for split in board.splits:
                c = row_cells[split]
                row.append((markdown_cell(c) + MARKS[board.mark(model, split)]) if c else board.missing(model))
            table.append(row)
        for reference in board.references:
            row = [f"*{markdown_text(reference.model)}* (reported, {markdown_text(reference.where)})"]
            for split in board.splits:
                value = reference.value(board.spec.primary_metric, split)
                row.append("" if value is None else percent(value))
            table.append(row)
        headers = ["model", *map(markdown_text, board.splits)]
        parts += [tabulate(table, headers=headers, tablefmt="github", disable_numparse=True), ""]
        citations = sorted({r.citation for r in board.references})
        if citations:
            parts += [
                "Reported rows are published numbers, not measured here: " + "; ".join(map(markdown_text, citations)),
                "",
            ]
        for reference, metric, split, value in board.other_references:
            parts.append(
                f"- reported {markdown_text(metric)} on {markdown_text(split)}: {percent(value)}, "
                f"*{markdown_text(reference.model)}* ({markdown_text(reference.citation)}, {markdown_text(reference.where)})"
                + (f"; {UNDEFINED}" if metric in reference.undefined_metrics else "")
            )
        if board.other_references:
            parts.append("")
    return "\n".join(parts)
