"""The command adapter: a model in another process, and every way it can go wrong."""

from __future__ import annotations

import inspect
import sys
from pathlib import Path

import pytest

from structbench.adapters.command import CommandModel, CommandModelError
from structbench.errors import UserError
from structbench.runs.arguments import parse_settings
from structbench.runs.request import build_model
from structbench.runs.runner import Runner
from structbench.runs.settings import check_settings
from structbench.specs import ModelSpec

MODEL = Path(__file__).resolve().parents[2] / "support" / "fixtures" / "json_lines_model.py"


def command(mode: str, **settings: float) -> ModelSpec:
    return ModelSpec(name="command", params={"command": f"{sys.executable} {MODEL} {mode}", **settings})


def test_command_model_is_evaluated_like_a_python_model(runner: Runner) -> None:
    record = runner.evaluate("lookup-tables", command("copy"), [0])
    assert record.status == {"0": "done"}
    # copying the input reproduces the first token only: never a whole target
    assert record.scores["heldout_tables"]["sequence_accuracy"].mean == 0.0
    assert 0.0 < record.scores["heldout_tables"]["token_accuracy"].mean < 0.5


def test_crash_is_a_failed_run_with_the_stderr_tail(runner: Runner) -> None:
    record = runner.evaluate("lookup-tables", command("crash-on-fit"), [0, 1])
    assert record.status == {"0": "failed", "1": "failed"}
    runs = runner.store.runs()
    assert set(runs["status"]) == {"failed"}
    assert all("exited with status 3" in e and "out of memory in layer 3" in e for e in runs["error"])


def test_a_hanging_model_times_out(runner: Runner) -> None:
    record = runner.evaluate("lookup-tables", command("hang", timeout=1), [0])
    assert record.status == {"0": "failed"}
    assert "no answer within 1 s" in record.errors["0"]


def test_malformed_answer_fails_the_run(runner: Runner) -> None:
    record = runner.evaluate("lookup-tables", command("garbage"), [0])
    assert record.status == {"0": "failed"}
    assert "not JSON" in record.errors["0"]


@pytest.mark.parametrize(
    ("mode", "problem"),
    [
        ("score-dict", 'its loglikelihood output 0 is {"a": 1}, not a finite number'),
        ("score-huge", "its loglikelihood output 0 is 10000000000000000000... (401 characters), not a finite number"),
        ("score-digits", "its answer is JSON Python cannot read (Exceeds the limit (4300 digits)"),
    ],
)
def test_a_log_probability_that_is_no_float_fails_the_run_in_one_sentence(
    runner: Runner, mode: str, problem: str
) -> None:
    record = runner.evaluate("agreement-gulordava", command(mode), [0])
    assert record.status == {"0": "failed"}
    assert record.errors["0"].startswith(f"CommandModelError: model command failed: {problem}")


def test_protocol_not_declared_in_hello_is_not_applicable(runner: Runner) -> None:
    record = runner.evaluate("lookup-tables", command("classify-only"), [0])
    assert record.status == {"0": "n/a"}


def test_continuations_are_asked_of_a_command_that_declares_them(runner: Runner) -> None:
    record = runner.evaluate("agreement-gulordava", command("verb-length"), [0])
    # the shorter verb form wins: right where the correct form is the shorter one (is/are, has/have)
    assert record.status == {"0": "done"} and 0.0 < record.scores["test"]["accuracy"].mean < 1.0
    undeclared = runner.evaluate("agreement-gulordava", command("verb-length-undeclared"), [0])
    assert undeclared.status == {"0": "n/a"}
    assert '"continuations": true' in undeclared.errors["0"]


def test_fit_may_take_two_hours_by_default_and_fit_timeout_is_a_setting() -> None:
    parameters = inspect.signature(CommandModel).parameters
    assert (parameters["fit_timeout"].default, parameters["timeout"].default) == (7200, 600)
    settings = parse_settings(["fit_timeout=2", f"command={sys.executable} {MODEL} copy"])
    check_settings(ModelSpec(name="command", params=settings))
    model = build_model(ModelSpec(name="command", params=settings))
    try:
        assert (model.fit_timeout, model.timeout) == (2.0, 600.0)
    finally:
        model.close()
    with pytest.raises(UserError, match="fit_timeout"):
        check_settings(ModelSpec(name="command", params={**settings, "fit_timeout": 0}))


def test_a_model_that_never_says_hello_names_timeout() -> None:
    with pytest.raises(CommandModelError, match=r"no hello within 0.5 s \(raise it with --set timeout=SECONDS\)"):
        CommandModel(f"{sys.executable} -c 'import time; time.sleep(60)'", timeout=0.5)


def test_a_command_that_cannot_start_is_a_user_error() -> None:
    with pytest.raises(UserError, match=r"cannot start the model command '/no/such/model'.*check the path"):
        CommandModel("/no/such/model")
