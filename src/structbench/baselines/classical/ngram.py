"""Count-based language models: interpolated modified Kneser-Ney n-grams and a unigram floor.

`ngram` (Chen & Goodman 1999): order n (default 4), three discounts per order estimated from
the counts of counts (kept within [0.1, count], since highly regular corpora can push the
estimates to zero), continuation counts for the lower orders, interpolation down to a
uniform distribution over the vocabulary plus `<unk>`. Sentences are padded with `<s>` and
end in `</s>`; words unseen in training become `<unk>`. `unigram` is add-one smoothed. Both
are trained on the `input` tokens of a suite's train split and serve the minimal-pair and
forced-choice protocols: whole sentences (`logprob`, natural logs, end of sentence included) and
continuations of a context (`loglikelihood`, no end of sentence); and region surprisals
(`region_surprisals`, SyntaxGym): a region's words' -log2 p, each word given `<s>` and every word
before it in the sentence, summed per region (words are whole regions' tokens, so no word straddles
two regions), no end of sentence. On a suite whose train split is
empty (`agreement-gulordava`, zero-shot data) they have learned nothing, so they are `n/a` there
with that reason rather than a row of ties scored as wrong.
"""

from __future__ import annotations

import math
from collections import Counter, defaultdict

from pydantic import PositiveInt

from structbench.errors import NotApplicable
from structbench.specs import Split

BOS, EOS, UNK = "<s>", "</s>", "<unk>"
MIN_DISCOUNT = 0.1


class KneserNey:
    """Interpolated modified Kneser-Ney language model; setting `order` (default 4)."""

    name = "ngram"
    protocols = ("minimal-pair", "forced-choice", "region-surprisal")

    def __init__(self, order: PositiveInt = 4) -> None:
        self.order = int(order)
        self.vocabulary: set[str] = set()
        # per order n (1..order): counts of n-grams (raw for the top order, continuation below)
        self.counts: list[dict[tuple[str, ...], Counter[str]]] = []
        self.discounts: list[tuple[float, float, float]] = []

    def fit(self, train: Split, dev: Split | None, *, seed: int) -> None:
        sentences = [list(e.input) for e in train.examples]
        if not sentences:
            return
        self.vocabulary = {w for s in sentences for w in s} | {EOS}
        n = self.order
        top: dict[tuple[str, ...], Counter[str]] = defaultdict(Counter)
        for sentence in sentences:
            padded = [BOS] * (n - 1) + sentence + [EOS]
            for i in range(n - 1, len(padded)):
                top[tuple(padded[i - n + 1 : i])][padded[i]] += 1
        counts = [top]
        # continuation counts: how many distinct words precede each lower-order n-gram
        for _ in range(n - 1):
            higher = counts[0]
            lower: dict[tuple[str, ...], Counter[str]] = defaultdict(Counter)
            for history, following in higher.items():
                for word in following:
                    lower[history[1:]][word] += 1
            counts.insert(0, lower)
        self.counts = counts
        self.discounts = [_discounts(level) for level in counts]

    def _probability(self, history: tuple[str, ...], word: str) -> float:
        probability = 1.0 / (len(self.vocabulary) + 1)
        for level in range(self.order):
            context = history[len(history) - level :] if level else ()
            following = self.counts[level].get(context)
            if not following:
                continue
            total = sum(following.values())
            d1, d2, d3 = self.discounts[level]
            count = following.get(word, 0)
            discount = 0.0 if count == 0 else d1 if count == 1 else d2 if count == 2 else d3
            n1 = sum(1 for c in following.values() if c == 1)
            n2 = sum(1 for c in following.values() if c == 2)
            n3 = len(following) - n1 - n2
            backoff = (d1 * n1 + d2 * n2 + d3 * n3) / total
            probability = max(count - discount, 0.0) / total + backoff * probability
        return probability

    def compute(self) -> dict[str, int | str]:
        """The leaderboard's compute: `parameters` counts the stored n-gram counts, one per distinct
        (history, word) of every order 1..n (raw counts for the top order, continuation counts
        below); the 3 discounts per order are left out. `device` is "cpu" (pure Python)."""
        stored = sum(len(following) for level in self.counts for following in level.values())
        return {"parameters": stored, "device": "cpu"}

    def _continued(self, context: list[str], words: list[str]) -> float:
        """log p(words | `<s>` context), each word given the n-1 before it; unseen words are `<unk>`."""
        if not self.counts:
            raise NotApplicable(untrained(self.name))
        history = [BOS] * (self.order - 1) + [w if w in self.vocabulary else UNK for w in context]
        total = 0.0
        for word in words:
            word = word if word in self.vocabulary else UNK
            total += math.log(self._probability(tuple(history[len(history) - self.order + 1 :]), word))
            history.append(word)
        return total

    def logprob(self, sequences: list[list[str]]) -> list[float]:
        """log p of each whole sentence and its `</s>`."""
        return [self._continued([], [*sequence, EOS]) for sequence in sequences]

    def loglikelihood(self, requests: list[tuple[list[str], list[str]]]) -> list[float]:
        """log p(continuation | `<s>` context) of each request, with no `</s>`."""
        return [self._continued(context, continuation) for context, continuation in requests]

    def region_surprisals(self, sentences: list[list[list[str]]]) -> list[list[float]]:
        """Per sentence, each region's words' summed -log2 p, given `<s>` and the sentence's words before them."""
        return [
            [
                -self._continued([w for earlier in regions[:i] for w in earlier], region) / math.log(2)
                for i, region in enumerate(regions)
            ]
            for regions in sentences
        ]


def untrained(name: str) -> str:
    """Why a count-based model that saw no training sentence is `n/a`."""
    return f"{name} counts the suite's train sentences, and this suite has none (zero-shot data): it learned nothing"


def _discounts(level: dict[tuple[str, ...], Counter[str]]) -> tuple[float, float, float]:
    """Chen & Goodman's D1, D2, D3+ from the counts of counts of one order."""
    of = Counter(c for following in level.values() for c in following.values())
    n1, n2, n3, n4 = (of.get(i, 0) for i in (1, 2, 3, 4))
    if not n1 or not n2:
        return 0.5, 0.5, 0.5
    y = n1 / (n1 + 2 * n2)
    d1 = 1 - 2 * y * n2 / n1
    d2 = 2 - 3 * y * n3 / n2 if n2 else d1
    d3 = 3 - 4 * y * n4 / n3 if n3 else d2
    # regular (synthetic) corpora can drive the estimates to 0 or below, which would leave no mass
    # for unseen words; keep each discount inside (0, its count]
    return min(max(d1, MIN_DISCOUNT), 1.0), min(max(d2, MIN_DISCOUNT), 2.0), min(max(d3, MIN_DISCOUNT), 3.0)


class Unigram:
    """Add-one smoothed unigram model: the floor that ignores all context."""

    name = "unigram"
    protocols = ("minimal-pair", "forced-choice", "region-surprisal")

    def __init__(self) -> None:
        self.counts: Counter[str] = Counter()
        self.total = 0

    def fit(self, train: Split, dev: Split | None, *, seed: int) -> None:
        self.counts = Counter(w for e in train.examples for w in [*e.input, EOS])
        self.total = sum(self.counts.values())

    def compute(self) -> dict[str, int | str]:
        """The leaderboard's compute: `parameters` counts the stored word counts (one per training
        word type, `</s>` included); `device` is "cpu" (pure Python)."""
        return {"parameters": len(self.counts), "device": "cpu"}

    def _words(self, words: list[str]) -> float:
        if not self.total:
            raise NotApplicable(untrained(self.name))
        denominator = self.total + len(self.counts) + 1
        return sum(math.log((self.counts.get(w, 0) + 1) / denominator) for w in words)

    def logprob(self, sequences: list[list[str]]) -> list[float]:
        """log p of each whole sentence and its `</s>`."""
        return [self._words([*s, EOS]) for s in sequences]

    def loglikelihood(self, requests: list[tuple[list[str], list[str]]]) -> list[float]:
        """log p of each continuation's words, with no `</s>`: the context is ignored, as a unigram model does."""
        return [self._words(continuation) for _, continuation in requests]

    def region_surprisals(self, sentences: list[list[list[str]]]) -> list[list[float]]:
        """Per sentence, each region's words' summed -log2 p, the context ignored."""
        return [[-self._words(region) / math.log(2) for region in regions] for regions in sentences]
