"""Claims: the papers' findings, checked on measured cells, with the evidence they rest on."""

from __future__ import annotations

import json
from pathlib import Path

import pandas as pd
import pytest

from structbench import registry
from structbench.analysis.claims import TRAINING, CellRef, Claim, check, load_claims
from structbench.analysis.references import load_references
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


def cells(*rows: tuple[str, float, float, float]) -> pd.DataFrame:
    """Report rows of miniscan: (model, mean, ci_low, ci_high) on split `test`, metric `accuracy`."""
    return pd.DataFrame(
        [
            {"suite": "miniscan", "version": "1.0.0", "model": m, "split": "test", "metric": "accuracy",
             "breakdown": "", "mean": mean, "ci_low": low, "ci_high": high, "interval": "t over 3 seeds"}
            for m, mean, low, high in rows
        ]
    )  # fmt: skip


GREATER = Claim(
    id="a-beats-b", statement="A beats B", source="a paper", suite="miniscan", metric="accuracy",
    greater=CellRef(model="a", split="test"), than=[CellRef(model="b", split="test")],
)  # fmt: skip
BOUND = Claim(
    id="a-fails", statement="A fails", source="a paper", suite="miniscan", metric="accuracy",
    cell=CellRef(model="a", split="test"), at_most=0.1,
)  # fmt: skip


def test_not_below_holds_on_the_means_and_fails_only_on_separated_intervals() -> None:
    no_worse = Claim(
        id="a-no-worse", statement="A is no worse than B", source="a paper", suite="miniscan", metric="accuracy",
        not_below=CellRef(model="a", split="test"), than=[CellRef(model="b", split="test")],
    )  # fmt: skip
    assert check(no_worse, cells(("a", 0.97, 0.9, 1.0), ("b", 0.95, 0.9, 1.0))).status == "reproduced"
    assert check(no_worse, cells(("a", 0.93, 0.88, 0.98), ("b", 0.95, 0.9, 1.0))).status == "inconclusive"
    assert check(no_worse, cells(("a", 0.80, 0.75, 0.85), ("b", 0.95, 0.9, 1.0))).status == "not reproduced"
    with pytest.raises(ValueError, match="one of `greater`, `lower` or `not_below`"):
        Claim.model_validate({**no_worse.model_dump(), "greater": {"model": "a", "split": "test"}})


def test_a_claim_across_two_suites_reads_each_cell_from_its_own_suite() -> None:
    across = Claim(
        id="lm-beats-number", statement="A on miniscan beats B on lookup-tables", source="a paper",
        suite="miniscan", metric="accuracy", greater=CellRef(model="a", split="test"),
        than=[CellRef(model="b", split="test", suite="lookup-tables")],
    )  # fmt: skip
    rows = cells(("a", 0.9, 0.85, 0.95), ("b", 0.99, 0.98, 1.0))  # b on miniscan: not the cell the claim names
    assert check(across, rows).status == "not measured"
    elsewhere = rows.assign(
        suite=["miniscan", "lookup-tables"], mean=[0.9, 0.5], ci_low=[0.85, 0.4], ci_high=[0.95, 0.6]
    )
    verdict = check(across, elsewhere)
    assert verdict.status == "reproduced" and "b on lookup-tables/test: 50.0 [40.0, 60.0]" in verdict.evidence


def test_a_claim_on_breakdown_conditions_reads_their_cells_and_never_the_whole_split() -> None:
    structural_below = Claim(
        id="structural-below-lexical", statement="A parses structural cases worse", source="a paper",
        suite="cogs", metric="exact_match",
        lower=CellRef(model="a", split="gen", breakdown="kind", level="structural"),
        than=[CellRef(model="a", split="gen", breakdown="kind", level="lexical")],
    )  # fmt: skip
    rows = pd.DataFrame(
        [
            {"suite": "cogs", "version": "1.0.0", "model": "a", "split": "gen", "metric": "exact_match",
             "breakdown": breakdown, "level": level, "mean": mean, "ci_low": mean - 0.05, "ci_high": mean + 0.05,
             "interval": "t over 3 seeds"}
            for breakdown, level, mean in [("", "", 0.5), ("kind", "structural", 0.1), ("kind", "lexical", 0.6)]
        ]
    )  # fmt: skip
    verdict = check(structural_below, rows)
    assert verdict.status == "reproduced"
    assert verdict.evidence.startswith("a on cogs/gen[kind=structural]: 10.0 [5.0, 15.0] (t over 3 seeds) vs ")
    assert check(structural_below, rows[rows.level != "lexical"]).status == "not measured"
    assert check(structural_below, rows.assign(mean=[0.5, 0.7, 0.6])).status == "not reproduced"
    with pytest.raises(ValueError, match="give both `breakdown` and `level`"):
        CellRef(model="a", split="gen", breakdown="kind")


@pytest.mark.parametrize(
    ("claim", "rows", "status"),
    [
        (GREATER, [("a", 0.9, 0.85, 0.95), ("b", 0.5, 0.4, 0.6)], "reproduced"),
        (GREATER, [("a", 0.6, 0.45, 0.75), ("b", 0.5, 0.4, 0.6)], "inconclusive"),
        (GREATER, [("a", 0.4, 0.35, 0.45), ("b", 0.5, 0.4, 0.6)], "not reproduced"),
        (GREATER, [("a", 1.0, 0.992, 1.0), ("b", 1.0, 0.992, 1.0)], "inconclusive"),  # both at the ceiling
        (GREATER, [("a", 0.9, 0.85, 0.95)], "not measured"),
        (BOUND, [("a", 0.02, 0.0, 0.05)], "reproduced"),
        (BOUND, [("a", 0.08, 0.02, 0.14)], "inconclusive"),
        (BOUND, [("a", 0.2, 0.1, 0.3)], "not reproduced"),
        (BOUND, [("a", 0.02, float("nan"), float("nan"))], "inconclusive"),
    ],
)
def test_a_claim_is_reproduced_only_when_the_intervals_say_so(
    claim: Claim, rows: list[tuple[str, float, float, float]], status: str
) -> None:
    verdict = check(claim, cells(*rows))
    assert verdict.status == status
    if status != "not measured":
        assert "a on miniscan/test: " in verdict.evidence
    else:
        assert verdict.evidence == "no finished run of b on miniscan/test"


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
    assert '<td class="status-reproduced">reproduced</td>' in html
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
    assert main(["report", "--store", str(store_path), "--out", str(tmp_path / "site")]) == 0
    html = (tmp_path / "site" / "index.html").read_text()
    assert '<span class="caveat">Caveat: fan-number trains with Adam' in html
    assert "fan-number trains with Adam" in (tmp_path / "site" / "leaderboard.md").read_text()


def test_a_malformed_claim_is_named(tmp_path: Path) -> None:
    path = tmp_path / "claims.yaml"
    path.write_text("- id: x\n  statement: s\n  source: p\n  suite: miniscan\n  metric: accuracy\n  at_most: 0.1\n")
    with pytest.raises(
        UserError, match=r"claim 1 in .* is malformed .*give one of `greater`, `lower` or `not_below` with `than`"
    ):
        load_claims(path)
