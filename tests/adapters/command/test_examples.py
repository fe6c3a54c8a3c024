"""The example models of docs/command-protocol.md, run through the real harness, and the document
checked against what the adapter sends."""

from __future__ import annotations

import inspect
import json
import re
import shutil
import sys
from collections import Counter
from pathlib import Path
from typing import Any

import pytest

from structbench import registry
from structbench.adapters.command import CommandModel
from structbench.cli import main
from structbench.data import freeze
from structbench.specs import Example, Split

REPO = Path(__file__).resolve().parents[3]
DOC = REPO / "docs" / "command-protocol.md"
EXAMPLES = REPO / "docs" / "examples"
NODE = shutil.which("node")
COMMANDS = {"python": f"{sys.executable} {EXAMPLES / 'memorise.py'}", "node": f"{NODE} {EXAMPLES / 'memorise.js'}"}
LANGUAGES = ["python", pytest.param("node", marks=pytest.mark.skipif(NODE is None, reason="node is not installed"))]
needs_node = pytest.mark.skipif(NODE is None, reason="node is not installed")


def run(capsys: pytest.CaptureFixture[str], suite: str, store: Path, *model: str) -> dict[str, Any]:
    assert main(["run", "--suite", suite, "--model", *model, "--seeds", "0", "--store", str(store), "--json"]) == 0
    record: dict[str, Any] = json.loads(capsys.readouterr().out)
    assert record["status"] == {"0": "done"}, record["errors"]
    return record


def run_example(capsys: pytest.CaptureFixture[str], suite: str, language: str, store: Path) -> dict[str, Any]:
    return run(capsys, suite, store, "command", "--set", f"command={COMMANDS[language]}")


def means(record: dict[str, Any]) -> dict[str, dict[str, float]]:
    return {split: {metric: s["mean"] for metric, s in cells.items()} for split, cells in record["scores"].items()}


def frozen(suite_id: str, split: str) -> list[Example]:
    suite = registry.suite(suite_id)
    manifest = freeze.expected_manifest(suite)
    assert manifest is not None
    return freeze.load_split(suite, manifest, 0, split).examples


@pytest.fixture
def reverse_words(installed_plugin: None) -> str:
    """The test plugin suite, installed: its `test_short` split repeats some training inputs."""
    return "reverse-words"


@pytest.mark.parametrize("language", LANGUAGES)
def test_the_example_answers_seen_inputs_from_memory_and_echoes_the_rest(
    capsys: pytest.CaptureFixture[str], store_path: Path, reverse_words: str, language: str
) -> None:
    scores = means(run_example(capsys, reverse_words, language, store_path))
    train = {tuple(e.input) for e in frozen(reverse_words, "train")}
    for split in ("test_short", "test"):
        examples = frozen(reverse_words, split)
        right = sum(tuple(e.input) in train or e.input == e.target for e in examples)
        assert scores[split]["sequence_accuracy"] == right / len(examples)
    assert scores["test_short"]["sequence_accuracy"] == 0.5  # 4 memorised, 1 more a palindrome
    # MiniSCAN's test inputs are all new: echoed, they score what copying scores
    assert means(run_example(capsys, "miniscan", language, store_path)) == means(
        run(capsys, "miniscan", store_path, "copy")
    )


@needs_node
@pytest.mark.parametrize("suite", ["miniscan", "agreement-attractors-number", "agreement-attractors", "pos-synthetic"])
def test_the_python_and_node_examples_score_alike(
    capsys: pytest.CaptureFixture[str], store_path: Path, suite: str
) -> None:
    python = means(run_example(capsys, suite, "python", store_path))
    assert means(run_example(capsys, suite, "node", store_path)) == python
    if suite == "agreement-attractors-number":  # classification: what a memoriser must score
        train = frozen(suite, "train")
        memorised = {tuple(e.input): e.label for e in train}
        offered = registry.suite(suite).spec.labels or []
        counts = Counter(e.label for e in train)
        commonest = max(offered, key=lambda label: counts[label])
        for split, scores in python.items():
            examples = frozen(suite, split)
            assert not any(tuple(e.input) in memorised for e in examples)  # 2.0.0: no tested prefix was read
            right = sum(e.label == commonest for e in examples)
            assert scores["accuracy"] == right / len(examples)
    if suite == "agreement-attractors":  # continuations of the prefix: the verb alone, under a unigram model
        assert set(python) == {f"attractors-{k}" for k in range(5)} | {"mixed"}


class Recorder:
    """The lines the adapter wrote to and read from its command, as the document's transcript shows them."""

    def __init__(self, monkeypatch: pytest.MonkeyPatch) -> None:
        self.lines: list[str] = []
        write, next_line = CommandModel._write, CommandModel._next_line

        def recorded_write(model: CommandModel, data: bytes, deadline: float) -> int:
            self.lines.append("harness> " + data.decode().rstrip("\n"))
            return write(model, data, deadline)

        def recorded_line(model: CommandModel, deadline: float) -> str | None:
            line = next_line(model, deadline)
            if line is not None:
                self.lines.append("model>   " + line.rstrip("\n"))
            return line

        monkeypatch.setattr(CommandModel, "_write", recorded_write)
        monkeypatch.setattr(CommandModel, "_next_line", recorded_line)

    def sent(self) -> list[dict[str, Any]]:
        return [json.loads(line.removeprefix("harness> ")) for line in self.lines if line.startswith("harness> ")]


def test_the_documents_transcript_is_what_the_harness_says(
    capsys: pytest.CaptureFixture[str], store_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    recorder = Recorder(monkeypatch)  # records in this process: the command model runs in it (--in-process)
    run(capsys, "miniscan", store_path, "command", "--set", f"command={COMMANDS['python']}", "--in-process")
    block = re.search(r"<!-- transcript -->\n```text\n(.*?)\n```", DOC.read_text(), re.DOTALL)
    assert block is not None, "docs/command-protocol.md lost its transcript block"
    assert block.group(1).splitlines() == recorder.lines, (
        "the transcript in docs/command-protocol.md is out of date; replace it with:\n" + "\n".join(recorder.lines)
    )


def documented_messages() -> list[dict[str, Any]]:
    """The messages in the document's json blocks."""
    blocks = re.findall(r"```json\n(.*?)\n```", DOC.read_text(), re.DOTALL)
    return [json.loads(line) for block in blocks for line in block.splitlines()]


def test_the_document_shows_each_message_with_the_fields_the_adapter_sends(monkeypatch: pytest.MonkeyPatch) -> None:
    recorder = Recorder(monkeypatch)
    examples = [Example(id="a", input=["walk"], target=["I_WALK"])]
    train = Split(suite="s@1", name="train", role="train", draw=0, examples=examples)
    dev = Split(suite="s@1", name="dev", role="dev", draw=0, examples=examples)
    model = CommandModel(COMMANDS["python"])
    model.fit(train, dev, seed=0)
    model.transduce([["walk"]])
    model.classify([["walk"]], ["yes", "no"])
    model.logprob([["walk"]])
    model.loglikelihood([(["walk"], ["twice"])])
    model.induce([["walk"]], 3)
    model.close()

    def shape(message: dict[str, Any]) -> tuple[str, str, frozenset[str]]:
        return message["type"], message.get("method", ""), frozenset(message)

    sent = {shape(message) for message in recorder.sent()}
    assert len(sent) == 7
    documented = {shape(message) for message in documented_messages()}
    assert sent <= documented
    answers = {"hello", "ok", "predictions", "error"}
    assert {s for s in documented if s[0] not in answers} == sent, (
        "the document shows a message the adapter never sends"
    )
    assert {s[0] for s in documented} == answers | {"fit", "predict", "close"}


def test_the_document_lists_every_example_field_and_setting() -> None:
    text = DOC.read_text()
    rows = set(re.findall(r"^\| `(\w+)` \|", text, re.MULTILINE))
    assert set(Example.model_fields) <= rows
    parameters = inspect.signature(CommandModel).parameters
    for name, parameter in parameters.items():
        default = "required" if parameter.default == "" else f"{parameter.default:g}"
        assert f"| `{name}` | {default} |" in text
