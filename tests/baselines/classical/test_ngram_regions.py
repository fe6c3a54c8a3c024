"""Region surprisals (SyntaxGym) of the count models: word regions, bits, each word given the sentence before it."""

from __future__ import annotations

import math

import pytest

from structbench.baselines.classical.ngram import BOS, KneserNey, Unigram
from structbench.errors import NotApplicable
from structbench.specs import Example, Split

TRAIN = [
    "the woman who was brought the sandwich fell",
    "the woman brought the sandwich from the kitchen",
    "as the criminal shot the woman yelled",
    "the man fell in the dining room",
]
REGIONS = [[["The", "woman"], ["who", "was", "brought"], ["the", "sandwich"], ["fell"]], [["the"], ["zebra", "fell"]]]
"""`The` and `zebra` are no training words (`<unk>`)."""


def train_split() -> Split:
    examples = [Example(id=str(i), input=line.split()) for i, line in enumerate(TRAIN)]
    return Split(suite="test@1.0.0", name="train", role="train", draw=0, examples=examples)


def test_ngram_regions_sum_each_words_bits_given_everything_before_it() -> None:
    model = KneserNey(order=3)
    model.fit(train_split(), None, seed=0)
    answers = model.region_surprisals(REGIONS)
    for regions, answer in zip(REGIONS, answers, strict=True):
        assert len(answer) == len(regions)
        words = [w for region in regions for w in region]
        history = [BOS, BOS]
        expected: list[float] = []
        for region in regions:
            bits = 0.0
            for word in region:
                seen = word if word in model.vocabulary else "<unk>"
                bits -= math.log2(model._probability(tuple(history[-2:]), seen))
                history.append(seen)
            expected.append(bits)
        assert answer == pytest.approx(expected, rel=1e-12)
        # the regions add up to the sentence without its end: log p of the words as one continuation
        assert sum(answer) == pytest.approx(-model.loglikelihood([([], words)])[0] / math.log(2), rel=1e-12)
    # context counts: `fell` after `brought the sandwich` (seen) is likelier than after `the zebra` (not)
    zebra = model.region_surprisals([[["the"], ["zebra"]]])[0][1]
    assert answers[0][3] < answers[1][1] - zebra


def test_unigram_regions_ignore_the_context() -> None:
    model = Unigram()
    model.fit(train_split(), None, seed=0)
    answers = model.region_surprisals(REGIONS)
    assert answers[0][3] == pytest.approx(answers[1][1] - model.region_surprisals([[["zebra"]]])[0][0])
    assert answers[0][0] == pytest.approx(-model.loglikelihood([([], ["The", "woman"])])[0] / math.log(2))


@pytest.mark.parametrize("model", [KneserNey(), Unigram()])
def test_an_untrained_count_model_is_not_applicable(model: KneserNey | Unigram) -> None:
    with pytest.raises(NotApplicable, match="learned nothing"):
        model.region_surprisals(REGIONS)
