"""Brown clustering: Liang's merge sequence on a text small enough to compute by hand, the within-sentence
variant's on the same text, exact cluster count, determinism, obvious classes, and the run key of each objective."""

from __future__ import annotations

import hashlib
import itertools
import math
import random
from collections import Counter

import numpy as np
import pytest

from structbench import registry
from structbench.baselines.classical import brown
from structbench.baselines.classical.brown import Objective, brown_clusters, merge_sequence
from structbench.errors import UserError
from structbench.runs.context import ModelOnSuite
from structbench.runs.request import ModelRequest
from structbench.specs import ModelSpec
from tests.baselines.classical.test_hmm import corpus

TEXT = [["a", "c", "b"], ["a", "c", "b"], ["a", "a"], ["b", "d"]]
"""Frequencies a 4, b 3, c 2, d 1 (T = 10 tokens). As one stream, a c b a c b a a b d, its 9 bigrams are
ac 2, cb 2, ba 2, aa 1, ab 1, bd 1; within sentences only ac 2, cb 2, aa 1, bd 1 (ba and ab cross a boundary)."""


def test_liang_objective_merges_as_computed_by_hand() -> None:
    """With K = 2 the window starts as {a}, {b}; c enters, then d. Liang's wcluster objective, p(x) = count / 10
    and p(x, y) = bigrams / 9, losses in nats (I before - I after):

    c enters, I = 0.6059: merge a+c leaves AC-AC 3, AC-b 3, b-AC 2, I = 0.2266, loss 0.3793; a+b leaves
    AB-AB 4, AB-c 2, c-AB 2, loss 0.4439; b+c leaves aa 1, a-BC 3, BC-a 2, BC-BC 2, loss 0.4789. So a+c.
    d enters (A = {a, c}, p 0.6), I = 0.3721 over AA 3, Ab 3, bA 2, bd 1: merge A+d loses 0.1924, A+b 0.2660,
    b+d 0.3458. So {a, c} + d, and the clusters are {a, c, d} and {b}."""
    assert merge_sequence(TEXT, 2, "liang") == [(("a",), ("c",)), (("a", "c"), ("d",))]
    clusters = brown_clusters(TEXT, 2)  # liang is the default
    assert clusters["a"] == clusters["c"] == clusters["d"] != clusters["b"]


def test_sentence_bigram_variant_merges_as_computed_by_hand() -> None:
    """The variant counts bigrams within sentences only, with the marginals of the window's bigram counts:

    c enters, counts aa 1, ac 2, cb 2 (5; left a 3 c 2, right a 1 b 2 c 2), I = 0.6730: a+b loses 0.3819,
    b+c 0.5545, a+c all of it (0.6730). So a+b. d enters, counts AB-AB 1, AB-c 2, c-AB 2, AB-d 1 (6),
    I = 0.3183: c+d loses nothing (c and d share AB as their only context, in proportion), AB+d 0.1438,
    AB+c 0.3183. So c+d, and the clusters are {a, b} and {c, d}: not Liang's."""
    assert merge_sequence(TEXT, 2, "sentence-bigrams") == [(("a",), ("b",)), (("c",), ("d",))]
    clusters = brown_clusters(TEXT, 2, "sentence-bigrams")
    assert clusters["a"] == clusters["b"] != clusters["c"] == clusters["d"]


def test_liang_objective_reads_the_text_as_one_stream() -> None:
    """As wcluster reads a file, where a sentence ends changes nothing; for the variant it does."""
    stream = [[w for s in TEXT for w in s]]
    assert merge_sequence(stream, 2, "liang") == merge_sequence(TEXT, 2, "liang")
    assert merge_sequence(stream, 2, "sentence-bigrams") != merge_sequence(TEXT, 2, "sentence-bigrams")


def _liang_information(clusters: list[list[str]], unigram: Counter[str], bigram: Counter[tuple[str, str]]) -> float:
    """wcluster's mutual information of the window, from its definitions, one cluster pair at a time."""
    tokens = sum(unigram.values())
    information = 0.0
    for c, d in itertools.product(clusters, repeat=2):
        n = sum(bigram[x, y] for x in c for y in d)
        if n:
            p_c, p_d = sum(unigram[x] for x in c) / tokens, sum(unigram[y] for y in d) / tokens
            information += n / (tokens - 1) * math.log(n / (tokens - 1) / (p_c * p_d))
    return information


def _by_recomputation(sentences: list[list[str]], k: int) -> list[tuple[tuple[str, ...], tuple[str, ...]]] | None:
    """Liang's merge sequence by recomputing the whole objective for every candidate; None on a near tie."""
    unigram = Counter(w for s in sentences for w in s)
    bigram = Counter(itertools.pairwise([w for s in sentences for w in s]))
    clusters: list[list[str]] = []
    merges = []
    for word in sorted(unigram, key=lambda w: (-unigram[w], w)):
        clusters.append([word])
        if len(clusters) <= k:
            continue
        before = _liang_information(clusters, unigram, bigram)
        losses = []
        for i, j in itertools.combinations(range(len(clusters)), 2):
            merged = [c for n, c in enumerate(clusters) if n not in (i, j)] + [clusters[i] + clusters[j]]
            losses.append((before - _liang_information(merged, unigram, bigram), i, j))
        losses.sort()
        if len(losses) > 1 and losses[1][0] - losses[0][0] < 1e-9:
            return None
        _, i, j = losses[0]
        one, two = tuple(sorted(clusters[i])), tuple(sorted(clusters[j]))
        merges.append((one, two) if one <= two else (two, one))
        clusters[i] += clusters.pop(j)
    return merges


def test_liang_merges_agree_with_recomputing_the_objective_on_random_texts() -> None:
    rng = random.Random(0)
    compared = 0
    for _ in range(60):
        vocabulary = [f"w{i}" for i in range(rng.randint(3, 8))]
        sentences = [rng.choices(vocabulary, k=rng.randint(1, 6)) for _ in range(rng.randint(1, 10))]
        k = rng.randint(1, 3)
        expected = _by_recomputation(sentences, k)
        if expected is not None:
            assert merge_sequence(sentences, k, "liang") == expected, (sentences, k)
            compared += 1
    assert compared >= 30


@pytest.mark.parametrize("objective", ["liang", "sentence-bigrams"])
def test_brown_recovers_determiners_and_nouns(objective: Objective) -> None:
    sentences, _ = corpus(2)
    clusters = brown_clusters(sentences, 2, objective)
    assert brown_clusters(sentences, 2, objective) == clusters
    assert set(clusters.values()) == {0, 1}
    determiners = {clusters[w] for w in ("the", "a", "some")}
    nouns = {clusters[w] for w in ("dog", "cat", "yak", "newt", "owl")}
    assert len(determiners) == len(nouns) == 1 and determiners != nouns


@pytest.mark.parametrize("objective", ["liang", "sentence-bigrams"])
def test_brown_keeps_k_clusters_when_there_are_more_words(objective: Objective) -> None:
    sentences = [[f"w{(i * 7 + j) % 40}" for j in range(8)] for i in range(60)]
    assert len(set(brown_clusters(sentences, 5, objective).values())) == 5


def test_each_objective_is_its_own_run_and_the_old_default_is_not_the_new_one() -> None:
    suite = registry.suite("pos-synthetic")
    default = ModelOnSuite.of(suite, ModelRequest.of(ModelSpec(name="brown")))
    explicit = ModelOnSuite.of(suite, ModelRequest.of(ModelSpec(name="brown", params={"objective": "liang"})))
    variant = ModelOnSuite.of(suite, ModelRequest.of(ModelSpec(name="brown", params={"objective": "sentence-bigrams"})))
    assert default.key.facts["configuration"] == {"objective": "liang"}
    assert (explicit.key.model_hash, explicit.label) == (default.key.model_hash, "brown")
    assert variant.key.model_hash != default.key.model_hash and variant.label == 'brown[objective="sentence-bigrams"]'
    before = hashlib.sha256(b'{"name": "brown", "params": {}}').hexdigest()  # the key `brown` had before this change
    assert before != default.key.model_hash
    with pytest.raises(UserError, match="objective"):
        ModelRequest.of(ModelSpec(name="brown", params={"objective": "liangs"}))


def test_liang_losses_kept_between_merges_are_those_computed_afresh_bit_for_bit(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """`liang` recomputes only the terms of the slots a merge and the next word changed: every merge's
    losses, not just its choice, equal recomputing every term (a Zipfian text of 600 word types)."""
    rng = random.Random(1)
    vocabulary = [f"w{i}" for i in range(600)]
    weights = [1 / (rank + 1) for rank in range(len(vocabulary))]
    sentences = [rng.choices(vocabulary, weights, k=rng.randint(3, 15)) for _ in range(800)]
    seen: dict[bool, list[np.ndarray]] = {True: [], False: []}
    best_pair = brown._best_pair
    for incremental in (True, False):

        def recording(loss: np.ndarray, m: int, into: list[np.ndarray] = seen[incremental]) -> tuple[int, int]:
            into.append(loss.copy())
            return best_pair(loss, m)

        monkeypatch.setattr(brown, "_best_pair", recording)
        brown._windowed(sentences, 12, "liang", record=False, incremental=incremental)
    assert len(seen[True]) == len(seen[False]) > 500
    for step, (kept, afresh) in enumerate(zip(seen[True], seen[False], strict=True)):
        assert np.array_equal(kept, afresh), step
