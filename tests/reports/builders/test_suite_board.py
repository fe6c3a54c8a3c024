"""A board's values that read nothing: the note on machines that differ, and where a board stands among the suites."""

from __future__ import annotations

from structbench import registry
from structbench.reports.builders.suite_board import above_floor, board_order, machines
from structbench.reports.views.pages import families
from structbench.reports.writers.markdown import leaderboard_markdown
from structbench.specs import natural_key
from tests.reports.support import MACHINE, interval_stats, stats, summary


def test_the_note_counts_the_machines_and_names_the_cpu_last() -> None:
    other = MACHINE | {"cpu": "AMD EPYC 7763", "simd_numpy": "X86_V3", "threads": 2}
    third = MACHINE | {"python": "3.12.1"}
    found = machines([(0, MACHINE), (1, other), (2, third), (3, other)])
    assert found.count == 3
    assert found.note == "seeds from 3 machines: simd_numpy AVX512_ICL / X86_V3, threads 1 / 2 and 2 more"
    assert list(found.values) == ["simd_numpy", "threads", "python", "cpu"]
    assert machines([]).note == "" and machines([(0, MACHINE)]).details == ""


FEWSHOT = [f"scan-fewshot-{k}" for k in (1, 2, 4, 8, 16, 32, 64, 128, 256, 512, 1024)]


def test_suite_ids_sort_with_their_numbers_by_value() -> None:
    assert sorted(reversed(FEWSHOT), key=natural_key) == FEWSHOT
    assert sorted(["scan-filler-0", "scan-fewshot-16", "scan-fewshot-2"], key=natural_key) == [
        "scan-fewshot-2",
        "scan-fewshot-16",
        "scan-filler-0",
    ]
    names = registry.suite_names()
    assert [name for name in names if name.startswith("scan-fewshot-")] == FEWSHOT
    assert [name for name in names if name.startswith("logic-bowman-le")] == [
        f"logic-bowman-le{n}" for n in (3, 6, 9, 12)
    ]


def test_the_overview_columns_suite_lists_and_markdown_list_suites_in_natural_order() -> None:
    shuffled = [
        summary(name, {"lstm": 0.5}).board for name in ["scan-fewshot-1024", "scan-fewshot-128", "scan-fewshot-2"]
    ]
    ordered = sorted(shuffled, key=board_order)
    assert [board.spec.id for board in ordered] == ["scan-fewshot-2", "scan-fewshot-128", "scan-fewshot-1024"]
    # the overview's columns and every page's suite index group these boards; the Markdown takes them in order
    assert [board.spec.id for _, members in families(tuple(ordered)) for board in members] == [
        "scan-fewshot-2",
        "scan-fewshot-128",
        "scan-fewshot-1024",
    ]
    markdown = leaderboard_markdown(ordered, [])
    assert (
        markdown.index("## scan-fewshot-2@")
        < markdown.index("## scan-fewshot-128@")
        < markdown.index("## scan-fewshot-1024@")
    )


def test_a_cell_is_above_the_floor_only_where_its_interval_clears_the_floors() -> None:
    floor = interval_stats(0.0, 0.0, 0.3)
    assert not above_floor(interval_stats(0.3, 0.0, 1.0), floor, higher_is_better=True)
    assert not above_floor(interval_stats(0.5, 0.3, 0.7), floor, higher_is_better=True)  # touching is not clear
    assert above_floor(interval_stats(0.5, 0.31, 0.7), floor, higher_is_better=True)
    # lower is better: the interval must lie wholly below the floor's
    assert above_floor(interval_stats(0.1, 0.05, 0.15), interval_stats(0.5, 0.4, 0.6), higher_is_better=False)
    assert not above_floor(interval_stats(0.3, 0.1, 0.45), interval_stats(0.5, 0.4, 0.6), higher_is_better=False)
    # no floor run: above 0 where higher is better, and a cell without an interval is its mean
    assert above_floor(stats(0.2), None, higher_is_better=True) and not above_floor(stats(0.0), None, True)
    assert not above_floor(interval_stats(0.2, 0.0, 0.4), None, higher_is_better=True)
