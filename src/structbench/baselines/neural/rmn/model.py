"""The registered `rmn`: the Recurrent Memory Network (`nets.py`) trained and scored as a word-level LM.

Its network is imported in `build_net`, where a run trains, and its architecture comes from the
torch-free `settings.py`, so that the registry loads the class without PyTorch.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from structbench.baselines.neural.lm.model import LmSettings, NeuralLanguageModel
from structbench.baselines.neural.rmn.settings import RmnArchitecture

if TYPE_CHECKING:
    from structbench.baselines.neural.lm.nets import LanguageModelNet
    from structbench.baselines.neural.vocab import Vocabulary


class RmnSettings(LmSettings, RmnArchitecture):
    """`rmn`: the shared LM settings (optimiser, vocabulary, selection) and the RMN's architecture."""


class Rmn(NeuralLanguageModel):
    """`rmn`: the Recurrent Memory Network LM, by default RM(+tM-g) on 3 LSTM layers (Tran 2018 §4.6)."""

    name = "rmn"
    settings_class = RmnSettings

    def build_net(self, settings: Any, vocabulary: Vocabulary) -> LanguageModelNet:
        from structbench.baselines.neural.rmn.nets import RecurrentMemoryNetwork

        return RecurrentMemoryNetwork(settings, len(vocabulary))
