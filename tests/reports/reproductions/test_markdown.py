"""docs/reproductions.md generated from reference runs: a store -> its bundle -> the page."""

from __future__ import annotations

import hashlib
import json
import shlex
from pathlib import Path

import pytest

from structbench import __version__, registry
from structbench.analysis.significance import RULE as VERDICT_RULE
from structbench.cells import cell
from structbench.convergence import Convergence, Criterion
from structbench.reports.reproductions.markdown import reproductions_markdown, write_reproductions
from structbench.reports.views.format import percent
from structbench.runs.arguments import parse_settings
from structbench.scoring import Score, SplitScores
from structbench.store import Store
from structbench.store.bundle import reference_store, write_runs

SUITE = "lookup-tables-mt"


SUITE_HASH = "c" * 64


COMMIT = "0123456789abcdef0123456789abcdef01234567"


ABLATION = {"embedding_values": False, "full_context": False, "gumbel": False, "transcoder": False}


ABLATION_LABEL = "seq2attn[embedding_values=false,full_context=false,gumbel=false,transcoder=false]"


SEQ2ATTN = [0.80, 0.85, 0.90]


BASELINE = [0.05, 0.10, 0.15]


CRITERION = Criterion(statistic="train_accuracy", at_least=0.99)


def add_cell(store: Store, label: str, params: dict[str, object], values: list[float], reached: list[bool]) -> None:
    """Three finished seeds of `label` on heldout_tables, with their convergence and provenance."""
    spec = {"name": label.partition("[")[0], "params": params, "configuration": {"budget": "cpu-small"}}
    environment = {"threads": 1, "simd_torch": "AVX2", "simd_numpy": "AVX2", "git": COMMIT}
    for seed, (value, done) in enumerate(zip(values, reached, strict=True)):
        claim = store.claim_run(
            {
                "suite": SUITE, "version": registry.suite(SUITE).spec.version, "suite_hash": SUITE_HASH,
                "model": label, "model_spec": json.dumps(spec, sort_keys=True), "model_hash": hashlib.sha256(label.encode()).hexdigest(),
                "config_hash": None, "comparable": True, "seed": seed, "draw": seed,
                "harness_version": __version__, "git_commit": COMMIT, "environment": json.dumps(environment),
            }
        )  # fmt: skip
        scores = SplitScores([Score("sequence_accuracy", value, 20, proportion=True)], [True, False])
        convergence = Convergence(criterion=CRITERION, reached=done, value=0.995 if done else 0.9, epochs=4)
        store.finish_run(claim, {"heldout_tables": (scores, ["a", "b"], [["x"], ["y"]])}, 100.0, 20.0,
                         convergence=convergence)  # fmt: skip


@pytest.fixture
def bundled(tmp_path: Path) -> Path:
    """The SQLite copy of a bundle written from a small store: Seq2Attn and its ablation."""
    with Store(tmp_path / "made.sqlite") as store:
        store.record_suite(registry.suite(SUITE).spec, SUITE_HASH)
        add_cell(store, "seq2attn", {}, SEQ2ATTN, [True, True, True])
        add_cell(store, ABLATION_LABEL, ABLATION, BASELINE, [True, False, True])
        write_runs(store, store.runs()["id"].tolist(), tmp_path / "bundle")
    found = reference_store(tmp_path / "bundle")
    assert found is not None
    return found


def page(path: Path) -> str:
    with Store(path) as store:
        return reproductions_markdown(store, grid="docs/reference-grid.yaml")


def row_of(text: str, *start: str) -> str:
    """The one table row that begins with the cells `start`."""
    prefix = "| " + " | ".join(start) + " |"
    rows = [line for line in text.splitlines() if line.startswith(prefix)]
    assert len(rows) == 1, (prefix, rows)
    return rows[0]


def test_the_rows_hold_the_cell_functions_numbers_beside_the_published_ones(bundled: Path) -> None:
    text = page(bundled)
    for label, values, published in (
        ("seq2attn", SEQ2ATTN, "100.00 ± 0.00 ["),
        (ABLATION_LABEL, BASELINE, "8.51 ± 4.28 ["),
    ):
        stats = cell(values, 20, proportion=True)
        assert stats.ci_low is not None and stats.ci_high is not None
        row = row_of(text, f"`{SUITE}@1.0.0`", f"`{label}`", "`heldout_inputs`")  # the first row names the cell
        assert row.startswith(f"| `{SUITE}@1.0.0` | `{label}` |")
        tables = next(line for line in text.splitlines()[text.splitlines().index(row) :] if "`heldout_tables`" in line)
        assert tables.startswith("|  |  | `heldout_tables` | `sequence_accuracy` |")
        assert (
            f"| {percent(stats.mean)} | [{percent(stats.ci_low)}, {percent(stats.ci_high)}], t over 3 seeds "
            f"| {', '.join(percent(v) for v in values)} | {published}"
        ) in tables


def test_the_page_names_commit_threads_simd_budget_convergence_and_time(bundled: Path) -> None:
    text = page(bundled)
    assert f"- **Commit:** {COMMIT[:12]}." in text
    assert "- **Torch threads:** 1." in text
    assert "- **SIMD kernels:** torch AVX2, numpy AVX2." in text
    assert "- **Budget:** cpu-small." in text
    assert "- **Seeds:** 0,1,2." in text
    assert "- **CPU time:** 12.0 min" in text  # 6 runs of 100 s training and 20 s prediction
    assert row_of(text, f"`{SUITE}@1.0.0`", "`seq2attn`", "0,1,2").endswith(
        "| cpu-small | 3 of 3 (train_accuracy ≥ 0.99) | 360 s | 0123456789ab |"
    )
    assert f"| cpu-small | 2 of 3 (train_accuracy 0.9 < 0.99) | 360 s | {COMMIT[:12]} |" in text
    # the claim on these runs: one seed of the ablation never learned its training set
    claim = [line for line in text.splitlines() if line.startswith("| `seq2attn-heldout-tables`: Seq2Attn ")]
    assert len(claim) == 1 and "| undecided (under-trained) |" in claim[0]
    assert " ".join(VERDICT_RULE.split()) in " ".join(text.split())  # the rule every verdict on the page follows


def test_the_commands_make_each_cell_again(bundled: Path) -> None:
    text = page(bundled)
    assert "structbench sweep docs/reference-grid.yaml" in text
    assert f"\nstructbench run --suite {SUITE}@1.0.0 --model seq2attn --seeds 0,1,2\n" in text
    assert f"\nstructbench reference verify --suite {SUITE}@1.0.0 --model seq2attn\n" in text
    command = next(line for line in text.splitlines() if line.startswith("structbench run") and "--set" in line)
    words = shlex.split(command)
    settings = [words[i + 1] for i, word in enumerate(words) if word == "--set"]
    assert parse_settings(settings) == ABLATION  # what `run --set` reads back is the stored configuration
    assert f"structbench reference verify --suite {SUITE}@1.0.0 --model {shlex.quote(ABLATION_LABEL)}\n" in text


def test_the_same_runs_give_the_same_bytes_and_the_bundle_the_stores_page(bundled: Path, tmp_path: Path) -> None:
    with Store(bundled) as store:
        write_reproductions(store, tmp_path / "one.md", grid="docs/reference-grid.yaml")
        write_reproductions(store, tmp_path / "two.md", grid="docs/reference-grid.yaml")
    assert (tmp_path / "one.md").read_bytes() == (tmp_path / "two.md").read_bytes()
    assert page(tmp_path / "made.sqlite") == (tmp_path / "one.md").read_text(encoding="utf-8")


def test_a_label_with_a_pipe_or_markup_stays_in_its_table_cell(bundled: Path, tmp_path: Path) -> None:
    with Store(tmp_path / "made.sqlite") as store:
        add_cell(store, "copy|<b>x</b>", {}, [0.0, 0.0, 0.0], [True, True, True])
    text = page(tmp_path / "made.sqlite")
    rows = [line for line in text.splitlines() if line.startswith("|") and "copy" in line]
    assert rows and all("| `copy\\|<b>x</b>` |" in line for line in rows)  # a code span, shown as typed
    assert all(line.replace("\\|", "").count("|") == line.count("|") - 1 for line in rows)


def test_a_published_number_of_another_corpus_says_so_in_its_column(tmp_path: Path) -> None:
    """Tran's Table 6.2 is on the WSJ (K = 45): beside a pos-synthetic row (K = 11) its numbers say where
    they were measured in the published column itself, not only in the source under the table."""
    suite = registry.suite("pos-synthetic")
    spec = {"name": "hmm", "params": {}, "configuration": {}}
    with Store(tmp_path / "pos.sqlite") as store:
        store.record_suite(suite.spec, SUITE_HASH)
        for seed in range(3):
            claim = store.claim_run(
                {
                    "suite": "pos-synthetic", "version": suite.spec.version, "suite_hash": SUITE_HASH, "model": "hmm",
                    "model_spec": json.dumps(spec, sort_keys=True), "model_hash": "h" * 64, "config_hash": None,
                    "comparable": True, "seed": seed, "draw": 0, "harness_version": __version__,
                    "git_commit": COMMIT, "environment": json.dumps({"threads": 1, "git": COMMIT}),
                }
            )  # fmt: skip
            metrics = ("v_measure", "many_to_one", "one_to_one_greedy")
            scores = SplitScores([Score(metric, 0.8 + 0.01 * seed, 100) for metric in metrics], [None])
            store.finish_run(claim, {"test": (scores, ["a"], [["1"]])}, 1.0, 1.0)
        text = reproductions_markdown(store, grid="docs/reference-grid.yaml")
    row = row_of(text, "`pos-synthetic@1.0.0`", "`hmm`", "`test`", "`v_measure`")
    assert row.endswith(" (WSJ, another corpus) [1] |"), row
    assert "measured on `pos-wsj`, not on the suite of our row" in text  # and its source says it too
