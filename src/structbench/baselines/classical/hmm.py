"""A first-order HMM tag inducer trained by Baum-Welch (EM), decoded by Viterbi.

The classical baseline of unsupervised POS induction (Christodoulopoulos et al. 2010; Tran
2018 Table 6.2, "HMM"): p(x, z) with start and stop transitions, as in Tran's eq. 6.26.
Forward-backward is scaled (one normaliser per position) and vectorised over all sentences
of one length at a time, so an EM iteration costs one K x K matrix product per token position
in numpy. Initial parameters are random (Dirichlet-like, from the run's seed); the
log-likelihood of every iteration is kept in `log_likelihoods` and shown on a terminal.

Training needs K, which the protocol gives only to `induce`, so `fit` keeps the training
sentences and `induce` runs EM on them (plus any new sentences) before decoding.
"""

from __future__ import annotations

from collections import defaultdict

import numpy as np
from pydantic import PositiveInt
from tqdm import tqdm

from structbench.progress import run_bar
from structbench.specs import Split

TINY = 1e-300


class HmmInducer:
    """Baum-Welch HMM; settings: `iterations` (EM steps, default 100)."""

    name = "hmm"
    protocols = ("tag-induction",)

    def __init__(self, iterations: PositiveInt = 100) -> None:
        self.iterations = int(iterations)
        self.seed = 0
        self.suite = ""
        self.train_sentences: list[list[str]] = []
        self.log_likelihoods: list[float] = []
        self.n_states = 0
        self.vocabulary_size = 0

    def fit(self, train: Split, dev: Split | None, *, seed: int) -> None:
        self.seed, self.suite = seed, train.suite
        self.train_sentences = [list(e.input) for e in train.examples]

    def induce(self, sentences: list[list[str]], n_clusters: int) -> list[list[int]]:
        known = {tuple(s) for s in self.train_sentences}
        corpus = self.train_sentences + [s for s in sentences if tuple(s) not in known]
        vocabulary = {w: i for i, w in enumerate(sorted({w for s in corpus for w in s}))}
        buckets = _by_length([[vocabulary[w] for w in s] for s in corpus if s])
        rng = np.random.default_rng(self.seed)
        k, v = n_clusters, len(vocabulary)
        self.n_states, self.vocabulary_size = k, v
        start = _normalise(rng.random(k) + 1.0)
        transition = _normalise(rng.random((k, k + 1)) + 1.0)  # last column: stop
        emission = _normalise(rng.random((k, v)) + 1.0)
        self.log_likelihoods = []
        with tqdm(
            range(self.iterations),
            desc=f"{run_bar(self.suite, self.name, self.seed)} EM",
            unit="it",
            disable=None,
            leave=False,
        ) as bar:
            for _ in bar:
                start, transition, emission, log_likelihood = _em_step(buckets, start, transition, emission, v)
                self.log_likelihoods.append(log_likelihood)
                bar.set_postfix(loglik=f"{log_likelihood:.1f}")
        return _viterbi([[vocabulary[w] for w in s] for s in sentences], start, transition, emission)

    def compute(self) -> dict[str, int | str]:
        """The leaderboard's compute: `parameters` counts every probability the HMM estimates for K
        states over V word types, K start + K x (K + 1) transition (the last column is stop) + K x V
        emission entries, as sized by the last `induce` (0 before it); `device` is "cpu" (numpy)."""
        k, v = self.n_states, self.vocabulary_size
        return {"parameters": k + k * (k + 1) + k * v, "device": "cpu"}


def _normalise(array: np.ndarray) -> np.ndarray:
    normalised: np.ndarray = array / array.sum(axis=-1, keepdims=True)
    return normalised


def _by_length(sentences: list[list[int]]) -> list[np.ndarray]:
    groups: dict[int, list[list[int]]] = defaultdict(list)
    for sentence in sentences:
        groups[len(sentence)].append(sentence)
    return [np.asarray(group, dtype=np.int64) for _, group in sorted(groups.items())]


def _em_step(
    buckets: list[np.ndarray], start: np.ndarray, transition: np.ndarray, emission: np.ndarray, v: int
) -> tuple[np.ndarray, np.ndarray, np.ndarray, float]:
    k = len(start)
    moves, stop = transition[:, :k], transition[:, k]
    start_counts = np.zeros(k)
    move_counts = np.zeros((k, k))
    stop_counts = np.zeros(k)
    emit_counts = np.zeros((k, v))
    log_likelihood = 0.0
    for words in buckets:
        n, length = words.shape
        observed = emission[:, words].transpose(1, 2, 0)  # n x length x k
        alpha = np.empty((n, length, k))
        scale = np.empty((n, length))
        current = start * observed[:, 0]
        for t in range(length):
            if t:
                current = (alpha[:, t - 1] @ moves) * observed[:, t]
            scale[:, t] = current.sum(axis=1) + TINY
            alpha[:, t] = current / scale[:, t, None]
        end = alpha[:, -1] @ stop + TINY
        log_likelihood += float(np.log(scale).sum() + np.log(end).sum())
        beta = np.empty((n, length, k))
        beta[:, -1] = stop / end[:, None]
        for t in range(length - 2, -1, -1):
            weighted = observed[:, t + 1] * beta[:, t + 1] / scale[:, t + 1, None]
            beta[:, t] = weighted @ moves.T
            move_counts += alpha[:, t].T @ weighted
        gamma = alpha * beta
        start_counts += gamma[:, 0].sum(axis=0)
        stop_counts += gamma[:, -1].sum(axis=0)
        flat_words, flat_gamma = words.ravel(), gamma.reshape(-1, k)
        for state in range(k):
            emit_counts[state] += np.bincount(flat_words, weights=flat_gamma[:, state], minlength=v)
    move_counts *= moves
    new_transition = _normalise(np.concatenate([move_counts, stop_counts[:, None]], axis=1) + 1e-12)
    return _normalise(start_counts + 1e-12), new_transition, _normalise(emit_counts + 1e-12), log_likelihood


def _viterbi(
    sentences: list[list[int]], start: np.ndarray, transition: np.ndarray, emission: np.ndarray
) -> list[list[int]]:
    k = len(start)
    log_moves, log_stop = np.log(transition[:, :k]), np.log(transition[:, k])
    log_emission = np.log(emission)
    out: list[list[int]] = [[] for _ in sentences]
    by_length: dict[int, list[int]] = defaultdict(list)
    for index, sentence in enumerate(sentences):
        by_length[len(sentence)].append(index)
    for length, indices in by_length.items():
        if length == 0:
            continue
        words = np.asarray([sentences[i] for i in indices], dtype=np.int64)
        score = np.log(start) + log_emission[:, words[:, 0]].T
        back = np.empty((len(indices), length, k), dtype=np.int64)
        for t in range(1, length):
            candidates = score[:, :, None] + log_moves[None]
            back[:, t] = candidates.argmax(axis=1)
            score = candidates.max(axis=1) + log_emission[:, words[:, t]].T
        state = (score + log_stop).argmax(axis=1)
        path = np.empty((len(indices), length), dtype=np.int64)
        path[:, -1] = state
        for t in range(length - 1, 0, -1):
            state = back[np.arange(len(indices)), t, state]
            path[:, t - 1] = state
        for row, index in enumerate(indices):
            out[index] = path[row].tolist()
    return out
