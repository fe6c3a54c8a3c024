"""Every bench in bench/ runs to its end in smoke mode and prints the figures it exists for.

A bench is a script outside the package, run by hand for its figures; nothing imports it, so an
API change used to break one silently (`report_scale.py` and `overhead.py` did). Each test runs
`python bench/X.py --smoke` (tiny sizes, the same code path) as a subprocess, as a maintainer
would, and checks its result lines: the side-by-side columns and, where the bench checks an
invariant (a sweep equals serial runs, chaos loses nothing), that it holds. The benches share one
throw-away STRUCTBENCH_HOME whose built suites are the test session's, so each suite is built once.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest

REPOSITORY = Path(__file__).resolve().parents[2]
BENCH = REPOSITORY / "bench"
NUMBER = r"[\d.,]+"


@pytest.fixture(scope="module")
def bench_home(tmp_path_factory: pytest.TempPathFactory, structbench_environment: Path) -> Path:
    """A STRUCTBENCH_HOME for the benches of this module whose built suites are the test session's: a suite
    the tests built is not built again for a bench, nor one a bench built for the tests."""
    home = tmp_path_factory.mktemp("bench-home")
    (structbench_environment / "suites").mkdir(exist_ok=True)  # a link where xdist shares them
    (home / "suites").symlink_to(structbench_environment / "suites", target_is_directory=True)
    return home


SMOKE_OPTIONS = {"overhead.py": ["--before", str(REPOSITORY / "src")]}
"""Options a bench's smoke run adds: overhead.py times this tree against itself, to exercise `--before`."""


def smoke(script: str, home: Path) -> str:
    """Run `bench/<script> --smoke` (with its `SMOKE_OPTIONS`); its standard output (stderr shown on failure)."""
    environment = {
        **os.environ,
        "STRUCTBENCH_SOURCE_DIR": os.environ["STRUCTBENCH_SOURCE_DIR"],
        "STRUCTBENCH_HOME": str(home),
        "OMP_NUM_THREADS": "1",
    }
    done = subprocess.run(
        [sys.executable, str(BENCH / script), "--smoke", *SMOKE_OPTIONS.get(script, [])],
        cwd=REPOSITORY,
        env=environment,
        capture_output=True,
        text=True,
        timeout=1800,  # catches a hang; threads.py's six fresh processes once took over 600 s on a loaded 2-core machine
        check=False,
    )
    assert done.returncode == 0, f"bench/{script} --smoke exited {done.returncode}:\n{done.stderr[-4000:]}"
    return done.stdout


def row(output: str, label: str) -> list[str]:
    """The cells of the output line that starts with `label` (columns are 2+ spaces apart)."""
    lines = [line for line in output.splitlines() if line.startswith(label)]
    assert lines, f"no line starts with {label!r} in:\n{output}"
    return re.split(r"\s{2,}", lines[0][len(label) :].strip())


def check_overhead(output: str) -> None:
    assert re.search(r"direct ms\s+harness ms\s+ratio\s+overhead us/ex", output)
    assert re.search(rf"^lookup-tables\s+\d+(\s+{NUMBER}){{9}}$", output, re.MULTILINE), output
    assert re.search(r"read us/ex\s+checks us/ex\s+score us/ex\s+pack us/ex\s+sum", output)
    assert re.search(rf"^lookup-tables(\s+{NUMBER}){{5}}$", output, re.MULTILINE), output
    assert re.search(r"harness ms, before\s+harness ms, now\s+before/now", output)
    assert re.search(rf"^lookup-tables(\s+{NUMBER}){{3}}$", output, re.MULTILINE), output


def check_report_scale(output: str) -> None:
    assert row(output, "store runs") == ["30"]
    assert re.search(rf"^report wall s\s+{NUMBER}\s+\({NUMBER} ms/run\)$", output, re.MULTILINE), output
    assert re.search(r"v1 bytes\s+v2 bytes\s+v2 / v1", output)
    v1, v2, ratio = row(output, "(marginal, per seed)")
    assert float(ratio) == pytest.approx(float(v2.replace(",", "")) / float(v1.replace(",", "")), abs=1e-3)


def check_interval_coverage(output: str) -> None:
    assert re.search(r"seeds\s+t \(now\)\s+bootstrap \(before\)", output)
    for seeds in (3, 5, 10):
        assert re.search(rf"^normal\(0\.6, 0\.05\)\s+{seeds}\s+[01]\.\d{{3}}\s+[01]\.\d{{3}}$", output, re.MULTILINE)
    assert re.search(r"items\s+Wilson", output)


def check_sweep_driver(output: str) -> None:
    assert "5 runs per suite through the driver's path" in output
    assert re.search(r"driver runs/s\s+store bytes/run\s+plan read s", output)
    examples, json_bytes, per_second, per_run, reading = row(output, "lookup-tables")
    assert int(examples) > 0 and float(per_second) > 0, output
    assert all(re.fullmatch(NUMBER, cell) for cell in (json_bytes, per_run, reading)), output


def check_sweep_equivalence(output: str) -> None:
    assert "sweep-smoke.yaml: 4 runs (1 suite x model cells)" in output
    assert re.search(r"wall s\s+speed-up\s+load\s+done\s+differing from serial\s+largest diff", output)
    for mode in ("serial", "local"):
        _, _, speedup, _, done, differing, largest, _ = row(output, mode)
        assert (done, differing, largest) == ("4/4", "0", "0"), output
        assert speedup.endswith("x")


def check_chaos(output: str) -> None:
    assert re.search(r"lost\s+duplicated\s+recomputed\s+orphans\s+integrity\s+crashes", output)
    for label in (
        "kill -9 of a local sweep's driver (4 runs)",
        "2 `run` processes, same cells, unbuilt home",
        "2 `run` processes, different cells, unbuilt home",
    ):
        trials, _, lost, duplicated, recomputed, orphans, integrity, crashes, _ = row(output, label)
        assert (trials, lost, duplicated, integrity, crashes) == ("1", "0", "0", "ok", "0"), output
        assert recomputed in ("0", "-") and orphans in ("0", "-"), output
    for behaviour in (
        "segfault",
        "fork",
        "daemon",
    ):  # a hostile model under `run`: its seed 0 ends, nothing outlives it
        assert re.search(rf"^run\s+{behaviour}\s.*\sok$", output, re.MULTILINE), output
    # two exports into one bundle at once lose nothing; a hostile bundle entry is left out and named, no hang
    trials, expected, found, lost, crashes, _ = row(output, "two `reference export` at once (8 runs)")
    assert (trials, expected, found, lost, crashes) == ("1", "8", "8", "0", "0"), output
    for case in ("a tampered field (status weird)", "a FIFO named *.json", "a gzip bomb: 1 GiB of zeros in 1 MB"):
        exit_status, named, traceback, _, _, verdict = row(output, case)
        assert (exit_status, named, traceback, verdict) == ("0", "yes", "no", "ok"), output


def check_concurrent_reports(output: str) -> None:
    assert re.search(r"reports\s+tracebacks\s+failed\s+links checked\s+dangling\s+leftovers", output)
    for label in ("two reports at once into one --out", "a report killed with SIGKILL, then one more"):
        repetitions, reports, tracebacks, failed, links, dangling, leftovers, _ = row(output, label)
        assert (repetitions, reports, tracebacks, failed, dangling, leftovers) == ("1", "2", "0", "0", "0", "0"), output
        assert int(links.replace(",", "")) > 0, output


def check_train_throughput(output: str) -> None:
    assert row(output, "batch size 1 (per example)")[0] == "64"
    assert row(output, "our trainer (batches of 32)")[0] == "256"
    assert row(output, "source-length buckets")[0] == "256"
    assert re.search(rf"^target-length over source-length buckets: {NUMBER}x$", output, re.MULTILINE), output
    assert re.search(rf"^ratio: {NUMBER}x \(goal: at least 10x\)$", output, re.MULTILINE), output
    assert re.search(
        r"^lookup-tables-mt, seq2seq-gru-attn cpu-small on 1 thread, building included: .* status done; "
        r"under-trained: train_accuracy [\d.]+ < 0.99$",
        output,
        re.MULTILINE,
    ), output


def check_time_to_criterion(output: str) -> None:
    header, line = output.strip().splitlines()[:2]
    assert "cpu-small: reached, median to it" in header and "old budget: fit s" in header
    assert re.match(r"miniscan-lstm\s+miniscan x lstm-thrush\s+train_accuracy at_least 1\s+", line), line
    assert re.search(rf"(\d/1, {NUMBER} s \({NUMBER} epochs\)|0/1 \(best [\d., ]+\))\s+{NUMBER}\s+", line), line


def check_threads(output: str) -> None:
    assert re.search(r"1 thread ex/s\s+2 threads ex/s\s+2 / 1\s+predictions 1 = 2\s+1 = 1 across repeats", output)
    speed, deterministic = output.split("torch.use_deterministic_algorithms(True), 1 thread\n")
    assert re.search(r"plain ex/s\s+deterministic ex/s\s+det / plain\s+predictions plain = det", deterministic)
    for model, suite, examples, timed in (("seq2seq-gru-attn", "lookup-tables-mt", "232", "fit"),):
        *columns, one, two, ratio, same, across = row(speed, model)
        assert columns == [suite, examples, timed] and across == "-", output
        assert float(ratio) == pytest.approx(float(two) / float(one), rel=0.01, abs=0.006), output
        assert re.fullmatch(r"(yes 1|no 0)/1", same), output
        found, plain, strict, strict_ratio, strict_same = row(deterministic, model)
        assert (found, plain) == (suite, one), output
        assert float(strict_ratio) == pytest.approx(float(strict) / float(plain), rel=0.01, abs=0.006), output
        assert re.fullmatch(r"(yes 1|no 0)/1", strict_same), output


def check_agreement_at_verb(output: str) -> None:
    # the hf rows: 50 pairs per split; a decision that changes is counted in the last column
    for split in ("attractors-0", "mixed"):
        whole, at_verb, new, changed = row(output.split("hf (random GPT-2")[1], split)
        assert all(0.0 <= float(v) <= 100.0 for v in (whole, at_verb, new)), output
        assert float(changed.rstrip("%")) >= abs(float(whole) - float(at_verb)) - 1e-9, output
    old, continued = (
        float(row(output, f"  {label}")[0]) for label in ("1.0.0 (whole sentences)", "2.0.0 (prefix once, at the verb)")
    )
    assert float(row(output, "  ratio 2.0.0 / 1.0.0:")[0].rstrip("x")) == pytest.approx(continued / old, rel=0.01)


def check_blimp_gpt2(output: str) -> None:
    # the run's wall time, then the strict and lm-eval accuracies (%): lm-eval's counts ties right, so never lower
    assert re.search(rf"wall time of the run: {NUMBER} s \(67 paradigms\)", output), output
    for label in ("suite score (mean of 67)", "  anaphor_agreement", "  subject_verb_agreement"):
        strict, lm_eval = (float(value) for value in row(output, label))
        assert 0.0 <= strict <= lm_eval <= 100.0, output


def check_induction_metrics(output: str) -> None:
    assert re.search(r"structbench ms \(all 7 metrics\)\s+scikit-learn ms \(V-measure\)\s+ratio", output)
    assert re.search(rf"^10000(\s+{NUMBER}){{3}}$", output, re.MULTILINE), output
    ours, theirs = re.findall(r"(?:structbench|scikit-learn) (0\.\d{12})", output)
    assert ours == theirs


def check_scoring(output: str) -> None:
    blimp, agreement = output.split("\nagreement, ")
    assert re.search(r"BLiMP, 335 pairs \(5 per paradigm\), 670 scored sequences", blimp), output
    assert agreement.startswith("30 items (5 per test split), 60 scored sequences"), output
    for section in (blimp, agreement):
        assert re.search(r"tool\s+batch\s+s\s+pairs/s\s+time / structbench's", section)
        assert row(section, "structbench")[0] == "16" and row(section, "structbench")[3] == "1.00"
        # the bare loop computes the same log-probabilities, so no verdict may differ
        # and so does structbench reading every sequence whole instead of as prefix trees, or with
        # transformers' own GELU modules instead of the fused kernel
        for tool in ("bare loop", "structbench, whole", "structbench, transformers' GELU"):
            agreed = re.search(rf"^{tool}\s+({NUMBER}e[-+]\d+)\s+(\d+)\s+(\d+)$", section, re.MULTILINE)
            assert agreed and float(agreed[1]) < 1e-4 and agreed[2] == agreed[3] == "0", output


CHECKS: dict[str, Callable[[str], None]] = {
    "agreement_at_verb.py": check_agreement_at_verb,
    "blimp_gpt2.py": check_blimp_gpt2,
    "induction_metrics.py": check_induction_metrics,
    "chaos.py": check_chaos,
    "concurrent_reports.py": check_concurrent_reports,
    "interval_coverage.py": check_interval_coverage,
    "overhead.py": check_overhead,
    "report_scale.py": check_report_scale,
    "scoring.py": check_scoring,
    "sweep_driver.py": check_sweep_driver,
    "sweep_equivalence.py": check_sweep_equivalence,
    "threads.py": check_threads,
    "train_throughput.py": check_train_throughput,
    "time_to_criterion.py": check_time_to_criterion,
}
"""Every bench script -> what its smoke output must show."""


def test_every_bench_has_a_smoke_check() -> None:
    assert sorted(p.name for p in BENCH.glob("*.py")) == sorted(CHECKS)


LONG_RUNNING = {"blimp_gpt2.py": 40, "chaos.py": 65, "threads.py": 85}
"""The smokes that take a minute or so (scheduled first: `long_running`), with their seconds on a quiet core."""


@pytest.mark.parametrize(
    "script",
    [
        pytest.param(s, marks=pytest.mark.long_running(seconds=LONG_RUNNING[s])) if s in LONG_RUNNING else s
        for s in sorted(CHECKS)
    ],
)
def test_bench_runs_in_smoke_mode(script: str, bench_home: Path) -> None:
    CHECKS[script](smoke(script, bench_home))
