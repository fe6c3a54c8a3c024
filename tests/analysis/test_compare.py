"""`structbench compare`: a paired bootstrap over seeds and examples, and its refusals."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

import numpy as np
import pytest

from structbench.analysis.compare import paired_bootstrap
from structbench.cli import main
from structbench.runs.runner import Runner
from structbench.specs import ModelSpec


def naive_bootstrap(differences: list[np.ndarray], draws: list[int], resamples: int, seed: int) -> np.ndarray:
    """The two-level bootstrap written out: seeds with replacement, then each draw's example
    indices with replacement, shared by the seeds on that draw."""
    rng = np.random.default_rng(seed)
    means = np.empty(resamples)
    for r in range(resamples):
        indices = {
            d: rng.integers(0, len(differences[draws.index(d)]), len(differences[draws.index(d)])) for d in set(draws)
        }
        chosen = rng.integers(0, len(differences), len(differences))
        means[r] = np.mean([differences[i][indices[draws[i]]].mean() for i in chosen])
    return means


def test_the_pattern_bootstrap_agrees_with_the_bootstrap_written_out() -> None:
    rng = np.random.default_rng(1)
    a = rng.random((4, 300)) < np.array([[0.7], [0.6], [0.75], [0.65]])
    b = rng.random((4, 300)) < 0.55
    differences = [row.astype(np.int8) for row in a.astype(np.int8) - b.astype(np.int8)]
    draws = [0, 1, 0, 1]
    low, high, p = paired_bootstrap(differences, draws, resamples=20_000, seed=3)
    expected = np.quantile(naive_bootstrap(differences, draws, 4_000, seed=4), [0.025, 0.975])
    assert (low, high) == pytest.approx(tuple(expected), abs=0.01)
    assert p < 0.05  # a difference of 0.14 over four seeds


def test_seeds_that_share_a_test_set_do_not_count_it_twice() -> None:
    """Three seeds of a deterministic model pair on one draw: as wide as one seed, not 1/sqrt(3) of it."""
    rng = np.random.default_rng(2)
    one = (rng.random(500) < 0.6).astype(np.int8) - (rng.random(500) < 0.5).astype(np.int8)
    single = paired_bootstrap([one], [0], seed=5)
    repeated = paired_bootstrap([one, one, one], [0, 0, 0], seed=5)
    assert repeated[1] - repeated[0] == pytest.approx(single[1] - single[0], rel=0.05)


def test_compare_says_which_model_is_better_and_when_it_cannot_tell(
    runner: Runner, store_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    for model in ("oracle", "copy", "random"):
        runner.evaluate("miniscan", ModelSpec(name=model), [0, 1, 2])
    runner.store.close()
    args = ["compare", "--suite", "miniscan", "--store", str(store_path), "--json"]
    assert main([*args, "--models", "oracle,copy"]) == 0
    (result,) = json.loads(capsys.readouterr().out)
    assert (result["split"], result["seeds"], result["n_examples"]) == ("test", [0, 1, 2], 10)
    assert (result["mean_a"], result["mean_b"], result["difference"]) == (1.0, 0.0, 1.0)
    assert result["ci_low"] == 1.0 and result["p_value"] == pytest.approx(1 / 10_001)
    assert result["verdict"] == "oracle better"
    assert main([*args, "--models", "copy,random"]) == 0  # both get nothing right
    (result,) = json.loads(capsys.readouterr().out)
    assert (result["difference"], result["p_value"], result["verdict"]) == (0.0, 1.0, "not distinguishable")


@pytest.mark.parametrize(
    ("models", "suite", "message"),
    [
        ("oracle,nobody", "miniscan", "no runs of model 'nobody' on miniscan@1.0.0"),
        ("oracle", "miniscan", "must name two models"),
        ("oracle,oracle", "miniscan", "names 'oracle' twice"),
        ("oracle,random", "pos-synthetic", "is not a right/wrong verdict per example"),
    ],
)
def test_compare_refuses_in_one_sentence(
    runner: Runner, store_path: Path, capsys: pytest.CaptureFixture[str], models: str, suite: str, message: str
) -> None:
    for model in ("oracle", "copy", "random"):
        runner.evaluate(suite, ModelSpec(name=model), [0])
    runner.store.close()
    assert main(["compare", "--suite", suite, "--models", models, "--store", str(store_path)]) == 2
    (line,) = capsys.readouterr().err.strip().splitlines()
    assert message in line


def test_a_comparison_reads_the_split_it_compares_and_no_other(
    runner: Runner, store_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """The report compares close models on each ranked split, from their stored predictions: a split
    not compared is neither read nor scored again (a damaged block of one does not stop the others)."""
    for model in ("oracle", "copy"):
        runner.evaluate("lookup-tables", ModelSpec(name=model), [0, 1])
    runner.store.close()
    args = ["compare", "--suite", "lookup-tables", "--models", "oracle,copy", "--store", str(store_path), "--json"]
    assert main([*args, "--split", "longer_3"]) == 0
    before = json.loads(capsys.readouterr().out)
    with sqlite3.connect(store_path) as db:
        db.execute("UPDATE predictions SET block = X'00' WHERE split = 'heldout_tables'")
    assert main([*args, "--split", "longer_3"]) == 0
    assert json.loads(capsys.readouterr().out) == before
    assert main([*args, "--split", "heldout_tables"]) == 2
    assert "the stored predictions of run" in capsys.readouterr().err
