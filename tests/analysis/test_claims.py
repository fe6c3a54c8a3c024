"""Claims: the papers' findings, checked on measured cells, with the evidence they rest on."""

from __future__ import annotations

import json
from pathlib import Path

import pandas as pd
import pytest
from scipy import stats

from structbench import registry
from structbench.analysis.claims import TRAINING, CellRef, Claim, check, load_claims
from structbench.analysis.references import load_references
from structbench.analysis.significance import RULE, p_shown
from structbench.cells import cells as seed_cells
from structbench.cli import main
from structbench.errors import UserError
from structbench.runs.runner import Runner
from structbench.specs import ModelSpec
from structbench.store import Store


def test_every_claim_names_a_suite_split_and_model_that_exist() -> None:
    claims = load_claims()
    assert len(claims) >= 5 and len({c.id for c in claims}) == len(claims)
    for claim in claims:
        for ref in [claim.greater, claim.lower, claim.not_below, claim.cell, *claim.than]:
            if ref is not None:
                suite = registry.suite(ref.suite or claim.suite)
                tests = {s.name for s in suite.spec.splits_with_role("test")}
                assert ref.split in tests | {TRAINING}, f"{claim.id}: {ref.split}"
                assert not ref.breakdown or ref.breakdown in suite.breakdown_keys, f"{claim.id}: {ref.breakdown}"
                registry.model_factory(ref.model.partition("[")[0])


def test_a_claim_quoting_a_published_number_reads_the_model_its_reference_row_names() -> None:
    """Korrel's 0.26% and 2.86% are of his LSTM baseline: a claim quoting them about another network (a GRU)
    checks a finding nobody published. structbench's extensions quote them only as context."""
    checked = 0
    for claim in load_claims():
        refs = [r for r in (claim.greater, claim.lower, claim.not_below, claim.cell, *claim.than) if r is not None]
        for row in (row for row in load_references() if row.ours is not None):
            for metric, values in row.values.items():
                for split, value in values.items():
                    read = [
                        ref.model
                        for ref in refs
                        if (ref.suite or claim.suite, ref.split, ref.metric or claim.metric)
                        == (row.suite, split, metric)
                    ]
                    if read and f"{100 * value:.4g}%" in claim.source:
                        checked += 1
                        if not claim.source.startswith("structbench's extension"):
                            assert row.ours in read, f"{claim.id} quotes {row.model} ({row.ours}) but reads {read}"
    assert checked >= 8  # Korrel's SCAN numbers, Lake & Baroni's 20.8%, Monner's 95% and 97%


def cells(*rows: tuple[str, list[float]], items: int = 0, suite: str = "miniscan") -> pd.DataFrame:
    """Report rows of `suite` on split `test`, metric `accuracy`: (model, per-seed values) each, made by the
    cell function; with `items`, each value is a fraction of that many items."""
    scores = pd.DataFrame(
        [
            {"suite": suite, "version": "1.0.0", "suite_hash": "h", "model": model, "model_hash": model,
             "split": "test", "metric": "accuracy", "breakdown": "", "level": "", "seed": seed, "value": value,
             "n": items, "proportion": items > 0}
            for model, values in rows
            for seed, value in enumerate(values)
        ]
    )  # fmt: skip
    return seed_cells(scores)


GREATER = Claim(
    id="a-beats-b", statement="A beats B", source="a paper", suite="miniscan", metric="accuracy",
    greater=CellRef(model="a", split="test"), than=[CellRef(model="b", split="test")],
)  # fmt: skip
NOT_BELOW = GREATER.model_copy(update={"id": "a-no-worse", "greater": None, "not_below": GREATER.greater})
LOWER = GREATER.model_copy(update={"id": "a-below-b", "greater": None, "lower": GREATER.greater})
BOUND = Claim(
    id="a-fails", statement="A fails", source="a paper", suite="miniscan", metric="accuracy",
    cell=CellRef(model="a", split="test"), at_most=0.1,
)  # fmt: skip

SPREAD = [0.93, 0.80, 0.97]
"""Three seeds far apart: a mean of 0.9 with a wide interval."""


@pytest.mark.parametrize(
    ("claim", "a", "b", "status"),
    [
        (GREATER, [0.9, 0.88, 0.92], [0.5, 0.45, 0.55], "reproduced"),
        (GREATER, [0.6, 0.4, 0.8], [0.5, 0.45, 0.55], "inconclusive"),
        (GREATER, [0.40, 0.41, 0.39], [0.5, 0.52, 0.48], "contradicted"),
        # the means point the other way, but the seeds do not tell the cells apart: not contradicted
        (GREATER, SPREAD, [0.95, 0.94, 0.96], "inconclusive"),
        (LOWER, [0.40, 0.41, 0.39], [0.5, 0.52, 0.48], "reproduced"),
        (LOWER, [0.9, 0.88, 0.92], [0.5, 0.45, 0.55], "contradicted"),
        (NOT_BELOW, [0.97, 0.96, 0.98], [0.90, 0.89, 0.91], "reproduced"),
        (NOT_BELOW, SPREAD, [0.95, 0.94, 0.96], "inconclusive"),
        (NOT_BELOW, [0.80, 0.78, 0.82], [0.95, 0.94, 0.96], "contradicted"),
        (BOUND, [0.02, 0.01, 0.03], None, "reproduced"),
        (BOUND, [0.08, 0.02, 0.14], None, "inconclusive"),
        (BOUND, [0.2, 0.22, 0.18], None, "contradicted"),
    ],
)
def test_a_claim_is_decided_by_a_two_sided_test_over_seeds(
    claim: Claim, a: list[float], b: list[float] | None, status: str
) -> None:
    verdict = check(claim, cells(("a", a), *([("b", b)] if b is not None else [])))
    assert verdict.status == status, verdict.evidence
    (comparison,) = verdict.comparisons
    expected = stats.ttest_1samp(a, 0.1) if b is None else stats.ttest_ind(a, b, equal_var=False)
    assert comparison.p_value == pytest.approx(expected.pvalue)
    assert comparison.test == ("one-sample t-test over seeds" if b is None else "Welch's t-test over seeds")
    assert verdict.evidence.startswith("a on miniscan/test: ") and f"p {p_shown(expected.pvalue)}" in verdict.evidence
    if status == "inconclusive":  # p, and the seeds that would decide a difference this large
        assert comparison.needed is not None and comparison.needed > 3 and comparison.unit == "seeds"
        assert f"about {comparison.needed} seeds per cell would decide a difference this large" in verdict.evidence
    else:
        assert comparison.needed is None


def test_cells_whose_seeds_agree_are_tested_over_their_items() -> None:
    """A deterministic model's seeds agree: the test is over the test items, and says more seeds would not help."""
    apart = check(GREATER, cells(("a", [0.848] * 3), ("b", [0.092] * 3), items=500))
    assert apart.status == "reproduced" and apart.comparisons[0].test == "score test of two proportions over items"
    assert "a on miniscan/test: 84.8 [81.4, 87.7] (Wilson over 500 items; its 3 seeds agree)" in apart.evidence
    assert check(LOWER, cells(("a", [0.848] * 3), ("b", [0.092] * 3), items=500)).status == "contradicted"
    close = check(GREATER, cells(("a", [0.9] * 3), ("b", [0.88] * 3), items=500))
    assert close.status == "inconclusive" and close.comparisons[0].unit == "items"
    assert close.comparisons[0].needed is not None and close.comparisons[0].needed > 500
    assert "items per cell would decide a difference this large (80% power); more seeds would not" in close.evidence
    ceiling = check(GREATER, cells(("a", [1.0] * 5), ("b", [1.0] * 5), items=500))
    assert ceiling.status == "inconclusive" and ceiling.comparisons[0].p_value == 1
    assert ceiling.evidence.endswith("the cells are equal: no number of items decides it")
    bound = check(BOUND, cells(("a", [0.02]), items=500))  # one seed: Wilson over its items
    assert bound.status == "reproduced" and bound.comparisons[0].test == "score test of one proportion over items"


def test_a_comparison_shows_one_kind_of_interval() -> None:
    """Where one cell's seeds vary, the test is over seeds, and a cell whose seeds agree shows no interval
    over items beside the other's over seeds: it has no spread over seeds, and the evidence says so."""
    verdict = check(GREATER, cells(("a", [0.60, 0.99, 0.81, 1.0, 0.74]), ("b", [1.0] * 5), items=500))
    assert verdict.status == "inconclusive" and verdict.comparisons[0].test == "Welch's t-test over seeds"
    assert "Wilson" not in verdict.evidence
    assert "b on miniscan/test: 100.0 (its 5 seeds agree: no interval over seeds)" in verdict.evidence
    one_seed = check(GREATER, cells(("a", [0.70, 0.95, 0.81]), ("b", [0.4])))
    assert one_seed.status == "inconclusive" and one_seed.comparisons[0].test == "none"
    assert "no test: a test over seeds needs two or more seeds of each cell" in one_seed.evidence


def test_a_claim_of_several_comparisons_needs_each_and_is_contradicted_by_any() -> None:
    several = GREATER.model_copy(update={"than": [CellRef(model="b", split="test"), CellRef(model="c", split="test")]})
    low, high = [0.5, 0.45, 0.55], [0.99, 0.98, 1.0]
    assert check(several, cells(("a", [0.9, 0.88, 0.92]), ("b", low), ("c", low))).status == "reproduced"
    mixed = check(several, cells(("a", [0.9, 0.88, 0.92]), ("b", low), ("c", [0.6, 0.95, 0.99])))
    assert mixed.status == "inconclusive" and [c.outcome for c in mixed.comparisons] == ["claimed", "neither"]
    assert (
        "; against b on miniscan/test: Welch" in mixed.evidence and "; against c on miniscan/test: " in mixed.evidence
    )
    assert check(several, cells(("a", [0.9, 0.88, 0.92]), ("b", low), ("c", high))).status == "contradicted"


def test_not_measured_names_the_missing_cell() -> None:
    verdict = check(GREATER, cells(("a", [0.9, 0.88, 0.92])))
    assert verdict.status == "not measured" and verdict.evidence == "no finished run of b on miniscan/test"
    assert verdict.comparisons == []
    with pytest.raises(ValueError, match="one of `greater`, `lower` or `not_below`"):
        Claim.model_validate({**NOT_BELOW.model_dump(), "greater": {"model": "a", "split": "test"}})


def test_a_claim_across_two_suites_reads_each_cell_from_its_own_suite() -> None:
    across = Claim(
        id="lm-beats-number", statement="A on miniscan beats B on lookup-tables", source="a paper",
        suite="miniscan", metric="accuracy", greater=CellRef(model="a", split="test"),
        than=[CellRef(model="b", split="test", suite="lookup-tables")],
    )  # fmt: skip
    rows = cells(("a", [0.9, 0.85, 0.95]), ("b", [0.99, 0.98, 1.0]))  # b on miniscan: not the cell the claim names
    assert check(across, rows).status == "not measured"
    elsewhere = pd.concat([cells(("a", [0.9, 0.85, 0.95])), cells(("b", [0.5, 0.4, 0.6]), suite="lookup-tables")])
    verdict = check(across, elsewhere)
    assert verdict.status == "reproduced" and "b on lookup-tables/test: 50.0 [25.2, 74.8]" in verdict.evidence


def test_a_claim_on_breakdown_conditions_reads_their_cells_and_never_the_whole_split() -> None:
    structural_below = Claim(
        id="structural-below-lexical", statement="A parses structural cases worse", source="a paper",
        suite="cogs", metric="exact_match",
        lower=CellRef(model="a", split="gen", breakdown="kind", level="structural"),
        than=[CellRef(model="a", split="gen", breakdown="kind", level="lexical")],
    )  # fmt: skip

    def seeds(structural: list[float]) -> pd.DataFrame:
        conditions = [
            ("", "", [0.45, 0.5, 0.55]),
            ("kind", "structural", structural),
            ("kind", "lexical", [0.55, 0.6, 0.65]),
        ]
        return seed_cells(
            pd.DataFrame(
                [
                    {"suite": "cogs", "version": "1.0.0", "suite_hash": "h", "model": "a", "model_hash": "a",
                     "split": "gen", "metric": "exact_match", "breakdown": breakdown, "level": level, "seed": seed,
                     "value": value, "n": 0, "proportion": False}
                    for breakdown, level, values in conditions
                    for seed, value in enumerate(values)
                ]
            )
        )  # fmt: skip

    rows = seeds([0.05, 0.1, 0.15])
    verdict = check(structural_below, rows)
    assert verdict.status == "reproduced"
    assert verdict.evidence.startswith("a on cogs/gen[kind=structural]: 10.0 [0.0, 22.4] (t over 3 seeds) vs ")
    assert check(structural_below, rows[rows.level != "lexical"]).status == "not measured"
    assert check(structural_below, seeds([0.85, 0.9, 0.95])).status == "contradicted"
    with pytest.raises(ValueError, match="give both `breakdown` and `level`"):
        CellRef(model="a", split="gen", breakdown="kind")


def test_claims_command_and_report_check_the_stored_cells(
    runner: Runner, store_path: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    runner.evaluate("agreement-attractors", ModelSpec(name="ngram"), [0])
    runner.store.close()
    assert main(["claims", "--store", str(store_path), "--json"]) == 0
    verdicts = {v["id"]: v for v in json.loads(capsys.readouterr().out)}
    assert verdicts["ngram-attractors"]["status"] == "reproduced"
    assert verdicts["ngram-attractors"]["evidence"].startswith(
        "ngram on agreement-attractors/attractors-0: 84.8 [81.4, 87.7]"
    )
    assert verdicts["seq2seq-scan-jump"]["status"] == "not measured"
    assert main(["report", "--store", str(store_path), "--out", str(tmp_path / "site")]) == 0
    html = (tmp_path / "site" / "index.html").read_text()
    assert '<td class="status-reproduced" data-label="status">reproduced</td>' in html
    assert html.count("status-not-measured") == len(load_claims()) - 1  # every claim but the ngram one


def test_a_claims_caveat_is_shown_wherever_its_verdict_is(
    store_path: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A handicap of one model (fan-number's Adam for Tran's YellowFin) is read with the verdict, not only in a recipe."""
    caveats = {c.id: c.caveat for c in load_claims()}
    tran = "tran-number-lstm-above-fan-attractors-0"
    assert "YellowFin" in caveats[tran]
    assert "2 standard deviations" in caveats["monner-lstm-g-fewer-trials-than-lstm"]
    assert caveats["ngram-attractors"] == ""
    Store(store_path).close()
    assert main(["claims", "--store", str(store_path), "--json"]) == 0
    verdicts = {v["id"]: v for v in json.loads(capsys.readouterr().out)}
    assert verdicts[tran]["caveat"] == caveats[tran]
    assert main(["claims", "--store", str(store_path)]) == 0
    table = capsys.readouterr().out
    assert "caveat" in table.splitlines()[0] and "YellowFin" in table
    assert " ".join(RULE.split()) in " ".join(table.split())  # the verdict rule, under the table
    assert main(["report", "--store", str(store_path), "--out", str(tmp_path / "site")]) == 0
    html = (tmp_path / "site" / "index.html").read_text()
    assert '<span class="caveat">Caveat: fan-number trains with Adam' in html
    assert "the opposite direction, and inconclusive when it finds" in html
    leaderboard = (tmp_path / "site" / "leaderboard.md").read_text()
    assert "fan-number trains with Adam" in leaderboard and RULE in leaderboard


def test_a_malformed_claim_is_named(tmp_path: Path) -> None:
    path = tmp_path / "claims.yaml"
    path.write_text("- id: x\n  statement: s\n  source: p\n  suite: miniscan\n  metric: accuracy\n  at_most: 0.1\n")
    with pytest.raises(
        UserError, match=r"claim 1 in .* is malformed .*give one of `greater`, `lower` or `not_below` with `than`"
    ):
        load_claims(path)
