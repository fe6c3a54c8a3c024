"""Greedy decoding for dev accuracy stops at the target's width (`Trainer.evaluate`): exact only because
every network's first steps are the same whatever the number of steps asked for."""

from __future__ import annotations

import pytest
import torch

from structbench.baselines.neural.batching import make_batch
from structbench.baselines.neural.lla.nets import LlaNet
from structbench.baselines.neural.lla.settings import LlaSettings
from structbench.baselines.neural.net import TransductionNet
from structbench.baselines.neural.seq2attn.nets import Seq2AttnNet
from structbench.baselines.neural.seq2attn.settings import Seq2AttnSettings
from structbench.baselines.neural.seq2seq.nets import Seq2SeqNet
from structbench.baselines.neural.seq2seq.settings import Seq2SeqSettings
from structbench.baselines.neural.transformer.nets import TransformerNet
from structbench.baselines.neural.transformer.settings import TransformerSettings
from structbench.baselines.neural.vocab import Vocabulary

SOURCE = Vocabulary(["a", "b", "c", "."])
TARGET = Vocabulary(["X", "Y", "Z"])


def nets() -> dict[str, TransductionNet]:
    s, t = len(SOURCE), len(TARGET)
    made: dict[str, TransductionNet] = {}
    for attention in ("none", "location", "luong-dot", "luong-mlp"):
        torch.manual_seed(0)
        settings = Seq2SeqSettings(attention=attention, hidden=16, embedding=8, dropout=0.0)  # type: ignore[arg-type]
        made[f"seq2seq-{attention}"] = Seq2SeqNet(settings, s, t, 16)
    torch.manual_seed(0)
    made["seq2attn"] = Seq2AttnNet(Seq2AttnSettings(embedding=16, hidden=16, dropout=0.0), s, t)
    torch.manual_seed(0)
    made["transformer"] = TransformerNet(
        TransformerSettings(d_model=16, heads=2, encoder_layers=1, decoder_layers=1, feedforward=16, dropout=0.0), s, t
    )
    torch.manual_seed(0)
    made["lla"] = LlaNet(LlaSettings(hidden=8, embedding=8, adversary_hidden=8), s, t)
    return made


@pytest.mark.parametrize("name", list(nets()))
def test_a_shorter_decode_is_the_start_of_a_longer_one_bit_for_bit(name: str) -> None:
    net = nets()[name].eval()
    batch = make_batch(
        [["a", "b", "."], ["c", "c", "a", "."], ["b", "."]],
        SOURCE,
        [["X", "Y"], ["Z", "Z", "X", "Y", "Y"], ["Y"]],
        TARGET,
    )
    width = batch.target.shape[1]  # type: ignore[union-attr]
    with torch.inference_mode():
        long, short = net.decode(batch, 64), net.decode(batch, width)
    assert short.shape[1] <= width
    assert torch.equal(short, long[:, : short.shape[1]])
