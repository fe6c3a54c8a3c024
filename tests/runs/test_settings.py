"""`--set` reads a value by the type the model's constructor declares: a string setting takes `111`
as the text "111" (before, JSON made it a number and pydantic refused it with no hint to quote it)."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Annotated, Literal

import pytest

from structbench.cli import main
from structbench.errors import UserError
from structbench.runs.arguments import parse_settings
from structbench.runs.settings import check_settings, text_settings
from structbench.specs import ModelSpec
from structbench.sweep.grid import GridModel


class Typed:
    """A model whose settings are of every kind `--set` tells apart."""

    name = "typed"
    protocols = ("transduction",)

    def __init__(
        self,
        fallback: str = "x",
        note: Annotated[str, "shown"] | None = None,
        mode: Literal["a", "111"] = "a",
        order: int = 2,
        either: int | str = 0,
    ) -> None:
        self.fallback = fallback


def test_text_settings_are_those_declared_as_strings_only() -> None:
    assert text_settings("tests.runs.test_settings:Typed") == {"fallback", "note", "mode"}
    assert text_settings("copy") == frozenset()


def test_a_string_setting_keeps_its_text_and_others_are_read_as_json() -> None:
    pairs = ["fallback=111", "note=true", "mode=111", "order=3", "either=5"]
    settings = parse_settings(pairs, text=text_settings("tests.runs.test_settings:Typed"))
    assert settings == {"fallback": "111", "note": "true", "mode": "111", "order": 3, "either": 5}
    assert parse_settings(["fallback=111"]) == {"fallback": 111}, "without declared types, JSON as before"


def test_run_takes_a_number_for_a_string_setting(capsys: pytest.CaptureFixture[str], store_path: Path) -> None:
    model = ["--model", "tests.support.helpers:CountingCopy", "--set", "tag=111"]
    assert main(["run", "--suite", "lookup-tables", *model, "--store", str(store_path), "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["model"] == 'counting-copy[tag="111"]'


def test_a_sweep_grid_reads_a_string_setting_as_text() -> None:
    grid = GridModel.model_validate(
        {"name": "tests.runs.test_settings:Typed", "set": {"fallback": "111", "order": "3"}}
    )
    assert [spec.params for spec in grid.configurations()] == [{"fallback": "111", "order": 3}]


def test_a_number_given_to_a_string_setting_outside_set_says_to_quote_it() -> None:
    spec = ModelSpec(name="tests.runs.test_settings:Typed", params={"fallback": 111})  # a grid file's unquoted 111
    with pytest.raises(UserError, match=re.escape("fix the --set value (in a grid file, quote a text value: '111').")):
        check_settings(spec)
