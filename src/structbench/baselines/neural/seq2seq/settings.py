"""The settings of the recurrent encoder-decoders: their architecture on top of the shared training settings.

Apart from `nets.py`, which imports PyTorch, so that the registered classes (`model.py`) load
without it (docs/architecture.md, "Model classes load without PyTorch").
"""

from __future__ import annotations

from typing import Literal

from pydantic import PositiveInt

from structbench.baselines.neural.settings import Fraction, TrainSettings

Cell = Literal["srn", "gru", "lstm"]
AttentionKind = Literal["none", "location", "content", "luong-dot", "luong-mlp", "pre-mlp", "pre-dot"]


class Seq2SeqSettings(TrainSettings):
    """Architecture of the encoder-decoder on top of the shared training settings."""

    cell: Cell = "gru"
    """Recurrent unit of encoder and decoder: simple recurrent network (tanh), GRU or LSTM."""
    layers: PositiveInt = 1
    """Stacked recurrent layers (encoder and decoder alike)."""
    embedding: PositiveInt = 64
    """Token embedding size (input and output embeddings)."""
    hidden: PositiveInt = 64
    """Recurrent state size; also the attention size (Korrel: D_e = D_d = D_a)."""
    dropout: Fraction = 0.1
    """Dropout on embeddings, between layers and before the output layer."""
    attention: AttentionKind = "pre-mlp"
    """Attention variant (see the docstring of `nets.py`)."""
    full_context: bool = False
    """Korrel's full-context-pre-rnn decoder input c_t ⊙ W[x_t; c_t] (pre-rnn attention only)."""
    oracle_attention: bool = False
    """Replace the computed attention by the one-hot attention target (oracle guidance; not comparable)."""
