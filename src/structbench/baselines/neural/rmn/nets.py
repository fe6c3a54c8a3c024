"""Recurrent Memory Network (RMN; Tran 2018, thesis ch. 4; Tran, Bisazza & Monz 2016) as a word-level LM.

An LSTM whose hidden state h_t attends over the n most recent input words (the current word
x_t included) through a *Memory Block* (MB, §4.3.1), a one-hop memory network:

- two lookup tables M, C ∈ R^{|V|×d} give every word in the window an input (key) and an
  output (value) memory embedding; M_i, C_i ∈ R^{n×d} are those of the window {x_i};
- attention p_t = softmax(M_i h_t) (eq. 4.1), or with the temporal matrix T ∈ R^{n×d},
  p_t = softmax((M_i + T) h_t) (eq. 4.2); row j of T belongs to the word j positions back
  (row 0 to the current word), so that at t < n the first t+1 rows are used: the thesis's
  "slice T[1:t]" instead of padding (§4.4.2), which `memory_windows` reproduces by masking
  the slots before the sentence start out of the softmax;
- context s_t = C_iᵀ p_t (eq. 4.3);
- composition h^m_t = g(s_t, h_t): `gated`, the GRU-like unit of eqs. 4.4-4.7,
  z_t = σ(W_sz s_t + U_hz h_t), r_t = σ(W_sr s_t + U_hr h_t), h̃_t = tanh(W s_t + U(r_t ⊙ h_t)),
  h^m_t = (1 − z_t) ⊙ h_t + z_t ⊙ h̃_t; or `linear`, h^m_t = H h_t + s_t, a linear map of the
  concatenation [h_t; s_t] (with the s_t block fixed to the identity), see the deviations.

Architectures (§4.3.2): `RM` stacks the MB on top of the LSTM and predicts from h^m_t; `RMR`
stacks one more LSTM layer on top of the MB (LSTM → MB → LSTM), so that the MB outputs of
different time steps interact, and predicts from that layer. The thesis's sentence-completion
model (§4.6, Table 4.4) is RM(+tM-g) on three LSTM layers: `variant=RM`, `temporal=true`,
`composition=gated`, `layers=3`. Every size is d (Table 4.4: "Dimension of word embeddings,
LSTM hidden states, and gate g parameters are set to d"); the memory embeddings must have the
LSTM's size to be dotted with h_t. Dropout follows each LSTM layer (§4.6, after Pham et al.
2014). Parameters start uniform in (−0.05, 0.05), the LSTM forget-gate biases at 1 (§4.4.2).
The sizes and variant (`RmnArchitecture`) are in `settings.py`, which needs no PyTorch.

The MB is computed for all time steps at once: `memory_windows` unfolds the left-padded ids
into the [B, T, n] window of each step and the attention of every step is one batched
product, with no loop over time. Position t of the output predicts token t+1 and depends only
on tokens 0..t (the LSTM is causal and the window ends at t).

Deviations, and where the thesis is silent (checked against the authors' Torch code,
github.com/ketranm/RMN, `model/MemBlock*.lua`, `RM.lua`, `RMR.lua`):

- `linear` composition: the thesis writes g(s_t, h_t) = s_t + h_t "as in Sukhbaatar et al.
  (2015)"; Sukhbaatar et al.'s memory network and the authors' `MemBlock.lua` compute
  H h_t + s_t with a learned H (no bias), which is what `linear` does (s_t + h_t is H = I).
- The gate's projections of s_t carry biases, as the `nn.Linear`s of the authors'
  `MemBlockG.lua` do; eqs. 4.4-4.6 print none (one bias per gate: the code's second bias,
  on the h_t side, adds nothing a first one cannot).
- The temporal matrix is added to the keys only, as eq. 4.2 and 4.3 print it; the authors'
  code adds a second temporal table to the values C_i as well.
- `RMR` puts one LSTM layer above the MB, as §4.3.2 says ("stack one more LSTM layer on top");
  the authors' `RMR.lua` puts as many above as below, which agrees for the one-layer RMR of
  the thesis's Table 4.2, the only RMR it reports.
- Dropout follows every LSTM layer, the last one (below the MB) included, as §4.6 says; the
  authors' `model/LSTM.lua` drops only between stacked layers.
- The output layer has its own weights: chapter 4 ties nothing (§4.7 only suggests sharing
  the memory embeddings with the word embeddings to save parameters).
- The bidirectional RM of Table 4.4 is not implemented: its MB also reads the n following
  words, so its sentence scores are no left-to-right probabilities, and the thesis does not
  say how it scored them.
- Training (optimiser, epochs, selection) is the shared language-model trainer's, see the
  recipes: the thesis trains with plain SGD (lr 1, halved each epoch after the fourth,
  15 epochs, gradients rescaled to norm 5, batches of 20 length-bucketed sentences).
"""

from __future__ import annotations

import torch
import torch.nn.functional as F
from torch import nn

from structbench.baselines.neural.lm.nets import LanguageModelNet, init_uniform_forget_one
from structbench.baselines.neural.rmn.settings import Composition, RmnArchitecture
from structbench.baselines.neural.vocab import PAD


def memory_windows(ids: torch.Tensor, size: int) -> tuple[torch.Tensor, torch.Tensor]:
    """The Memory Block's input words at every step, for all steps at once.

    Returns `windows` [B, T, n], where windows[b, t, j] is the id of the word j positions
    before t (j = 0: the current word x_t), and `valid` [T, n], false where t − j < 0 (before
    the sentence start; those slots hold PAD and are kept out of the softmax, which is the
    thesis's slicing of T without padding, §4.4.2).
    """
    steps = ids.shape[1]
    padded = F.pad(ids, (size - 1, 0), value=PAD)  # [B, T + n - 1]
    windows = padded.unfold(1, size, 1).flip(-1)  # [B, T, n], oldest last
    positions = torch.arange(steps, device=ids.device)
    valid = positions.unsqueeze(1) >= torch.arange(size, device=ids.device).unsqueeze(0)
    return windows, valid


class MemoryBlock(nn.Module):
    """The MB of Tran 2018 §4.3.1 (eqs. 4.1-4.7) over the n most recent words."""

    def __init__(
        self, vocab_size: int, dim: int, memory_size: int, *, temporal: bool, composition: Composition
    ) -> None:
        super().__init__()
        self.memory_size = memory_size
        self.composition = composition
        self.input_memory = nn.Embedding(vocab_size, dim)  # M
        self.output_memory = nn.Embedding(vocab_size, dim)  # C
        self.temporal: nn.Parameter | None = nn.Parameter(torch.zeros(memory_size, dim)) if temporal else None
        if composition == "gated":
            self.from_context = nn.Linear(dim, 3 * dim)  # W_sz, W_sr, W (eqs. 4.4-4.6)
            self.gates_from_hidden = nn.Linear(dim, 2 * dim, bias=False)  # U_hz, U_hr
            self.candidate_from_hidden = nn.Linear(dim, dim, bias=False)  # U
        else:
            self.from_hidden = nn.Linear(dim, dim, bias=False)  # H

    def attend(self, ids: torch.Tensor, hidden: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        """Attention p_t [B, T, n] over each step's window (eq. 4.1/4.2) and context s_t [B, T, d] (eq. 4.3)."""
        windows, valid = memory_windows(ids, self.memory_size)
        keys = self.input_memory(windows)  # [B, T, n, d]: M_i
        if self.temporal is not None:
            keys = keys + self.temporal  # M_i + T, row j for the word j back
        scores = torch.einsum("btnd,btd->btn", keys, hidden)
        weights = scores.masked_fill(~valid, float("-inf")).softmax(dim=-1)
        context = torch.einsum("btn,btnd->btd", weights, self.output_memory(windows))  # C_iᵀ p_t
        return weights, context

    def compose(self, context: torch.Tensor, hidden: torch.Tensor) -> torch.Tensor:
        """h^m_t = g(s_t, h_t): eqs. 4.4-4.7 (`gated`) or H h_t + s_t (`linear`)."""
        if self.composition == "linear":
            linear: torch.Tensor = self.from_hidden(hidden) + context
            return linear
        to_update, to_reset, to_candidate = self.from_context(context).chunk(3, dim=-1)
        from_update, from_reset = self.gates_from_hidden(hidden).chunk(2, dim=-1)
        update = torch.sigmoid(to_update + from_update)  # z_t (4.4)
        reset = torch.sigmoid(to_reset + from_reset)  # r_t (4.5)
        candidate = torch.tanh(to_candidate + self.candidate_from_hidden(reset * hidden))  # h̃_t (4.6)
        return (1 - update) * hidden + update * candidate  # h^m_t (4.7)

    def forward(self, ids: torch.Tensor, hidden: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        """(h^m [B, T, d], attention [B, T, n]) of input ids [B, T] and LSTM states h [B, T, d]."""
        weights, context = self.attend(ids, hidden)
        return self.compose(context, hidden), weights


class RecurrentMemoryNetwork(LanguageModelNet):
    """RM or RMR (Tran 2018 §4.3.2): ids [B, T] -> next-token logits [B, T, V], causal."""

    def __init__(self, settings: RmnArchitecture, vocab_size: int) -> None:
        super().__init__()
        self.embedding = nn.Embedding(vocab_size, settings.embedding)
        self.lstm = nn.LSTM(
            settings.embedding,
            settings.hidden,
            num_layers=settings.layers,
            dropout=settings.dropout if settings.layers > 1 else 0.0,
            batch_first=True,
        )
        self.dropout = nn.Dropout(settings.dropout)
        self.memory = MemoryBlock(
            vocab_size,
            settings.hidden,
            settings.memory_size,
            temporal=settings.temporal,
            composition=settings.composition,
        )
        self.top: nn.LSTM | None = (
            nn.LSTM(settings.hidden, settings.hidden, batch_first=True) if settings.variant == "RMR" else None
        )
        self.output = nn.Linear(settings.hidden, vocab_size)
        self.reset_parameters(settings.init_range)

    def reset_parameters(self, init_range: float) -> None:
        """Uniform (−init_range, init_range) everywhere, forget-gate biases 1 (Tran 2018 §4.4.2)."""
        init_uniform_forget_one(self, init_range)

    def states(self, ids: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        """(the states the output layer reads [B, T, d], the MB's attention [B, T, n])."""
        hidden, _ = self.lstm(self.embedding(ids))
        hidden = self.dropout(hidden)
        composed, weights = self.memory(ids, hidden)
        if self.top is not None:
            composed, _ = self.top(composed)
            composed = self.dropout(composed)
        return composed, weights

    def attention(self, ids: torch.Tensor) -> torch.Tensor:
        """[B, T, n] attention of each step over its window (slot j: the word j back), for inspection."""
        return self.states(ids)[1]

    def forward(self, ids: torch.Tensor) -> torch.Tensor:
        """Next-token logits [B, T, V] of ids [B, T]: a linear layer over h^m_t (RM) or the top LSTM (RMR)."""
        logits: torch.Tensor = self.output(self.states(ids)[0])
        return logits
