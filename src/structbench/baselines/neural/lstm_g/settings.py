"""The shape of Monner's one-layer LSTM (`Architecture`) and the names of its choices (`Rule`, `Squash`).

Apart from `nets.py`, which imports PyTorch and scipy, so that the registered classes (`model.py`) load
without it (docs/architecture.md, "Model classes load without PyTorch").
"""

from __future__ import annotations

from typing import Literal

from pydantic import PositiveInt

from structbench.specs import Frozen

Rule = Literal["lstm-g", "lstm"]
Squash = Literal["logistic", "tanh"]


class Architecture(Frozen):
    """The shape of a one-layer LSTM-g network (Monner 2011, Fig. 2.2)."""

    inputs: PositiveInt
    """Input units (one per input symbol)."""
    blocks: PositiveInt
    """Memory blocks, each one cell with its input, forget and output gate."""
    outputs: PositiveInt
    """Logistic output units."""
    peepholes: bool = True
    """Each cell projects an ungated connection to its own three gates (§2.2, Fig. 2.1)."""
    direct: bool = True
    """Direct input→output connections (§2.7.1)."""
    recurrent: bool = False
    """Delayed recurrent connections: the previous step's gated cell outputs feed all gates and cells (§2.2)."""
    cell_squash: Squash = "logistic"
    """The memory cells' output squashing function f_c."""

    @property
    def sources(self) -> int:
        """Senders into the gate and cell layers: the inputs, plus the blocks when recurrent."""
        return self.inputs + (self.blocks if self.recurrent else 0)

    def weight_count(self) -> int:
        """Trainable weights: no biases, peepholes one per gate (Monner's count: 416 for 10-8-4 DSR)."""
        h = self.blocks
        count = 4 * h * self.sources + self.outputs * h
        count += 3 * h if self.peepholes else 0
        count += self.outputs * self.inputs if self.direct else 0
        return count
