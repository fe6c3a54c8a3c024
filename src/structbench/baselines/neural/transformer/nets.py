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
from torch import nn

from structbench.baselines.neural.batching import Batch
from structbench.baselines.neural.net import NetOutput, TransductionNet
from structbench.baselines.neural.transformer.settings import TransformerSettings
from structbench.baselines.neural.vocab import EOS, PAD, SOS


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
        rows = memory.shape[0]
        steps = _CachedDecoder(self, memory, ~batch.source_mask, max_length)
        outputs = torch.full((rows, max_length), PAD, dtype=torch.long, device=memory.device)
        going = torch.arange(rows, device=memory.device)
        token = torch.full((rows,), SOS, dtype=torch.long, device=memory.device)
        width = 0
        for t in range(max_length):
            token = steps.logits(token, t).argmax(dim=-1)
            outputs[going, t] = token
            width = t + 1
            unfinished = token != EOS
            if not bool(unfinished.all()):
                if not bool(unfinished.any()):
                    break
                going, token = going[unfinished], token[unfinished]
                steps.keep(unfinished)
        return outputs[:, :width]


class _CachedDecoder:
    """The decoder run one position at a time, as greedy decoding needs it.

    Reading the whole prefix again at every step (what `_decode_logits` does) costs a number of
    positions quadratic in the output length: hours for SLOG's 17,000 generalisation forms of up
    to 480 tokens. Here each layer keeps the self-attention keys and values of the positions
    decoded so far and the cross-attention keys and values of the source, so a step reads one
    position; its logits equal the whole-prefix pass's up to float rounding (tests), and a step's
    numbers do not depend on how many steps are asked for. Post-norm layers, in evaluation mode
    (no dropout), as `nn.TransformerDecoderLayer` computes them.
    """

    def __init__(self, net: TransformerNet, memory: torch.Tensor, memory_padding: torch.Tensor, steps: int) -> None:
        self.net = net
        self.layers: list[nn.TransformerDecoderLayer] = list(net.transformer.decoder.layers)
        rows, _, width = memory.shape
        self.heads = self.layers[0].self_attn.num_heads
        self.head_width = width // self.heads
        self.source_visible = (~memory_padding)[:, None, :]
        self.crossed = [self._project(layer.multihead_attn, memory, 1, 2) for layer in self.layers]
        shape = (rows, self.heads, min(steps, 32), self.head_width)
        self.keys = [memory.new_zeros(shape) for _ in self.layers]
        self.values = [memory.new_zeros(shape) for _ in self.layers]
        self.visible = torch.zeros(rows, 1, shape[2], dtype=torch.bool, device=memory.device)

    def _make_room(self, t: int) -> None:
        """Double the caches' length when position `t` does not fit (so that dropping finished rows
        copies about as many positions as have been decoded, not `steps`)."""
        length = self.visible.shape[-1]
        if t < length:
            return
        self.keys = [torch.cat([keys, torch.zeros_like(keys)], dim=2) for keys in self.keys]
        self.values = [torch.cat([values, torch.zeros_like(values)], dim=2) for values in self.values]
        self.visible = torch.cat([self.visible, torch.zeros_like(self.visible)], dim=-1)

    def keep(self, rows: torch.Tensor) -> None:
        """Go on with the rows where `rows` [B] is true only (the others have written their EOS)."""
        self.keys = [keys[rows] for keys in self.keys]
        self.values = [values[rows] for values in self.values]
        self.crossed = [[part[rows] for part in parts] for parts in self.crossed]
        self.source_visible = self.source_visible[rows]
        self.visible = self.visible[rows]

    def _project(self, attention: nn.MultiheadAttention, x: torch.Tensor, first: int, count: int) -> list[torch.Tensor]:
        """Parts `first`..`first + count - 1` (0 query, 1 key, 2 value) of `attention`'s input projection of
        `x` [B, T, D], each split into heads: [B, H, T, D / H]."""
        width = x.shape[-1]
        weight = attention.in_proj_weight[first * width : (first + count) * width]
        bias = attention.in_proj_bias[first * width : (first + count) * width]
        projected = nn.functional.linear(x, weight, bias)
        return [
            part.reshape(*part.shape[:-1], self.heads, self.head_width).transpose(1, 2)
            for part in torch.split(projected, width, dim=-1)
        ]

    def _attend(
        self,
        attention: nn.MultiheadAttention,
        query: torch.Tensor,
        keys: torch.Tensor,
        values: torch.Tensor,
        visible: torch.Tensor,
    ) -> torch.Tensor:
        scores = (query * keys).sum(-1) * self.head_width**-0.5
        weights = scores.masked_fill(~visible, -math.inf).softmax(dim=-1)
        read = (weights.unsqueeze(-1) * values).sum(-2, keepdim=True)
        out: torch.Tensor = attention.out_proj(read.transpose(1, 2).flatten(2))
        return out

    def logits(self, previous: torch.Tensor, t: int) -> torch.Tensor:
        """[B, V] scores of output position `t` given the token `previous` [B] at input position `t`."""
        net = self.net
        positions: torch.Tensor = net.positions  # type: ignore[assignment]
        x = (net.target_embedding(previous) * net.scale + positions[t]).unsqueeze(1)
        self._make_room(t)
        self.visible[:, 0, t] = previous != PAD
        visible = self.visible[..., : t + 1]
        for layer, keys, values, (cross_keys, cross_values) in zip(
            self.layers, self.keys, self.values, self.crossed, strict=True
        ):
            query, key, value = self._project(layer.self_attn, x, 0, 3)
            keys[:, :, t : t + 1] = key
            values[:, :, t : t + 1] = value
            x = layer.norm1(
                x + self._attend(layer.self_attn, query, keys[:, :, : t + 1], values[:, :, : t + 1], visible)
            )
            (query,) = self._project(layer.multihead_attn, x, 0, 1)
            x = layer.norm2(
                x + self._attend(layer.multihead_attn, query, cross_keys, cross_values, self.source_visible)
            )
            x = layer.norm3(x + layer.linear2(layer.activation(layer.linear1(x))))
        norm = net.transformer.decoder.norm
        if norm is not None:
            x = norm(x)
        logits: torch.Tensor = net.output(x[:, 0])
        return logits
