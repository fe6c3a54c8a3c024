"""results.csv and results.json: the same bytes the csv and json modules write, from values formatted
once, and a text cell of `results.csv` never a spreadsheet formula (issue 34)."""

from __future__ import annotations

import csv
import io
import json
import math
from pathlib import Path

import pandas as pd

from structbench.reports.render import write_report
from structbench.reports.writers.tables import write_tables
from structbench.runs.request import ModelRequest
from structbench.runs.runner import Runner
from structbench.specs import ModelSpec
from tests.support.helpers import read_results


def reference_files(frame: pd.DataFrame) -> tuple[str, str]:
    """What the csv module and the json module write for `frame` (NaN as empty / null)."""
    rows = [
        [None if isinstance(value, float) and math.isnan(value) else value for value in row]
        for row in frame.itertuples(index=False)
    ]
    buffer = io.StringIO()
    writer = csv.writer(buffer)
    writer.writerow(list(frame.columns))
    writer.writerows(rows)
    return buffer.getvalue(), json.dumps({"columns": list(frame.columns), "data": rows}) + "\n"


def test_tables_equal_the_standard_writers_on_awkward_values(tmp_path: Path) -> None:
    frame = pd.DataFrame(
        {
            "model": ['a,"quoted" model', "plain", "line\nbreak", "ünïcode", ""],
            "breakdown": [None, "length", None, "", "n_attractors"],
            "mean": [0.1, float("nan"), 1e-17, float("inf"), 2 / 3],
            "n_seeds": [3, 1, 2, 1, 2],
            "per_seed": [[0.1, 0.2, 0.30000000000000004], [0.5], [1e-17, 0.0], [float("inf")], [1.0, 1 / 3]],
        }
    )
    write_tables(frame, tmp_path)
    expected_csv, expected_json = reference_files(frame)
    assert (tmp_path / "results.csv").read_bytes() == expected_csv.encode()
    assert (tmp_path / "results.json").read_text(encoding="utf-8") == expected_json
    read_back = pd.read_json(tmp_path / "results.json", orient="split")
    assert read_back["per_seed"][0] == [0.1, 0.2, 0.30000000000000004]  # every digit kept


def test_an_empty_table_has_its_header(tmp_path: Path) -> None:
    write_tables(pd.DataFrame(columns=["suite", "mean"]), tmp_path)
    assert (tmp_path / "results.csv").read_bytes() == b"suite,mean\r\n"
    assert json.loads((tmp_path / "results.json").read_text()) == {"columns": ["suite", "mean"], "data": []}


FORMULAS = ['=HYPERLINK("https://evil.example","click")', "+1+1", "-2+3", "@SUM(A1:A9)", "\tx", "\rx", "-"]


NUMBERS_AS_TEXT = ["-1.5", "+2e-3", "-7", "0.5", ""]


def read_csv(path: Path) -> list[dict[str, str]]:
    with path.open(newline="", encoding="utf-8") as handle:
        return list(csv.DictReader(handle))


def test_a_text_cell_that_a_spreadsheet_would_run_gets_an_apostrophe_and_numbers_stay_numbers(tmp_path: Path) -> None:
    texts = FORMULAS + NUMBERS_AS_TEXT + ["plain", "a=b"]
    frame = pd.DataFrame({"model": texts, "mean": [-1.5] * len(texts), "n_seeds": [-1] * len(texts)})
    write_tables(frame, tmp_path)
    rows = read_csv(tmp_path / "results.csv")
    assert [row["model"] for row in rows] == ["'" + text for text in FORMULAS] + NUMBERS_AS_TEXT + ["plain", "a=b"]
    assert {row["mean"] for row in rows} == {"-1.5"} and {row["n_seeds"] for row in rows} == {"-1"}
    assert json.loads((tmp_path / "results.json").read_text())["data"][0] == [FORMULAS[0], -1.5, -1]  # JSON as given


def test_a_model_named_as_a_formula_is_text_in_the_report_csv(runner: Runner, tmp_path: Path) -> None:
    label = '=HYPERLINK("https://evil.example","click")'
    runner.evaluate("lookup-tables", ModelRequest.of(ModelSpec(name="copy"), name=label), [0])
    index = write_report(runner.store, tmp_path / "site")
    models = {row["model"] for row in read_csv(index.parent / "results.csv")}
    assert models == {"'" + label}
    assert {row["model"] for row in read_results(index.parent / "results.json")} == {label}
