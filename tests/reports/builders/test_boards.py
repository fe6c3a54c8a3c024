"""The boards a store gives: one per suite version and data hash, its rows flagged and ordered, its marks
above the trivial floor, and each row's compute and the machines its seeds ran on."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from structbench import __version__, registry
from structbench.baselines.trivial import Oracle
from structbench.reports.builders.boards import aggregate, boards, statistic_marks
from structbench.reports.builders.suite_board import Compute, SuiteBoard
from structbench.reports.render import write_report
from structbench.runs.arguments import parse_settings
from structbench.runs.runner import Runner
from structbench.scoring import Score, SplitScores
from structbench.specs import ModelSpec
from structbench.store import run_compute, run_statistics
from tests.reports.support import MACHINE, row_of, suite_page, summary
from tests.support.helpers import read_results


class Flag:
    """Copies its input, or reverses it when `reverse` is truthy."""

    name = "flag"
    protocols = ("transduction",)

    def __init__(self, reverse: object = False) -> None:
        self.reverse = bool(reverse)

    def transduce(self, inputs: list[list[str]]) -> list[list[str]]:
        return [list(reversed(t)) if self.reverse else list(t) for t in inputs]


class PeekingOracle(Oracle):
    """The suite's own solver, declared as seeing test-time information."""

    comparable = False


def test_numbers_from_different_data_never_share_a_cell(runner: Runner, tmp_path: Path) -> None:
    runner.evaluate("lookup-tables", ModelSpec(name="copy"), [0])
    # the same suite id and version built from other data, stored by an older checkout
    suite = registry.suite("lookup-tables")
    other_hash = "f" * 64
    runner.store.record_suite(suite.spec, other_hash)
    claim = runner.store.claim_run(
        {
            "suite": "lookup-tables", "version": "1.0.0", "suite_hash": other_hash, "model": "copy",
            "model_spec": '{"name":"copy","params":{}}', "model_hash": "0" * 64, "config_hash": None,
            "comparable": True, "seed": 0, "draw": 0, "harness_version": __version__, "git_commit": None,
            "environment": "{}",
        }
    )  # fmt: skip
    scores = SplitScores(scores=[Score("sequence_accuracy", 0.5, 2)], correct=[True, False])
    runner.store.finish_run(claim, {"heldout_tables": (scores, ["a", "b"], [["x"], ["y"]])}, 0.0, 0.0)

    report = write_report(runner.store, tmp_path / "report")
    rows = read_results(report.parent / "results.json")
    cells = [r for r in rows if r["model"] == "copy" and r["split"] == "heldout_tables"]
    cells = [r for r in cells if r["metric"] == "sequence_accuracy" and not r.get("breakdown")]
    assert sorted((r["suite_hash"] == other_hash, r["mean"], r["n_seeds"]) for r in cells) == [
        (False, 0.0, 1),
        (True, 0.5, 1),
    ]
    pages = sorted(p.name for p in (report.parent / "suites").glob("*.html"))
    assert pages == ["lookup-tables@1.0.0-ffffffff.html", "lookup-tables@1.0.0.html"]
    assert f"<code>{other_hash}</code>" in suite_page(report, "lookup-tables@1.0.0-ffffffff")
    assert other_hash not in suite_page(report)


def test_models_that_differ_only_in_a_settings_type_are_not_merged(runner: Runner, tmp_path: Path) -> None:
    as_bool = ModelSpec(name="tests.reports.builders.test_boards:Flag", params=parse_settings(["reverse=false"]))
    as_text = ModelSpec(name="tests.reports.builders.test_boards:Flag", params=parse_settings(["reverse=False"]))
    assert as_bool != as_text  # the harness stores them as two models ...
    runner.evaluate("lookup-tables", as_bool, [0])
    runner.evaluate("lookup-tables", as_text, [0])
    assert len(runner.store.runs()) == 2
    report = write_report(runner.store, tmp_path / "report")
    rows = read_results(report.parent / "results.json")
    flag = [r for r in rows if r["model"].startswith("flag")]
    # ... so no cell may pool the two: each holds the one seed of one model
    assert flag and all(r["n_seeds"] == 1 for r in flag)


def test_a_model_that_is_not_comparable_is_flagged_and_ranked_last(runner: Runner, tmp_path: Path) -> None:
    runner.evaluate("lookup-tables", ModelSpec(name="tests.reports.builders.test_boards:PeekingOracle"), [0])
    runner.evaluate("lookup-tables", ModelSpec(name="copy"), [0])
    report = write_report(runner.store, tmp_path / "report")
    html = suite_page(report)
    assert html.index('data-value="copy"') < html.index('data-value="PeekingOracle"')  # 0 above 1
    assert ">not comparable</span>" in row_of(html, "PeekingOracle")
    assert "not comparable" not in row_of(html, "copy")
    markdown = (report.parent / "leaderboard.md").read_text()
    assert "PeekingOracle (not comparable, not ranked)" in markdown


def test_the_report_presents_a_suite_as_installed_not_as_first_stored(runner: Runner, tmp_path: Path) -> None:
    """A corrected primary metric or ranking reaches stores whose runs predate it."""
    runner.evaluate("lookup-tables", ModelSpec(name="oracle"), [0])
    installed = registry.suite("lookup-tables").spec
    (suite_hash,) = {key[2] for key in runner.store.suite_specs()}
    runner.store._db.execute(
        "UPDATE suites SET spec = ? WHERE suite = 'lookup-tables'",
        (installed.variant(primary_metric="token_accuracy").model_dump_json(),),
    )
    runner.store._db.commit()
    markdown = (write_report(runner.store, tmp_path / "site").parent / "leaderboard.md").read_text()
    assert f"## lookup-tables@1.0.0 ({installed.primary_metric}, %; data {suite_hash[:12]})" in markdown


def test_a_board_marks_no_split_where_only_the_trivial_baselines_ran_and_the_first_model_that_beats_them(
    runner: Runner,
) -> None:
    for name in ("copy", "random"):
        runner.evaluate("lookup-tables", ModelSpec(name=name), [0])
    (board,) = boards(runner.store, aggregate(runner.store))
    assert board.floors == {"copy", "random"}
    assert board.best == {} and all(board.mark(m, s) == "" for m, _ in board.rows for s in board.ranked)
    runner.evaluate("lookup-tables", ModelSpec(name="tests.reports.support:Solver"), [0])
    (board,) = boards(runner.store, aggregate(runner.store))
    assert board.best == dict.fromkeys(board.ranked, "solver")


def test_a_statistic_column_marks_no_best_that_the_trivial_baselines_reach() -> None:
    def reporting(trials: dict[str, list[float]], **board: set[str]) -> SuiteBoard:
        made = summary("dsr", dict.fromkeys(trials, 0.5), **board).board
        made.rows = [(model, {}) for model in trials]
        made.compute = {
            model: Compute(None, None, "", {seed: {"trials_to_criterion": value} for seed, value in enumerate(values)})
            for model, values in trials.items()
        }
        return made

    # fewer trials is better: `copy` needing fewest (a floor, say a plugin's trivial learner) leaves nothing to mark
    trials = {"copy": [100.0, 110.0], "lstm": [400.0, 420.0], "srn": [900.0, 950.0]}
    assert statistic_marks(reporting(trials, floors={"copy"})) == {}
    assert statistic_marks(reporting(trials))["trials_to_criterion"] == {"copy": "best"}
    beaten = {**trials, "copy": [1000.0, 1010.0]}
    assert statistic_marks(reporting(beaten, floors={"copy"}))["trials_to_criterion"] == {"lstm": "best"}


def stored(runner: Runner, *environments: dict[str, Any]) -> None:
    """copy on lookup-tables, one seed per environment (seed 0 first), stored with that environment."""
    runner.evaluate("lookup-tables", ModelSpec(name="copy"), list(range(len(environments))))
    for seed, environment in enumerate(environments):
        runner.store._db.execute("UPDATE runs SET environment = ? WHERE seed = ?", (json.dumps(environment), seed))
    runner.store._db.commit()


def copy_row(runner: Runner, tmp_path: Path) -> str:
    return row_of(suite_page(write_report(runner.store, tmp_path / "site")), "copy")


def test_a_row_shows_its_device_and_threads_and_no_note_when_its_seeds_agree(runner: Runner, tmp_path: Path) -> None:
    stored(runner, MACHINE, MACHINE | {"cpus": 64, "platform": "other"})  # not machine entries
    (board,) = boards(runner.store, aggregate(runner.store))
    compute = board.compute["copy"]
    assert (compute.threads, compute.where, compute.machines.note) == ((1,), "cpu · 1 thread", "")
    row = copy_row(runner, tmp_path)
    assert '<td class="text">cpu · 1 thread</td>' in row and "machines" not in row


def test_two_threads_are_shown_and_runs_that_predate_the_record_show_none(runner: Runner, tmp_path: Path) -> None:
    stored(runner, MACHINE | {"threads": 2, "compute": {}})
    assert '<td class="text">2 threads</td>' in copy_row(runner, tmp_path)
    runner.store._db.execute("UPDATE runs SET environment = ?", (json.dumps({"python": "3.11.9", "cpus": 2}),))
    runner.store._db.commit()
    assert '<td class="text">–</td>' in copy_row(runner, tmp_path / "old")


def test_seeds_from_machines_that_differ_in_simd_are_noted_with_every_difference_in_the_title(
    runner: Runner, tmp_path: Path
) -> None:
    other = MACHINE | {"simd_numpy": "X86_V3", "numpy": "2.4.6"}
    older = {"python": "3.11.9", "numpy": "2.3.5"}  # a run stored before the machine was: not compared
    stored(runner, MACHINE, other, older)
    (board,) = boards(runner.store, aggregate(runner.store))
    found = board.compute["copy"].machines
    assert found.note == "seeds from 2 machines: simd_numpy AVX512_ICL / X86_V3, numpy 2.3.5 / 2.4.6"
    assert found.details == "against seed 0's machine, seed 1: simd_numpy AVX512_ICL -> X86_V3, numpy 2.3.5 -> 2.4.6"
    row = copy_row(runner, tmp_path)
    assert (
        '<span class="machines" title="against seed 0&#39;s machine, seed 1: simd_numpy AVX512_ICL -&gt; X86_V3, '
        'numpy 2.3.5 -&gt; 2.4.6">seeds from 2 machines: simd_numpy AVX512_ICL / X86_V3, numpy 2.3.5 / 2.4.6</span>'
    ) in row


def test_a_row_reads_each_seeds_compute_and_statistics_as_the_store_reader_does_damaged_entries_too(
    runner: Runner,
) -> None:
    """The board parses each run's environment once and checks its entries itself: what it shows of each
    seed is what `run_compute` and `run_statistics` read from the same text, whatever a store holds."""
    texts = [
        json.dumps(MACHINE | {"compute": {"parameters": 1200, "device": "cpu"}, "statistics": {"dev_accuracy": 0.5}}),
        json.dumps(MACHINE | {"compute": {"parameters": -3, "device": ""}, "statistics": {"Bad Name": 1.0}}),
        json.dumps(MACHINE | {"compute": "garbage", "statistics": ["dev_accuracy", 1.0]}),
        json.dumps(["not", "an", "object"]),
        "{not json",
    ]
    runner.evaluate("lookup-tables", ModelSpec(name="copy"), list(range(len(texts))))
    for seed, text in enumerate(texts):
        runner.store._db.execute("UPDATE runs SET environment = ? WHERE seed = ?", (text, seed))
    runner.store._db.commit()
    (board,) = boards(runner.store, aggregate(runner.store))
    compute = board.compute["copy"]
    assert compute.seed_statistics == {seed: run_statistics(text) for seed, text in enumerate(texts)}
    assert compute.seed_statistics[0] == {"dev_accuracy": 0.5} and compute.seed_statistics[1] == {}
    reported = [run_compute(text) for text in texts]
    assert reported[0] == {"parameters": 1200, "device": "cpu"} and not any(reported[1:])
    assert (compute.parameters, compute.device) == (1200, "cpu")
