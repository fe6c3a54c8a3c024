"""The architecture of the neural HMM (`nhmm`; Tran 2018 §6.5-6.7 and §6.9): which emission and
transition networks it has and their sizes, as its recipes and `--set` give them.

Apart from `nets.py`, which imports PyTorch, so that the registered classes (`model.py`) load
without it (docs/architecture.md, "Model classes load without PyTorch").
"""

from __future__ import annotations

from typing import Literal

from pydantic import Field, PositiveInt

from structbench.baselines.neural.settings import Fraction
from structbench.specs import Frozen

EmissionKind = Literal["linear", "conv"]
TransitionKind = Literal["matrix", "lstm"]


class NhmmArchitecture(Frozen):
    """The parts and sizes of the neural HMM (Tran 2018 §6.5-6.7 and §6.9)."""

    emission: EmissionKind = "conv"
    """`linear`: a word embedding per word type (eq. 6.27); `conv`: word vectors from a character CNN (§6.6)."""
    transition: TransitionKind = "lstm"
    """`matrix`: T = U q + b with a learned query q (eq. 6.28); `lstm`: q = h_{t-1} of a stacked LSTM (§6.7)."""
    hidden: PositiveInt = 512
    """Size of tag embeddings, word vectors, the query and LSTM states without the char-CNN (§6.9: 512)."""
    conv_hidden: PositiveInt = 128
    """The same size when emission=conv (§6.9: "we only used 128 units" with the char-CNN)."""
    layers: PositiveInt = 3
    """Stacked LSTM layers of the `lstm` transition (§6.9: three)."""
    dropout: Fraction = 0.5
    """Dropout on the LSTM's vertical connections (§6.9: 0.5)."""
    char_embedding: PositiveInt = 15
    """Size of a character embedding (not in the thesis; the authors' code uses 15)."""
    feature_maps: tuple[PositiveInt, ...] = Field(default=(50, 100, 128, 128, 128, 128, 128), min_length=1)
    """Filters of width 1, 2, ...: §6.6's widths 1 to 7 (the counts are the authors' code's)."""
    max_word_length: PositiveInt = 15
    """Characters read per word, the begin and end markers included (the authors' code: 15)."""

    @property
    def size(self) -> int:
        """The model's one width: `conv_hidden` with the char-CNN, else `hidden`."""
        return self.conv_hidden if self.emission == "conv" else self.hidden
