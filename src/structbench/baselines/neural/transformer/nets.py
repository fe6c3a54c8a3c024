"""Encoder-decoder Transformer (Vaswani et al. 2017) with sinusoidal positions.

Not a reference model of the seed papers, but the modern peer every user compares a
recurrent baseline with (e.g. Keysers et al. 2020 and Kim & Linzen 2020 report it on SCAN
and COGS). Post-norm layers as in the original paper, greedy decoding. Deviation: it is
always trained with teacher forcing (the whole gold prefix in parallel, as Transformers
are), so the `teacher_forcing` setting has no effect; it exposes no attention, so
attentive guidance does not apply to it.
"""

from __future__ import annotations

import math

import torch
from pydantic import PositiveInt
from torch import nn

from structbench.baselines.neural.batching import Batch
from structbench.baselines.neural.net import NetOutput, TransductionNet
from structbench.baselines.neural.settings import Fraction, TrainSettings
from structbench.baselines.neural.vocab import EOS, PAD, SOS


class TransformerSettings(TrainSettings):
    """Architecture of the Transformer on top of the shared training settings."""

    d_model: PositiveInt = 128
    """Width of embeddings and every layer."""
    heads: PositiveInt = 4
    """Attention heads per layer."""
    encoder_layers: PositiveInt = 2
    """Encoder layers."""
    decoder_layers: PositiveInt = 2
    """Decoder layers."""
    feedforward: PositiveInt = 256
    """Inner width of the position-wise feed-forward layers."""
    dropout: Fraction = 0.1
    """Dropout in every sub-layer and on the embeddings."""


def sinusoids(length: int, width: int) -> torch.Tensor:
    """[length, width] sinusoidal position encodings (Vaswani et al. 2017, §3.5)."""
    position = torch.arange(length, dtype=torch.float).unsqueeze(1)
    frequency = torch.exp(torch.arange(0, width, 2, dtype=torch.float) * (-math.log(10000.0) / width))
    table = torch.zeros(length, width)
    table[:, 0::2] = torch.sin(position * frequency)
    table[:, 1::2] = torch.cos(position * frequency[: width // 2])
    return table


class TransformerNet(TransductionNet):
    def __init__(self, settings: TransformerSettings, source_size: int, target_size: int) -> None:
        super().__init__()
        d = settings.d_model
        self.scale = math.sqrt(d)
        self.source_embedding = nn.Embedding(source_size, d, padding_idx=PAD)
        self.target_embedding = nn.Embedding(target_size, d, padding_idx=PAD)
        self.register_buffer("positions", sinusoids(512, d), persistent=False)
        self.dropout = nn.Dropout(settings.dropout)
        self.transformer = nn.Transformer(
            d_model=d,
            nhead=settings.heads,
            num_encoder_layers=settings.encoder_layers,
            num_decoder_layers=settings.decoder_layers,
            dim_feedforward=settings.feedforward,
            dropout=settings.dropout,
            batch_first=True,
        )
        # The nested-tensor fast path is a prototype that warns on every padded batch; plain masks suffice.
        self.transformer.encoder.use_nested_tensor = False
        self.output = nn.Linear(d, target_size)

    def _embed(self, embedding: nn.Embedding, ids: torch.Tensor) -> torch.Tensor:
        positions: torch.Tensor = self.positions  # type: ignore[assignment]
        embedded: torch.Tensor = self.dropout(embedding(ids) * self.scale + positions[: ids.shape[1]])
        return embedded

    def _encode(self, batch: Batch) -> torch.Tensor:
        encoded: torch.Tensor = self.transformer.encoder(
            self._embed(self.source_embedding, batch.source), src_key_padding_mask=~batch.source_mask
        )
        return encoded

    def _decode_logits(self, memory: torch.Tensor, batch: Batch, previous: torch.Tensor) -> torch.Tensor:
        width = previous.shape[1]
        causal = torch.ones(width, width, dtype=torch.bool, device=previous.device).triu(1)
        hidden = self.transformer.decoder(
            self._embed(self.target_embedding, previous),
            memory,
            tgt_mask=causal,
            tgt_is_causal=True,
            tgt_key_padding_mask=previous == PAD,
            memory_key_padding_mask=~batch.source_mask,
        )
        logits: torch.Tensor = self.output(hidden)
        return logits

    def forward(self, batch: Batch, teacher_forcing: bool) -> NetOutput:
        assert batch.target is not None
        previous = torch.cat([torch.full_like(batch.target[:, :1], SOS), batch.target[:, :-1]], dim=1)
        return NetOutput(self._decode_logits(self._encode(batch), batch, previous))

    def decode(self, batch: Batch, max_length: int) -> torch.Tensor:
        memory = self._encode(batch)
        rows = batch.source.shape[0]
        prefix = torch.full((rows, 1), SOS, dtype=torch.long, device=memory.device)
        finished = torch.zeros(rows, dtype=torch.bool, device=memory.device)
        for _ in range(max_length):
            following = self._decode_logits(memory, batch, prefix)[:, -1].argmax(dim=-1)
            prefix = torch.cat([prefix, following.unsqueeze(1)], dim=1)
            finished |= following == EOS
            if bool(finished.all()):
                break
        return prefix[:, 1:]
