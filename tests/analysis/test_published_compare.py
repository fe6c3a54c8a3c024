"""`structbench compare` against a published run: paired by item without running the published model,
McNemar's exact test with one seed a side (a constructed case with a known p), a bootstrap with each
side's seeds resampled apart otherwise, the test named in the output."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from structbench.analysis.published_compare import APART, MCNEMAR, bootstrap_apart, mcnemar
from structbench.cli import main
from structbench.runs.runner import Runner
from structbench.specs import ModelSpec


def test_mcnemar_is_the_exact_binomial_test_on_the_discordant_items() -> None:
    # 8 items right for A alone, 2 for B alone: p = 2 P(X <= 2), X ~ Binomial(10, 1/2) = 2 * 56 / 1024
    assert mcnemar(8, 2) == pytest.approx(112 / 1024)
    assert mcnemar(2, 8) == pytest.approx(112 / 1024)
    assert mcnemar(3, 0) == pytest.approx(0.25)
    assert mcnemar(0, 0) == 1.0


def test_the_bootstrap_apart_finds_a_clear_difference_and_none_where_there_is_none() -> None:
    rng = np.random.default_rng(0)
    strong = rng.random((3, 400)) < 0.8
    weak = rng.random((2, 400)) < 0.5
    low, high, p = bootstrap_apart(strong, weak)
    assert 0 < low < 0.3 < high < 0.4 and p < 0.001
    low, high, p = bootstrap_apart(strong, strong[::-1])
    assert low < 0 < high and p == 1.0


def published_file(tmp_path: Path, wrong: set[int], seeds: tuple[int, ...] = (0,)) -> Path:
    rows = [f"gpt-2,{s},test,test-0{i},{i not in wrong}" for s in seeds for i in range(10)]
    path = tmp_path / "published.csv"
    path.write_text("model,seed,split,item,correct\n" + "\n".join(rows) + "\n", encoding="utf-8")
    return path


def imported(store_path: Path, path: Path) -> None:
    assert (
        main(
            [
                "import",
                "--suite",
                "miniscan",
                "--file",
                str(path),
                "--paper",
                "Someone 2020",
                "--store",
                str(store_path),
            ]
        )
        == 0
    )


def test_compare_pairs_a_run_with_a_published_one_by_item_and_names_mcnemar(
    runner: Runner, store_path: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    runner.evaluate("miniscan", ModelSpec(name="oracle"), [0])
    runner.store.close()
    imported(store_path, published_file(tmp_path, wrong={1, 4, 7}))
    capsys.readouterr()
    args = ["compare", "--suite", "miniscan", "--models", "oracle,published:gpt-2", "--store", str(store_path)]
    assert main([*args, "--json"]) == 0
    (result,) = json.loads(capsys.readouterr().out)
    assert (result["mean_a"], result["mean_b"], result["n_examples"]) == (1.0, 0.7, 10)
    assert result["discordant"] == [3, 0] and result["p_value"] == pytest.approx(0.25)
    assert result["test"] == MCNEMAR and result["verdict"] == "not distinguishable"
    assert main(args) == 0
    shown = capsys.readouterr().out
    assert "McNemar's exact test" in shown and "paired by item" in shown and "3/0" in shown
    # the published run is nowhere among the store's runs: `runs` lists only the oracle
    assert main(["runs", "--store", str(store_path), "--json"]) == 0
    assert [m["label"] for m in json.loads(capsys.readouterr().out)] == ["oracle"]
    assert main(["runs", "--store", str(store_path)]) == 0  # and lists the published one apart, after them
    listed = capsys.readouterr().out
    assert listed.index("oracle") < listed.index("published runs (imported") < listed.index("published:gpt-2 on")


def test_several_published_seeds_are_resampled_apart(
    runner: Runner, store_path: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    runner.evaluate("miniscan", ModelSpec(name="oracle"), [0])
    runner.store.close()
    imported(store_path, published_file(tmp_path, wrong=set(range(10)), seeds=(3, 5)))
    capsys.readouterr()
    args = [
        "compare",
        "--suite",
        "miniscan",
        "--models",
        "oracle,published:gpt-2",
        "--store",
        str(store_path),
        "--json",
    ]
    assert main(args) == 0
    (result,) = json.loads(capsys.readouterr().out)
    assert result["test"] == APART and result["seeds_b"] == [3, 5] and result["difference"] == 1.0
    assert result["verdict"] == "oracle better"


def test_a_published_label_not_imported_is_one_sentence(
    runner: Runner, store_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    runner.evaluate("miniscan", ModelSpec(name="oracle"), [0])
    runner.store.close()
    args = ["compare", "--suite", "miniscan", "--models", "oracle,published:nobody", "--store", str(store_path)]
    assert main(args) == 2
    err = capsys.readouterr().err
    assert "no published run 'published:nobody' of miniscan@1.0.0" in err and "structbench import" in err


def test_mcnemars_p_decides_the_verdict_not_the_bootstrap_interval() -> None:
    from structbench.analysis.compare import Comparison

    shown = {"suite": "s", "split": "x", "metric": "accuracy", "model_a": "a", "model_b": "b", "seeds": [0]}
    numbers = {"n_examples": 19, "mean_a": 0.0, "mean_b": 0.21, "difference": -0.21, "resamples": 10_000}
    # 0 items right for a alone, 4 for b alone: p = 0.125 although the bootstrap's interval excludes 0
    close = Comparison(**shown, **numbers, ci_low=-0.42, ci_high=-0.05, p_value=mcnemar(0, 4), test=MCNEMAR,
                       discordant=(0, 4))  # fmt: skip
    assert close.verdict == "not distinguishable"
    clear = Comparison(**shown, **numbers, ci_low=-0.42, ci_high=-0.05, p_value=mcnemar(0, 12), test=MCNEMAR,
                       discordant=(0, 12))  # fmt: skip
    assert clear.verdict == "b better"


def test_blimps_published_rows_are_the_corrected_table_3_means() -> None:
    from structbench import registry
    from structbench.analysis.published_compare import reported_rows

    suite = registry.suite("blimp")
    rows = reported_rows(suite, [split.name for split in suite.spec.ranked_splits])
    means = {reference.model: round(100 * mean, 1) for reference, mean in rows}
    assert len(means) == 5 and sorted(means.values()) == [61.2, 69.6, 69.8, 83.0, 88.6]


def test_compare_shows_the_suites_published_numbers_marked_published(
    runner: Runner, store_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    runner.evaluate("miniscan", ModelSpec(name="oracle"), [0])
    runner.evaluate("miniscan", ModelSpec(name="copy"), [0])
    runner.store.close()
    capsys.readouterr()
    assert main(["compare", "--suite", "miniscan", "--models", "oracle,copy", "--store", str(store_path)]) == 0
    shown = capsys.readouterr().out
    assert "paired bootstrap over seeds and examples" in shown  # the comparison itself is as before
    assert "reported, not paired, never ranked" in shown and "  published  " in shown
