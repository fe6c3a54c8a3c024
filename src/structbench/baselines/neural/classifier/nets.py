"""The classifiers of Tran (2018, ch. 5): LSTM vs Transformer ("FAN") on agreement and on logic.

Number prediction (§5.5; Linzen et al. 2016's supervised objective): the sentence prefix up
to the verb is read left to right and the last position's state is mapped to singular or
plural. §5.5.2: "both the LSTM and the FAN have 4 layers, the dropout rate is 0.2, and
word-embeddings and hidden sizes are set to 128 ... The FAN has two attention heads"; the
FAN's sub-layers are post-LayerNorm (eqs. 5.1-5.4) with a ReLU feed-forward of inner size
d_f = 2d (eq. 5.10) and sinusoidal positions (eqs. 5.11-5.12). The FAN reads the prefix under
a causal mask, as it does as a language model (§5.3: each step attends to "all previous time
steps"); with the prefix padded on the right, no real position ever attends to padding.

- `lstm-number` (`LstmNumber`): a 4-layer LSTM; its top layer's final hidden state -> linear.
- `fan-number` (`FanNumber`): a 4-layer Transformer encoder (2 heads, causal mask); the last
  prefix position's state -> linear.

Logical inference (§5.6.2, after Bowman et al. 2015b): "Premise and hypothesis sentences are
encoded by fixed-size vectors. These two vectors are then concatenated and fed to a 3-layer
feed-forward neural network with ReLU nonlinearities to perform 7-way classification." The
same encoder (shared weights) reads each side on its own; [premise; hypothesis] goes to the
network of three linear layers (two ReLU hidden layers of `mlp_hidden` units).

- `lstm-logic` (`LstmLogic`): "a 2-layer LSTM with skip connections"; the sentence vector is
  "the last hidden state of the top LSTM layer". The skip connection adds each layer's input to
  its output (as in the authors' code, ketranm/fan_vs_rnn `PLRNN`), and the vector is the top
  of that residual stack at the last token.
- `fan-logic` (`FanLogic`): a Transformer encoder over the whole sentence (padding masked),
  pooled by "a self-attention layer with two trainable queries q1, q2 in R^{1 x d}":
  z_i = softmax(q_i Y^T / sqrt(d)) Y, z = [z_1, z_2] (the equation under §5.6.2).
- `bow-logic` (`BowLogic`): §5.6.1's control, "three bag-of-words models followed by
  sum/average/max-pooling" (`--set pooling=sum|mean|max`), over word embeddings only: the
  sentence vector cannot depend on word order. The thesis reports the best of the three below 59%.

The thesis gives no sizes, optimiser or schedule for the logic models (§5.6.2 names only the
architectures); the recipes take d = 128 and 2 heads from §5.5.2 and the rest from the authors'
public code, and say which is which. Initialisation is PyTorch's default throughout (the thesis
states none; the code's uniform(-0.1, 0.1) is not copied).
"""

from __future__ import annotations

import torch
import torch.nn.functional as F
from torch import nn
from torch.nn.utils.rnn import pack_padded_sequence

from structbench.baselines.neural.classifier.settings import (
    BowLogicSettings,
    FanLogicSettings,
    FanNumberSettings,
    LstmLogicSettings,
    NumberSettings,
)
from structbench.baselines.neural.transformer.nets import sinusoids
from structbench.baselines.neural.vocab import PAD


class ClassifierNet(nn.Module):
    """Base of the classifier networks: padded segments in, one row of label scores per example out."""

    def forward(self, segments: tuple[torch.Tensor, ...]) -> torch.Tensor:  # pragma: no cover - interface
        """[B, n_labels] unnormalised label scores."""
        raise NotImplementedError


def real_lengths(ids: torch.Tensor) -> torch.Tensor:
    """[B] number of real (non-padding) tokens of each row of a right-padded [B, T] id tensor."""
    return ids.ne(PAD).sum(dim=1)


class Positions(nn.Module):
    """Adds the sinusoidal position encodings of eqs. 5.11-5.12 to a [B, T, d] input."""

    def __init__(self, width: int, cached: int = 512) -> None:
        super().__init__()
        self.width = width
        self.register_buffer("table", sinusoids(cached, width), persistent=False)

    def forward(self, embedded: torch.Tensor) -> torch.Tensor:
        length = embedded.shape[1]
        table: torch.Tensor = self.table  # type: ignore[assignment]
        if length > table.shape[0]:
            table = sinusoids(length, self.width).to(embedded.device)
        return embedded + table[:length].to(embedded.dtype)


def fan_encoder(d_model: int, heads: int, feedforward: int, dropout: float, layers: int) -> nn.TransformerEncoder:
    """A stack of post-LayerNorm Transformer layers with a ReLU feed-forward, eqs. 5.1-5.10."""
    layer = nn.TransformerEncoderLayer(
        d_model, heads, feedforward, dropout, activation="relu", batch_first=True, norm_first=False
    )
    # the nested-tensor fast path is a prototype that warns on padded batches; plain masks suffice
    return nn.TransformerEncoder(layer, layers, enable_nested_tensor=False)


def last_positions(states: torch.Tensor, lengths: torch.Tensor) -> torch.Tensor:
    """[B, d] the state at each row's last real position of right-padded [B, T, d] states."""
    return states[torch.arange(states.shape[0], device=states.device), lengths.to(states.device) - 1]


class LstmNumberNet(ClassifierNet):
    """The LSTM of §5.5.2 with its top layer's final hidden state mapped to the labels."""

    def __init__(self, settings: NumberSettings, vocabulary: int, labels: int) -> None:
        super().__init__()
        d = settings.d_model
        self.embedding = nn.Embedding(vocabulary, d, padding_idx=PAD)
        self.dropout = nn.Dropout(settings.dropout)
        self.lstm = nn.LSTM(
            d, d, settings.layers, batch_first=True, dropout=settings.dropout if settings.layers > 1 else 0.0
        )
        self.output = nn.Linear(d, labels)

    def forward(self, segments: tuple[torch.Tensor, ...]) -> torch.Tensor:
        (ids,) = segments
        embedded = self.dropout(self.embedding(ids))
        packed = pack_padded_sequence(embedded, real_lengths(ids).cpu(), batch_first=True, enforce_sorted=False)
        _, (hidden, _) = self.lstm(packed)
        logits: torch.Tensor = self.output(hidden[-1])
        return logits


class FanNumberNet(ClassifierNet):
    """The FAN of §5.2/§5.5.2 under a causal mask; the last prefix position's state mapped to the labels."""

    def __init__(self, settings: FanNumberSettings, vocabulary: int, labels: int) -> None:
        super().__init__()
        d = settings.d_model
        self.embedding = nn.Embedding(vocabulary, d, padding_idx=PAD)
        self.positions = Positions(d)
        self.dropout = nn.Dropout(settings.dropout)
        self.encoder = fan_encoder(d, settings.heads, settings.feedforward, settings.dropout, settings.layers)
        self.output = nn.Linear(d, labels)

    def forward(self, segments: tuple[torch.Tensor, ...]) -> torch.Tensor:
        (ids,) = segments
        width = ids.shape[1]
        causal = torch.ones(width, width, dtype=torch.bool, device=ids.device).triu(1)
        states = self.encoder(self.dropout(self.positions(self.embedding(ids))), mask=causal, is_causal=True)
        logits: torch.Tensor = self.output(last_positions(states, real_lengths(ids)))
        return logits


class SentenceEncoder(nn.Module):
    """Maps one side of a pair, [B, T] right-padded ids, to a fixed-size [B, width] vector."""

    width: int

    def forward(self, ids: torch.Tensor) -> torch.Tensor:  # pragma: no cover - interface
        raise NotImplementedError


class PairNet(ClassifierNet):
    """Bowman et al. (2015b) as §5.6.2 describes it: one encoder reads premise and hypothesis
    separately, [premise; hypothesis] goes through three linear layers with ReLU between them."""

    def __init__(self, encoder: SentenceEncoder, mlp_hidden: int, labels: int) -> None:
        super().__init__()
        self.encoder = encoder
        self.classifier = nn.Sequential(
            nn.Linear(2 * encoder.width, mlp_hidden),
            nn.ReLU(),
            nn.Linear(mlp_hidden, mlp_hidden),
            nn.ReLU(),
            nn.Linear(mlp_hidden, labels),
        )

    def features(self, segments: tuple[torch.Tensor, ...]) -> torch.Tensor:
        """[B, 2 * width] the classifier's input: the premise's vector, then the hypothesis's."""
        premise, hypothesis = segments
        return torch.cat([self.encoder(premise), self.encoder(hypothesis)], dim=1)

    def forward(self, segments: tuple[torch.Tensor, ...]) -> torch.Tensor:
        logits: torch.Tensor = self.classifier(self.features(segments))
        return logits


class LstmSentenceEncoder(SentenceEncoder):
    """Stacked one-layer LSTMs, each wrapped in a skip connection; the top of the stack at the last token."""

    def __init__(self, settings: LstmLogicSettings, vocabulary: int) -> None:
        super().__init__()
        d = self.width = settings.d_model
        self.embedding = nn.Embedding(vocabulary, d, padding_idx=PAD)
        self.dropout = nn.Dropout(settings.dropout)
        self.layers = nn.ModuleList(nn.LSTM(d, d, batch_first=True) for _ in range(settings.layers))

    def forward(self, ids: torch.Tensor) -> torch.Tensor:
        # left to right over right padding: the state at a real position never depends on the padding after it
        states = self.dropout(self.embedding(ids))
        for layer in self.layers:
            output, _ = layer(states)
            states = states + self.dropout(output)
        return last_positions(states, real_lengths(ids))


class FanSentenceEncoder(SentenceEncoder):
    """A Transformer encoder over the whole sentence, pooled by attention from two trained queries."""

    def __init__(self, settings: FanLogicSettings, vocabulary: int) -> None:
        super().__init__()
        d = settings.d_model
        self.width = 2 * d
        self.embedding = nn.Embedding(vocabulary, d, padding_idx=PAD)
        self.positions = Positions(d)
        self.dropout = nn.Dropout(settings.dropout)
        self.encoder = fan_encoder(d, settings.heads, settings.feedforward, settings.dropout, settings.layers)
        self.queries = nn.Parameter(torch.randn(2, d))  # q_1 and q_2 of §5.6.2

    def forward(self, ids: torch.Tensor) -> torch.Tensor:
        real = ids.ne(PAD)
        states = self.encoder(self.dropout(self.positions(self.embedding(ids))), src_key_padding_mask=~real)
        queries = self.queries.unsqueeze(0).expand(ids.shape[0], -1, -1)
        # softmax(q_i Y^T / sqrt(d)) Y over the real positions: torch's default scale is 1 / sqrt(d)
        pooled = F.scaled_dot_product_attention(queries, states, states, attn_mask=real.unsqueeze(1))
        return pooled.reshape(ids.shape[0], self.width)


class BowSentenceEncoder(SentenceEncoder):
    """The sum, mean or element-wise max of a sentence's word embeddings: blind to word order by construction."""

    def __init__(self, settings: BowLogicSettings, vocabulary: int) -> None:
        super().__init__()
        self.width = settings.d_model
        self.pooling = settings.pooling
        self.embedding = nn.Embedding(vocabulary, settings.d_model, padding_idx=PAD)

    def forward(self, ids: torch.Tensor) -> torch.Tensor:
        real = ids.ne(PAD).unsqueeze(2)
        embedded = self.embedding(ids)
        if self.pooling == "max":
            pooled: torch.Tensor = embedded.masked_fill(~real, float("-inf")).max(dim=1).values
            return pooled
        summed: torch.Tensor = (embedded * real).sum(dim=1)
        return summed / real.sum(dim=1) if self.pooling == "mean" else summed


class LstmLogicNet(PairNet):
    def __init__(self, settings: LstmLogicSettings, vocabulary: int, labels: int) -> None:
        super().__init__(LstmSentenceEncoder(settings, vocabulary), settings.mlp_hidden, labels)


class FanLogicNet(PairNet):
    def __init__(self, settings: FanLogicSettings, vocabulary: int, labels: int) -> None:
        super().__init__(FanSentenceEncoder(settings, vocabulary), settings.mlp_hidden, labels)


class BowLogicNet(PairNet):
    def __init__(self, settings: BowLogicSettings, vocabulary: int, labels: int) -> None:
        super().__init__(BowSentenceEncoder(settings, vocabulary), settings.mlp_hidden, labels)
