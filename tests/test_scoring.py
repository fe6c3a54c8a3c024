"""Metrics, statistics over seeds, and how each protocol's answers reach the scorers."""

from __future__ import annotations

import math

import numpy as np
import pytest

from harness.protocols import ask
from harness.scoring import many_to_one_accuracy, score_protocol, seed_stats, strictly_best, token_accuracy
from harness.specs import Example, SplitSpec, SuiteSpec


def spec(protocol: str, **extra: object) -> SuiteSpec:
    return SuiteSpec(
        id="toy", version="0.0.1", family="test", protocol=protocol, description="", citation="",  # type: ignore[arg-type]
        splits=[SplitSpec(name="test", role="test", size=3)], **extra,  # type: ignore[arg-type]
    )  # fmt: skip


def test_sequence_and_token_accuracy() -> None:
    examples = [Example(id="a", input=["x"], target=["1", "2", "3"]), Example(id="b", input=["y"], target=["4", "5"])]
    scores = score_protocol("transduction", examples, [["1", "2", "3"], ["4"]])
    assert scores.metrics["sequence_accuracy"] == (0.5, 2)
    assert scores.correct == [True, False]
    # 3 + 1 of 5 gold tokens at their position; a longer prediction gains nothing
    assert scores.metrics["token_accuracy"] == (0.8, 5)
    assert token_accuracy(examples, [["1", "2", "3", "9"], ["9", "5", "5"]]) == (0.8, 5)


def test_breakdown_by_meta() -> None:
    examples = [Example(id=str(i), input=["x"], target=["1"], meta={"n": i % 2}) for i in range(4)]
    scores = score_protocol("transduction", examples, [["1"], ["1"], ["0"], ["1"]], ["n"])
    assert scores.metrics["sequence_accuracy[n=0]"] == (0.5, 2)
    assert scores.metrics["sequence_accuracy[n=1]"] == (1.0, 2)


def test_ties_count_wrong() -> None:
    assert strictly_best([-1.0, -2.0], 0)
    assert not strictly_best([-1.0, -1.0], 0)
    assert not strictly_best([-3.0, -1.0, -1.0], 1)
    assert strictly_best([-3.0, -1.0, -2.0], 1)


def test_seed_stats_match_numpy_and_are_deterministic() -> None:
    values = [0.1, 0.4, 0.35, 0.2, 0.3]
    stats = seed_stats(values)
    assert stats.mean == pytest.approx(np.mean(values))
    assert stats.std == pytest.approx(np.std(values, ddof=1))
    assert (stats.min, stats.max, stats.n_seeds, stats.per_seed) == (0.1, 0.4, 5, values)
    assert stats.min <= stats.ci_low < stats.mean < stats.ci_high <= stats.max
    assert seed_stats(values) == stats


def test_seed_stats_degenerate_cases() -> None:
    one = seed_stats([0.7])
    assert (one.mean, one.std, one.ci_low, one.ci_high) == (0.7, None, 0.7, 0.7)
    same = seed_stats([1.0, 1.0, 1.0])
    assert (same.std, same.ci_low, same.ci_high) == (0.0, 1.0, 1.0)


def test_many_to_one() -> None:
    gold = ["N", "N", "V", "V", "D", "N"]
    induced = [0, 0, 1, 0, 2, 1]
    # cluster 0 -> N (2 of 3), cluster 1 -> N or V (1 of 2), cluster 2 -> D (1 of 1)
    assert many_to_one_accuracy(gold, induced) == pytest.approx(4 / 6)
    assert math.isnan(many_to_one_accuracy([], []))


class Scorer:
    name = "scorer"
    protocols = ("minimal-pair", "forced-choice")

    def __init__(self) -> None:
        self.calls: list[int] = []

    def logprob(self, sequences: list[list[str]]) -> list[float]:
        self.calls.append(len(sequences))
        return [-float(len(s)) for s in sequences]  # shorter is more probable


def test_candidates_are_batched_and_regrouped_per_example() -> None:
    examples = [
        Example(id="1", input=[], candidates=[["a"], ["a", "b"]], answer=0),
        Example(id="2", input=[], candidates=[["a", "b"], ["a"], ["a", "b", "c"]], answer=1),
        Example(id="3", input=[], candidates=[["a"], ["b"]], answer=0),
    ]
    model = Scorer()
    predictions = ask(model, spec("forced-choice"), examples, batch_size=2)
    assert model.calls == [5, 2]
    assert predictions == [[-1.0, -2.0], [-2.0, -1.0, -3.0], [-1.0, -1.0]]
    scores = score_protocol("forced-choice", examples, predictions)
    assert scores.correct == [True, True, False]  # the third is a tie


class Labeller:
    name = "labeller"
    protocols = ("classification", "tag-induction")

    def classify(self, inputs: list[list[str]], labels: list[str]) -> list[str]:
        return [labels[len(i) % len(labels)] for i in inputs]

    def induce(self, sentences: list[list[str]], n_clusters: int) -> list[list[int]]:
        return [[len(w) % n_clusters for w in s] for s in sentences]


def test_classification_and_tag_induction_round_trip() -> None:
    examples = [Example(id=str(n), input=["w"] * n, label=gold) for n, gold in ((1, "pl"), (2, "pl"), (3, "sg"))]
    predictions = ask(Labeller(), spec("classification", labels=["sg", "pl"]), examples)
    assert predictions == ["pl", "sg", "pl"]
    assert score_protocol("classification", examples, predictions).metrics["accuracy"] == (pytest.approx(1 / 3), 3)
    tagged = [Example(id="s", input=["a", "bb", "c"], tags=["D", "N", "D"])]
    clusters = ask(Labeller(), spec("tag-induction", n_clusters=2), tagged)
    assert clusters == [[1, 0, 1]]
    assert score_protocol("tag-induction", tagged, clusters).metrics["many_to_one"] == (1.0, 3)


def test_a_wrong_number_of_answers_is_an_error() -> None:
    class Short(Labeller):
        def classify(self, inputs: list[list[str]], labels: list[str]) -> list[str]:
            return ["sg"]

    examples = [Example(id=str(n), input=["w"], label="sg") for n in range(3)]
    with pytest.raises(ValueError, match="returned 1 answers for 3 inputs"):
        ask(Short(), spec("classification", labels=["sg"]), examples)
