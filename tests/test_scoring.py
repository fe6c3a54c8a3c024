"""Metrics, statistics over seeds, and how each protocol's answers reach the scorers."""

from __future__ import annotations

import math

import pytest

from structbench.errors import NotApplicable
from structbench.protocols import ask, speaks
from structbench.scoring import (
    PROTOCOL_METRIC,
    Counts,
    SplitScores,
    aggregate_values,
    corpus_metrics,
    score_split,
    strictly_best,
)
from structbench.specs import Example, SuiteSpec, scored_split


def score_protocol(
    protocol: str, examples: list[Example], predictions: list[object], keys: tuple[str, ...] = ()
) -> SplitScores:
    """A split scored with only its protocol's metrics, as a suite without extras scores it."""
    return score_split(protocol, PROTOCOL_METRIC[protocol], examples, predictions, None, keys)


def token_accuracy(examples: list[Example], predictions: list[object]) -> tuple[float, int]:
    return score_protocol("transduction", examples, predictions).metrics["token_accuracy"]


def sequence_correct(examples: list[Example], predictions: list[object]) -> list[bool | None]:
    return score_protocol("transduction", examples, predictions).correct


def many_to_one_accuracy(gold: list[str], induced: list[int]) -> float:
    examples = [Example(id="s", input=["w"] * len(gold), tags=gold)]
    return corpus_metrics("tag-induction", examples, [induced])["many_to_one"].value


def spec(protocol: str, **extra: object) -> SuiteSpec:
    return SuiteSpec(
        id="toy", version="0.0.1", family="test", protocol=protocol, description="", citation="",  # type: ignore[arg-type]
        primary_metric=PROTOCOL_METRIC[protocol],
        splits=[scored_split("test", 3, "generalisation")], **extra,  # type: ignore[arg-type]
    )  # fmt: skip


# --- transduction metrics -------------------------------------------------------------------


def test_sequence_and_token_accuracy() -> None:
    examples = [Example(id="a", input=["x"], target=["1", "2", "3"]), Example(id="b", input=["y"], target=["4", "5"])]
    scores = score_protocol("transduction", examples, [["1", "2", "3"], ["4"]])
    assert scores.metrics["sequence_accuracy"] == (0.5, 2)
    assert scores.correct == [True, False]
    # 3 + 1 of 5 gold tokens at their position
    assert scores.metrics["token_accuracy"] == (0.8, 5)


def test_token_accuracy_is_positional_and_extra_tokens_gain_nothing() -> None:
    examples = [Example(id="a", input=["x"], target=["1", "2", "3"]), Example(id="b", input=["y"], target=["4", "5"])]
    assert token_accuracy(examples, [["1", "2", "3", "9"], ["9", "5", "5"]]) == (0.8, 5)
    assert token_accuracy(examples, [["2", "3"], ["5", "4"]]) == (0.0, 5)  # shifted: nothing at its position
    assert token_accuracy(examples, [[], []]) == (0.0, 5)


def test_a_sequence_is_right_only_when_it_is_exactly_the_target() -> None:
    example = Example(id="a", input=["x"], target=["1", "2"])
    assert sequence_correct([example] * 4, [["1", "2"], ["1"], ["1", "2", "2"], ["2", "1"]]) == [
        True, False, False, False,
    ]  # fmt: skip


def test_breakdown_by_meta() -> None:
    examples = [Example(id=str(i), input=["x"], target=["1"], meta={"n": i % 2}) for i in range(4)]
    scores = score_protocol("transduction", examples, [["1"], ["1"], ["0"], ["1"]], ("n",))
    assert scores.metrics["sequence_accuracy[n=0]"] == (0.5, 2)
    assert scores.metrics["sequence_accuracy[n=1]"] == (1.0, 2)


# --- minimal pairs and forced choice ---------------------------------------------------------


def test_ties_count_wrong() -> None:
    assert strictly_best([-1.0, -2.0], 0)
    assert not strictly_best([-2.0, -1.0], 0)
    assert not strictly_best([-1.0, -1.0], 0)
    assert not strictly_best([-3.0, -1.0, -1.0], 1)
    assert strictly_best([-3.0, -1.0, -2.0], 1)
    assert not strictly_best([math.nan, -1.0], 0)  # a NaN answer is never right


def test_minimal_pair_ties_score_zero() -> None:
    examples = [Example(id=str(i), input=[], candidates=[["good"], ["bad"]], answer=0) for i in range(3)]
    scores = score_protocol("minimal-pair", examples, [[-1.0, -2.0], [-1.5, -1.5], [-3.0, -2.0]])
    assert scores.correct == [True, False, False]
    assert scores.metrics["accuracy"] == (pytest.approx(1 / 3), 3)


def test_many_to_one() -> None:
    gold = ["N", "N", "V", "V", "D", "N"]
    induced = [0, 0, 1, 0, 2, 1]
    # cluster 0 -> N (2 of 3), cluster 1 -> N or V (1 of 2), cluster 2 -> D (1 of 1)
    assert many_to_one_accuracy(gold, induced) == pytest.approx(4 / 6)
    assert many_to_one_accuracy(gold, [5, 5, 7, 7, 9, 5]) == 1.0  # cluster ids are arbitrary
    assert many_to_one_accuracy(gold, [0] * 6) == pytest.approx(3 / 6)  # one cluster: the majority tag
    assert math.isnan(many_to_one_accuracy([], []))


# --- protocols: how answers travel from a model to the scorers --------------------------------


class Scorer:
    name = "scorer"
    protocols = ("minimal-pair", "forced-choice")

    def __init__(self) -> None:
        self.calls: list[list[list[str]]] = []

    def logprob(self, sequences: list[list[str]]) -> list[float]:
        self.calls.append(sequences)
        return [-float(len(s)) for s in sequences]  # shorter is more probable


def test_candidates_are_batched_and_regrouped_per_example() -> None:
    examples = [
        Example(id="1", input=[], candidates=[["a"], ["a", "b"]], answer=0),
        Example(id="2", input=[], candidates=[["a", "b"], ["a"], ["a", "b", "c"]], answer=1),
        Example(id="3", input=[], candidates=[["a"], ["b"]], answer=0),
    ]
    model = Scorer()
    predictions = ask(model, spec("forced-choice"), examples, batch_size=2)
    # two examples per batch: their 2 + 3 candidates in one call, then the last example's 2
    assert model.calls == [
        [["a"], ["a", "b"], ["a", "b"], ["a"], ["a", "b", "c"]],
        [["a"], ["b"]],
    ]
    assert predictions == [[-1.0, -2.0], [-2.0, -1.0, -3.0], [-1.0, -1.0]]
    scores = score_protocol("forced-choice", examples, predictions)
    assert scores.correct == [True, True, False]  # the third is a tie
    assert scores.metrics["accuracy"] == (pytest.approx(2 / 3), 3)


def test_minimal_pairs_travel_as_good_bad_pairs() -> None:
    examples = [
        Example(id="1", input=["the", "dog"], candidates=[["the", "dog", "runs"], ["the", "dog", "run"]]),
        Example(id="2", input=["dogs"], candidates=[["dogs", "run"], ["dogs", "runs"]]),
        Example(id="3", input=["a"], candidates=[["a"], ["a", "b"]]),
    ]
    model = Scorer()
    predictions = ask(model, spec("minimal-pair"), examples, batch_size=2)
    assert [len(call) for call in model.calls] == [4, 2]
    assert predictions == [[-3.0, -3.0], [-2.0, -2.0], [-1.0, -2.0]]
    assert score_protocol("minimal-pair", examples, predictions).correct == [False, False, True]  # ties are wrong


class Transducer:
    name = "reverser"
    protocols = ("transduction",)

    def __init__(self) -> None:
        self.batches: list[int] = []

    def transduce(self, inputs: list[list[str]]) -> list[list[str]]:
        self.batches.append(len(inputs))
        return [list(reversed(tokens)) for tokens in inputs]


def test_transduction_batches_keep_example_order() -> None:
    examples = [Example(id=str(n), input=[str(i) for i in range(n)], target=["0"]) for n in range(1, 6)]
    model = Transducer()
    seen: list[int] = []
    predictions = ask(model, spec("transduction"), examples, batch_size=2, on_batch=seen.append)
    assert model.batches == [2, 2, 1] and seen == [2, 2, 1]
    assert predictions == [[str(i) for i in reversed(range(n))] for n in range(1, 6)]
    assert score_protocol("transduction", examples, predictions).correct == [True, False, False, False, False]


class Labeller:
    name = "labeller"
    protocols = ("classification", "tag-induction")

    def __init__(self) -> None:
        self.induce_calls = 0

    def classify(self, inputs: list[list[str]], labels: list[str]) -> list[str]:
        return [labels[len(i) % len(labels)] for i in inputs]

    def induce(self, sentences: list[list[str]], n_clusters: int) -> list[list[int]]:
        self.induce_calls += 1
        return [[len(w) % n_clusters for w in s] for s in sentences]


def test_classification_and_tag_induction_round_trip() -> None:
    examples = [Example(id=str(n), input=["w"] * n, label=gold) for n, gold in ((1, "pl"), (2, "pl"), (3, "sg"))]
    predictions = ask(Labeller(), spec("classification", labels=["sg", "pl"]), examples, batch_size=2)
    assert predictions == ["pl", "sg", "pl"]
    scores = score_protocol("classification", examples, predictions)
    assert scores.correct == [True, False, False]
    assert scores.metrics["accuracy"] == (pytest.approx(1 / 3), 3)

    tagged = [
        Example(id="s", input=["a", "bb", "c"], tags=["D", "N", "D"]),
        Example(id="t", input=["dd", "e"], tags=["N", "D"]),
        Example(id="u", input=["ff"], tags=["V"]),
    ]
    model = Labeller()
    clusters = ask(model, spec("tag-induction", n_clusters=2), tagged, batch_size=2)
    assert model.induce_calls == 1  # the whole corpus at once, batch size notwithstanding
    assert clusters == [[1, 0, 1], [0, 1], [0]]
    metrics = score_protocol("tag-induction", tagged, clusters).metrics
    # cluster 0 = {N, N, V} -> N (2), cluster 1 = {D, D, D} -> D (3)
    assert metrics["many_to_one"] == (pytest.approx(5 / 6), 6)


def test_a_wrong_number_of_answers_is_an_error() -> None:
    class Short(Labeller):
        def classify(self, inputs: list[list[str]], labels: list[str]) -> list[str]:
            return ["sg"]

    examples = [Example(id=str(n), input=["w"], label="sg") for n in range(3)]
    with pytest.raises(ValueError, match="returned 1 answers for 3 inputs"):
        ask(Short(), spec("classification", labels=["sg"]), examples)


def test_a_model_is_asked_only_in_a_protocol_it_declares() -> None:
    assert speaks(Labeller(), "classification") and not speaks(Labeller(), "transduction")

    class Undeclared(Transducer):
        protocols = ("classification",)  # has transduce, but does not declare it

    assert not speaks(Undeclared(), "transduction")
    examples = [Example(id="1", input=["x"], target=["x"])]
    with pytest.raises(NotApplicable):
        ask(Undeclared(), spec("transduction"), examples)
    with pytest.raises(NotApplicable):
        ask(Labeller(), spec("transduction"), examples)


@pytest.mark.parametrize(
    ("hits", "items", "whole"),
    [
        ([2, 0, 3], [2, 1, 3], True),  # matches counted: Python ints
        ([True, False], [1, 1], True),
        ([2.0, 1.0], [2, 3], True),  # whole numbers as floats
        ([0.5, 1], [1, 1], False),  # partial credit
        ([3, 1], [2, 1], False),  # more hits than items
        ([-1, 1], [2, 1], False),
        ([math.nan, 1], [2, 1], False),
    ],
)
def test_a_count_metric_is_a_proportion_only_when_every_hit_is_a_whole_number_within_its_items(
    hits: list[float], items: list[int], whole: bool
) -> None:
    """Where it is, one seed's interval is Wilson's over the items (`structbench.cells`): a mean of
    partial credit or a miscounted hit must not get it."""
    value, n, proportion = aggregate_values(Counts(hits=hits, items=items))
    assert (n, proportion) == (sum(items), whole)
    assert value == sum(hits) / sum(items) or math.isnan(sum(hits))
    # the second example alone (a breakdown's level) is whole in every case
    assert aggregate_values(Counts(hits=hits, items=items), [1]) == (hits[1] / items[1], items[1], True)


def test_counts_of_hits_and_items_of_different_lengths_are_refused() -> None:
    with pytest.raises(ValueError, match="2 hits for 3 item counts"):
        Counts(hits=[1, 1], items=[1, 1, 1])
