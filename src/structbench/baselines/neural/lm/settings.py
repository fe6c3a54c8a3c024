"""The sizes of the word-level language-model networks (`LstmLmArchitecture`, `FanLmArchitecture`).

Apart from `nets.py`, which imports PyTorch, so that the registered classes (`model.py`) load
without it (docs/architecture.md, "Model classes load without PyTorch").
"""

from __future__ import annotations

from typing import Literal

from pydantic import Field, PositiveInt, model_validator

from structbench.baselines.neural.settings import Fraction
from structbench.specs import Frozen

__all__ = ["FanLmArchitecture", "LstmLmArchitecture"]


class LstmLmArchitecture(Frozen):
    """Sizes of the stacked LSTM LM (Tran 2018 §5.5.2, p. 71)."""

    layers: PositiveInt = 4
    """Stacked LSTM layers (4 in §5.5.2)."""
    embedding: PositiveInt = 128
    """Word-embedding width (128 in §5.5.2)."""
    hidden: PositiveInt = 128
    """LSTM state width (128 in §5.5.2); equal to `embedding` when the embeddings are tied."""
    dropout: Fraction = 0.2
    """Dropout after each LSTM layer (between layers and before the output layer) and, with
    `embedding_dropout`, on the embeddings (0.2 in §5.5.2; 0.3 in §4.6)."""
    embedding_dropout: bool = True
    """Drop the word embeddings too (Zaremba et al. 2014's placement); false drops after each LSTM layer
    only, as §4.6 places it ("after each LSTM layer as suggested in (Pham et al., 2014)")."""
    tie_embeddings: bool = True
    """Share the input embedding matrix with the output layer (§5.5.2, after Inan et al. 2016)."""
    init: Literal["embeddings", "all"] = "embeddings"
    """`embeddings`: the word embeddings uniform in (-init_range, init_range), the LSTM and output weights
    torch's defaults, the output bias 0; `all`: every parameter uniform in (-init_range, init_range) and
    the forget-gate biases 1 (§4.4.2, which §4.6 follows)."""
    init_range: float = Field(default=0.1, gt=0)
    """The bound of the uniform initialisation `init` names (0.05 in §4.4.2)."""

    @model_validator(mode="after")
    def _tied_sizes_agree(self) -> LstmLmArchitecture:
        if self.tie_embeddings and self.embedding != self.hidden:
            raise ValueError(
                f"tied embeddings need embedding == hidden (got {self.embedding} and {self.hidden}); "
                "set both, or tie_embeddings=false"
            )
        return self


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
    """Dropout on each sub-layer's feed-forward output, before its residual sum (0.2 in §5.5.2; placed as
    the authors' code places it, ketranm/fan_vs_rnn modules.py `ResFF`: nowhere else)."""
    tie_embeddings: bool = True
    """Share the input embedding matrix with the output layer (§5.5.2)."""

    @model_validator(mode="after")
    def _heads_divide_width(self) -> FanLmArchitecture:
        if self.d_model % self.heads:
            raise ValueError(f"d_model ({self.d_model}) must be a multiple of heads ({self.heads})")
        return self
