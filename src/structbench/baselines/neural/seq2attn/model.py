"""The registered `seq2attn`: Korrel's Seq2Attn network (`nets.py`) as a trainable transducer."""

from __future__ import annotations

from structbench.baselines.neural.seq2attn.nets import Seq2AttnNet, Seq2AttnSettings
from structbench.baselines.neural.transducer import NeuralTransducer


class Seq2Attn(NeuralTransducer):
    """`seq2attn`: Korrel's Seq2Attn; `--set transcoder=false` (etc.) gives the rows of the Table 6.2 ablation."""

    name = "seq2attn"
    settings_class = Seq2AttnSettings
    net_class = Seq2AttnNet
