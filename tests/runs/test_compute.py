"""Compute on the leaderboard: a model's optional `compute()` is stored with its run and read back,
and no answer of it, however wrong, costs a finished run."""

from __future__ import annotations

import json
import sys
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from structbench.baselines.classical.brown import BrownInducer
from structbench.baselines.classical.hmm import HmmInducer
from structbench.baselines.classical.ngram import KneserNey, Unigram
from structbench.baselines.neural.transducer import NeuralTransducer
from structbench.protocols import COMPUTE_FIELDS, ComputeReporter, checked_compute
from structbench.runs import request
from structbench.runs.runner import Runner
from structbench.specs import Example, ModelSpec, Split
from structbench.store import Store, run_compute
from tests.store.test_store import run_fields, toy_results

SUITE = "lookup-tables"
ANSWERS: dict[str, object] = {
    "good": {"parameters": 1234, "device": "cuda:1"},
    "numpy": {"parameters": np.int64(77), "device": "cpu"},
    "junk": {"parameters": True, "device": "cpu", "flops": 10**12, 3: "x"},
    "wrong-types": {"parameters": "1234", "device": ""},
    "negative": {"parameters": -5, "device": 7},
    "not-a-mapping": [("parameters", 1)],
    "none": None,
}


class Reporting:
    """Copies its input and answers `compute()` as `mode` says: an entry of ANSWERS, or `raises` / `exits`."""

    name = "reporting-copy"
    protocols = ("transduction",)

    def __init__(self, mode: str = "good") -> None:
        self.mode = mode

    def transduce(self, inputs: list[list[str]]) -> list[list[str]]:
        return [list(tokens) for tokens in inputs]

    def compute(self) -> Mapping[str, int | str]:
        if self.mode == "raises":
            raise RuntimeError("no idea how big I am")
        if self.mode == "exits":
            sys.exit(2)
        return ANSWERS[self.mode]  # type: ignore[return-value]


class Silent:
    """Copies its input and has no `compute`."""

    name = "silent-copy"
    protocols = ("transduction",)

    def transduce(self, inputs: list[list[str]]) -> list[list[str]]:
        return [list(tokens) for tokens in inputs]


def reporting(mode: str) -> ModelSpec:
    return ModelSpec(name="tests.runs.test_compute:Reporting", params={"mode": mode})


def only_run(runner: Runner) -> dict[str, Any]:
    runs = runner.store.runs()
    assert len(runs) == 1
    return runner.store.run_record(int(runs["id"].iloc[0]))


def logged(runner: Runner) -> list[str]:
    messages: list[str] = []
    runner.log = messages.append
    return messages


# the protocol's checks


def test_checked_compute_keeps_valid_entries_and_names_each_dropped_one() -> None:
    assert checked_compute({"parameters": 10, "device": " cpu "}) == ({"parameters": 10, "device": "cpu"}, [])
    assert checked_compute({"parameters": np.int32(3)}) == ({"parameters": 3}, [])
    valid, dropped = checked_compute({"parameters": True, "device": "", "flops": 1})
    assert valid == {}
    assert len(dropped) == 3 and any("flops" in d for d in dropped) and any("parameters=True" in d for d in dropped)
    assert checked_compute(["parameters", 3]) == ({}, ["compute() returned a list, not a mapping"])
    assert set(COMPUTE_FIELDS) == {"parameters", "device"}
    assert isinstance(Reporting(), ComputeReporter) and not isinstance(Silent(), ComputeReporter)


# the store


def test_finish_run_merges_compute_into_the_environment_and_run_compute_reads_it(store: Store) -> None:
    environment = json.dumps({"python": "3.11.9", "cpus": 2})
    claim = store.claim_run(run_fields(environment=environment))
    store.finish_run(claim, toy_results(), 1.0, 2.0, {"parameters": 5000, "device": "cuda:0"})
    stored = store.run_record(claim.run_id)
    assert stored["status"] == "done" and stored["fit_seconds"] == 1.0
    assert json.loads(stored["environment"]) == {"python": "3.11.9", "cpus": 2, "compute": {"parameters": 5000, "device": "cuda:0"}}  # fmt: skip
    assert run_compute(stored["environment"]) == {"parameters": 5000, "device": "cuda:0"}


def test_a_reader_drops_invalid_compute_entries_however_they_reached_the_store(store: Store) -> None:
    # the run checks a model's report where it enters; a store written by another program is read with care
    claim = store.claim_run(run_fields())
    junk: dict[str, Any] = {"parameters": "many", "device": "cpu", "flops": 3}
    store.finish_run(claim, toy_results(), 0.0, 0.0, junk)
    stored = store.run_record(claim.run_id)
    assert stored["status"] == "done"
    assert run_compute(stored["environment"]) == {"device": "cpu"}


def test_a_run_without_compute_keeps_its_environment_unchanged(store: Store) -> None:
    for seed, compute in enumerate([None, {}]):
        claim = store.claim_run(run_fields(seed, environment='{"python": "3.12.1"}'))
        store.finish_run(claim, toy_results(), 0.0, 0.0, compute)
        assert store.run_record(claim.run_id)["environment"] == '{"python": "3.12.1"}'


def test_a_malformed_environment_is_kept_beside_the_compute(store: Store) -> None:
    claim = store.claim_run(run_fields(environment="python 3.11"))
    store.finish_run(claim, toy_results(), 0.0, 0.0, {"parameters": 9})
    environment = store.run_record(claim.run_id)["environment"]
    assert json.loads(environment) == {"unparsed": "python 3.11", "compute": {"parameters": 9}}
    assert run_compute(environment) == {"parameters": 9}


@pytest.mark.parametrize(
    "environment",
    [
        "{}",  # an older run: no compute recorded
        '{"python": "3.11.9", "numpy": "1.26.4"}',
        "",
        "not json",
        '{"compute": ',
        "[1, 2]",
        "null",
        '{"compute": "big"}',
        '{"compute": {"parameters": "12", "device": 3, "flops": 1}}',
        "[" * 100_000,
    ],
)
def test_run_compute_is_empty_for_older_and_malformed_rows(environment: str) -> None:
    assert run_compute(environment) == {}


# the runner


def test_a_models_compute_is_stored_with_its_run(runner: Runner) -> None:
    messages = logged(runner)
    record = runner.evaluate(SUITE, reporting("good"), [0])
    assert record.status == {"0": "done"}
    run = only_run(runner)
    assert run_compute(run["environment"]) == {"parameters": 1234, "device": "cuda:1"}
    assert "python" in json.loads(run["environment"])  # merged into the environment, not replacing it
    stored = json.loads(run["model_spec"])  # compute is not part of the model's identity; its code is
    # (and mode=good, the constructor's default, is the default run)
    assert stored == {"name": "tests.runs.test_compute:Reporting", "params": {}, "code": stored["code"]}
    assert run["fit_seconds"] is not None
    assert not [m for m in messages if "compute" in m]


def test_a_numpy_integer_parameter_count_is_stored_as_an_int(runner: Runner) -> None:
    runner.evaluate(SUITE, reporting("numpy"), [0])
    assert run_compute(only_run(runner)["environment"]) == {"parameters": 77, "device": "cpu"}


@pytest.mark.parametrize("mode", ["raises", "exits"])
def test_a_raising_compute_is_logged_and_the_run_is_stored_without_it(runner: Runner, mode: str) -> None:
    messages = logged(runner)
    record = runner.evaluate(SUITE, reporting(mode), [0])
    assert record.status == {"0": "done"} and record.errors == {}
    run = only_run(runner)
    assert run["status"] == "done" and run_compute(run["environment"]) == {}
    assert "compute" not in json.loads(run["environment"])
    assert record.scores["heldout_tables"]["token_accuracy"].n_seeds == 1
    expected = "RuntimeError: no idea how big I am" if mode == "raises" else "SystemExit"
    assert any("compute() raised" in m and expected in m for m in messages), messages


@pytest.mark.parametrize(
    ("mode", "kept", "named"),
    [
        ("junk", {"device": "cpu"}, ["parameters=True", "'flops'", "3"]),
        ("wrong-types", {}, ["parameters='1234'", "device=''"]),
        ("negative", {}, ["parameters=-5", "device=7"]),
        ("not-a-mapping", {}, ["returned a list"]),
        ("none", {}, ["returned a NoneType"]),
    ],
)
def test_junk_from_compute_is_dropped_and_logged_and_the_run_is_stored(
    runner: Runner, mode: str, kept: dict[str, int | str], named: list[str]
) -> None:
    messages = logged(runner)
    record = runner.evaluate(SUITE, reporting(mode), [0])
    assert record.status == {"0": "done"}
    assert run_compute(only_run(runner)["environment"]) == kept
    (message,) = [m for m in messages if "compute() entries left out" in m]
    assert all(name in message for name in named), message


def test_compute_changes_no_score(runner: Runner) -> None:
    with_compute = runner.evaluate(SUITE, reporting("good"), [0])
    raising = runner.evaluate(SUITE, reporting("raises"), [0])
    without = runner.evaluate(SUITE, ModelSpec(name="tests.runs.test_compute:Silent"), [0])
    assert with_compute.scores == raising.scores == without.scores
    runs = runner.store.runs()
    silent = runs[runs["model"] == without.model]["environment"].iloc[0]
    assert run_compute(silent) == {}


def test_the_copy_baseline_reports_zero_parameters_on_the_cpu(runner: Runner) -> None:
    runner.evaluate(SUITE, ModelSpec(name="copy"), [0])
    assert run_compute(only_run(runner)["environment"]) == {"parameters": 0, "device": "cpu"}


# the command adapter

COMMAND_MODEL = """
import json, sys
compute = json.loads(sys.argv[1])
print(json.dumps({"type": "hello", "name": "json-compute", "protocols": ["transduction"]}), flush=True)
for line in sys.stdin:
    request = json.loads(line)
    if request["type"] == "close":
        break
    if request["type"] == "fit":
        print(json.dumps({"type": "ok", "compute": compute}), flush=True)
    else:
        print(json.dumps({"type": "predictions", "outputs": request["inputs"]}), flush=True)
"""


def command_model(tmp_path: Path, compute: object) -> ModelSpec:
    script = tmp_path / "compute_model.py"
    script.write_text(COMMAND_MODEL)
    argument = json.dumps(json.dumps(compute))  # one shell-quoted argument
    return ModelSpec(name="command", params={"command": f"{sys.executable} {script} {argument}"})


def test_a_command_models_fit_reply_carries_its_compute(runner: Runner, tmp_path: Path) -> None:
    record = runner.evaluate(SUITE, command_model(tmp_path, {"parameters": 42, "device": "cuda:0"}), [0])
    assert record.status == {"0": "done"}
    assert run_compute(only_run(runner)["environment"]) == {"parameters": 42, "device": "cuda:0"}


def test_a_command_models_malformed_compute_is_logged_not_failed(runner: Runner, tmp_path: Path) -> None:
    messages = logged(runner)
    record = runner.evaluate(SUITE, command_model(tmp_path, "a lot"), [0])
    assert record.status == {"0": "done"}
    assert run_compute(only_run(runner)["environment"]) == {}
    assert any("compute() raised CommandModelError" in m and '"a lot"' in m for m in messages), messages


# the baselines


def toy_split(sentences: list[list[str]]) -> Split:
    examples = [Example(id=str(i), input=s) for i, s in enumerate(sentences)]
    return Split(suite="toy@0", name="train", role="train", draw=0, examples=examples)


def test_ngram_counts_its_stored_ngram_counts() -> None:
    model = KneserNey(order=2)
    model.fit(toy_split([["a", "b"], ["a"]]), None, seed=0)
    # bigrams (<s> a) (a b) (b </s>) (a </s>); continuation unigrams a, b, </s>
    assert model.compute() == {"parameters": 7, "device": "cpu"}
    unigram = Unigram()
    unigram.fit(toy_split([["a", "b"], ["a"]]), None, seed=0)
    assert unigram.compute() == {"parameters": 3, "device": "cpu"}  # a, b, </s>


def test_hmm_counts_start_transition_and_emission_entries() -> None:
    sentences = [["the", "dog"], ["a", "cat", "runs"]]
    model = HmmInducer(iterations=2)
    model.fit(toy_split(sentences), None, seed=0)
    model.induce(sentences, 3)
    k, v = 3, 5
    assert model.compute() == {"parameters": k + k * (k + 1) + k * v, "device": "cpu"}


def test_brown_counts_one_cluster_id_per_word_type() -> None:
    sentences = [["the", "dog", "runs"], ["a", "dog", "sleeps"], ["the", "cat"]]
    model = BrownInducer()
    model.fit(toy_split(sentences), None, seed=0)
    model.induce(sentences, 2)
    assert model.compute() == {"parameters": 6, "device": "cpu"}


def test_a_neural_run_records_its_trainable_parameters_and_device(
    runner: Runner, monkeypatch: pytest.MonkeyPatch
) -> None:
    built: list[Any] = []
    build = request.build_model

    def keep(spec: ModelSpec) -> Any:
        built.append(build(spec))
        return built[-1]

    monkeypatch.setattr(request, "build_model", keep)
    # the smallest setting tests/baselines/neural/test_seq2seq.py runs through the harness
    params: dict[str, int | float | str | bool | None] = {
        "epochs": 1, "batch_size": 16, "max_length": 12, "hidden": 32, "embedding": 16,
    }  # fmt: skip
    record = runner.evaluate("miniscan", ModelSpec(name="seq2seq", params=params), [0])
    assert record.status == {"0": "done"}
    (model,) = built
    assert isinstance(model, NeuralTransducer) and model.net is not None
    trainable = sum(p.numel() for p in model.net.parameters() if p.requires_grad)
    assert trainable > 0
    assert run_compute(only_run(runner)["environment"]) == {"parameters": trainable, "device": "cpu"}
    # frozen tensors are not counted
    frozen = next(iter(model.net.parameters()))
    frozen.requires_grad_(False)
    assert model.compute()["parameters"] == trainable - frozen.numel()
