"""The settings of the LLA-LSTM: its architecture and the Lexicon unit's training.

Apart from `nets.py`, which imports PyTorch, so that the registered classes (`model.py`) load
without it (docs/architecture.md, "Model classes load without PyTorch").
"""

from __future__ import annotations

from pydantic import PositiveFloat, PositiveInt, model_validator

from structbench.baselines.neural.settings import TrainSettings


class LlaSettings(TrainSettings):
    """Architecture and the Lexicon unit's training on top of the shared training settings (Thrush 2020)."""

    epochs: PositiveInt = 1000
    """Epochs of the main phase, after the Lexicon unit's (the paper stops at epoch 1000 counting both: 970 for LLA)."""
    batch_size: PositiveInt = 30
    """Examples per update of the encoder, decoder and adversary ("batch size for other modules = 30")."""
    lr: PositiveFloat = 1e-3
    """Adam learning rate of the main phase (PyTorch's default)."""
    clip: PositiveFloat | None = None
    """Maximum gradient norm; the paper mentions no clipping."""
    hidden: PositiveInt = 300
    """LSTM size of encoder and decoder ("LSTM hidden size = 300")."""
    embedding: PositiveInt = 300
    """Encoder source-embedding size (not in the paper; taken equal to the LSTM size)."""
    lexicon: bool = True
    """Whether the Lexicon unit multiplies the decoder's output distribution (o'_t = l ⊙ o_t)."""
    adversary: bool = True
    """Whether the Lexicon-Adversary unit regularises the encoder's final state (needs `lexicon`)."""
    adversary_hidden: PositiveInt = 1000
    """Hidden size of the adversary's ReLU layer W_a1 ("Lexicon-Adversary Unit hidden size = 1000")."""
    reversal: float = 1e-4
    """Gradient reversal scale: the adversary's gradient into the encoder is multiplied by -reversal."""
    lexicon_epochs: PositiveInt = 30
    """Epochs the Lexicon unit is trained alone before it is frozen and the other modules train."""
    lexicon_lr: PositiveFloat = 0.1
    """Learning rate of the Lexicon unit's sparse Adam."""
    lexicon_batch_size: PositiveInt = 1
    """Examples per update of the Lexicon unit ("Lexicon Unit batch size = 1")."""

    @model_validator(mode="after")
    def _adversary_needs_lexicon(self) -> LlaSettings:
        if self.adversary and not self.lexicon:
            raise ValueError("the adversary imitates the Lexicon unit's l: adversary=true needs lexicon=true")
        if self.lexicon_batch_size < 1 or self.lexicon_epochs < 0:
            raise ValueError("lexicon_batch_size must be at least 1 and lexicon_epochs at least 0")
        return self
