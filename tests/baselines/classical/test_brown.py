"""Brown clustering: exact cluster count, determinism, and obvious classes recovered."""

from __future__ import annotations

from structbench.baselines.classical.brown import brown_clusters
from tests.baselines.classical.test_hmm import corpus


def test_brown_recovers_determiners_and_nouns() -> None:
    sentences, _ = corpus(2)
    clusters = brown_clusters(sentences, 2)
    assert brown_clusters(sentences, 2) == clusters
    assert set(clusters.values()) == {0, 1}
    determiners = {clusters[w] for w in ("the", "a", "some")}
    nouns = {clusters[w] for w in ("dog", "cat", "yak", "newt", "owl")}
    assert len(determiners) == len(nouns) == 1 and determiners != nouns


def test_brown_keeps_k_clusters_when_there_are_more_words() -> None:
    sentences = [[f"w{(i * 7 + j) % 40}" for j in range(8)] for i in range(60)]
    assert len(set(brown_clusters(sentences, 5).values())) == 5
