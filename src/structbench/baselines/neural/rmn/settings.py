"""The architecture of the Recurrent Memory Network (`RmnArchitecture`: its sizes and variant).

Apart from `nets.py`, which imports PyTorch, so that the registered classes (`model.py`) load
without it (docs/architecture.md, "Model classes load without PyTorch").
"""

from __future__ import annotations

from typing import Literal

from pydantic import Field, PositiveInt

from structbench.baselines.neural.settings import Fraction
from structbench.specs import Frozen

__all__ = ["Composition", "RmnArchitecture", "Variant"]

Composition = Literal["gated", "linear"]
Variant = Literal["RM", "RMR"]


class RmnArchitecture(Frozen):
    """Sizes and variant of the RMN (Tran 2018 §4.3, §4.4.2 and Table 4.4)."""

    embedding: PositiveInt = 256
    """Word-embedding size: d of Table 4.4 (256 or 512; 128 in the LM experiments of §4.4.2)."""
    hidden: PositiveInt = 256
    """LSTM state size, and the size of the memory embeddings M, C and of the gate: d of Table 4.4."""
    layers: PositiveInt = 3
    """LSTM layers below the Memory Block (3 for sentence completion, §4.6; 1 in the LM experiments, §4.4)."""
    dropout: Fraction = 0.3
    """Dropout after each LSTM layer (0.3 in §4.6; none is mentioned in §4.4)."""
    memory_size: PositiveInt = 15
    """n, the words the Memory Block sees: the current word and the n − 1 before it (§4.4.2: 15)."""
    composition: Composition = "gated"
    """g(s_t, h_t): `gated` (eqs. 4.4-4.7, "-g") or `linear` (H h_t + s_t, "-l")."""
    temporal: bool = True
    """Add the temporal matrix T to the memory keys (eq. 4.2, "+tM"); false is eq. 4.1 ("-tM")."""
    variant: Variant = "RM"
    """`RM`: LSTM → MB; `RMR`: LSTM → MB → LSTM (§4.3.2)."""
    init_range: float = Field(default=0.05, gt=0)
    """Every parameter starts uniform in (−init_range, init_range), 0.05 in §4.4.2 (forget-gate biases: 1)."""
