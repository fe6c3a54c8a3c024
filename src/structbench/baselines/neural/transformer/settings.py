"""The settings of the encoder-decoder Transformer: its sizes on top of the shared training settings.

Apart from `nets.py`, which imports PyTorch, so that the registered classes (`model.py`) load
without it (docs/architecture.md, "Model classes load without PyTorch").
"""

from __future__ import annotations

from pydantic import PositiveInt

from structbench.baselines.neural.settings import Fraction, TrainSettings


class TransformerSettings(TrainSettings):
    """Architecture of the Transformer on top of the shared training settings."""

    d_model: PositiveInt = 128
    """Width of embeddings and every layer."""
    heads: PositiveInt = 4
    """Attention heads per layer."""
    encoder_layers: PositiveInt = 2
    """Encoder layers."""
    decoder_layers: PositiveInt = 2
    """Decoder layers."""
    feedforward: PositiveInt = 256
    """Inner width of the position-wise feed-forward layers."""
    dropout: Fraction = 0.1
    """Dropout in every sub-layer and on the embeddings."""
