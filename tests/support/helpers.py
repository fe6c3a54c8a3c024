"""Models with controlled behaviour, loaded by `module:Class` path in tests."""

from __future__ import annotations

import html.parser
import json
import sqlite3
from pathlib import Path
from typing import Any

from structbench import registry
from structbench.analysis.rescore import rescore
from structbench.data import freeze
from structbench.runs.runner import Runner
from structbench.specs import Split

CONSTRUCTED: list[str] = []


class CountingCopy:
    """Copies its input and records every construction, to prove the store answers repeats."""

    name = "counting-copy"
    protocols = ("transduction",)

    def __init__(self, tag: str = "") -> None:
        CONSTRUCTED.append(tag)

    def transduce(self, inputs: list[list[str]]) -> list[list[str]]:
        return [list(tokens) for tokens in inputs]


class CrashOnSeed:
    """Raises during fit for one seed, otherwise copies."""

    name = "crash-on-seed"
    protocols = ("transduction",)

    def __init__(self, crash_seed: int = 0) -> None:
        self.crash_seed = crash_seed

    def fit(self, train: Split, dev: Split | None, *, seed: int) -> None:
        if seed == self.crash_seed:
            raise RuntimeError(f"exploding gradient at seed {seed}")

    def transduce(self, inputs: list[list[str]]) -> list[list[str]]:
        return [list(tokens) for tokens in inputs]


class PrintingCopy:
    """Copies its input and prints to stdout while fitting and predicting, as a user's debugging
    model does: `run --json` must keep stdout to its record (issue 34)."""

    name = "printing-copy"
    protocols = ("transduction",)

    def fit(self, train: Split, dev: Split | None, *, seed: int) -> None:
        print("HELLO FROM MODEL STDOUT (fit)")

    def transduce(self, inputs: list[list[str]]) -> list[list[str]]:
        print("HELLO FROM MODEL STDOUT (transduce)")
        return [list(tokens) for tokens in inputs]


class InterruptOnSeed:
    """Simulates Ctrl-C while predicting one seed."""

    name = "interrupt-on-seed"
    protocols = ("transduction",)

    def __init__(self, interrupt_seed: int = 1) -> None:
        self.interrupt_seed = interrupt_seed
        self.seed = -1

    def fit(self, train: Split, dev: Split | None, *, seed: int) -> None:
        self.seed = seed

    def transduce(self, inputs: list[list[str]]) -> list[list[str]]:
        if self.seed == self.interrupt_seed:
            raise KeyboardInterrupt
        return [list(tokens) for tokens in inputs]


class TrainedToCriterion:
    """Copies its input and reports training against a criterion (dev accuracy at least 0.9), reached on
    every seed but `miss_seed`, where it stopped at 0.5: a neural baseline's report, without the training."""

    name = "trained-to-criterion"
    protocols = ("transduction",)

    def __init__(self, miss_seed: int = -1) -> None:
        self.miss_seed = miss_seed
        self.seed = -1

    def fit(self, train: Split, dev: Split | None, *, seed: int) -> None:
        self.seed = seed

    def transduce(self, inputs: list[list[str]]) -> list[list[str]]:
        return [list(tokens) for tokens in inputs]

    def convergence(self) -> dict[str, Any]:
        reached = self.seed != self.miss_seed
        return {
            "criterion": {"statistic": "dev_accuracy", "at_least": 0.9},
            "reached": reached,
            "value": 0.95 if reached else 0.5,
            "epochs": 3 if reached else 10,
        }


class ClassifierOnly:
    """Speaks only classification."""

    name = "classifier-only"
    protocols = ("classification",)

    def classify(self, inputs: list[list[str]], labels: list[str]) -> list[str]:
        return [labels[0] for _ in inputs]


def check_stored_run(runner: Runner, suite_id: str) -> dict[str, list[list[str]]]:
    """The newest run on `suite_id`: every test example has a stored output made only of target
    tokens the train split contains (no padding, start or end markers; a barely trained decoder may
    still emit its unknown-token marker, which scores as wrong), and scoring the stored outputs
    again gives the stored scores. Returns split -> outputs."""
    suite = registry.suite(suite_id)
    runs = runner.store.runs()
    run_id = int(runs[runs["suite"] == suite_id]["id"].max())
    manifest = freeze.expected_manifest(suite)
    assert manifest is not None
    draw = int(runs.set_index("id").loc[run_id, "draw"])
    vocabulary = {t for e in freeze.load_split(suite, manifest, draw, "train").examples for t in e.target or []}
    vocabulary.add("<unk>")
    stored = runner.store.stored_predictions(run_id)
    assert sorted(stored) == sorted(s.name for s in suite.spec.splits_with_role("test"))
    outputs: dict[str, list[list[str]]] = {}
    for split, (ids, predictions, _) in stored.items():
        assert ids == [e.id for e in freeze.load_split(suite, manifest, draw, split).examples]
        assert all(set(p) <= vocabulary for p in predictions), f"{split}: tokens outside the target vocabulary"
        outputs[split] = predictions
    rescored = rescore(runner.store, run_id, suite)
    for split, scores in rescored.items():
        stored_values = runner.store.scores(model_hash=str(runs.set_index("id").loc[run_id, "model_hash"]))
        mine = stored_values[(stored_values["split"] == split) & (stored_values["breakdown"] == "")]
        assert {m: v for m, v in zip(mine["metric"], mine["value"], strict=True)} == {
            s.metric: s.value for s in scores.scores if not s.breakdown
        }
    return outputs


def read_results(path: Path) -> list[dict[str, Any]]:
    """The cells of a report's `results.json`, one dict each."""
    table = json.loads(path.read_text())
    return [dict(zip(table["columns"], row, strict=True)) for row in table["data"]]


def integrity(path: Path) -> str:
    """`PRAGMA integrity_check` of the SQLite file at `path`: "ok" when it is sound."""
    db = sqlite3.connect(path)
    try:
        return str(db.execute("PRAGMA integrity_check").fetchone()[0])
    finally:
        db.close()


class _Links(html.parser.HTMLParser):
    """Every `href` and `src` of a page, as the browser reads them (entities decoded)."""

    def __init__(self) -> None:
        super().__init__()
        self.targets: list[str] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.targets += [value or "" for name, value in attrs if name in ("href", "src")]


def links_of(page: Path) -> list[str]:
    """Every `href` and `src` of the HTML page `page`."""
    parser = _Links()
    parser.feed(page.read_text(encoding="utf-8"))
    return parser.targets


OFFLINE_SUITES = ["agreement-linzen-number", "scan-simple", "agreement-attractors"]
"""One suite of each kind offline: user data (never downloadable), a download, a generated suite."""


def offline(home: Path, monkeypatch: Any, reason: str) -> None:
    """A machine without the network (every download fails with `reason`) and without the published
    files (an empty source folder), whose registry lists `OFFLINE_SUITES` only."""
    import urllib.error
    import urllib.request

    monkeypatch.setenv("STRUCTBENCH_HOME", str(home / "home"))
    monkeypatch.setenv("STRUCTBENCH_SOURCE_DIR", str(home / "empty"))  # scan-simple must be downloaded

    def unreachable(*_: object, **__: object) -> None:
        raise urllib.error.URLError(reason)

    monkeypatch.setattr(urllib.request, "urlopen", unreachable)
    monkeypatch.setattr(registry, "suite_names", lambda: OFFLINE_SUITES)


def one_sentence_error(err: str) -> str:
    """The CLI's error sentence, asserted to be one line, its last (after the progress lines a
    command prints into a log), without a traceback."""
    assert "Traceback" not in err
    lines = err.strip().splitlines()
    errors = [line for line in lines if line.startswith("structbench: error: ")]
    assert len(errors) == 1 and lines[-1] == errors[0], err
    assert errors[0].endswith("."), err
    return errors[0]
