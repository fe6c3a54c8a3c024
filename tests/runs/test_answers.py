"""Answers that cannot be scored fail the run with one sentence; bad settings stop before anything runs."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import pytest

from structbench.cli import main
from structbench.runs.runner import Runner
from structbench.specs import ModelSpec
from structbench.store import Store
from tests.support.helpers import one_sentence_error


class Answers:
    """Answers every protocol with `answer(inputs)`, set per test through the `kind` setting."""

    protocols = ("transduction", "classification", "minimal-pair", "forced-choice")

    def __init__(self, kind: str = "string") -> None:
        self.kind = kind

    def transduce(self, inputs: list[list[str]]) -> Any:
        if self.kind == "string":
            return [" ".join(tokens) for tokens in inputs]  # one string, not a list of tokens
        if self.kind == "short":
            return [list(tokens) for tokens in inputs[1:]]
        if self.kind == "exit":
            raise SystemExit(3)
        if self.kind == "ints":
            return [list(range(len(tokens))) for tokens in inputs]
        if self.kind == "numpy":
            return [list(np.array(tokens)) for tokens in inputs]  # numpy.str_ tokens: subclasses of str
        return [list(tokens) for tokens in inputs]

    def classify(self, inputs: list[list[str]], labels: list[str]) -> list[str]:
        return ["neither" for _ in inputs]

    def logprob(self, sequences: list[list[str]]) -> list[float]:
        value = {"nan": float("nan"), "inf": float("inf"), "text": "-1.5"}[self.kind]
        return [value for _ in sequences]  # type: ignore[misc]

    def loglikelihood(self, requests: list[tuple[list[str], list[str]]]) -> list[float]:
        return self.logprob([continuation for _, continuation in requests])


CASES = [
    ("lookup-tables", "string", "transduce answered example", "not a list of string tokens"),
    ("lookup-tables", "ints", "transduce answered example", "not a list of string tokens"),
    ("lookup-tables", "short", "transduce returned", "answers for"),
    ("lookup-tables", "exit", "SystemExit", "sys.exit(3)"),
    ("agreement-attractors-number", "string", "classify answered example", "which is not one of the labels"),
    ("agreement-attractors", "nan", "loglikelihood answered a candidate of example", "nan"),
    ("agreement-attractors", "inf", "loglikelihood answered a candidate of example", "inf"),
    ("sentence-completion", "text", "logprob answered a candidate of example", "'-1.5'"),
]


@pytest.mark.parametrize(("suite", "kind", "start", "detail"), CASES, ids=[f"{c[0]}-{c[1]}" for c in CASES])
def test_an_answer_that_cannot_be_scored_fails_the_run_with_one_sentence(
    runner: Runner, suite: str, kind: str, start: str, detail: str
) -> None:
    record = runner.evaluate(suite, ModelSpec(name="tests.runs.test_answers:Answers", params={"kind": kind}), [0])
    assert record.status == {"0": "failed"} and not any(record.scores.values())
    error = record.errors["0"]
    assert start in error and detail in error and "\n" not in error
    (row,) = runner.store.runs().itertuples()
    assert row.status == "failed"  # never left running, never scored


def test_tokens_that_subclass_str_are_scored_and_stored_as_plain_strings(runner: Runner) -> None:
    record = runner.evaluate(
        "lookup-tables", ModelSpec(name="tests.runs.test_answers:Answers", params={"kind": "numpy"}), [0]
    )
    assert record.status == {"0": "done"}
    (run_id,) = runner.store.runs()["id"]
    predictions = runner.store.predictions(int(run_id))["prediction"]
    assert len(predictions) > 100 and all(type(token) is str for tokens in predictions for token in tokens)


@pytest.mark.parametrize(
    ("suite", "model", "setting", "message"),
    [
        ("agreement-attractors", "ngram", "order=2.5", "order=2.5: Input should be a valid integer"),
        ("pos-synthetic", "hmm", "iterations=-5", "iterations=-5: Input should be greater than 0"),
        ("scan-simple", "seq2seq-gru-attn", "epochs=-3", "--set epochs=-3: Input should be greater than 0"),
        ("miniscan", "seq2seq", "dropout=1.5", "--set dropout=1.5: Input should be less than or equal to 1"),
    ],
)
def test_a_setting_out_of_range_stops_before_any_run(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], suite: str, model: str, setting: str, message: str
) -> None:
    store = tmp_path / "results.sqlite"
    assert main(["run", "--suite", suite, "--model", model, "--set", setting, "--store", str(store)]) == 2
    line = one_sentence_error(capsys.readouterr().err)  # after the progress lines a command prints into a log
    assert message in line
    if store.exists():
        with Store(store) as opened:
            assert opened.runs().empty
