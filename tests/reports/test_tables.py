"""results.csv and results.json: the same bytes the csv and json modules write, from values formatted once."""

from __future__ import annotations

import csv
import io
import json
import math
from pathlib import Path

import pandas as pd

from structbench.reports.writers.tables import write_tables


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
