"""`structbench run` as scripts use it: the JSON record, the store answering repeats, clear errors."""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from scipy import stats as stats_module

from structbench import __version__, registry
from structbench.cli import main
from structbench.errors import UserError
from structbench.store import Store
from tests.support import helpers
from tests.support.helpers import one_sentence_error
from tests.support.sweep_models import PID_FILE

RECORD_KEYS = {
    "suite",
    "version",
    "suite_hash",
    "model",
    "seeds",
    "status",
    "errors",
    "scores",
    "breakdowns",
    "partial",
    "threads",
    "convergence",
    "under_trained",
}
STATS_KEYS = {"mean", "std", "min", "max", "ci_low", "ci_high", "interval", "n_seeds", "per_seed"}


def run_json(capsys: pytest.CaptureFixture[str], *args: str, code: int = 0) -> dict:  # type: ignore[type-arg]
    assert main(["run", *args, "--json", "--no-progress"]) == code
    return json.loads(capsys.readouterr().out)  # type: ignore[no-any-return]


def test_a_model_that_prints_leaves_the_json_on_stdout(capsys: pytest.CaptureFixture[str], store_path: Path) -> None:
    """In structbench's own process (`--in-process`), what a model prints in fit and prediction goes to
    stderr: stdout parses as the record (issue 34). Supervised, it goes to the worker's log
    (tests/execution/test_supervised.py)."""
    args = ["--suite", "lookup-tables", "--model", "tests.support.helpers:PrintingCopy", "--seeds", "0"]
    assert main(["run", *args, "--store", str(store_path), "--json", "--no-progress", "--in-process"]) == 0
    captured = capsys.readouterr()
    record = json.loads(captured.out)
    assert record["status"] == {"0": "done"}
    assert "HELLO FROM MODEL STDOUT (fit)" in captured.err
    assert "HELLO FROM MODEL STDOUT (transduce)" in captured.err
    assert "HELLO" not in captured.out


@pytest.mark.parametrize("suite_id", ["lookup-tables", "lookup-tables-mt"])
@pytest.mark.parametrize(("model", "expected"), [("oracle", 1.0), ("copy", 0.0)])
def test_oracle_solves_and_copy_fails_every_test_split(
    capsys: pytest.CaptureFixture[str], store_path: Path, suite_id: str, model: str, expected: float
) -> None:
    record = run_json(capsys, "--suite", suite_id, "--model", model, "--seeds", "0,1,2", "--store", str(store_path))
    assert set(record) == RECORD_KEYS
    assert (record["suite"], record["version"], record["model"]) == (suite_id, "1.0.0", model)
    assert record["seeds"] == [0, 1, 2] and record["threads"] == 1
    assert record["status"] == {"0": "done", "1": "done", "2": "done"} and record["errors"] == {}
    tests = [s.name for s in registry.suite(suite_id).spec.splits_with_role("test")]
    assert sorted(record["scores"]) == sorted(tests)
    for split in tests:
        stats = record["scores"][split]["sequence_accuracy"]
        assert set(stats) == STATS_KEYS
        assert stats["mean"] == expected and stats["per_seed"] == [expected] * 3
        assert stats["n_seeds"] == 3 and stats["std"] == 0.0
        assert stats["min"] == stats["max"] == expected
        # seeds that agree: the interval is over the split's test items, never of zero width
        size = registry.suite(suite_id).spec.split(split).size
        assert stats["interval"] == f"Wilson over {size} items"
        hits = round(expected * (size or 0))
        wilson = stats_module.binomtest(hits, size or 0).proportion_ci(method="wilson")
        assert (stats["ci_low"], stats["ci_high"]) == pytest.approx((wilson.low, wilson.high), abs=1e-12)


def test_a_repeated_run_is_answered_from_the_store(capsys: pytest.CaptureFixture[str], store_path: Path) -> None:
    args = ["--suite", "lookup-tables", "--model", "tests.support.helpers:CountingCopy", "--seeds", "0,1,2"]
    store = ["--store", str(store_path), "--in-process"]  # counted as built in this process
    helpers.CONSTRUCTED.clear()
    first = run_json(capsys, *args, *store)
    assert len(helpers.CONSTRUCTED) == 3
    with Store(store_path) as opened:
        runs_before = opened.runs()
    assert list(runs_before["status"]) == ["done"] * 3

    assert main(["run", *args, *store, "--json", "--no-progress"]) == 0
    captured = capsys.readouterr()
    assert len(helpers.CONSTRUCTED) == 3, "the model was built again instead of reading the store"
    assert "3 of 3 seeds answered from the store" in captured.err
    assert json.loads(captured.out) == first
    with Store(store_path) as opened:
        runs_after = opened.runs()
    assert runs_after[["id", "seed", "started_at", "finished_at"]].equals(
        runs_before[["id", "seed", "started_at", "finished_at"]]
    )

    # one new seed runs, the two stored ones are read back
    mixed = run_json(capsys, *args[:-1], "1,2,3", *store)
    assert len(helpers.CONSTRUCTED) == 4 and mixed["status"] == {"1": "done", "2": "done", "3": "done"}
    # a different setting is a different model: it runs
    run_json(capsys, *args, *store, "--set", "tag=other")
    assert helpers.CONSTRUCTED[-3:] == ["other"] * 3


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--model", "oracel"], "did you mean oracle"),
        (["--model", "oracle", "--set", "depth=3"], "has no setting 'depth'"),
        (["--model", "oracle", "--seeds", "abc"], "not a comma-separated list of integers"),
        (["--model", "oracle", "--seeds", "1,1"], "each once"),
        (["--model", "oracle", "--seeds", ","], "at least one seed"),
        (
            ["--model", "oracle", "--seeds", "0-99999999999999999999"],
            "asks for more than 10000 seeds",
        ),  # no OverflowError
        (["--model", "oracle", "--seeds", "99999999999999999999"], "must be integers from 0 to 2**63-1"),
        (
            ["--model", "oracle", "--set", "novalue"],
            "--set 'novalue' is not key=value; model 'oracle' takes no settings.",
        ),
        (["--model", "ngram", "--set", "order"], "--set 'order' is not key=value; e.g. --set order=4."),
        (["--model", "seq2seq", "--set", "hidden"], "--set 'hidden' is not key=value; e.g. --set epochs=20."),
        (["--model", "tests.support.helpers:Nope"], "has no 'Nope'"),
        (["--model", "no_such_module_xyz:Model"], "cannot import module 'no_such_module_xyz'"),
        (["--model", "oracle", "--suite", "lookup-tabels"], "did you mean lookup-tables"),
        (["--model", "oracle", "--suite", "lookup-tables@9.9.9"], "lookup-tables@9.9.9 is not installed"),
    ],
)
def test_user_errors_are_one_sentence_and_exit_2(
    capsys: pytest.CaptureFixture[str], store_path: Path, args: list[str], message: str
) -> None:
    suite = [] if "--suite" in args else ["--suite", "lookup-tables"]  # a grid: a bad entry stops it before any run
    code = main(["run", *suite, "--suite", "miniscan", "--store", str(store_path), *args])
    captured = capsys.readouterr()
    err = captured.err.strip()
    assert code == 2
    assert message in err and len(err.splitlines()) == 1 and "Traceback" not in err
    assert err.startswith("structbench: error: ")
    assert captured.out == ""
    if store_path.exists():  # nothing was recorded for a run that never started
        with Store(store_path) as opened:
            assert opened.runs().empty


def test_an_unknown_setting_is_refused_before_any_seed_runs(
    capsys: pytest.CaptureFixture[str], store_path: Path
) -> None:
    helpers.CONSTRUCTED.clear()
    code = main(["run", "--suite", "lookup-tables", "--model", "tests.support.helpers:CountingCopy", "--set", "tga=x",
                 "--store", str(store_path)])  # fmt: skip
    assert code == 2
    assert "has no setting 'tga'; its settings are: tag" in capsys.readouterr().err
    assert helpers.CONSTRUCTED == []


def test_a_failed_seed_exits_1_and_still_prints_the_record(
    capsys: pytest.CaptureFixture[str], store_path: Path
) -> None:
    record = run_json(
        capsys, "--suite", "lookup-tables", "--model", "tests.support.helpers:CrashOnSeed", "--set", "crash_seed=1",
        "--seeds", "0,1", "--store", str(store_path), code=1,
    )  # fmt: skip
    assert record["status"] == {"0": "done", "1": "failed"}
    assert record["errors"] == {"1": "RuntimeError: exploding gradient at seed 1"}
    assert record["scores"]["heldout_tables"]["sequence_accuracy"]["n_seeds"] == 1


def test_ctrl_c_exits_130_and_the_next_run_resumes(
    capsys: pytest.CaptureFixture[str], store_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # the model raises KeyboardInterrupt in this process (--in-process), as Ctrl-C does; a supervised
    # run's Ctrl-C is in tests/execution/test_supervised.py
    args = ["run", "--suite", "lookup-tables", "--model", "tests.support.helpers:InterruptOnSeed", "--set", "interrupt_seed=1",
            "--seeds", "0,1,2", "--store", str(store_path), "--no-progress", "--in-process"]  # fmt: skip
    assert main(args) == 130
    assert "interrupted; finished runs are stored" in capsys.readouterr().err
    with Store(store_path) as opened:
        assert dict(zip(opened.runs()["seed"], opened.runs()["status"], strict=True)) == {0: "done", 1: "interrupted"}
    monkeypatch.setattr(helpers.InterruptOnSeed, "transduce", lambda self, inputs: [list(t) for t in inputs])
    assert main([*args, "--json"]) == 0
    captured = capsys.readouterr()
    assert "1 of 3 seeds answered from the store" in captured.err
    assert json.loads(captured.out)["status"] == {"0": "done", "1": "done", "2": "done"}


def test_the_json_record_carries_each_seeds_convergence_and_the_under_trained_flag(
    capsys: pytest.CaptureFixture[str], store_path: Path
) -> None:
    """A script tells a converged run from an under-trained one by the record alone (issue 46)."""
    model = ["--suite", "lookup-tables", "--model", "tests.support.helpers:TrainedToCriterion", "--in-process"]
    converged = run_json(capsys, *model, "--seeds", "0,1", "--store", str(store_path))
    assert converged["under_trained"] is False
    assert converged["convergence"]["0"] == {
        "criterion": {"statistic": "dev_accuracy", "at_least": 0.9, "at_most": None, "plateau": None},
        "reached": True, "value": 0.95, "change": None, "epochs": 3, "updates": None, "seconds": None,
    }  # fmt: skip
    assert set(converged["convergence"]) == {"0", "1"}
    missed = run_json(capsys, *model, "--set", "miss_seed=1", "--seeds", "0,1", "--store", str(store_path))
    assert missed["under_trained"] is True
    assert {seed: (c["reached"], c["value"]) for seed, c in missed["convergence"].items()} == {
        "0": (True, 0.95), "1": (False, 0.5),
    }  # fmt: skip
    copy = run_json(capsys, "--suite", "lookup-tables", "--model", "copy", "--store", str(store_path))
    assert (copy["convergence"], copy["under_trained"]) == ({}, False)  # no criterion, nothing to report


def _report_texts(site: Path) -> str:
    return "\n".join(path.read_text(errors="replace") for path in site.rglob("*") if path.suffix in TEXT_SUFFIXES)


TEXT_SUFFIXES = {".html", ".md", ".csv", ".json"}


@pytest.mark.parametrize("signal_number", [signal.SIGINT, signal.SIGTERM], ids=["SIGINT", "SIGTERM"])
def test_a_run_stopped_by_a_signal_is_interrupted_in_runs_and_absent_from_the_report(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, signal_number: int
) -> None:
    """Ctrl-C or `kill` (SIGTERM) on `structbench run` while its model trains: the command releases its
    claim before it exits, `runs` says `interrupted` (never `running`) and no page of the report shows
    a row for the run (issue 46)."""
    store, pid_file, site = tmp_path / "r.sqlite", tmp_path / "model.pid", tmp_path / "site"
    assert main(["run", "--suite", "lookup-tables", "--model", "oracle", "--store", str(store), "--no-progress"]) == 0
    command = [sys.executable, "-m", "structbench.cli", "run", "--suite", "lookup-tables", "--model",
               "tests.support.sweep_models:Hostile", "--set", "behaviour=wait-for-kill", "--seeds", "0",
               "--store", str(store), "--no-progress"]  # fmt: skip
    process = subprocess.Popen(
        command,
        cwd=Path(__file__).resolve().parents[2],
        env={**os.environ, PID_FILE: str(pid_file)},
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
        preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL),  # as a terminal's foreground job has it
    )
    try:
        deadline = time.monotonic() + 300
        while not (pid_file.is_file() and pid_file.read_text().strip()) and time.monotonic() < deadline:
            time.sleep(0.1)
        capsys.readouterr()
        assert main(["runs", "--store", str(store), "--model", "hostile*"]) == 0
        assert "0:running" in capsys.readouterr().out  # its owner is at it
        process.send_signal(signal_number)
        _, err = process.communicate(timeout=120)
    finally:
        process.kill()
    assert process.returncode == 130 and "interrupted; finished runs are stored" in err
    assert main(["runs", "--store", str(store), "--model", "hostile*"]) == 0
    assert "0:interrupted" in capsys.readouterr().out
    assert main(["report", "--store", str(store), "--out", str(site), "--no-reference", "--no-progress"]) == 0
    texts = _report_texts(site)
    assert "oracle" in texts and "hostile" not in texts and "running" not in texts


def test_a_bad_value_names_the_set_value_and_a_recipes_names_the_recipe_never_a_path(
    capsys: pytest.CaptureFixture[str], store_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Issue 46: the fix was "fix the --set values or /…/site-packages/…/recipes/seq2seq/default.yaml"."""
    from structbench.baselines.neural import settings
    from structbench.baselines.neural.seq2seq.settings import Seq2SeqSettings

    run = ["run", "--suite", "lookup-tables", "--model", "seq2seq", "--store", str(store_path), "--no-progress"]
    assert main([*run, "--set", "hidden=abc", "--in-process"]) == 2
    err = one_sentence_error(capsys.readouterr().err)
    assert err == (
        "structbench: error: invalid settings for 'seq2seq' (--set hidden='abc': Input should be a valid integer, "
        "unable to parse string as an integer); fix the --set value."
    )
    path, recipe = settings.load_recipe("seq2seq", "default")
    broken = recipe.model_copy(update={"budgets": {"cpu-small": {**recipe.budgets["cpu-small"], "hidden": "wide"}}})
    monkeypatch.setattr(settings, "load_recipe", lambda model, task: (path, broken))
    with pytest.raises(UserError) as caught:
        settings.resolve_settings(Seq2SeqSettings, "seq2seq", "lookup-tables", "cpu-small", {})
    assert str(caught.value) == (
        "invalid settings for 'seq2seq' (seq2seq default recipe, budget cpu-small, key hidden: Input should be a "
        "valid integer, unable to parse string as an integer); reinstall structbench, whose recipe it is."
    )


def test_a_new_store_is_announced_and_its_folder_made_only_when_asked(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    """Issue 46: `--store /nonexistent/dir/results.sqlite` made the folders and an empty store, silently."""
    run = ["run", "--suite", "lookup-tables", "--model", "copy", "--no-progress", "--json"]
    typo = tmp_path / "resluts" / "dir" / "r.sqlite"
    assert main([*run, "--store", str(typo)]) == 2
    assert one_sentence_error(capsys.readouterr().err) == (
        f"structbench: error: the folder of --store {typo} does not exist ({tmp_path / 'resluts'} is missing); give "
        "a path in an existing folder, or add --make-dirs to make it."
    )
    assert not (tmp_path / "resluts").exists()
    assert main([*run, "--store", str(typo), "--make-dirs"]) == 0
    assert f"new results store at {typo}\n" in capsys.readouterr().err and typo.is_file()
    assert main([*run, "--store", str(typo)]) == 0
    assert "new results store" not in capsys.readouterr().err  # once, when it is made
    beside = tmp_path / "r.sqlite"  # in an existing folder: made, and told
    assert main([*run, "--store", str(beside)]) == 0
    assert capsys.readouterr().err.splitlines()[0] == f"new results store at {beside}"


@pytest.mark.parametrize(
    "args",
    [
        ["--suite", "lookup-tables", "--model", ":Oracle"],
        ["--suite", "lookup-tables", "--model", ".trivial:Oracle"],
        ["--suite", ":LookupTables", "--model", "oracle"],
    ],
)
def test_a_malformed_class_path_is_a_user_error(
    capsys: pytest.CaptureFixture[str], store_path: Path, args: list[str]
) -> None:
    assert main(["run", *args, "--store", str(store_path)]) == 2
    assert "structbench: error:" in capsys.readouterr().err


def test_a_seed_too_large_for_the_store_is_a_user_error(capsys: pytest.CaptureFixture[str], store_path: Path) -> None:
    code = main(["run", "--suite", "lookup-tables", "--model", "copy", "--seeds", str(2**64), "--store",
                 str(store_path)])  # fmt: skip
    assert code == 2
    assert "--seeds" in capsys.readouterr().err


def test_console_script_prints_the_record_and_exits_2_on_errors(store_path: Path) -> None:
    beside_python = Path(sys.executable).with_name("structbench")
    script = str(beside_python) if beside_python.exists() else shutil.which("structbench")
    assert script, "the `structbench` console script is not installed"
    base = [script, "run", "--suite", "lookup-tables", "--store", str(store_path)]
    out = subprocess.run([*base, "--model", "oracle", "--json"], capture_output=True, text=True, check=True)
    record = json.loads(out.stdout)
    assert record["scores"]["heldout_tables"]["sequence_accuracy"]["mean"] == 1.0
    failed = subprocess.run([*base, "--model", "oracel"], capture_output=True, text=True, check=False)
    assert failed.returncode == 2
    assert "did you mean oracle" in failed.stderr and "Traceback" not in failed.stderr


def test_suite_and_model_lists_run_the_grid(capsys: pytest.CaptureFixture[str], store_path: Path) -> None:
    """`--suite a,b --model x --model y` runs every model on every suite; --json prints a list of records."""
    argv = ["run", "--suite", "lookup-tables,miniscan", "--model", "copy", "--model", "oracle", "--json"]
    assert main([*argv, "--store", str(store_path)]) == 0
    records = json.loads(capsys.readouterr().out)
    assert [(r["suite"], r["model"]) for r in records] == [
        ("lookup-tables", "copy"), ("lookup-tables", "oracle"), ("miniscan", "copy"), ("miniscan", "oracle"),
    ]  # fmt: skip
    assert all(r["status"] == {"0": "done"} for r in records)
    assert main(["run", "--suite", "miniscan", "--model", "copy", "--json", "--store", str(store_path)]) == 0
    assert json.loads(capsys.readouterr().out)["model"] == "copy"  # one run: one record, as before


def test_version_and_run_help(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exit_code:
        main(["--version"])
    assert exit_code.value.code == 0 and capsys.readouterr().out.strip() == f"structbench {__version__}"
    with pytest.raises(SystemExit):
        main(["run", "--help"])
    usage = " ".join(capsys.readouterr().out.split())
    assert "every model runs on every suite" in usage and "a list of records for several runs" in usage


def test_a_command_models_stderr_tail_is_printed_once(capsys: pytest.CaptureFixture[str], store_path: Path) -> None:
    model = Path(__file__).resolve().parents[1] / "support" / "fixtures" / "json_lines_model.py"
    args = ["--suite", "lookup-tables", "--model", "command", "--set", f"command={sys.executable} {model} crash-on-fit"]
    assert main(["run", *args, "--seeds", "0", "--store", str(store_path), "--no-progress"]) == 1
    captured = capsys.readouterr()
    assert (captured.out + captured.err).count("out of memory in layer 3") == 1
    assert "seed 0 failed: CommandModelError: model command failed: it exited with status 3" in captured.out


@pytest.mark.parametrize(
    ("store", "shown"),
    [("x" * 300, "(File name too long); check the path given"), ("a\nb\rc", "no results store at a\\nb\\rc;")],
)
def test_a_path_too_long_or_holding_a_newline_is_named_on_one_line(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch, store: str, shown: str
) -> None:
    monkeypatch.chdir(tmp_path)
    assert main(["runs", "--store", store]) == 2
    err = capsys.readouterr().err
    assert len(err.splitlines()) == 1 and shown in err and "Traceback" not in err


@pytest.mark.parametrize(
    ("option", "value", "told"),
    [
        ("--timeout", "nan", "'nan' is not a finite number above 0, e.g. 3600"),
        ("--timeout", "1e400", "'1e400' is not a finite number above 0, e.g. 3600"),
        ("--timeout", "0", "'0' is not a finite number above 0, e.g. 3600"),
        ("--max-memory", "inf", "'inf' is not a finite number above 0, e.g. 8000"),
        ("--limit", "0", "'0' is not a whole number at least 1, e.g. 100"),
        ("--limit", "2.5", "'2.5' is not a whole number, e.g. 100"),
    ],
)
def test_a_number_out_of_its_range_is_refused_where_it_is_given(
    option: str, value: str, told: str, store_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """`run --timeout nan` once ran with no time-out at all."""
    with pytest.raises(SystemExit) as refused:
        main(["run", "--suite", "lookup-tables", "--model", "copy", "--store", str(store_path), option, value])
    assert refused.value.code == 2
    assert capsys.readouterr().err.strip().splitlines()[-1] == f"structbench run: error: argument {option}: {told}"
    assert not store_path.exists()


@pytest.mark.parametrize(
    ("suite", "model", "told"),
    [
        ("", "", "--suite '' names no suite; give one, e.g. --suite lookup-tables (`structbench suites` lists them)."),
        (
            "lookup-tables",
            " , ",
            "--model ' , ' names no model; give one, e.g. --model copy (`structbench models` lists",
        ),
    ],
)
def test_a_suite_or_model_pattern_that_names_nothing_is_an_error(
    suite: str, model: str, told: str, store_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """`run --suite '' --model ''` once ended `run: 0 of 0 steps` with exit status 0."""
    assert main(["run", "--suite", suite, "--model", model, "--store", str(store_path)]) == 2
    assert capsys.readouterr().err.strip().startswith(f"structbench: error: {told}")
    assert not store_path.exists()
