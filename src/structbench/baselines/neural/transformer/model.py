"""The registered `transformer`: the encoder-decoder Transformer of `nets.py` as a trainable transducer."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from structbench.baselines.neural.transducer import NeuralTransducer
from structbench.baselines.neural.transformer.settings import TransformerSettings
from structbench.baselines.neural.vocab import Vocabulary
from structbench.specs import Split

if TYPE_CHECKING:
    from structbench.baselines.neural.transformer.nets import TransformerNet


class Transformer(NeuralTransducer):
    """`transformer`: encoder-decoder Transformer, sizes settable with --set (d_model, heads, layers...)."""

    name = "transformer"
    settings_class = TransformerSettings
    revision = 1
    """1: greedy decoding reads one position at a time from cached keys and values instead of the
    whole prefix again at every step; its scores differ from the old ones by float rounding, and
    dev accuracy (which selects the weights) is read with it, so neither old runs nor old
    checkpoints stand for what this code gives."""

    def build_net(self, settings: Any, source: Vocabulary, target: Vocabulary, train: Split) -> TransformerNet:
        from structbench.baselines.neural.transformer.nets import TransformerNet

        return TransformerNet(settings, len(source), len(target))
