"""Recurrent encoder-decoders of the literature, with and without attention.

The family every compositional-generalisation paper compares against: an SRN, GRU or LSTM
encoder (1-2 layers) whose final state starts an equally shaped decoder, with greedy
decoding. Attention variants, by the paper that uses them:

- `none`: Lake & Baroni (2018) overall-best and McCoy, Frank & Linzen (2018) without attention;
- `location`: the one attention mechanism of McCoy, Frank & Linzen's (2018, CogSci) supplementary
  material (Figure 8): a linear map of [previous output embedding; previous decoder state] to
  one score per source position;
- `content`: additive (tanh) scores of the encoder states against the previous decoder state,
  after the content-based attention of the authors' code for McCoy, Frank & Linzen (2020)
  (rnn-hierarchical-biases models.py, `--attention content`), which the 2018 supplement does
  not describe; theirs also reads the previous output's embedding, ours does not. Like
  `location`, it feeds the weighted sum into the decoder recurrence;
- `luong-dot`, `luong-mlp`: global attention after the recurrence (Luong et al. 2015;
  Korrel 2018 §2.2 "post-rnn"), mlp scores v^T ReLU(W [h_s; h_t]) as Korrel defines them;
- `pre-mlp`, `pre-dot`: Korrel's default baseline (§2.2 "pre-rnn", Bahdanau-like): the
  previous decoder state attends, and [input embedding; context] is the decoder input.
  `full_context` replaces that input by c_t ⊙ W[x_t; c_t] (Korrel eq. 5.3, full-context-pre-rnn).

Attentive Guidance (Hupkes et al. 2018) needs no architecture change: it adds the
trainer's attention loss (`guidance`), and its oracle variant replaces the computed
attention by the one-hot target at training and inference (`oracle_attention`).

Deviations: teacher forcing is decided per batch (the `machine` library's convention),
not per sequence; McCoy's location attention needs a maximum source length, fixed here at
twice the longest training input (positions beyond it cannot be attended).
"""

from __future__ import annotations

import torch
import torch.nn.functional as F
from torch import nn
from torch.nn.utils.rnn import pack_padded_sequence, pad_packed_sequence

from structbench.baselines.neural.batching import IGNORE, Batch
from structbench.baselines.neural.net import NetOutput, TransductionNet, greedy_loop
from structbench.baselines.neural.seq2seq.settings import AttentionKind, Cell, Seq2SeqSettings
from structbench.baselines.neural.vocab import PAD, SOS

State = torch.Tensor | tuple[torch.Tensor, torch.Tensor]
PRE_RNN = ("location", "content", "pre-mlp", "pre-dot")


def recurrent(cell: Cell, inputs: int, hidden: int, layers: int, dropout: float) -> nn.RNNBase:
    kind = {"srn": nn.RNN, "gru": nn.GRU, "lstm": nn.LSTM}[cell]
    network: nn.RNNBase = kind(
        inputs, hidden, num_layers=layers, dropout=dropout if layers > 1 else 0.0, batch_first=True
    )
    return network


def top(state: State) -> torch.Tensor:
    """[B, H] output of the top layer of a recurrent state."""
    return (state[0] if isinstance(state, tuple) else state)[-1]


class Alignment(nn.Module):
    """Attention scores of one query against every encoder state."""

    def __init__(self, kind: AttentionKind, hidden: int, embedding: int, max_source: int) -> None:
        super().__init__()
        self.kind = kind
        if kind in ("luong-mlp", "pre-mlp", "content"):
            self.keys = nn.Linear(hidden, hidden, bias=False)
            self.query = nn.Linear(hidden, hidden)
            self.vector = nn.Linear(hidden, 1, bias=False)
        elif kind == "location":
            self.location = nn.Linear(embedding + hidden, max_source)

    def prepare(self, memory: torch.Tensor) -> torch.Tensor:
        """Per-batch work on the encoder states [B, S, H], done once rather than per step."""
        return self.keys(memory) if hasattr(self, "keys") else memory

    def forward(self, keys: torch.Tensor, query: torch.Tensor, previous: torch.Tensor) -> torch.Tensor:
        """Scores [B, T, S] of queries [B, T, H] (with previous-output embeddings [B, T, E] for location)."""
        if self.kind == "location":
            scores = self.location(torch.cat([previous, query], dim=-1))
            width = keys.shape[1]
            if scores.shape[-1] < width:  # inputs longer than any seen in training: unreachable positions
                scores = F.pad(scores, (0, width - scores.shape[-1]), value=float("-inf"))
            located: torch.Tensor = scores[..., :width]
            return located
        if self.kind in ("luong-dot", "pre-dot"):
            dot: torch.Tensor = query @ keys.transpose(1, 2)
            return dot
        activation = torch.tanh if self.kind == "content" else torch.relu
        mixed = activation(keys.unsqueeze(1) + self.query(query).unsqueeze(2))
        scored: torch.Tensor = self.vector(mixed)
        return scored.squeeze(-1)


def masked_softmax(scores: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
    """Softmax over source positions [.., S], zero on padding."""
    return torch.softmax(scores.float().masked_fill(~mask, float("-inf")), dim=-1).to(scores.dtype)


def oracle_weights(batch: Batch, steps: int, start: int = 0) -> torch.Tensor:
    """[B, steps, S] one-hot attention on the targets; steps without one attend to the last source token."""
    lengths = batch.source_mask.sum(dim=1)
    width = batch.source.shape[1]
    index = (lengths - 1).unsqueeze(1).expand(-1, steps).clone()
    if batch.attention is not None:
        given = batch.attention[:, start : start + steps]
        usable = (given != IGNORE) & (given < lengths.unsqueeze(1))
        index[:, : given.shape[1]] = torch.where(usable, given, index[:, : given.shape[1]])
    return F.one_hot(index, width).to(torch.float)


class Seq2SeqNet(TransductionNet):
    """Encoder-decoder with one of the attention variants of `Seq2SeqSettings`."""

    def __init__(self, settings: Seq2SeqSettings, source_size: int, target_size: int, max_source: int) -> None:
        super().__init__()
        self.settings = settings
        h, e = settings.hidden, settings.embedding
        self.kind = settings.attention
        self.pre = self.kind in PRE_RNN
        self.source_embedding = nn.Embedding(source_size, e, padding_idx=PAD)
        self.target_embedding = nn.Embedding(target_size, e, padding_idx=PAD)
        self.dropout = nn.Dropout(settings.dropout)
        self.encoder = recurrent(settings.cell, e, h, settings.layers, settings.dropout)
        decoder_input = e + h if self.pre and not settings.full_context else (h if self.pre else e)
        self.decoder = recurrent(settings.cell, decoder_input, h, settings.layers, settings.dropout)
        if self.kind != "none":
            self.alignment = Alignment(self.kind, h, e, max_source)
        if self.pre and settings.full_context:
            self.full_context = nn.Linear(e + h, h)
        if self.kind in ("luong-dot", "luong-mlp"):
            self.combine = nn.Linear(2 * h, h)
        self.output = nn.Linear(h, target_size)

    def encode(self, batch: Batch) -> tuple[torch.Tensor, State]:
        embedded = self.dropout(self.source_embedding(batch.source))
        packed = pack_padded_sequence(
            embedded, batch.source_lengths.clamp(min=1), batch_first=True, enforce_sorted=False
        )
        outputs, state = self.encoder(packed)
        memory, _ = pad_packed_sequence(outputs, batch_first=True, total_length=batch.source.shape[1])
        return memory, state

    def _attend(
        self,
        keys: torch.Tensor,
        memory: torch.Tensor,
        query: torch.Tensor,
        previous: torch.Tensor,
        batch: Batch,
        oracle: torch.Tensor | None,
    ) -> tuple[torch.Tensor, torch.Tensor]:
        """Context vectors [B, T, H] and weights [B, T, S]."""
        if oracle is not None:
            weights = oracle.to(memory.dtype)
        else:
            weights = masked_softmax(self.alignment(keys, query, previous), batch.source_mask.unsqueeze(1))
        return weights @ memory, weights

    def _logits(self, outputs: torch.Tensor, context: torch.Tensor | None) -> torch.Tensor:
        if context is not None and not self.pre:
            outputs = torch.tanh(self.combine(torch.cat([outputs, context], dim=-1)))
        logits: torch.Tensor = self.output(self.dropout(outputs))
        return logits

    def _step(
        self,
        previous_ids: torch.Tensor,
        state: State,
        keys: torch.Tensor,
        memory: torch.Tensor,
        batch: Batch,
        oracle: torch.Tensor | None,
    ) -> tuple[torch.Tensor, State, torch.Tensor | None]:
        """One decoder step for [B] previous ids: logits [B, V], new state, weights [B, S]."""
        embedded = self.dropout(self.target_embedding(previous_ids)).unsqueeze(1)
        weights = None
        if self.pre:
            context, weights = self._attend(keys, memory, top(state).unsqueeze(1), embedded, batch, oracle)
            joined = torch.cat([embedded, context], dim=-1)
            step_input = context * self.full_context(joined) if self.settings.full_context else joined
            output, state = self.decoder(step_input, state)
            logits = self._logits(output, None)
        else:
            output, state = self.decoder(embedded, state)
            context = None
            if self.kind != "none":
                context, weights = self._attend(keys, memory, output, embedded, batch, oracle)
            logits = self._logits(output, context)
        return logits.squeeze(1), state, None if weights is None else weights.squeeze(1)

    def forward(self, batch: Batch, teacher_forcing: bool) -> NetOutput:
        assert batch.target is not None
        memory, state = self.encode(batch)
        keys = self.alignment.prepare(memory) if self.kind != "none" else memory
        steps = batch.target.shape[1]
        oracle = oracle_weights(batch, steps).to(memory.device) if self.settings.oracle_attention else None
        previous = torch.cat([torch.full_like(batch.target[:, :1], SOS), batch.target[:, :-1]], dim=1)
        if teacher_forcing and not self.pre:
            # no attention inside the recurrence: the whole gold sequence in one recurrent call
            embedded = self.dropout(self.target_embedding(previous))
            outputs, _ = self.decoder(embedded, state)
            context = weights = None
            if self.kind != "none":
                context, weights = self._attend(keys, memory, outputs, embedded, batch, oracle)
            return NetOutput(self._logits(outputs, context), weights)
        logits, attention = [], []
        ids = previous[:, 0]
        for t in range(steps):
            step_oracle = None if oracle is None else oracle[:, t : t + 1]
            step_logits, state, weights = self._step(ids, state, keys, memory, batch, step_oracle)
            logits.append(step_logits)
            if weights is not None:
                attention.append(weights)
            ids = batch.target[:, t] if teacher_forcing else step_logits.argmax(dim=-1)
        return NetOutput(torch.stack(logits, dim=1), torch.stack(attention, dim=1) if attention else None)

    def decode(self, batch: Batch, max_length: int) -> torch.Tensor:
        memory, state = self.encode(batch)
        keys = self.alignment.prepare(memory) if self.kind != "none" else memory
        oracle = oracle_weights(batch, max_length).to(memory.device) if self.settings.oracle_attention else None
        current = [state]

        def step(previous: torch.Tensor, t: int) -> torch.Tensor:
            step_oracle = None if oracle is None else oracle[:, t : t + 1]
            logits, current[0], _ = self._step(previous, current[0], keys, memory, batch, step_oracle)
            return logits

        return greedy_loop(step, batch.source.shape[0], max_length, memory.device)
