"""An edited model is a new run: the store keys `module:Class` and command models by their code."""

from __future__ import annotations

import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from structbench.errors import UserError
from structbench.runs.fingerprint import command_fingerprint
from structbench.runs.key import ModelKey
from structbench.runs.request import ModelRequest
from structbench.runs.runner import Runner
from structbench.specs import ModelSpec

MODEL = """
class Echo:
    name = "echo"
    protocols = ("transduction",)

    def transduce(self, inputs):
        return [list(tokens){edit} for tokens in inputs]
"""


def model_facts(spec: ModelSpec, suite: str) -> dict[str, object]:
    """What keys `spec`'s runs on `suite` beyond its settings (`ModelKey.facts`)."""
    return ModelKey.of(suite, ModelRequest.of(spec)).facts


@pytest.fixture
def module_folder(tmp_path: Path) -> Iterator[Path]:
    """A folder on sys.path for a model module the test writes and edits."""
    sys.path.insert(0, str(tmp_path))
    yield tmp_path
    sys.path.remove(str(tmp_path))
    sys.modules.pop("edited_model", None)


def test_an_edited_module_class_model_is_run_again_not_answered_from_the_store(
    runner: Runner, module_folder: Path
) -> None:
    source = module_folder / "edited_model.py"
    source.write_text(MODEL.format(edit=""))
    spec = ModelSpec(name="edited_model:Echo")
    first = runner.evaluate("lookup-tables", spec, [0])
    again = runner.evaluate("lookup-tables", spec, [0])
    assert again.scores == first.scores and len(runner.store.runs()) == 1  # unchanged code: from the store

    source.write_text(MODEL.format(edit="[:0]"))  # the author edits the model, then runs it again
    sys.modules.pop("edited_model")  # what a new `structbench run` process does
    edited = runner.evaluate("lookup-tables", spec, [0])
    runs = runner.store.runs()
    assert len(runs) == 2 and runs["model_hash"].nunique() == 2
    token = {split: metrics["token_accuracy"].mean for split, metrics in edited.scores.items()}
    before = {split: metrics["token_accuracy"].mean for split, metrics in first.scores.items()}
    assert all(before[split] > 0 for split in before) and all(value == 0 for value in token.values())
    code = str(
        model_facts(spec, "lookup-tables")["code"]
    )  # the edited file's fingerprint, stored with the new run only
    assert code in runs["model_spec"].iloc[1] and code not in runs["model_spec"].iloc[0]


def test_registered_models_carry_no_code_fingerprint() -> None:
    assert "code" not in model_facts(ModelSpec(name="copy"), "lookup-tables")


def test_a_command_is_fingerprinted_by_the_files_it_names(tmp_path: Path) -> None:
    script = tmp_path / "model.py"
    script.write_text("print('v1')\n")
    command = f"{sys.executable} {script} --fast"
    first = command_fingerprint(command)
    assert command_fingerprint(command) == first
    script.write_text("print('v2')\n")
    assert command_fingerprint(command) != first  # the edited script
    assert command_fingerprint(f"{sys.executable} {script} --slow") == command_fingerprint(command)
    facts = model_facts(ModelSpec(name="command", params={"command": command}), "lookup-tables")
    assert facts["code"] == command_fingerprint(command)
    with pytest.raises(UserError, match="cannot be split into words"):
        command_fingerprint("python 'unclosed")
