"""Published reference numbers: a valid file, and rows in the report marked as reported, never ranked."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from structbench import registry
from structbench.analysis.references import Reference, load_references
from structbench.errors import UserError
from structbench.reports.builders import from_store
from structbench.reports.render import write_report
from structbench.reports.views.format import UNDEFINED
from structbench.runs.runner import Runner
from structbench.specs import ModelSpec


def test_every_reference_names_a_suite_split_and_metric_that_exist() -> None:
    references = load_references()
    assert len(references) >= 25
    for reference in references:
        spec = registry.suite(reference.suite).spec
        tests = {s.name for s in spec.splits_with_role("test")}
        for metric, by_split in reference.values.items():
            assert set(by_split) <= tests, f"{reference.model}: {metric} on a split {reference.suite} lacks"
            assert set(reference.spreads.get(metric, {})) <= set(by_split)
        for metric, by_split in reference.conditions.items():  # per-condition numbers: a split and key it records
            assert set(by_split) <= tests, f"{reference.model}: {metric} on a split {reference.suite} lacks"
            for split, by_key in by_split.items():
                assert set(by_key) <= set(registry.suite(reference.suite).breakdown_keys)
                spreads = reference.condition_spreads.get(metric, {}).get(split, {})
                assert all(set(spreads.get(key, {})) <= set(levels) for key, levels in by_key.items())
        for metric, by_split in reference.per_run.items():
            for split, runs in by_split.items():
                assert reference.runs == len(runs)
                # a stated mean is the exact mean of the listed runs, as the source prints both
                assert sum(runs) / len(runs) == pytest.approx(reference.values[metric][split], abs=1e-9)


def test_the_mccoy_row_is_the_results_file_of_its_five_restarts() -> None:
    """results/GRU_GRU_question_location_0.001_256.results (rnn-hierarchical-biases at f34a87c)."""
    (row,) = [r for r in load_references() if r.suite == "question-formation"]
    assert row.runs == 5
    assert row.values["first_word_accuracy"] == {"gen": 0.85852}
    assert row.values["sequence_accuracy"] == {"test": 0.81604, "gen": 0.02626}
    assert row.per_run["first_word_accuracy"]["gen"] == [0.8963, 0.7758, 0.6962, 0.9279, 0.9964]
    assert row.values["first_word_first_aux"] == {"gen": 0.13804}


def test_the_table_6_2_rows_are_transcribed_as_printed() -> None:
    rows = {r.model: r for r in load_references() if r.where.startswith("Table 6.2") and "Korrel" in r.citation}
    assert len(rows) == 16
    assert rows["Baseline"].values["sequence_accuracy"]["heldout_inputs"] == 0.3083
    assert rows["Baseline"].spreads["sequence_accuracy"]["heldout_compositions"] == 0.0074
    assert set(rows["Seq2Attn (GEFT)"].values["sequence_accuracy"].values()) == {1.0}


def test_tran_s_pos_induction_tables_are_transcribed_as_printed() -> None:
    """Tran 2018, Table 6.2 (10 rows; the SOTA rows print no 1-1) and Table 6.3 (its four ablations;
    its 'Best Model' row is Table 6.2's + Conv & LSTM), M-1 / 1-1 / VM on the full WSJ."""
    rows = {r.model: r for r in load_references() if r.suite == "pos-wsj"}
    assert len(rows) == 14

    def printed(model: str) -> tuple[float | None, ...]:
        values = rows[model].values
        return tuple(
            round(100 * values[m]["test"], 1) if m in values else None
            for m in ("many_to_one", "one_to_one_greedy", "v_measure")
        )

    assert printed("HMM") == (62.5, 41.4, 53.3) and printed("Brown clusters") == (68.2, 49.9, 63.0)
    assert printed("Yatbaz et al. (2012)") == (80.2, None, 72.1)
    assert printed("NHMM + Conv & LSTM") == (79.1, 60.7, 71.7)
    assert printed("NHMM + Conv & LSTM, 3 LSTM layers, no dropout") == (72.7, 52.2, 65.1)
    ours = {rows[m].ours for m in ("NHMM", "NHMM + Conv", "NHMM + LSTM", "NHMM + Conv & LSTM")}
    assert ours == {
        'nhmm[emission="linear",transition="matrix"]',
        'nhmm[transition="matrix"]',
        'nhmm[emission="linear"]',
        "nhmm",
    }


def test_published_numbers_are_printed_with_the_digits_of_their_source() -> None:
    """docs/reproductions.md promises the source's digits: Korrel's Table 6.2 prints two decimals (and one
    spread of three), Tran's tables one, Thrush's recall two; elsewhere the shortest form is the source's."""
    rows = {(r.suite, r.model): r for r in load_references()}
    korrel = rows["lookup-tables-mt", "Baseline+ET"]
    assert korrel.printed("sequence_accuracy", "heldout_inputs") == "100.00 ± 0.00"
    assert korrel.printed("sequence_accuracy", "heldout_tables") == "41.49 ± 3.30"
    assert rows["lookup-tables-mt", "Baseline+GEF"].printed("sequence_accuracy", "new_compositions") == "11.46 ± 1.031"
    assert rows["pos-wsj", "Brown clusters"].printed("v_measure", "test") == "63.0"
    assert rows["pos-wsj", "NHMM + Conv & LSTM, 1 LSTM layer, dropout"].printed("many_to_one", "test") == "71.0"
    assert rows["msr-sentence-completion", "LSTM (d = 256)"].printed("accuracy", "test") == "56.0"
    thrush = rows["miniscan", "LSTM"]
    assert (thrush.printed("token_precision", "test"), thrush.printed("token_recall", "test")) == ("90", "62.50")
    assert rows["msr-sentence-completion", "human"].printed("accuracy", "test") == "91"
    assert thrush.printed("token_precision", "gen") is None


def test_a_malformed_reference_is_named(tmp_path: Path) -> None:
    path = tmp_path / "references.yaml"
    path.write_text(
        "- suite: scan-simple\n  model: x\n  citation: c\n  where: w\n  values: {sequence_accuracy: {test: 99.7}}\n"
    )
    with pytest.raises(UserError, match=r"entry 1 .* outside \[0, 1\]"):
        load_references(path)
    path.write_text(
        "- suite: slog\n  model: x\n  citation: c\n  where: w\n  values: {}\n"
        "  conditions: {exact_match: {gen: {case: {PP_3: 98.2}}}}\n"
    )
    with pytest.raises(UserError, match=r"entry 1 .* outside \[0, 1\] \(\[98\.2\]\)"):
        load_references(path)
    path.write_text("- suite: scan-simple\n  model: x\n  values: {}\n")
    with pytest.raises(UserError, match=r"entry 1 .*citation"):
        load_references(path)
    path.write_text(
        "- suite: scan-simple\n  model: x\n  citation: c\n  where: w\n  values: {sequence_accuracy: {test: 0.5}}\n"
        "  digits: {accuracy: 2}\n"
    )
    with pytest.raises(UserError, match=r"entry 1 .*`digits` of \['accuracy'\], which it publishes no value of"):
        load_references(path)


def test_reported_rows_follow_the_measured_rows_escaped_and_unranked(
    runner: Runner, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    hostile = Reference(
        suite="lookup-tables-mt",
        model="<b>Perfect</b>",
        citation="Somebody 2099",
        where="Table 1",
        values={"sequence_accuracy": {"heldout_tables": 1.0}, "token_accuracy": {"heldout_tables": 0.5}},
    )
    monkeypatch.setattr(from_store, "load_references", lambda: [hostile, *load_references()])
    runner.evaluate("lookup-tables-mt", ModelSpec(name="copy"), [0])
    folder = tmp_path / "report"
    index = write_report(runner.store, folder)
    html = (folder / "suites" / "lookup-tables-mt@1.0.0.html").read_text()
    assert "<b>Perfect" not in html and "&lt;b&gt;Perfect&lt;/b&gt;" in html
    reported = html.index("&lt;b&gt;Perfect")
    assert html.index('data-value="copy"') < reported  # measured rows first, whatever the numbers
    assert 'class="reported"' in html and "Table 6.2" in html and "Seq2Attn (GEFT)" in html
    assert "<code>token_accuracy</code> on <code>heldout_tables</code>: 50.0" in html
    markdown = (folder / "leaderboard.md").read_text()
    assert "*Seq2Attn (GEFT)* (reported, Table 6.2" in markdown and "not measured here: Korrel 2018" in markdown
    assert markdown.index("| copy") < markdown.index("*Seq2Attn (GEFT)*")
    stored = json.loads((folder / "references.json").read_text())
    assert stored[0]["model"] == "<b>Perfect</b>" and len(stored) == len(load_references()) + 1
    # a suite without measured results gets no page, and the overview says why
    assert not (folder / "suites" / "scan-simple@2.0.0.html").exists()
    overview = index.read_text()
    assert "<li><code>scan-simple@2.0.0</code>: no runs in this store" in overview


def test_thrushs_undefined_precision_and_recall_are_marked_not_comparable(runner: Runner, tmp_path: Path) -> None:
    runner.evaluate("miniscan", ModelSpec(name="copy"), [0])
    index = write_report(runner.store, tmp_path / "site")
    markdown = (tmp_path / "site" / "leaderboard.md").read_text()
    for metric in ("token_precision", "token_recall"):
        lines = [line for line in markdown.splitlines() if line.startswith(f"- reported {metric} on test")]
        assert len(lines) == 3 and all(line.endswith(f"; {UNDEFINED}") for line in lines)
    page = (index.parent / "suites" / "miniscan@1.0.0.html").read_text()
    assert page.count(f'<span class="tag">{UNDEFINED}</span>') == 6
