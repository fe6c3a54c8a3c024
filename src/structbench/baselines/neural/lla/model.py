"""The registered LLA-LSTM models (Thrush 2020): the full model, its ablation without the adversary and the plain LSTM.

All three train `LlaNet` (`nets.py`) with the shared `NeuralTransducer`; they differ in which units the
network has, fixed here so that `--set` cannot turn one into another.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, ClassVar

from structbench.baselines.neural.lla.settings import LlaSettings
from structbench.baselines.neural.transducer import NeuralTransducer
from structbench.baselines.neural.vocab import Vocabulary
from structbench.errors import UserError
from structbench.specs import Split

if TYPE_CHECKING:
    from structbench.baselines.neural.lla.nets import LlaNet


class LlaLstm(NeuralTransducer):
    """`lla-lstm`: Thrush's LLA-LSTM, with the Lexicon and the Lexicon-Adversary units."""

    name = "lla-lstm"
    settings_class = LlaSettings
    variant: ClassVar[dict[str, bool]] = {"lexicon": True, "adversary": True}
    """The units this entry has; they are part of its identity, not settings to change."""

    def __init__(self, budget: str = "cpu-small", **overrides: Any) -> None:
        for key, value in self.variant.items():
            if key in overrides and overrides[key] != value:
                raise UserError(
                    f"{self.name} always has {key}={str(value).lower()}; use lla-lstm, lla-lstm-noadv or "
                    "lstm-thrush for the other variants."
                )
        super().__init__(budget, **{**overrides, **self.variant})

    def build_net(self, settings: Any, source: Vocabulary, target: Vocabulary, train: Split) -> LlaNet:
        from structbench.baselines.neural.lla.nets import LlaNet

        return LlaNet(settings, len(source), len(target))


class LlaLstmNoAdversary(LlaLstm):
    """`lla-lstm-noadv`: the LLA-LSTM without the Lexicon-Adversary unit ("LLA-LSTM (No Adversary)")."""

    name = "lla-lstm-noadv"
    variant: ClassVar[dict[str, bool]] = {"lexicon": True, "adversary": False}


class ThrushLstm(LlaLstm):
    """`lstm-thrush`: Thrush's plain LSTM baseline, token-free decoder and the same hyper-parameters, no LLA units."""

    name = "lstm-thrush"
    variant: ClassVar[dict[str, bool]] = {"lexicon": False, "adversary": False}
