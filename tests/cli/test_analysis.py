"""`structbench compare`, `runs`, `samples`, `check` and `claims` (`structbench.cli.analysis`): here, that
`compare --models` reads a label's settings as one label, as every other command reads its lists."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from structbench.cli import main
from structbench.runs.runner import Runner
from structbench.specs import ModelSpec

SETTLED = ModelSpec(name=f"{__name__}:TwoSettings", params={"embedding_values": False, "gumbel": False})


class TwoSettings:
    """Copies its input; its two settings make a label with a comma inside its brackets."""

    name = "two-settings"
    protocols = ("transduction",)

    def __init__(self, embedding_values: bool = True, gumbel: bool = True) -> None:
        self.settings = (embedding_values, gumbel)

    def transduce(self, inputs: list[list[str]]) -> list[list[str]]:
        return [list(tokens) for tokens in inputs]


def test_compare_takes_a_label_whose_settings_hold_a_comma(
    runner: Runner, store_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    settled = runner.evaluate("miniscan", SETTLED, [0, 1]).model
    runner.evaluate("miniscan", ModelSpec(name="oracle"), [0, 1])
    runner.store.close()
    assert "," in settled and settled.endswith("[embedding_values=false,gumbel=false]")
    code = main(
        ["compare", "--suite", "miniscan", "--store", str(store_path), "--json", "--models", f"{settled},oracle"]
    )
    assert code == 0
    (result,) = json.loads(capsys.readouterr().out)
    assert (result["model_a"], result["model_b"]) == (settled, "oracle")
    assert (result["mean_a"], result["mean_b"], result["verdict"]) == (0.0, 1.0, "oracle better")


@pytest.mark.parametrize("models", ["oracle", "oracle,copy,random", "copy[order=1,smoothing=2]"])
def test_compare_still_wants_exactly_two_labels(
    runner: Runner, store_path: Path, capsys: pytest.CaptureFixture[str], models: str
) -> None:
    runner.evaluate("miniscan", ModelSpec(name="oracle"), [0])
    runner.store.close()
    code = main(["compare", "--suite", "miniscan", "--store", str(store_path), "--models", models])
    assert code == 2
    assert f"--models {models!r} must name two models" in capsys.readouterr().err
