"""`structbench reference verify`: bundled runs made again and compared bit for bit."""

from __future__ import annotations

import gzip
import json
from pathlib import Path

import pytest

from structbench.cli import main
from structbench.execution.verify import AVX2_PIN, simd_pin
from structbench.paths import reference_bundle_dir
from structbench.runs.runner import Runner
from structbench.specs import ModelSpec
from structbench.store import Store
from structbench.store.bundle import cell_files, read_runs, write_runs

SUITE = "lookup-tables"


@pytest.fixture
def bundle(runner: Runner, store: Store, tmp_path: Path) -> Path:
    """A bundle of `random` (whose predictions depend on the seed) on seeds 0 and 1."""
    runner.evaluate(SUITE, ModelSpec(name="random"), [0, 1])
    folder = tmp_path / "bundle"
    write_runs(store, store.runs()["id"].tolist(), folder)
    return folder


def test_bundled_runs_made_again_are_identical(bundle: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["reference", "verify", "--bundle", str(bundle)]) == 0
    out = capsys.readouterr().out
    assert "lookup-tables@1.0.0 x random seed 0  identical" in out
    assert out.rstrip().endswith("2 runs: 2 identical")


def test_an_altered_bundled_score_is_found_and_named(bundle: Path, capsys: pytest.CaptureFixture[str]) -> None:
    cell = cell_files(bundle)[0]
    content = json.loads(cell.read_text())
    seed1 = next(run for run in content["runs"] if run["seed"] == 1)
    score = next(s for s in seed1["scores"] if s[:4] == ["heldout_inputs", "sequence_accuracy", "", ""])
    value, n = score[4], score[5]
    score[4] = value + 0.025
    cell.write_text(json.dumps(content))
    assert main(["reference", "verify", "--bundle", str(bundle), "--seeds", "1"]) == 1
    out = capsys.readouterr().out
    assert (
        f"differs    heldout_inputs sequence_accuracy: bundled {value + 0.025!r} over {n}, made here {value!r}" in out
    )
    assert out.rstrip().endswith("1 run: 1 differs")


def test_an_altered_prediction_is_found_where_the_scores_agree(
    bundle: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = next((bundle / "predictions").rglob("seed0.json.gz"))
    blocks = json.loads(gzip.decompress(path.read_bytes()))
    split, ids, predictions, _ = blocks[0]
    predictions[0] = ["an", "altered", "prediction"]  # `random` never predicts words outside the targets' vocabulary
    path.write_bytes(gzip.compress(json.dumps(blocks).encode(), mtime=0))
    assert main(["reference", "verify", "--bundle", str(bundle), "--seeds", "0"]) == 1
    out = capsys.readouterr().out
    assert f"{split} example {ids[0]}: bundled" in out


def test_a_filter_matching_no_bundled_run_is_refused(bundle: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["reference", "verify", "--bundle", str(bundle), "--model", "ngram"]) == 2
    assert "no bundled run in" in capsys.readouterr().err


def test_runs_recorded_at_avx2_are_verified_at_avx2(bundle: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    runs = list(read_runs(bundle))
    at_avx2 = [run.__class__({**run.row, "environment": '{"simd_torch": "AVX2"}'}, [], []) for run in runs]
    at_avx512 = [run.__class__({**run.row, "environment": '{"simd_torch": "AVX512"}'}, [], []) for run in runs]
    monkeypatch.delenv("ATEN_CPU_CAPABILITY", raising=False)
    assert simd_pin(at_avx2) == AVX2_PIN
    assert simd_pin(at_avx512) == {}
    assert simd_pin(at_avx2 + at_avx512) == {}
    monkeypatch.setenv("ATEN_CPU_CAPABILITY", "default")  # the user chose a level: kept
    assert simd_pin(at_avx2) == {}


@pytest.mark.long_running
def test_a_sample_of_the_installed_bundle_repeats_bit_for_bit(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """CI's check of the bundle that ships: two of its fastest runs, a count-based and a trained one."""
    monkeypatch.delenv("STRUCTBENCH_REFERENCE")
    assert cell_files(reference_bundle_dir()), "the installed reference bundle holds no runs"
    status = main(
        [
            "reference",
            "verify",
            "--suite",
            "agreement-attractors,lookup-tables",
            "--model",
            "ngram,seq2seq-gru-attn",
            "--seeds",
            "0",
        ]
    )
    out = capsys.readouterr().out
    assert status == 0, out
    assert out.rstrip().endswith("2 runs: 2 identical")


def test_a_bundled_command_model_is_never_run(bundle: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """A bundle never names a command to run: a `command` model's run is refused, even when allowed by name."""
    marker = tmp_path / "MARKER"
    cell = cell_files(bundle)[0]
    content = json.loads(cell.read_text())
    content["model"] = "innocent-looking"
    content["model_spec"] = {"name": "command", "params": {"command": f"sh -c 'touch {marker}'"}}
    cell.with_name(cell.name.replace("random-", "command-")).write_text(json.dumps(content))
    cell.unlink()
    argv = ["reference", "verify", "--bundle", str(bundle), "--sample", "1", "--allow-model-code", "command"]
    assert main(argv) == 1
    captured = capsys.readouterr()
    assert not marker.exists()
    assert (
        "x innocent-looking seed " in captured.err and "refused: a command model runs the command line" in captured.err
    )
    assert captured.out.rstrip().endswith("1 run: 1 refused")


def test_a_models_own_code_runs_only_when_the_user_names_it(
    runner: Runner, store: Store, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A `module:Class` model's code is the bundle's: made again only with --allow-model-code, and
    what will run is listed before it runs."""
    model = "tests.support.helpers:CountingCopy"
    runner.evaluate(SUITE, ModelSpec(name=model), [0])
    folder = tmp_path / "own"
    write_runs(store, store.runs()["id"].tolist(), folder)
    assert main(["reference", "verify", "--bundle", str(folder)]) == 1
    captured = capsys.readouterr()
    assert (
        f"refused: {model} is code of the bundle's, not a model an installed package registers; pass " in captured.err
    )
    assert captured.out.rstrip().endswith("1 run: 1 refused")
    assert main(["reference", "verify", "--bundle", str(folder), "--allow-model-code", model]) == 0
    err = capsys.readouterr().err
    listed, made = err.index(f"seed 0: runs model {model!r}"), err.index("seed 0: identical")
    assert listed < made  # shown before it ran
