"""The registered `transformer`: the encoder-decoder Transformer of `nets.py` as a trainable transducer."""

from __future__ import annotations

from structbench.baselines.neural.transducer import NeuralTransducer
from structbench.baselines.neural.transformer.nets import TransformerNet, TransformerSettings


class Transformer(NeuralTransducer):
    """`transformer`: encoder-decoder Transformer, sizes settable with --set (d_model, heads, layers...)."""

    name = "transformer"
    settings_class = TransformerSettings
    net_class = TransformerNet
