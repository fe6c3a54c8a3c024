"""The registered `rmn`: the Recurrent Memory Network (`nets.py`) trained and scored as a word-level LM."""

from __future__ import annotations

from structbench.baselines.neural.lm.model import LmSettings, NeuralLanguageModel
from structbench.baselines.neural.rmn.nets import RecurrentMemoryNetwork, RmnArchitecture


class RmnSettings(LmSettings, RmnArchitecture):
    """`rmn`: the shared LM settings (optimiser, vocabulary, selection) and the RMN's architecture."""


class Rmn(NeuralLanguageModel):
    """`rmn`: the Recurrent Memory Network LM, by default RM(+tM-g) on 3 LSTM layers (Tran 2018 §4.6)."""

    name = "rmn"
    settings_class = RmnSettings
    net_class = RecurrentMemoryNetwork
