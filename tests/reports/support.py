"""Hand-made boards and overview cells, and readers of a written site's pages, for the report's tests."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from structbench import registry
from structbench.baselines.trivial import Oracle
from structbench.reports.builders.overview import Summary
from structbench.reports.builders.suite_board import SuiteBoard
from structbench.specs import SeedStats

TRIVIAL = {"copy", "majority", "random"}


class Solver(Oracle):
    """The suite's own solver, ranked like any model (not a ceiling)."""

    name = "solver"
    ceiling = False


def stats(mean: float) -> SeedStats:
    """A one-seed cell of `mean`."""
    return SeedStats(
        mean=mean, std=None, min=mean, max=mean, ci_low=None, ci_high=None, interval="none", n_seeds=1, per_seed=[mean]
    )


def interval_stats(mean: float, low: float, high: float, n_seeds: int = 3) -> SeedStats:
    """A cell of `mean` with the 95% interval [`low`, `high`] over `n_seeds` seeds."""
    return SeedStats(
        mean=mean, std=0.1, min=low, max=high, ci_low=low, ci_high=high, interval=f"t over {n_seeds} seeds",
        n_seeds=n_seeds, per_seed=[mean] * n_seeds,
    )  # fmt: skip


def summary(suite: str, scores: dict[str, float], **board: set[str]) -> Summary:
    """The overview cells of one hand-made board of `suite` whose models score `scores`."""
    spec = registry.suite(suite).spec
    made = SuiteBoard(
        spec=spec,
        suite_hash="0" * 64,
        splits=[s.name for s in spec.splits_with_role("test")],
        ranked=[s.name for s in spec.ranked_splits],
        slug=spec.key,
        scores={model: stats(mean) for model, mean in scores.items()},
        **board,  # type: ignore[arg-type]
    )
    return Summary(made, {"generalisation": dict(made.scores), "in-distribution": {}})


def issue_33() -> list[Summary]:
    """Issue 33's store: the baselines on four suites, `composer (mine)` perfect on lookup-tables
    alone, `parser (mine)` on two of the suites."""
    baselines = {
        "lookup-tables": {"copy": 0.0, "majority": 0.0, "random": 0.0, "lstm": 0.42, "transformer": 0.61},
        "scan-length": {"copy": 0.0, "majority": 0.0, "random": 0.0, "lstm": 0.14, "transformer": 0.03},
        "grounded-weak": {"copy": 0.0, "majority": 0.003, "random": 0.0, "lstm": 0.71, "transformer": 0.66},
        "scan-simple": {"copy": 0.0, "majority": 0.0, "random": 0.0, "lstm": 0.99, "transformer": 0.98},
    }
    baselines["lookup-tables"]["composer (mine)"] = 1.0
    baselines["scan-length"]["parser (mine)"] = 0.9
    baselines["grounded-weak"]["parser (mine)"] = 0.8
    return [summary(suite, scores) for suite, scores in baselines.items()]


def suite_page(index: Path, key: str = "lookup-tables@1.0.0") -> str:
    """The HTML of one suite's page in the site whose overview is `index`."""
    return (index.parent / "suites" / f"{key}.html").read_text()


def row_of(html: str, model: str) -> str:
    """The table row of `model` (as the page escapes it) in a suite page's results table."""
    start = html.index(f'<th scope="row" data-value="{model}">')
    return html[start : html.index("</tr>", start)]


MACHINE: dict[str, Any] = {
    "cpu": "Intel(R) Xeon(R) Platinum 8370C CPU @ 2.80GHz",
    "simd_numpy": "AVX512_ICL",
    "simd_torch": "AVX512",
    "threads": 1,
    "python": "3.11.9",
    "numpy": "2.3.5",
    "compute": {"device": "cpu"},
}
