"""The registered `seq2attn`: Korrel's Seq2Attn network (`nets.py`) as a trainable transducer."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from structbench.baselines.neural.seq2attn.settings import Seq2AttnSettings
from structbench.baselines.neural.transducer import NeuralTransducer
from structbench.baselines.neural.vocab import Vocabulary
from structbench.specs import Split

if TYPE_CHECKING:
    from structbench.baselines.neural.seq2attn.nets import Seq2AttnNet


class Seq2Attn(NeuralTransducer):
    """`seq2attn`: Korrel's Seq2Attn; `--set transcoder=false` (etc.) gives the rows of the Table 6.2 ablation."""

    name = "seq2attn"
    settings_class = Seq2AttnSettings

    def build_net(self, settings: Any, source: Vocabulary, target: Vocabulary, train: Split) -> Seq2AttnNet:
        from structbench.baselines.neural.seq2attn.nets import Seq2AttnNet

        return Seq2AttnNet(settings, len(source), len(target))
