"""The pieces suites share: here, the one reader of the machine-tasks format, which the lookup-table
and symbol-rewriting suites build their published splits from."""

from __future__ import annotations

import pytest

from structbench.errors import UserError
from structbench.suites.common import MachineTasksRow, parse_machine_tasks


def test_machine_tasks_rows_keep_their_line_numbers_across_blank_lines() -> None:
    text = "000 t1 .\t000 001\t0 1\n\n  \n011 t2 t1 .\t011 100 010\t0 1 2\n"
    assert parse_machine_tasks(text, "lookup_tables/sample1/train.tsv") == [
        MachineTasksRow(0, ["000", "t1", "."], ["000", "001"], [0, 1]),
        MachineTasksRow(3, ["011", "t2", "t1", "."], ["011", "100", "010"], [0, 1, 2]),
    ]


@pytest.mark.parametrize(
    ("line", "got"),
    [
        ("000 t1 .\t000 001", "'000 t1 .\\t000 001'"),  # two columns
        ("000 t1 .\t000 001\t0 x", "'000 t1 .\\t000 001\\t0 x'"),  # an attention that is no number
        ("\t000 001\t0 1", "'\\t000 001\\t0 1'"),  # no input
    ],
)
def test_a_malformed_machine_tasks_line_names_the_file_and_its_line(line: str, got: str) -> None:
    text = f"000 t1 .\t000 001\t0 1\n{line}\n"
    with pytest.raises(UserError) as caught:
        parse_machine_tasks(text, "symbol_rewriting/grammar_std.train.small.tsv")
    assert str(caught.value) == (
        "symbol_rewriting/grammar_std.train.small.tsv line 2: expected `input<TAB>output<TAB>attention` with "
        f"whole-number attention, got {got}; the file is not the published one: delete it, or point "
        "STRUCTBENCH_SOURCE_DIR at a good copy."
    )
