"""The settings of Seq2Attn: its architecture on top of the shared training settings.

Apart from `nets.py`, which imports PyTorch, so that the registered classes (`model.py`) load
without it (docs/architecture.md, "Model classes load without PyTorch").
"""

from __future__ import annotations

from typing import Literal

from pydantic import PositiveFloat, PositiveInt

from structbench.baselines.neural.settings import Fraction, TrainSettings


class Seq2AttnSettings(TrainSettings):
    """Architecture of Seq2Attn on top of the shared training settings."""

    cell: Literal["gru", "lstm"] = "gru"
    """Recurrent unit of encoder, transcoder and decoder."""
    embedding: PositiveInt = 256
    """Embedding size (input and output)."""
    hidden: PositiveInt = 256
    """Recurrent state size; with `full_context` and `embedding_values` it must equal `embedding`."""
    dropout: Fraction = 0.5
    """Dropout on embeddings and before the output layer."""
    transcoder: bool = True
    """T: a transcoder computes the attention; the decoder sees only context and previous output."""
    full_context: bool = True
    """F: the decoder's previous state is multiplied element-wise by the context vector."""
    embedding_values: bool = True
    """E: attention values are the input embeddings (keys stay the encoder states)."""
    gumbel: bool = True
    """G: Gumbel-Softmax straight-through attention in training, argmax at inference; plain softmax if false."""
    temperature_mode: Literal["constant", "latent", "conditioned"] = "constant"
    """Gumbel-Softmax temperature: fixed, one learned scalar, or conditioned on the transcoder state."""
    temperature: PositiveFloat = 5.0
    """The constant temperature, the latent one's start, or the conditioned one's maximum."""
