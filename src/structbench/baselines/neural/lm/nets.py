"""Word-level language-model networks: a stacked LSTM and a FAN (Transformer decoder-only LM).

Tran (2018), *Predicting and Discovering Linguistic Structure with Neural Networks*, PhD
thesis, Universiteit van Amsterdam, ch. 5 ("Fully Attention Networks vs. LSTMs"), compares
both on subject-verb agreement trained with a language-model objective (§5.5, p. 71). The
settings of §5.5.2: "both the LSTM and the FAN have 4 layers, the dropout rate is 0.2, and
word-embeddings and hidden sizes are set to 128. The weights of the word embeddings and output
layer are shared (Inan et al. 2016; Press & Wolf 2017). The FAN has two attention heads."
The FAN sub-layer is §5.2 (p. 68), eqs. 5.1-5.4: post-LayerNorm self-attention and a ReLU
feed-forward layer of inner size d_f = 2d (eq. 5.10), sinusoidal positions (eqs. 5.11-5.12).

The contract with the harness side (`structbench.baselines.neural.lm.model.NeuralLanguageModel`):
a `LanguageModelNet` is built from (settings, vocabulary size) and maps ids [B, T] to
next-token logits [B, T, V]; it is causal (position t sees tokens 0..t only and predicts
token t+1), so padding at the end of a row never changes the logits of its real positions,
and rows never see each other: every sentence is modelled from a fresh state.
Their sizes (`LstmLmArchitecture`, `FanLmArchitecture`) are in `settings.py`, which needs no PyTorch.

Choices the thesis leaves open for ch. 5 (it gives no initialisation and no dropout placement):
- `lstm-lm`'s word embeddings are drawn uniformly from (-init_range, init_range), init_range 0.1,
  the default of the authors' `param_init` option (github.com/ketranm/fan_vs_rnn, opts.py), which
  only their logic.py applies (their lm.py leaves PyTorch's defaults, under which the tied matrix
  is the embedding's N(0, 1)); the LSTM weights keep torch's defaults (uniform within
  1/sqrt(hidden)). Dropout is applied to the embeddings, between LSTM layers and before the
  output layer (Zaremba et al. 2014's placement; the authors' `RNNLM` drops only between layers).
  The output layer has a bias besides the tied weight matrix. For the sentence-completion
  baseline of ch. 4 (§4.6), `init=all` and `embedding_dropout=false` give §4.4.2's
  initialisation and §4.6's dropout after each LSTM layer.
- `fan-lm` is computed as the authors' `Transformer` LM is (layers.py, modules.py): see `FanLm`.
"""

from __future__ import annotations

import torch
import torch.nn.functional as F
from torch import nn

from structbench.baselines.neural.lm.settings import FanLmArchitecture, LstmLmArchitecture
from structbench.baselines.neural.transformer.nets import sinusoids


class LanguageModelNet(nn.Module):
    """Base of every word-level LM network: `forward(ids [B, T]) -> logits [B, T, V]`, causal.

    Position t of the logits is the distribution of token t+1 given tokens 0..t. A network
    must not carry state from one call to the next or between rows (sentence-level modelling,
    Tran 2018 §4.4.2: states are reset for every sentence).
    """

    def forward(self, ids: torch.Tensor) -> torch.Tensor:  # pragma: no cover - interface
        raise NotImplementedError


def init_embedding(embedding: nn.Embedding, init_range: float) -> None:
    """Uniform (-init_range, init_range): small enough that the tied output layer starts near uniform."""
    nn.init.uniform_(embedding.weight, -init_range, init_range)


def init_uniform_forget_one(net: nn.Module, init_range: float) -> None:
    """Tran 2018 §4.4.2's initialisation: every parameter uniform in (-init_range, init_range), then the
    forget-gate bias of every LSTM at 1 (Jozefowicz et al. 2015). torch keeps two biases per gate, which
    add up: the input-side one is set to 1, the hidden-side one to 0."""
    for parameter in net.parameters():
        nn.init.uniform_(parameter, -init_range, init_range)
    for lstm in net.modules():
        if not isinstance(lstm, nn.LSTM):
            continue
        size = lstm.hidden_size
        for name, parameter in lstm.named_parameters():
            if name.startswith("bias_"):  # gates in torch's order i, f, g, o
                with torch.no_grad():
                    parameter[size : 2 * size].fill_(1.0 if name.startswith("bias_ih") else 0.0)


class LstmLm(LanguageModelNet):
    """Stacked LSTM language model with tied input and output embeddings (Tran 2018 §5.5.2)."""

    def __init__(self, settings: LstmLmArchitecture, vocab_size: int) -> None:
        super().__init__()
        self.embedding = nn.Embedding(vocab_size, settings.embedding)
        init_embedding(self.embedding, settings.init_range)
        self.dropout = nn.Dropout(settings.dropout)
        self.embedding_dropout = settings.embedding_dropout
        self.lstm = nn.LSTM(
            settings.embedding,
            settings.hidden,
            num_layers=settings.layers,
            dropout=settings.dropout if settings.layers > 1 else 0.0,
            batch_first=True,
        )
        self.output = nn.Linear(settings.hidden, vocab_size)
        nn.init.zeros_(self.output.bias)
        if settings.tie_embeddings:
            self.output.weight = self.embedding.weight
        if settings.init == "all":
            init_uniform_forget_one(self, settings.init_range)

    def forward(self, ids: torch.Tensor) -> torch.Tensor:
        embedded = self.embedding(ids)
        if self.embedding_dropout:
            embedded = self.dropout(embedded)
        states, _ = self.lstm(embedded)  # zero initial state: every row starts afresh
        logits: torch.Tensor = self.output(self.dropout(states))
        return logits


class FanSubLayer(nn.Module):
    """One FAN sub-layer, eqs. 5.1-5.4 under a causal mask: Z = MultiHead(X), H0 = LN(X + Z),
    Y = LN(FFN(H0) + H0), FFN(x) = max(0, xW1 + b1)W2 + b2.

    MultiHead (eqs. 5.5-5.9) projects without biases, as the equations print it and the authors'
    `MultiHeadAttention` (modules.py) computes it, and scales by 1/sqrt(d_h). Dropout acts on the
    feed-forward output alone (modules.py `ResFF`); the attention weights and the attention output
    are not dropped (their `scaled_dot_attn` is "without dropout", `SubLayer` adds Z to X as it is).
    """

    def __init__(self, d_model: int, heads: int, feedforward: int, dropout: float) -> None:
        super().__init__()
        self.heads = heads
        self.query = nn.Linear(d_model, d_model, bias=False)  # [W^q_1 ... W^q_h] (eq. 5.7)
        self.key = nn.Linear(d_model, d_model, bias=False)  # eq. 5.8
        self.value = nn.Linear(d_model, d_model, bias=False)  # eq. 5.9
        self.mix = nn.Linear(d_model, d_model, bias=False)  # W_o (eq. 5.5)
        self.attention_norm = nn.LayerNorm(d_model)
        self.feedforward = nn.Sequential(nn.Linear(d_model, feedforward), nn.ReLU(), nn.Linear(feedforward, d_model))
        self.dropout = nn.Dropout(dropout)
        self.output_norm = nn.LayerNorm(d_model)

    def _heads(self, projected: torch.Tensor) -> torch.Tensor:
        batch, length, width = projected.shape
        return projected.view(batch, length, self.heads, width // self.heads).transpose(1, 2)

    def forward(self, inputs: torch.Tensor) -> torch.Tensor:
        """[B, T, d] -> [B, T, d]; position t attends to positions 0..t."""
        batch, length, width = inputs.shape
        heads = F.scaled_dot_product_attention(
            self._heads(self.query(inputs)),
            self._heads(self.key(inputs)),
            self._heads(self.value(inputs)),
            is_causal=True,
        )  # softmax(Q K^T / sqrt(d_h)) V per head (eq. 5.6)
        attended = self.mix(heads.transpose(1, 2).reshape(batch, length, width))
        hidden = self.attention_norm(inputs + attended)  # eq. 5.2
        normalised: torch.Tensor = self.output_norm(self.dropout(self.feedforward(hidden)) + hidden)  # eqs. 5.3-5.4
        return normalised


class FanLm(LanguageModelNet):
    """FAN language model: post-LayerNorm sub-layers under a causal mask (Tran 2018 §5.2), as the
    authors' `Transformer` LM (ketranm/fan_vs_rnn layers.py) computes it.

    The word embeddings plus the sinusoidal positions of eqs. 5.11-5.12 enter the first sub-layer
    as they are: neither scaled by sqrt(d) (eq. 5.11 does not, nor does the code) nor dropped.
    The causal mask lets position t attend to positions 0..t only (the thesis implies it: "access
    information from all previous time steps", §5.3; the code's `get_causal_mask`). The output
    layer reads the last sub-layer's (already normalised) states. Initialisation is PyTorch's
    default, which the authors' lm.py leaves in place (its `param_init` option is applied by
    their logic.py only): linear layers and their biases uniform within 1/sqrt(n_in); the tied
    matrix is the output layer's (the code ties `lut.weight = generator.weight`), an untied
    embedding N(0, 1).

    Where this differs from the code: the positions use eq. 5.11's 10000^(2i/d), where the code's
    `add_timing_signal(word_vec, 1000)` uses 1000^(2i/d) (the thesis is followed where it prints
    an equation; the code where it is silent).
    """

    def __init__(self, settings: FanLmArchitecture, vocab_size: int) -> None:
        super().__init__()
        d = settings.d_model
        self.embedding = nn.Embedding(vocab_size, d)
        self.positions: torch.Tensor
        self.register_buffer("positions", sinusoids(512, d), persistent=False)
        self.layers = nn.ModuleList(
            FanSubLayer(d, settings.heads, settings.feedforward, settings.dropout) for _ in range(settings.layers)
        )
        self.output = nn.Linear(d, vocab_size)
        if settings.tie_embeddings:
            self.embedding.weight = self.output.weight

    def _positions(self, length: int) -> torch.Tensor:
        if length > self.positions.shape[0]:  # longer than ever seen: extend the table (eqs. 5.11-5.12 hold for any t)
            self.positions = sinusoids(2 * length, self.positions.shape[1]).to(self.positions.device)
        return self.positions[:length]

    def forward(self, ids: torch.Tensor) -> torch.Tensor:
        states = self.embedding(ids) + self._positions(ids.shape[1])
        for layer in self.layers:
            states = layer(states)
        logits: torch.Tensor = self.output(states)
        return logits
