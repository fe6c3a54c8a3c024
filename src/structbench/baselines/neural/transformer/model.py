"""The registered `transformer`: the encoder-decoder Transformer of `nets.py` as a trainable transducer."""

from __future__ import annotations

from structbench.baselines.neural.transducer import NeuralTransducer
from structbench.baselines.neural.transformer.nets import TransformerNet, TransformerSettings


class Transformer(NeuralTransducer):
    """`transformer`: encoder-decoder Transformer, sizes settable with --set (d_model, heads, layers...)."""

    name = "transformer"
    settings_class = TransformerSettings
    net_class = TransformerNet
    revision = 1
    """1: greedy decoding reads one position at a time from cached keys and values instead of the
    whole prefix again at every step; its scores differ from the old ones by float rounding, and
    dev accuracy (which selects the weights) is read with it, so neither old runs nor old
    checkpoints stand for what this code gives."""
