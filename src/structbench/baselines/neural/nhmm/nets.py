"""The networks and exact inference of the neural HMM (`nhmm`; Tran 2018, thesis ch. 6, §6.5-6.7).

An HMM whose emission and transition distributions are the softmax outputs of networks:

- emission (eq. 6.27): p(w_i | z_k) = softmax_i(v_kᵀ w_i + b_i), v_k a tag embedding passed
  through a ReLU, w_i and b_i the output layer's weights and bias of word i (`linear`), or
  w_i computed for the whole vocabulary by a character CNN with kernel widths 1 to 7 (`conv`,
  §6.6);
- transition (eq. 6.28): T = U q + b reshaped to a square matrix with a softmax per row, q a
  learned query embedding (`matrix`), or q replaced by the state h_{t-1} of a stacked LSTM
  that has read the words before position t (`lstm`, §6.7), with dropout on its vertical
  connections.

The chain has start and stop transitions, as eq. 6.26 has n + 1 transitions: T is
(K + 1) x (K + 1), its extra row the start state and its extra column the stop event (start
cannot stop at once, so the empty sentence has no mass and p(x) sums to 1 over sentences).
With the LSTM, h_0 is its state after a start symbol w_0 (the thesis's p(z_t | z_{t-1},
w_0, ..., w_{t-1})) and gives the start row; h_t gives the moves out of word t, and the stop
of a sentence of n words comes from h_n.

`forward_log_likelihood` (the forward algorithm over a batch, its messages in log space) and
`viterbi` (batched max-product with back-pointers) are exact for this chain; tests/baselines/neural/test_nhmm.py
checks both against enumeration of every tag sequence. The forward step's logsumexp over the
previous state is taken as a matrix product of the max-shifted messages with the max-shifted
transition probabilities (`log_matmul`, exact also for peaked transitions): the same number, an
order of magnitude faster on a CPU than building the B x K x K sums (the max-product step of
Viterbi builds them; it needs no gradient).

Initialisation is the thesis's (§6.9): embeddings (tags, words read by the LSTM, characters,
the query) ~ N(0, 1); linear and convolution layers uniform in ±1/sqrt(n_in), Torch's default
and PyTorch's (the thesis writes "standard deviation" for that bound), the output layer's
word vectors w_i and biases b_i included (they are a linear layer's weights, as in the
authors' code); LSTM weights ~ N(0, 1/(n_in + n)) as variance, which is the thesis's
N(0, 1/2n) for input size n and what the authors' LSTM (Justin Johnson's torch-rnn) draws;
LSTM biases 0, forget gate 1.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import torch
from torch import nn

from structbench.baselines.neural.nhmm.settings import NhmmArchitecture

CHAR_PAD, WORD_BEGIN, WORD_END = 0, 1, 2
"""Character ids of padding and of the markers around every word; real characters follow."""


def word_characters(words: list[str], architecture: NhmmArchitecture) -> tuple[torch.Tensor, int]:
    """[V, L] character ids of each word between its markers, cut or padded to L, and the number of
    character ids. L is the longest word (markers included) capped at `max_word_length`, and at
    least the widest kernel, so that every filter fits."""
    alphabet = {c: i + 3 for i, c in enumerate(sorted({c for w in words for c in w}))}
    longest = max((len(w) + 2 for w in words), default=2)
    width = max(min(longest, architecture.max_word_length), len(architecture.feature_maps))
    ids = torch.full((len(words), width), CHAR_PAD, dtype=torch.long)
    for row, word in enumerate(words):
        chars = [WORD_BEGIN, *(alphabet[c] for c in word), WORD_END][:width]
        ids[row, : len(chars)] = torch.tensor(chars)
    return ids, len(alphabet) + 3


class CharCnn(nn.Module):
    """Word vectors from characters (§6.6, after Kim et al. 2016): one convolution per width,
    tanh, max over positions, the pooled features concatenated and projected."""

    def __init__(self, n_chars: int, architecture: NhmmArchitecture) -> None:
        super().__init__()
        dim = architecture.char_embedding
        self.embedding = nn.Embedding(n_chars, dim, padding_idx=CHAR_PAD)
        nn.init.normal_(self.embedding.weight)
        with torch.no_grad():
            self.embedding.weight[CHAR_PAD].zero_()
        self.convolutions = nn.ModuleList(
            nn.Conv1d(dim, maps, width) for width, maps in enumerate(architecture.feature_maps, start=1)
        )
        self.projection = nn.Linear(sum(architecture.feature_maps), architecture.size)

    def forward(self, chars: torch.Tensor) -> torch.Tensor:
        """[V, L] character ids -> [V, size] word vectors."""
        embedded = self.embedding(chars).transpose(1, 2)  # V x dim x L
        pooled = [torch.tanh(conv(embedded)).amax(dim=2) for conv in self.convolutions]
        vectors: torch.Tensor = self.projection(torch.cat(pooled, dim=1))
        return vectors


class Emission(nn.Module):
    """log p(word | tag) for every tag and word type (eq. 6.27)."""

    chars: torch.Tensor | None
    """[V, L] character ids of every word type (with the char-CNN)."""

    def __init__(
        self, architecture: NhmmArchitecture, n_states: int, n_words: int, chars: torch.Tensor | None, n_chars: int
    ) -> None:
        super().__init__()
        size = architecture.size
        bound = 1.0 / math.sqrt(size)  # the output layer's, a linear layer with `size` inputs
        self.tags = nn.Embedding(n_states, size)
        nn.init.normal_(self.tags.weight)
        self.bias = nn.Parameter(torch.empty(n_words).uniform_(-bound, bound))
        self.char_cnn = CharCnn(n_chars, architecture) if chars is not None else None
        self.word_vectors = (
            None if chars is not None else nn.Parameter(torch.empty(n_words, size).uniform_(-bound, bound))
        )
        self.register_buffer("chars", chars, persistent=False)

    def forward(self) -> torch.Tensor:
        """[K, V] log-probabilities, each row a distribution over the vocabulary."""
        if self.char_cnn is not None:
            words: torch.Tensor = self.char_cnn(self.chars)
        else:
            assert self.word_vectors is not None  # one of the two is built
            words = self.word_vectors
        logits = torch.relu(self.tags.weight) @ words.T + self.bias
        return logits.log_softmax(dim=1)


class Transition(nn.Module):
    """(K + 1) x (K + 1) transition log-probabilities (eq. 6.28): rows are the K states then start,
    columns the K states then stop; from a learned query, or per position from an LSTM."""

    forbidden: torch.Tensor
    """[K+1, K+1] True at start -> stop."""

    def __init__(self, architecture: NhmmArchitecture, n_states: int, n_words: int) -> None:
        super().__init__()
        size, self.n_states = architecture.size, n_states
        self.lstm: nn.LSTM | None = None
        if architecture.transition == "matrix":
            self.query = nn.Parameter(torch.randn(size))
        else:
            self.words = nn.Embedding(n_words + 1, size)  # the last id is the start symbol w_0
            nn.init.normal_(self.words.weight)
            between = architecture.dropout if architecture.layers > 1 else 0.0
            self.lstm = nn.LSTM(size, size, architecture.layers, batch_first=True, dropout=between)
            _init_lstm(self.lstm)
            self.drop = nn.Dropout(architecture.dropout)  # above the top layer too, as below it
        self.project = nn.Linear(size, (n_states + 1) ** 2)
        forbidden = torch.zeros(n_states + 1, n_states + 1, dtype=torch.bool)
        forbidden[n_states, n_states] = True  # start -> stop: no empty sentences
        self.register_buffer("forbidden", forbidden, persistent=False)

    def forward(self, words: torch.Tensor) -> torch.Tensor:
        """[B, T] word ids -> [K+1, K+1] (matrix) or [B, T+1, K+1, K+1] (lstm, position j from h_j)."""
        k = self.n_states + 1
        logits: torch.Tensor
        if self.lstm is None:
            logits = self.project(self.query).view(k, k)
        else:
            start = torch.full_like(words[:, :1], self.words.num_embeddings - 1)
            states, _ = self.lstm(self.words(torch.cat([start, words], dim=1)))
            logits = self.project(self.drop(states)).view(words.shape[0], words.shape[1] + 1, k, k)
        return logits.masked_fill(self.forbidden, -math.inf).log_softmax(dim=-1)


def _init_lstm(lstm: nn.LSTM) -> None:
    """Weights ~ N(0, 1/(n_in + n)) (as variance), biases 0 but the forget gate's input bias 1."""
    n = lstm.hidden_size
    for layer in range(lstm.num_layers):
        weights = (getattr(lstm, f"weight_ih_l{layer}"), getattr(lstm, f"weight_hh_l{layer}"))
        std = 1.0 / math.sqrt(weights[0].shape[1] + n)
        with torch.no_grad():
            for weight in weights:
                weight.normal_(0.0, std)
            getattr(lstm, f"bias_hh_l{layer}").zero_()
            bias = getattr(lstm, f"bias_ih_l{layer}")
            bias.zero_()
            bias[n : 2 * n] = 1.0  # PyTorch's gate order: input, forget, cell, output


@dataclass(frozen=True)
class Potentials:
    """A batch's log-probabilities, as the forward algorithm and Viterbi read them."""

    transitions: torch.Tensor
    """[B or 1, T+1 or 1, K+1, K+1] log p(next | current): rows the K states then start, columns the
    K states then stop; position j holds the transitions out of the j-th word (0: the start), one
    position shared by all when the transitions do not depend on the words."""
    emit: torch.Tensor
    """[B, T, K] log p(x_t | z_t)."""
    lengths: torch.Tensor
    """[B] words per row (each at least 1); positions beyond are padding."""


class NeuralHmmNet(nn.Module):
    """The emission and transition networks of one NHMM with K states over V word types."""

    def __init__(self, architecture: NhmmArchitecture, n_states: int, words: list[str]) -> None:
        super().__init__()
        self.n_states = n_states
        conv = architecture.emission == "conv"
        char_ids, n_chars = word_characters(words, architecture) if conv else (None, 0)
        self.emission = Emission(architecture, n_states, len(words), char_ids, n_chars)
        self.transition = Transition(architecture, n_states, len(words))

    def potentials(self, words: torch.Tensor, lengths: torch.Tensor) -> Potentials:
        """Log-probabilities for a right-padded [B, T] batch of word ids with [B] lengths (all ≥ 1)."""
        table = self.transition(words)
        if table.dim() == 2:
            table = table[None, None]
        return Potentials(table, self.emission().T[words], lengths)


def _chain(potentials: Potentials, viterbi: bool) -> tuple[torch.Tensor, list[torch.Tensor], torch.Tensor]:
    """The forward recursion, with logsumexp (sum-product) or max (max-product, keeping back-pointers):
    [B] log p(x) or the best path's log p(x, z), the back-pointers, and [B] each row's best last state."""
    k = potentials.emit.shape[2]
    tables, emit, lengths = potentials.transitions.unbind(1), potentials.emit.unbind(1), potentials.lengths
    alpha = tables[0][:, k, :k] + emit[0]  # B x K, from start into the first word
    total = torch.full_like(alpha[:, 0], -math.inf)
    last = torch.zeros_like(lengths)
    pointers: list[torch.Tensor] = []
    for t in range(1, len(emit) + 1):  # t words read; alpha is over the state of word t-1 (0-based)
        table = tables[min(t, len(tables) - 1)]
        ends = alpha + table[:, :k, k]
        if viterbi:
            end, state = ends.max(dim=1)
            last = torch.where(lengths == t, state, last)
        else:
            end = torch.logsumexp(ends, dim=1)
        total = torch.where(lengths == t, end, total)
        if t < len(emit):
            if viterbi:
                best, pointer = (alpha[:, :, None] + table[:, :k, :k]).max(dim=1)
                pointers.append(pointer)
            else:
                best = log_matmul(alpha, table[:, :k, :k])
            alpha = best + emit[t]  # rows already ended carry on, unread
    return total, pointers, last


def log_matmul(alpha: torch.Tensor, moves: torch.Tensor) -> torch.Tensor:
    """[B, K] logsumexp_i(alpha[b, i] + moves[b, i, j]) for [B, K] messages and [B or 1, K, K]
    log-probabilities, exactly and without materialising the B x K x K sums.

    As logsumexp does it, with a matrix product for the sum: the messages are shifted by their row's
    maximum and the moves by their column's (constants to autograd, so the gradient is exact),
    exponentiated, multiplied and logged, and the shifts added back. A sum of the shifted terms
    can still underflow where the best message and the best move into a state lie on different
    paths (a peaked transition: the state most messages sit in almost never moves to j); an entry
    whose sum is below `lossy_below` (the terms that float rounding may have lost there are within
    its precision) is computed again from its own K terms with logsumexp. A row or column that is
    all -inf gives -inf, never NaN."""
    row_shift = _finite_or_zero(alpha.detach().amax(dim=1, keepdim=True))  # [B, 1]
    column_shift = _finite_or_zero(moves.detach().amax(dim=1, keepdim=True))  # [B or 1, 1, K]
    weights, probabilities = (alpha - row_shift).exp(), (moves - column_shift).exp()
    if probabilities.shape[0] == 1:
        summed = weights @ probabilities[0]
    else:
        summed = torch.bmm(weights[:, None, :], probabilities).squeeze(1)
    lossy = summed < lossy_below(summed.dtype, moves.shape[1])
    # a lossy entry's log is replaced below; logging 1 there keeps its (unused) gradient finite
    result = torch.where(lossy, 1.0, summed).log() + row_shift + column_shift.squeeze(1)
    if not bool(lossy.any()):
        return result
    rows, columns = lossy.nonzero(as_tuple=True)
    sources = rows if moves.shape[0] > 1 else torch.zeros_like(rows)
    terms = alpha[rows] + moves[sources, :, columns]  # [n, K]: the K paths into each lossy entry
    shift = _finite_or_zero(terms.detach().amax(dim=1))
    total = (terms - shift[:, None]).exp().sum(dim=1)
    reached = total > 0  # else every path is -inf: so is the entry, with a zero gradient, not NaN
    exact = torch.where(reached, torch.where(reached, total, 1.0).log() + shift, -math.inf)
    return result.index_put((rows, columns), exact)


def lossy_below(dtype: torch.dtype, terms: int) -> float:
    """The smallest sum of `terms` shifted terms in (0, 1] whose log `log_matmul` trusts: below it, terms
    that underflowed (each under the dtype's smallest normal number) may add up to more than its rounding."""
    info = torch.finfo(dtype)
    return terms * info.tiny / info.eps


def _finite_or_zero(shift: torch.Tensor) -> torch.Tensor:
    """A shift of 0 where the maximum is -inf (every term -inf), so that no -inf - -inf makes a NaN."""
    return torch.where(torch.isfinite(shift), shift, torch.zeros_like(shift))


def forward_log_likelihood(potentials: Potentials) -> torch.Tensor:
    """[B] log p(x) of each sentence: the forward algorithm with messages in log space, all rows at once."""
    return _chain(potentials, viterbi=False)[0]


def viterbi(potentials: Potentials) -> tuple[torch.Tensor, torch.Tensor]:
    """[B, T] the most probable tag sequence of each row (positions beyond a row's length hold
    nothing meaningful) and [B] its log p(x, z)."""
    with torch.no_grad():
        total, pointers, last = _chain(potentials, viterbi=True)
        lengths = potentials.lengths
        state = last
        path = []
        for t in range(potentials.emit.shape[1] - 1, -1, -1):
            state = torch.where(lengths - 1 == t, last, state)
            path.append(state)
            if t:
                state = pointers[t - 1].gather(1, state[:, None]).squeeze(1)
        return torch.stack(path[::-1], dim=1), total
