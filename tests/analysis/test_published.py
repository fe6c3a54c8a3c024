"""The importer of published per-item results: a good file becomes published runs, a bad row is one
sentence naming the file and the row, an oversized file is refused unread, and the SyntaxGym paper's
files pair with the suite's items by (suite, item)."""

from __future__ import annotations

import json
import os
from collections import Counter
from pathlib import Path

import pytest

from structbench import registry
from structbench.analysis import published
from structbench.analysis.published import Columns, Source, read_results, syntaxgym_runs
from structbench.errors import UserError
from tests.conftest import SHARED_DATA

SOURCE = Source(paper="Someone 2020", file="results.csv", commit="0" * 40)
HEADER = "model,seed,split,item,correct,score\n"


def write(tmp_path: Path, text: str, name: str = "results.csv") -> Path:
    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    return path


def test_a_good_file_becomes_one_published_run_per_model_and_seed(tmp_path: Path) -> None:
    rows = "".join(
        f"gpt-2,{seed},test,test-0{i},{'True' if i % 3 else 'False'},{i}.5\n" for seed in (0, 7) for i in range(10)
    )
    path = write(tmp_path, HEADER + rows + "lstm,0,test,test-00,1,0\n")
    runs = read_results(path, registry.suite("miniscan"), SOURCE, columns=Columns(score="score"))
    assert [(r.model, r.seed) for r in runs] == [("published:gpt-2", 0), ("published:gpt-2", 7), ("published:lstm", 0)]
    gpt2 = runs[0]
    assert len(gpt2.items["test"]) == 10 and gpt2.items["test"]["test-03"] == (False, 3.5)
    assert gpt2.items["test"]["test-04"] == (True, 4.5)
    assert gpt2.source["paper"] == "Someone 2020" and len(gpt2.source["sha256"]) == 64
    assert gpt2.suite == "miniscan" and gpt2.version == "1.0.0"


def test_json_lines_and_item_numbers_with_an_offset(tmp_path: Path) -> None:
    """SyntaxGym's files number a suite's items from 0, the suite from 1: `item_offset` reads one as the other."""
    lines = [{"suite": "mvrr", "item": 0, "correct": True}, {"suite": "mvrr", "item": 27, "correct": False}]
    path = write(tmp_path, "\n".join(json.dumps(line) for line in lines) + "\n", "r.jsonl")
    columns = Columns(split="suite", model=None, seed=None)
    (run,) = read_results(path, registry.suite("syntaxgym"), SOURCE, columns=columns, model_name="m", item_offset=1)
    assert run.model == "published:m" and dict(run.items["mvrr"]) == {"mvrr-1": (True, None), "mvrr-28": (False, None)}


@pytest.mark.parametrize(
    ("rows", "message"),
    [
        ("gpt-2,0,nosuch,test-00,True,1\n", "row 2: 'nosuch' is not a test split of miniscan@1.0.0"),
        ("gpt-2,0,test,test-00,True,1\ngpt-2,0,test,test-99,True,1\n", "row 3: item 'test-99' is no item"),
        ("gpt-2,0,test,test-00,maybe,1\n", "row 2: 'correct' is 'maybe', not a verdict"),
        ("gpt-2,0,test,test-00,True,nan\n", "row 2: 'score' is 'nan', not a finite number"),
        ("gpt-2,x,test,test-00,True,1\n", "row 2: the seed 'x' is not a whole number"),
        ("gpt 2!,0,test,test-00,True,1\n", "row 2: the model name 'gpt 2!' holds characters"),
        (
            "gpt-2,0,test,test-00,True,1\ngpt-2,0,test,test-00,False,1\n",
            "row 3: gpt-2 seed 0 has 'test' item 'test-00' twice",
        ),
        ("gpt-2,0,test,test-00,True,1,extra\n", "row 2: more fields than the header names"),
        ("gpt-2,0,test,,True,1\n", "row 2: 'item' is empty"),
        ("", "holds no rows"),
    ],
)
def test_a_bad_row_is_one_sentence_naming_the_file_and_the_row(tmp_path: Path, rows: str, message: str) -> None:
    path = write(tmp_path, HEADER + rows)
    with pytest.raises(UserError, match=r"results\.csv") as caught:
        read_results(path, registry.suite("miniscan"), SOURCE, columns=Columns(score="score"))
    assert message in str(caught.value) and "\n" not in str(caught.value)


def test_an_oversized_file_or_a_fifo_is_refused_before_it_is_read(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = write(tmp_path, HEADER + "gpt-2,0,test,test-00,True,1\n")
    monkeypatch.setattr(published, "MAX_BYTES", 16)
    with pytest.raises(UserError, match=r"cannot import .*results.csv: it holds \d+ bytes, more than the 16"):
        read_results(path, registry.suite("miniscan"), SOURCE)
    monkeypatch.undo()
    fifo = tmp_path / "pipe.csv"

    os.mkfifo(fifo)
    with pytest.raises(UserError, match=r"pipe\.csv: it is a FIFO"):
        read_results(fifo, registry.suite("miniscan"), SOURCE)


@pytest.mark.skipif(
    not (SHARED_DATA / "syntaxgym" / "sg_results").is_dir(),
    reason="the authors' per-item results are not in STRUCTBENCH_SOURCE_DIR",
)
def test_the_syntaxgym_papers_files_pair_with_every_item_by_suite_and_item() -> None:
    """Every pinned file is read (its SHA-256 checked by `resolve`), and every run covers every item."""
    suite = registry.suite("syntaxgym")
    runs = syntaxgym_runs(suite)
    seeds = Counter(run.model for run in runs)
    assert len(seeds) == 37 and seeds["published:gpt-2-pretrained"] == 1 and seeds["published:ngram_bllip-lg"] == 50
    assert seeds["published:rnng_bllip-xs"] == 4 and seeds["published:ngram-single_bllip-lg"] == 1
    sizes = {split.name: split.size for split in suite.spec.splits_with_role("test")}
    for run in runs:
        assert {split: len(items) for split, items in run.items.items()} == sizes
    (gpt2,) = [run for run in runs if run.model == "published:gpt-2-pretrained"]
    # the file's first rows: subordination_pp-pp items 0 and 1 (True, False) are the suite's items 1 and 2
    assert gpt2.items["subordination_pp-pp"]["subordination_pp-pp-1"] == (True, None)
    assert gpt2.items["subordination_pp-pp"]["subordination_pp-pp-2"] == (False, None)
    ranked = [split.name for split in suite.spec.ranked_splits]
    score = sum(sum(ok for ok, _ in gpt2.items[s].values()) / len(gpt2.items[s]) for s in ranked) / len(ranked)
    assert len(ranked) == 31 and score == pytest.approx(0.784, abs=5e-4)
    assert gpt2.source["commit"] == published.SYNTAXGYM_RESULTS_COMMIT and gpt2.source["url"].endswith(
        "syntaxgym_results_gpt-2-pretrained_.csv"
    )


def test_import_names_the_files_columns_and_stores_the_runs_apart(
    tmp_path: Path, store_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from structbench.cli import main
    from structbench.store import StoreReader

    path = write(tmp_path, "s\ti\tok\n" + "".join(f"test\ttest-0{i}\t{i % 2}\n" for i in range(10)), "r.tsv")
    args = ["import", "--suite", "miniscan", "--file", str(path), "--paper", "P 2021", "--store", str(store_path)]
    assert main([*args, "--columns", "split=s,item=i,correct=ok,model=-,seed=-", "--model-name", "lstm"]) == 0
    assert "imported 1 published runs (1 models, 10 item verdicts)" in capsys.readouterr().out
    with StoreReader(store_path) as reader:
        (run,) = reader.published_runs("miniscan", "1.0.0", "published:lstm")
        assert reader.runs().empty
    assert (run.seed, run.source["paper"], run.source["file"]) == (0, "P 2021", "r.tsv")
    assert sum(ok for ok, _ in run.items["test"].values()) == 5
    assert main([*args, "--columns", "split=s,colour=red"]) == 2
    assert "--columns: 'colour=red' is not KEY=COLUMN" in capsys.readouterr().err
