"""Suite series: suites that differ in one number are drawn as learning curves, one line per model,
with published numbers as markers (`structbench.reports.builders.series`)."""

from __future__ import annotations

import re
from collections.abc import Mapping
from pathlib import Path

import pytest
from pydantic import ValidationError

from structbench.analysis.references import Reference
from structbench.reports.builders.plots import Line, Style, merge_equal, model_styles
from structbench.reports.builders.series import Curve
from structbench.reports.render import write_report
from structbench.runs.runner import Runner
from structbench.specs import (
    Example,
    ModelSpec,
    SeriesPoint,
    Split,
    SuiteSpec,
    dev_split,
    scored_split,
    train_split,
)
from structbench.suite import SourceFiles, Suite
from structbench.suites.common import RuleTransducer
from tests.reports.support import stats

WORDS = [f"w{i}" for i in range(10)]


AXIS = "k: test items also in train"


def toy_spec(k: int, series: list[SeriesPoint] | None = None) -> SuiteSpec:
    return SuiteSpec(
        id=f"toy-{k}",
        version="1.0.0",
        family="systematicity",
        protocol="transduction",
        description=f"Upper-case a word; {k} of the 10 test words are in train.",
        citation="structbench tests",
        primary_metric="sequence_accuracy",
        splits=[train_split(k + 1), dev_split(1), scored_split("test", 10, "generalisation")],
        series=[SeriesPoint(series="toy", axis=AXIS, value=k, log_axis=True)] if series is None else series,
    )


class Toy(Suite):
    """Train holds the first k test words (and one other); a memorising model scores k / 10."""

    k = 0

    def generate(self, draw: int, files: SourceFiles) -> dict[str, list[Example]]:
        def example(word: str) -> Example:
            return Example(id=word, input=[word], target=[word.upper()])

        return {
            "train": [example(w) for w in [*WORDS[: self.k], "x"]],
            "dev": [example("y")],
            "test": [example(w) for w in WORDS],
        }

    def oracle(self, splits: Mapping[str, Split]) -> RuleTransducer:
        return RuleTransducer("upper", lambda tokens: [t.upper() for t in tokens])


class Toy0(Toy):
    k = 0
    spec = toy_spec(0)


class Toy2(Toy):
    k = 2
    spec = toy_spec(2)


class Toy4(Toy):
    k = 4
    spec = toy_spec(4)


class Alone(Toy):
    """A series of one suite: never drawn."""

    k = 3
    spec = toy_spec(3, [SeriesPoint(series="alone", axis="n", value=3)])


class Memo:
    """Answers what it saw in train, else nothing."""

    name = "memo"
    protocols = ("transduction",)

    def fit(self, train: Split, dev: Split | None, *, seed: int) -> None:
        self.seen = {tuple(e.input): e.target or [] for e in train.examples}

    def transduce(self, inputs: list[list[str]]) -> list[list[str]]:
        return [self.seen.get(tuple(tokens), []) for tokens in inputs]


def test_a_suite_has_one_point_per_series() -> None:
    point = SeriesPoint(series="toy", axis=AXIS, value=1)
    with pytest.raises(ValidationError, match="one point per series"):
        toy_spec(1, [point, point.model_copy(update={"value": 2})])


def test_the_report_draws_a_series_as_a_learning_curve(
    runner: Runner, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    published = Reference(
        suite="toy-4",
        model="Paper's model",
        citation="A 2020",
        where="Fig. 1",
        values={"sequence_accuracy": {"test": 0.5}},
    )
    monkeypatch.setattr("structbench.reports.builders.from_store.load_references", lambda: [published])
    suites = [f"tests.reports.builders.test_series:{name}" for name in ("Toy0", "Toy2", "Toy4", "Alone")]
    for suite in suites:
        for model in ("tests.reports.builders.test_series:Memo", "oracle"):
            assert runner.evaluate(suite, ModelSpec(name=model), [0]).status == {"0": "done"}
    index = write_report(runner.store, tmp_path / "site").read_text()

    assert index.count('<figure id="series-') == 1  # `alone` has one suite: no curve
    figure = index[index.index('<figure id="series-toy">') : index.index("</figure>", index.index('id="series-toy"'))]
    assert (tmp_path / "site" / "plots" / "series-toy.svg").read_text().startswith("<?xml")
    assert f"against {AXIS} (logarithmic axis)" in figure
    memo = re.search(r'<tr><th scope="row">memo</th>(.*?)</tr>', figure, re.S)
    assert memo is not None
    assert re.findall(r'<span class="mean">([\d.]+)</span>', memo.group(1)) == ["0.0", "20.0", "40.0"]
    assert "oracle" not in figure  # a ceiling is set apart, as on every board
    reported = re.search(r"<tr class=\"reported\"><th scope=\"row\">Paper&#39;s model(.*?)</tr>", figure, re.S)
    assert reported is not None and "A 2020, Fig. 1" in reported.group(1)
    assert re.findall(r'<span class="mean">([\d.]+)</span>|class="na"', reported.group(1)) == ["", "", "50.0"]
    assert "◆</span> Paper&#39;s model" in figure  # the marker's glyph in the legend
    assert [href for href in re.findall(r'href="(suites/toy-\d@1.0.0.html)"', figure)] == [
        "suites/toy-0@1.0.0.html",
        "suites/toy-2@1.0.0.html",
        "suites/toy-4@1.0.0.html",
    ]
    page = (tmp_path / "site" / "suites" / "toy-2@1.0.0.html").read_text()
    assert "Point 2 of the series <code>toy</code>" in page and 'href="../index.html#series-toy"' in page
    alone = (tmp_path / "site" / "suites" / "toy-3@1.0.0.html").read_text()
    assert "of the series" not in alone


def test_lines_of_equal_values_are_drawn_once_and_the_legend_names_every_model() -> None:
    zero = [stats(0.0), stats(0.0)]
    curve = Curve(
        "scan-fillers", "fillers", False, [0, 1], [],
        cells={"lstm": [stats(0.4), stats(0.2)], "copy": zero, "majority": zero, "random": zero},
        styles=model_styles(["lstm", "copy", "majority", "random"]),
    )  # fmt: skip
    assert [line.labels for line in curve.lines] == [("lstm",), ("copy", "majority", "random")]
    assert [models for models, _ in curve.legend] == [("lstm",), ("copy", "majority", "random")]
    assert len(curve.plot("sequence_accuracy (%)").lines) == 2
    assert merge_equal([Line.of("a", Style("#000"), zero), Line.of("b", Style("#111"), [stats(0.0), None])]) == [
        Line.of("a", Style("#000"), zero),
        Line.of("b", Style("#111"), [stats(0.0), None]),
    ]
