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

Choices the thesis leaves open (it gives no initialisation for ch. 5): word embeddings are
drawn uniformly from (-init_range, init_range) with init_range 0.1, the default of the
authors' code (github.com/ketranm/fan_vs_rnn, opts.py); the LSTM and Transformer weights keep
torch's defaults (uniform within 1/sqrt(hidden) = 0.088 for the LSTM, close to that 0.1).
Dropout is applied to the embeddings, between LSTM layers and before the output layer
(Zaremba et al. 2014's placement); in the FAN, inside every sub-layer and on the embeddings
(Vaswani et al. 2017). The output layer has a bias besides the tied weight matrix.
"""

from __future__ import annotations

import math

import torch
from pydantic import Field, PositiveInt, model_validator
from torch import nn

from structbench.baselines.neural.settings import Fraction
from structbench.baselines.neural.transformer.nets import sinusoids
from structbench.specs import Frozen


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


class LstmLmArchitecture(Frozen):
    """Sizes of the stacked LSTM LM (Tran 2018 §5.5.2, p. 71)."""

    layers: PositiveInt = 4
    """Stacked LSTM layers (4 in §5.5.2)."""
    embedding: PositiveInt = 128
    """Word-embedding width (128 in §5.5.2)."""
    hidden: PositiveInt = 128
    """LSTM state width (128 in §5.5.2); equal to `embedding` when the embeddings are tied."""
    dropout: Fraction = 0.2
    """Dropout on embeddings, between layers and before the output layer (0.2 in §5.5.2)."""
    tie_embeddings: bool = True
    """Share the input embedding matrix with the output layer (§5.5.2, after Inan et al. 2016)."""
    init_range: float = Field(default=0.1, gt=0)
    """Word embeddings are drawn uniformly from (-init_range, init_range)."""

    @model_validator(mode="after")
    def _tied_sizes_agree(self) -> LstmLmArchitecture:
        if self.tie_embeddings and self.embedding != self.hidden:
            raise ValueError(
                f"tied embeddings need embedding == hidden (got {self.embedding} and {self.hidden}); "
                "set both, or tie_embeddings=false"
            )
        return self


class LstmLm(LanguageModelNet):
    """Stacked LSTM language model with tied input and output embeddings (Tran 2018 §5.5.2)."""

    def __init__(self, settings: LstmLmArchitecture, vocab_size: int) -> None:
        super().__init__()
        self.embedding = nn.Embedding(vocab_size, settings.embedding)
        init_embedding(self.embedding, settings.init_range)
        self.dropout = nn.Dropout(settings.dropout)
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

    def forward(self, ids: torch.Tensor) -> torch.Tensor:
        states, _ = self.lstm(self.dropout(self.embedding(ids)))  # zero initial state: every row starts afresh
        logits: torch.Tensor = self.output(self.dropout(states))
        return logits


class FanLmArchitecture(Frozen):
    """Sizes of the FAN (Transformer decoder-only) LM (Tran 2018 §5.2, p. 68, and §5.5.2; §5.5 begins on p. 71)."""

    layers: PositiveInt = 4
    """Stacked sub-layers (4 in §5.5.2)."""
    d_model: PositiveInt = 128
    """Width d of embeddings and sub-layers (128 in §5.5.2)."""
    heads: PositiveInt = 2
    """Attention heads per sub-layer, each of width d/heads (2 in §5.5.2; d_h = d/h in §5.2)."""
    feedforward: PositiveInt = 256
    """Inner width d_f of the feed-forward layer (d_f = 2d in §5.2, eq. 5.10)."""
    dropout: Fraction = 0.2
    """Dropout in every sub-layer and on the embeddings (0.2 in §5.5.2)."""
    tie_embeddings: bool = True
    """Share the input embedding matrix with the output layer (§5.5.2)."""
    init_range: float = Field(default=0.1, gt=0)
    """Word embeddings are drawn uniformly from (-init_range, init_range) (then scaled by sqrt(d))."""

    @model_validator(mode="after")
    def _heads_divide_width(self) -> FanLmArchitecture:
        if self.d_model % self.heads:
            raise ValueError(f"d_model ({self.d_model}) must be a multiple of heads ({self.heads})")
        return self


class FanLm(LanguageModelNet):
    """FAN language model: post-LayerNorm Transformer layers under a causal mask (Tran 2018 §5.2).

    Each layer is torch's `nn.TransformerEncoderLayer` with `norm_first=False`, which computes
    exactly eqs. 5.1-5.4: H0 = LN(X + MultiHead(X)), Y = LN(FFN(H0) + H0), FFN(x) =
    max(0, xW1 + b1)W2 + b2. The causal mask lets position t attend to positions 0..t only
    (the thesis implies it: "access information from all previous time steps", §5.3).
    Embeddings are scaled by sqrt(d) before the sinusoidal positions are added (Vaswani et al.
    2017, §3.4); the output layer reads the last layer's (already normalised) states.
    """

    def __init__(self, settings: FanLmArchitecture, vocab_size: int) -> None:
        super().__init__()
        d = settings.d_model
        self.scale = math.sqrt(d)
        self.embedding = nn.Embedding(vocab_size, d)
        init_embedding(self.embedding, settings.init_range)
        self.positions: torch.Tensor
        self.register_buffer("positions", sinusoids(512, d), persistent=False)
        self.dropout = nn.Dropout(settings.dropout)
        layer = nn.TransformerEncoderLayer(
            d_model=d,
            nhead=settings.heads,
            dim_feedforward=settings.feedforward,
            dropout=settings.dropout,
            activation="relu",
            batch_first=True,
            norm_first=False,
        )
        # No nested tensors: rows are padded at the end only, which a causal mask already hides.
        self.layers = nn.TransformerEncoder(layer, settings.layers, enable_nested_tensor=False)
        self.output = nn.Linear(d, vocab_size)
        nn.init.zeros_(self.output.bias)
        if settings.tie_embeddings:
            self.output.weight = self.embedding.weight

    def _positions(self, length: int) -> torch.Tensor:
        if length > self.positions.shape[0]:  # longer than ever seen: extend the table (eqs. 5.11-5.12 hold for any t)
            self.positions = sinusoids(2 * length, self.positions.shape[1]).to(self.positions.device)
        return self.positions[:length]

    def forward(self, ids: torch.Tensor) -> torch.Tensor:
        length = ids.shape[1]
        embedded = self.dropout(self.embedding(ids) * self.scale + self._positions(length))
        causal = nn.Transformer.generate_square_subsequent_mask(length, device=ids.device, dtype=embedded.dtype)
        states = self.layers(embedded, mask=causal, is_causal=True)
        logits: torch.Tensor = self.output(states)
        return logits
