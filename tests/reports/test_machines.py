"""A leaderboard row says the CPU threads its runs computed on, and notes where its seeds come from
machines that differ, so that a reader can tell a number of the machine from a number of the code."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from structbench.reports.boards import aggregate, boards, machines
from structbench.reports.render import write_report
from structbench.runs.runner import Runner
from structbench.specs import ModelSpec
from tests.reports.test_report import row_of, suite_page

MACHINE: dict[str, Any] = {
    "cpu": "Intel(R) Xeon(R) Platinum 8370C CPU @ 2.80GHz",
    "simd_numpy": "AVX512_ICL",
    "simd_torch": "AVX512",
    "threads": 1,
    "python": "3.11.9",
    "numpy": "2.3.5",
    "compute": {"device": "cpu"},
}


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


def test_the_note_counts_the_machines_and_names_the_cpu_last() -> None:
    other = MACHINE | {"cpu": "AMD EPYC 7763", "simd_numpy": "X86_V3", "threads": 2}
    third = MACHINE | {"python": "3.12.1"}
    found = machines([(0, MACHINE), (1, other), (2, third), (3, other)])
    assert found.count == 3
    assert found.note == "seeds from 3 machines: simd_numpy AVX512_ICL / X86_V3, threads 1 / 2 and 2 more"
    assert list(found.values) == ["simd_numpy", "threads", "python", "cpu"]
    assert machines([]).note == "" and machines([(0, MACHINE)]).details == ""
