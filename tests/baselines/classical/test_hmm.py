"""The Baum-Welch HMM inducer: EM never lowers the likelihood, and it finds obvious classes."""

from __future__ import annotations

import numpy as np

from structbench.baselines.classical.hmm import HmmInducer
from structbench.scoring import induction_metrics
from structbench.specs import Example, Split


def corpus(seed: int, n: int = 300) -> tuple[list[list[str]], list[list[str]]]:
    """Sentences `det noun (det noun)*` with disjoint word classes."""
    rng = np.random.default_rng(seed)
    dets, nouns = ["the", "a", "some"], ["dog", "cat", "yak", "newt", "owl"]
    sentences, tags = [], []
    for _ in range(n):
        pairs = int(rng.integers(1, 4))
        words = [w for _ in range(pairs) for w in (str(rng.choice(dets)), str(rng.choice(nouns)))]
        sentences.append(words)
        tags.append(["D", "N"] * pairs)
    return sentences, tags


def fitted(sentences: list[list[str]], seed: int, iterations: int) -> HmmInducer:
    model = HmmInducer(iterations=iterations)
    train = Split(suite="toy@0", name="train", role="train", draw=0,
                  examples=[Example(id=str(i), input=s) for i, s in enumerate(sentences)])  # fmt: skip
    model.fit(train, None, seed=seed)
    return model


def test_em_never_decreases_the_log_likelihood() -> None:
    sentences, _ = corpus(0)
    model = fitted(sentences, seed=3, iterations=25)
    model.induce(sentences, 4)
    steps = np.diff(model.log_likelihoods)
    assert len(model.log_likelihoods) == 25
    assert (steps >= -1e-6 * abs(model.log_likelihoods[0])).all()
    assert model.log_likelihoods[-1] > model.log_likelihoods[0]


def test_it_recovers_two_obvious_classes_deterministically() -> None:
    sentences, tags = corpus(1)
    first = fitted(sentences, seed=0, iterations=30).induce(sentences, 2)
    again = fitted(sentences, seed=0, iterations=30).induce(sentences, 2)
    assert first == again
    assert [len(c) for c in first] == [len(s) for s in sentences]
    scores = induction_metrics([t for ts in tags for t in ts], [c for cs in first for c in cs])
    assert scores["many_to_one"] == 1.0 and scores["v_measure"] > 0.99
