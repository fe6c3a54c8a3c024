"""Brown clustering (Brown et al. 1992), cut at K clusters, as a tag inducer.

The windowed algorithm of Liang (2005), as his `wcluster` program (percyliang/brown-cluster,
`wcluster.cc`) runs it with `--c K`: word types in order of decreasing frequency; the K most
frequent start as K clusters; each further word enters as a new cluster, and of the K+1 the pair
whose merge loses the least mutual information between adjacent clusters is merged. When every
word is placed, K clusters remain (the leaves of `wcluster`'s stage 2 hierarchy) and each token
gets its word's cluster.

The merge objective (`objective`) is one of two:

- `liang` (the default): `wcluster`'s. The text is one stream, the sentences in order (as
  `wcluster` reads a file of one sentence per line: its `read_text`, in `basic/strdb.cc`, reads
  whitespace-separated tokens and never sees a line end), so a sentence's last word and the next
  one's first word are a bigram too. For clusters c, d of the window, p(c) is the whole-text unigram frequency of c's
  words over the T tokens (`create_initial_clusters`, `incorporate_new_phrase`: p1 = count / T)
  and p(c, d) the number of stream bigrams from a word of c to a word of d over the T - 1 bigrams
  (`set_p2_q2_from_count`). The mutual information is the sum of p(c, d) log p(c, d) / (p(c) p(d))
  over pairs of window clusters, and a merge's loss is `compute_L2`'s: the terms of the two
  clusters' rows and columns (each counted once) less those of the merged cluster, whose unigram
  probability is the sum of the two. `wcluster` takes log2, which scales every loss by the same
  positive factor and so merges the same pair; we take the natural log.
- `sentence-bigrams`: our first version, kept as a variant (`--set objective=sentence-bigrams`)
  because its numbers were published here before. Bigrams only within a sentence, and p(c), p(d)
  the left and right marginals of the bigram counts between the window's clusters (normalised by
  their total), not unigram frequencies over the text. On English-EWT with K = 49 it gives other
  clusters than `liang` (see docs/reproductions.md).

Ties: `wcluster` orders words of equal frequency as its (unstable) sort leaves them and breaks
equal losses by slot order; here equal frequencies are ordered by the word and equal losses go
to the first pair of slots, so a run is deterministic. Each step scores all pairs at once in
numpy (O(K^3) per word). Under `liang` the probabilities' denominators are fixed, so between two
merges only the terms that touch the two slots the merge and the next word changed are computed
again (`_LiangLosses`, as `wcluster` keeps its losses up to date rather than recomputing them):
the same losses, bit for bit, as computing every term afresh (`_losses`, which the
`sentence-bigrams` variant still does, its denominators moving with every word), and English-EWT
(about 8,000 word types, K = 49) in a few seconds. No package on the index provided this within
our dependencies, so it is written here.
"""

from __future__ import annotations

import itertools
from collections import Counter
from functools import lru_cache
from typing import Literal, get_args

import numpy as np

from structbench.errors import UserError
from structbench.specs import Split

Objective = Literal["liang", "sentence-bigrams"]
"""The merge objectives (see the module docstring): Liang's `wcluster` and our within-sentence variant."""
OBJECTIVES: tuple[str, ...] = get_args(Objective)
Merge = tuple[tuple[str, ...], tuple[str, ...]]
"""One merge: the words of the two clusters merged, each sorted."""


def _q(counts: np.ndarray, left: np.ndarray, right: np.ndarray, total: float, scale: float) -> np.ndarray:
    """Mutual-information terms n/total log(n scale / (l r)), zero where n is 0.

    With bigram-count marginals l, r (`sentence-bigrams`) scale is the bigram total; with unigram
    counts l, r over T tokens and total = T - 1 bigrams (`liang`) it is T^2 / (T - 1), so that the
    ratio is p(c, d) / (p(c) p(d))."""
    with np.errstate(divide="ignore", invalid="ignore"):
        terms = counts / total * np.log(counts * scale / (left * right))
    return np.where(counts > 0, terms, 0.0)


class BrownInducer:
    """Brown clusters of word types cut at K, by Liang's wcluster objective (`--set objective=sentence-bigrams`: our within-sentence variant)."""

    name = "brown"
    protocols = ("tag-induction",)

    def __init__(self, objective: Objective = "liang") -> None:
        if objective not in OBJECTIVES:  # a Python API caller's value, which `--set` checks before building
            raise UserError(f"brown: objective {objective!r} is not one of {', '.join(OBJECTIVES)}.")
        self.objective: Objective = objective
        self.train_sentences: list[list[str]] = []
        self.n_word_types = 0

    @classmethod
    def configuration(cls, suite_id: str, objective: Objective = "liang") -> dict[str, str]:
        """The objective the clusters are merged by, part of the run key: `brown` without settings
        was the `sentence-bigrams` objective before `liang` became the default, and a stored run of
        it must not answer for the new default."""
        return {"objective": objective}

    def fit(self, train: Split, dev: Split | None, *, seed: int) -> None:
        self.train_sentences = [list(e.input) for e in train.examples]

    def induce(self, sentences: list[list[str]], n_clusters: int) -> list[list[int]]:
        known = {tuple(s) for s in self.train_sentences}
        corpus = self.train_sentences + [s for s in sentences if tuple(s) not in known]
        cluster_of = brown_clusters(corpus, n_clusters, self.objective)
        self.n_word_types = len(cluster_of)
        return [[cluster_of[w] for w in s] for s in sentences]

    def compute(self) -> dict[str, int | str]:
        """The leaderboard's compute: `parameters` counts what the model keeps, one cluster id per
        word type of the clustered corpus (the merge statistics are discarded), as of the last
        `induce` (0 before it); `device` is "cpu" (numpy)."""
        return {"parameters": self.n_word_types, "device": "cpu"}


def brown_clusters(sentences: list[list[str]], k: int, objective: Objective = "liang") -> dict[str, int]:
    """Word -> cluster id in [0, k), the clusters numbered in order of their first slot."""
    cluster_of, _ = _windowed(sentences, k, objective, record=False)
    return cluster_of


def merge_sequence(sentences: list[list[str]], k: int, objective: Objective = "liang") -> list[Merge]:
    """Every merge of the window in order: the words of the two clusters merged (for tests and for
    reading how a clustering came about)."""
    _, merges = _windowed(sentences, k, objective, record=True)
    return merges


def _windowed(
    sentences: list[list[str]], k: int, objective: Objective, *, record: bool, incremental: bool = True
) -> tuple[dict[str, int], list[Merge]]:
    """The window of K + 1 clusters over the words in order of frequency (module docstring);
    `incremental=False` computes every `liang` loss afresh at each merge (for tests)."""
    frequency = Counter(w for s in sentences for w in s)
    words = sorted(frequency, key=lambda w: (-frequency[w], w))
    index = {w: i for i, w in enumerate(words)}
    if objective == "liang":  # one stream: bigrams across sentence boundaries, as wcluster reads a file
        stream = [index[w] for s in sentences for w in s]
        pairs = Counter(itertools.pairwise(stream))
        tokens = len(stream)
    else:
        pairs = Counter((index[a], index[b]) for s in sentences for a, b in itertools.pairwise(s))
        tokens = 0
    following: dict[int, list[tuple[int, int]]] = {}
    preceding: dict[int, list[tuple[int, int]]] = {}
    for (a, b), n in pairs.items():
        following.setdefault(a, []).append((b, n))
        preceding.setdefault(b, []).append((a, n))
    slot_of = np.full(len(words), -1)  # word -> current cluster slot
    size = k + 1
    counts = np.zeros((size, size))
    unigram = np.zeros(size)  # liang: each slot's count of tokens over the whole text
    members: list[list[int]] = [[] for _ in range(size)]
    merges: list[Merge] = []
    filled = 0
    free_slot = 0
    # (a one-token text never fills a window of two or more slots, so its scale is never used)
    liang = _LiangLosses(size, tokens - 1, tokens * tokens / max(tokens - 1, 1)) if objective == "liang" else None
    changed: tuple[int, ...] | None = None  # the slots whose counts moved since the last losses: None, all
    for word in range(len(words)):
        slot = filled if filled < size else free_slot
        slot_of[word] = slot
        unigram[slot] = frequency[words[word]]
        if record:
            members[slot] = [word]
        for other, n in following.get(word, []):
            if slot_of[other] >= 0:
                counts[slot, slot_of[other]] += n
        for other, n in preceding.get(word, []):
            if slot_of[other] >= 0 and other != word:
                counts[slot_of[other], slot] += n
        filled = min(filled + 1, size)
        if filled == size:
            if liang is not None and incremental:
                keep, gone = _best_pair(liang.losses(counts, unigram, changed), size)
            elif liang is not None:
                keep, gone = _best_pair(_losses(counts, unigram, unigram, liang.total, liang.scale), size)
            elif (bigrams := counts.sum()) == 0:
                keep, gone = 0, size - 1  # no bigram between the window's clusters: nothing to choose by
            else:
                keep, gone = _best_pair(_losses(counts, counts.sum(axis=1), counts.sum(axis=0), bigrams, bigrams), size)
            changed = (keep, gone)  # merged, and the next word's slot
            if record:
                merges.append(_merge_words(members, keep, gone, words))
                members[keep] += members[gone]
            counts[keep] += counts[gone]
            counts[:, keep] += counts[:, gone]
            counts[gone] = 0
            counts[:, gone] = 0
            unigram[keep] += unigram[gone]
            unigram[gone] = 0
            slot_of[slot_of == gone] = keep
            free_slot = gone
    occupied = sorted(set(slot_of.tolist()))
    renumber = {slot: i for i, slot in enumerate(occupied)}
    return {w: renumber[int(slot_of[i])] for i, w in enumerate(words)}, merges


def _merge_words(members: list[list[int]], keep: int, gone: int, words: list[str]) -> Merge:
    """The two merged clusters as sorted word tuples, the one with the smaller first word first."""
    one, two = (tuple(sorted(words[i] for i in members[slot])) for slot in (keep, gone))
    return (one, two) if one <= two else (two, one)


@lru_cache(maxsize=4)
def _pairs(m: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The slot pairs (a < b) of an m-slot window, and per pair the mask of the other slots: the same
    for every merge of a window of that size (all but the last few merges), so made once."""
    a, b = np.triu_indices(m, k=1)
    others = np.ones((len(a), m), dtype=bool)
    others[np.arange(len(a)), a] = False
    others[np.arange(len(a)), b] = False
    for array in (a, b, others):
        array.flags.writeable = False
    return a, b, others


def _best_pair(loss: np.ndarray, m: int) -> tuple[int, int]:
    """The pair (keep, gone) of an m-slot window whose merge loses the least: the first on a tie."""
    a, b, _ = _pairs(m)
    best = int(np.argmin(loss))
    return int(a[best]), int(b[best])


def _losses(counts: np.ndarray, left: np.ndarray, right: np.ndarray, total: float, scale: float) -> np.ndarray:
    """Per slot pair (a < b, `_pairs`), the mutual information its merge loses: `counts` are the
    bigram counts between slots, `left`/`right` each slot's marginal counts, and `total`, `scale`
    what turns them into probabilities (`_q`)."""
    a, b, others = _pairs(counts.shape[0])
    q = _q(counts, left[:, None], right[None, :], total, scale)
    row_q, col_q = q.sum(axis=1), q.sum(axis=0)
    removed = row_q[a] + row_q[b] + col_q[a] + col_q[b] - q[a, a] - q[a, b] - q[b, a] - q[b, b]
    merged_left, merged_right = left[a] + left[b], right[a] + right[b]
    row = counts[a] + counts[b]  # pairs x m: merged cluster followed by cluster k
    col = counts[:, a].T + counts[:, b].T  # pairs x m: cluster k followed by merged cluster
    added_row = np.where(others, _q(row, merged_left[:, None], right[None, :], total, scale), 0.0).sum(axis=1)
    added_col = np.where(others, _q(col, left[None, :], merged_right[:, None], total, scale), 0.0).sum(axis=1)
    self_count = counts[a, a] + counts[a, b] + counts[b, a] + counts[b, b]
    added_self = _q(self_count, merged_left, merged_right, total, scale)
    loss: np.ndarray = removed - (added_row + added_col + added_self)
    return loss


class _LiangLosses:
    """`_losses` under `liang`, kept between merges: with unigram marginals and a fixed bigram total,
    a term p(c, d) log p(c, d) / (p(c) p(d)) changes only when c or d changed, so after a merge (and
    the next word entering the freed slot) only the terms of those two slots are computed again.
    Each term is computed by the same operations on the same values as in `_losses`, and the sums run
    over arrays of the same shape and layout, so the losses are `_losses`'s bit for bit."""

    def __init__(self, size: int, total: float, scale: float) -> None:
        self.total, self.scale = total, scale
        self.a, self.b, self.others = _pairs(size)
        self.touching = [np.flatnonzero((self.a == s) | (self.b == s)) for s in range(size)]
        """Per slot, the pairs it is one of."""
        self.q = np.zeros((size, size))
        self.terms = np.zeros((2, len(self.a), size))
        """Per pair and slot k: the term of the merged pair followed by k, and of k followed by the merged
        pair (0 for k in the pair)."""

    def losses(self, counts: np.ndarray, unigram: np.ndarray, changed: tuple[int, ...] | None) -> np.ndarray:
        """Every pair's loss, `changed` naming the slots whose counts or unigram moved since the last
        call (None: compute every term)."""
        a, b, total, scale = self.a, self.b, self.total, self.scale
        merged = unigram[a] + unigram[b]
        if changed is None:
            self.q[:] = _q(counts, unigram[:, None], unigram[None, :], total, scale)
            pairs = np.arange(len(a))
        else:
            # (x * y is y * x, bit for bit, so both directions share one call)
            slots = np.array(changed)
            self.q[slots] = _q(counts[slots], unigram[slots, None], unigram[None, :], total, scale)
            self.q[:, slots] = _q(counts[:, slots], unigram[:, None], unigram[None, slots], total, scale)
            # every pair's terms with a changed slot k
            after, before = counts[:, slots], counts[slots].T  # m x changed: slot, then each changed; and back
            both = np.stack([after[a] + after[b], before[a] + before[b]])
            self.terms[:, :, slots] = _q(both, merged[None, :, None], unigram[None, None, slots], total, scale)
            # a pair of which a changed slot is one: all its terms
            pairs = np.concatenate([self.touching[s] for s in changed])
        pa, pb = a[pairs], b[pairs]
        both = np.stack([counts[pa] + counts[pb], counts[:, pa].T + counts[:, pb].T])
        fresh = _q(both, merged[None, pairs, None], unigram[None, None, :], total, scale)
        self.terms[:, pairs] = np.where(self.others[None, pairs], fresh, 0.0)
        q = self.q
        row_q, col_q = q.sum(axis=1), q.sum(axis=0)
        removed = row_q[a] + row_q[b] + col_q[a] + col_q[b] - q[a, a] - q[a, b] - q[b, a] - q[b, b]
        self_count = counts[a, a] + counts[a, b] + counts[b, a] + counts[b, b]
        added_self = _q(self_count, merged, merged, total, scale)
        added_row, added_col = self.terms.sum(axis=2)
        loss: np.ndarray = removed - (added_row + added_col + added_self)
        return loss
