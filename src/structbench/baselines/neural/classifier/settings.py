"""The settings of Tran's (2018, ch. 5) classifiers: what a classifier trains with and the sizes of its
network, as its recipes and `--set` give them.

Apart from `nets.py`, which imports PyTorch, so that the registered classes (`model.py`) load
without it (docs/architecture.md, "Model classes load without PyTorch").
"""

from __future__ import annotations

from typing import Literal, Self

from pydantic import PositiveInt, model_validator

from structbench.baselines.neural.settings import Fraction, TrainSettings

Pooling = Literal["sum", "mean", "max"]
"""How `bow-logic` pools a sentence's word embeddings into one vector."""


class ClassifierSettings(TrainSettings):
    """The shared training settings, as a classifier reads them.

    `teacher_forcing`, `guidance` and `max_length` belong to decoders and are refused; the
    selection rules, `stop_at`, `patience` and `eval_every` mean what they mean for every
    neural baseline, with accuracy being label accuracy."""

    dev_limit: PositiveInt | None = 2000
    """Evaluate on at most this many dev examples, evenly spaced through the frozen dev split (a
    dev split ordered by condition, as the logic suites' is by operator count, stays pooled)."""
    train_limit: PositiveInt | None = None
    """Train on at most this many training examples, a random subset drawn with the run's seed
    (a compute budget, never a paper setting); None trains on all."""


class NumberSettings(ClassifierSettings):
    """Architecture of the number-prediction LSTM (§5.5.2)."""

    d_model: PositiveInt = 128
    """Width of word embeddings and hidden states (the thesis's d)."""
    layers: PositiveInt = 4
    """Stacked layers."""
    dropout: Fraction = 0.2
    """Dropout on the embeddings and between layers."""


class FanNumberSettings(NumberSettings):
    """Architecture of the number-prediction FAN (§5.2, §5.5.2)."""

    heads: PositiveInt = 2
    """Attention heads per layer (d_h = d / heads)."""
    feedforward: PositiveInt = 256
    """Inner width d_f of the feed-forward sub-layers (the thesis sets d_f = 2d)."""

    @model_validator(mode="after")
    def heads_divide_width(self) -> Self:
        if self.d_model % self.heads:
            raise ValueError(f"d_model ({self.d_model}) must be a multiple of heads ({self.heads})")
        return self


class LogicSettings(ClassifierSettings):
    """What every logic classifier shares: the word width and the 3-layer ReLU classifier."""

    d_model: PositiveInt = 128
    """Width of word embeddings and of the encoder's states (the thesis's d)."""
    mlp_hidden: PositiveInt = 128
    """Units of each of the two ReLU hidden layers of the classifier over [premise; hypothesis]."""


class LstmLogicSettings(LogicSettings):
    """The LSTM sentence encoder (§5.6.2)."""

    layers: PositiveInt = 2
    """Stacked LSTM layers, each with a skip connection around it."""
    dropout: Fraction = 0.0
    """Dropout on the embeddings and on each layer's output before the skip connection is added."""


class FanLogicSettings(LogicSettings):
    """The FAN sentence encoder with two-query self-attention pooling (§5.6.2)."""

    layers: PositiveInt = 2
    """Transformer encoder layers."""
    heads: PositiveInt = 2
    """Attention heads per layer."""
    feedforward: PositiveInt = 256
    """Inner width d_f of the feed-forward sub-layers."""
    dropout: Fraction = 0.2
    """Dropout on the embeddings and in every sub-layer."""

    @model_validator(mode="after")
    def heads_divide_width(self) -> Self:
        if self.d_model % self.heads:
            raise ValueError(f"d_model ({self.d_model}) must be a multiple of heads ({self.heads})")
        return self


class BowLogicSettings(LogicSettings):
    """The bag-of-words control (§5.6.1)."""

    pooling: Pooling = "sum"
    """How a sentence's word embeddings become one vector: their sum, mean or element-wise max."""
