"""Seeds are checked once, by `parse_seeds`: `run --seeds` and a grid file's `seeds` take and refuse the
same seeds, in the same words."""

from __future__ import annotations

import pytest

from structbench.errors import UserError
from structbench.runs.arguments import MAX_SEEDS, parse_seeds


def test_a_text_and_a_list_give_the_same_seeds() -> None:
    assert parse_seeds("0-3,7") == parse_seeds([0, 1, 2, 3, 7]) == [0, 1, 2, 3, 7]
    assert parse_seeds(str(2**63 - 1)) == parse_seeds([2**63 - 1]) == [2**63 - 1]


@pytest.mark.parametrize(
    ("text", "seeds", "problem"),
    [
        ("0,0", [0, 0], "must list at least one seed, each once."),
        (",", [], "must list at least one seed, each once."),
        (f"0-{MAX_SEEDS}", list(range(MAX_SEEDS + 1)), f"asks for more than {MAX_SEEDS} seeds; run fewer at a time."),
        (str(2**63), [2**63], "must be integers from 0 to 2**63-1."),
    ],
)
def test_a_text_and_a_list_are_refused_in_the_same_words(text: str, seeds: list[int], problem: str) -> None:
    with pytest.raises(UserError) as as_text:
        parse_seeds(text)
    with pytest.raises(UserError) as as_list:
        parse_seeds(seeds)
    assert str(as_text.value) == f"--seeds {text!r} {problem}"
    assert str(as_list.value) == f"seeds {seeds} {problem}"
