"""MiniSCAN: the interpreter reproduces the published items; precision and recall as defined."""

from __future__ import annotations

import pytest

from structbench.runs.runner import Runner
from structbench.specs import ModelSpec
from structbench.suites.miniscan import interpret, precision_recall
from tests.conftest import SHARED_DATA


def test_the_interpreter_reproduces_all_24_items() -> None:
    pairs = [
        line.split("\t")
        for name in ("train", "test")
        for line in (SHARED_DATA / "miniscan" / f"{name}.tsv").read_text().splitlines()
        if line.strip()
    ]
    assert len(pairs) == 24
    assert all(interpret(words.split()) == colours.split() for words, colours in pairs)
    with pytest.raises(ValueError):
        interpret(["blicket"])


def test_bag_of_tokens_precision_and_recall() -> None:
    assert precision_recall(["RED", "RED"], ["RED", "BLUE", "RED", "GREEN"]) == (1.0, 0.5)
    assert precision_recall(["RED", "YELLOW"], ["RED"]) == (0.5, 1.0)
    assert precision_recall([], ["RED"]) == (0.0, 0.0)


def test_oracle_and_copy(runner: Runner) -> None:
    oracle = runner.evaluate("structbench.suites.miniscan:MiniScan", ModelSpec(name="oracle"), [0])
    assert {m: oracle.scores["test"][m].mean for m in ("sequence_accuracy", "token_precision", "token_recall")} == {
        "sequence_accuracy": 1.0,
        "token_precision": 1.0,
        "token_recall": 1.0,
    }
    copy = runner.evaluate("structbench.suites.miniscan:MiniScan", ModelSpec(name="copy"), [0])
    assert copy.scores["test"]["token_precision"].mean == 0.0
