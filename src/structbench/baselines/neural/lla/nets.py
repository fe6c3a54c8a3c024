"""LLA-LSTM: an LSTM encoder-decoder with Lexicon and Lexicon-Adversary units (Thrush 2020).

Reproduces Thrush (2020), "Compositional Neural Machine Translation by Removing the Lexicon
from Syntax" (CogSci draft), Model section and Experiments section (hyper-parameters
paragraph), for the three rows of its Table 1:

- `lla-lstm`: the full model. An LSTM encoder reads source embeddings; its final h_e, c_e
  start an LSTM decoder that takes no tokens as inputs; o_t = softmax(W h_t). The Lexicon
  unit gives every source token its own vector w_i of output-dictionary size (not the
  encoder's embedding) and l = sigmoid(maxpool_i w_i); it is trained first and alone with
  binary cross-entropy against the bag-of-output-tokens indicator (stop token included),
  with sparse Adam, lr 0.1, batch size 1, for 30 epochs, then frozen. The output is
  o'_t = l ⊙ o_t. The Lexicon-Adversary l_a = sigmoid(W_a2 ReLU(W_a1 GradReverse([h_e; c_e])))
  is trained with BCE toward l; the gradient reaching the encoder through it is multiplied
  by -0.0001 (`reversal`).
- `lla-lstm-noadv`: the same without the adversary ("LLA-LSTM (No Adversary)").
- `lstm-thrush`: neither unit, o_t is the output (Thrush's "LSTM" row), same hyper-parameters.

How the pieces map onto the shared trainer, and every guess where the paper is silent:

- The loss. Thrush trains with the negative log-likelihood of log(o'_t). The trainer takes
  cross-entropy of `logits`, i.e. NLL after a log-softmax, and o'_t does not sum to one, so
  log(o'_t) itself as logits would renormalise it (-log(l_y o_y / sum_k l_k o_k), which ties
  the decoder's training to l). Instead the logits are log(o'_t) at every real token and,
  in the padding column (never a target, never decoded, not in Thrush's dictionary), the
  log of the missing mass 1 - sum_k o'_k = o_pad + sum_k o_k (1 - l_k), computed in log space.
  Their softmax is exactly o'_t at every token, so the trainer's cross-entropy is exactly
  Thrush's NLL, -log l_y - log o_y; as l is frozen, its gradient is that of the plain
  decoder, as in the paper. Decoding takes the argmax of the same scores without the
  padding column (which every variant leaves out of its argmax).
- The decoder's input. "The decoder does not take tokens as inputs": each step's input is
  a constant zero vector (of width 1), so the decoder runs from its state alone. A learned
  constant input would only add a bias the LSTM already has. With no token inputs the
  decoder needs no step loop: training and greedy decoding are one LSTM call over T steps
  (decoding runs `max_length` steps and the caller cuts at the first EOS), so teacher
  forcing has no meaning here and the `teacher_forcing` setting has no effect.
- The Lexicon unit's dictionary is the output vocabulary's real tokens and EOS (the paper's
  "output dictionary" plus its stop token); the reserved padding, start and unknown ids
  are not in its BCE nor in the adversary's. Its vectors w_i start as PyTorch's default
  N(0, 1) embedding (the paper does not say).
- The adversary's BCE (targets l, soft) is added to the trainer's loss with weight 1; the
  adversary is trained by the main Adam with the encoder and decoder.
- Epochs: the paper counts one schedule ("epoch to stop training the Lexicon Unit and
  start training other modules = 30, epoch to stop training = 1000"), so the LLA recipes
  train the other modules for 970 epochs after the Lexicon unit's 30, the plain LSTM for 1000.
- Sizes the paper does not give: the encoder's source embedding has the LSTM's size (300);
  one layer each; no dropout; no gradient clipping (none is mentioned; `clip: null`).
- Model selection. Thrush picks the epoch with the best validation exact match, and the
  Lexicon unit's epoch by its validation BCE. The shared trainer selects on dev only, and
  `pretrain` sees only the training split, so the Lexicon unit kept is the one after its
  last epoch. On MiniSCAN (Thrush's "Colors") Thrush validated on the training set; our
  suite has no dev split, so that recipe keeps the last epoch.
- Lexicon batches are drawn in a fresh order each epoch from torch's global generator
  (the run's seed), so that a CPU run repeats exactly.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import torch
import torch.nn.functional as F
from torch import nn
from torch.nn.utils.rnn import pack_padded_sequence
from tqdm import tqdm

from structbench.baselines.neural.batching import Batch
from structbench.baselines.neural.lla.settings import LlaSettings
from structbench.baselines.neural.net import NetOutput, TransductionNet
from structbench.baselines.neural.vocab import PAD, SOS, UNK

assert PAD == 0, "the slack column of the LLA output is the padding id, expected to be 0"
NEGATIVE = -1e9
"""Max-pooling score of padding positions (finite, so that an empty source gives l = 0, not NaN)."""


class GradReverse(torch.autograd.Function):
    """Identity forward; backward multiplies the gradient by -scale (Ganin & Lempitsky 2015)."""

    @staticmethod
    def forward(ctx: Any, inputs: torch.Tensor, scale: float) -> torch.Tensor:
        ctx.scale = scale
        return inputs.view_as(inputs)

    @staticmethod
    def backward(ctx: Any, grad: torch.Tensor) -> tuple[torch.Tensor, None]:
        return -ctx.scale * grad, None


def grad_reverse(inputs: torch.Tensor, scale: float) -> torch.Tensor:
    """`inputs` unchanged, with gradients multiplied by -scale on the way back."""
    out: torch.Tensor = GradReverse.apply(inputs, scale)  # type: ignore[no-untyped-call]
    return out


def bag_of_tokens(target: torch.Tensor, size: int) -> torch.Tensor:
    """[B, size] indicator of the ids in each target row (EOS included, padding not)."""
    bag = torch.zeros(target.shape[0], size, device=target.device)
    bag.scatter_(1, target, 1.0)
    bag[:, PAD] = 0.0
    return bag


class LlaNet(TransductionNet):
    """Encoder-decoder LSTM whose decoder has no token inputs, with optional Lexicon and Adversary units."""

    def __init__(self, settings: LlaSettings, source_size: int, target_size: int) -> None:
        super().__init__()
        self.settings = settings
        h = settings.hidden
        self.source_embedding = nn.Embedding(source_size, settings.embedding, padding_idx=PAD)
        self.encoder = nn.LSTM(settings.embedding, h, batch_first=True)
        self.decoder = nn.LSTM(1, h, batch_first=True)
        self.output = nn.Linear(h, target_size)
        dictionary = torch.ones(target_size, dtype=torch.bool)
        dictionary[[PAD, SOS, UNK]] = False
        self.dictionary: torch.Tensor
        self.register_buffer("dictionary", dictionary, persistent=False)
        if settings.lexicon:
            self.lexicon = nn.Embedding(source_size, target_size, padding_idx=PAD, sparse=True)
        if settings.adversary:
            self.adversary = nn.Sequential(
                nn.Linear(2 * h, settings.adversary_hidden),
                nn.ReLU(),
                nn.Linear(settings.adversary_hidden, target_size),
            )

    def encode(self, batch: Batch) -> tuple[torch.Tensor, torch.Tensor]:
        """The encoder's final hidden and cell states, each [1, B, H]."""
        packed = pack_padded_sequence(
            self.source_embedding(batch.source),
            batch.source_lengths.clamp(min=1),
            batch_first=True,
            enforce_sorted=False,
        )
        _, (hidden, cell) = self.encoder(packed)
        return hidden, cell

    def decoder_scores(self, hidden: torch.Tensor, cell: torch.Tensor, steps: int) -> torch.Tensor:
        """[B, steps, V] W h_t of the decoder run from (hidden, cell) on constant zero inputs."""
        inputs = hidden.new_zeros(hidden.shape[1], steps, 1)
        outputs, _ = self.decoder(inputs, (hidden, cell))
        scores: torch.Tensor = self.output(outputs)
        return scores

    def lexicon_scores(self, batch: Batch) -> torch.Tensor:
        """[B, V] max-pooled w_i of the source tokens, before the sigmoid (l = sigmoid of this)."""
        w: torch.Tensor = self.lexicon(batch.source)
        return w.masked_fill(~batch.source_mask.unsqueeze(-1), NEGATIVE).max(dim=1).values

    def combine(self, scores: torch.Tensor, lexicon: torch.Tensor) -> torch.Tensor:
        """[B, T, V] logits whose softmax is o'_t = l ⊙ o_t at every id but PAD, which takes the rest.

        `scores` are the decoder's W h_t [B, T, V], `lexicon` the pre-sigmoid l [B, V].
        """
        log_o = torch.log_softmax(scores.float(), dim=-1)
        log_l = F.logsigmoid(lexicon.float()).unsqueeze(1)
        log_not_l = F.logsigmoid(-lexicon.float()).unsqueeze(1)
        rest = torch.logsumexp(torch.cat([log_o[..., :1], (log_o + log_not_l)[..., 1:]], dim=-1), dim=-1)
        return torch.cat([rest.unsqueeze(-1), (log_o + log_l)[..., 1:]], dim=-1)

    def outputs(self, batch: Batch, steps: int) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor | None]:
        """Logits [B, steps, V], the encoder's final [h_e; c_e] [B, 2H], and the frozen pre-sigmoid l (or None)."""
        hidden, cell = self.encode(batch)
        scores = self.decoder_scores(hidden, cell, steps)
        state = torch.cat([hidden[-1], cell[-1]], dim=-1)
        if not self.settings.lexicon:
            return scores, state, None
        lexicon = self.lexicon_scores(batch).detach()
        return self.combine(scores, lexicon), state, lexicon

    def forward(self, batch: Batch, teacher_forcing: bool) -> NetOutput:
        assert batch.target is not None
        logits, state, lexicon = self.outputs(batch, batch.target.shape[1])
        aux = None
        if self.settings.adversary:
            assert lexicon is not None
            guess = self.adversary(grad_reverse(state, self.settings.reversal))
            aux = F.binary_cross_entropy_with_logits(
                guess[:, self.dictionary], torch.sigmoid(lexicon)[:, self.dictionary]
            )
        return NetOutput(logits, None, aux)

    def decode(self, batch: Batch, max_length: int) -> torch.Tensor:
        logits, _, _ = self.outputs(batch, max_length)
        return logits[..., 1:].argmax(dim=-1) + 1  # PAD (column 0) is never an output

    def pretrain(self, batches: Callable[[int], list[Batch]], device: torch.device, progress: bool) -> None:
        """Train the Lexicon unit alone (BCE to the bag of output tokens, sparse Adam), then freeze it."""
        if not self.settings.lexicon:
            return
        settings = self.settings
        rows = [(b.source[i], b.target[i]) for b in batches(0) for i in range(len(b.order)) if b.target is not None]
        if not rows:
            return
        sources = nn.utils.rnn.pad_sequence([s for s, _ in rows], batch_first=True, padding_value=PAD).to(device)
        targets = nn.utils.rnn.pad_sequence([t for _, t in rows], batch_first=True, padding_value=PAD).to(device)
        bags = bag_of_tokens(targets, self.output.out_features)
        optimizer = torch.optim.SparseAdam(list(self.lexicon.parameters()), lr=settings.lexicon_lr)
        self.train()
        for _ in tqdm(
            range(settings.lexicon_epochs), desc="lexicon unit", unit="epoch", disable=None if progress else True
        ):
            order = torch.randperm(len(rows)).to(device)
            for start in range(0, len(rows), settings.lexicon_batch_size):
                chosen = order[start : start + settings.lexicon_batch_size]
                source = sources[chosen]
                width = int((source != PAD).sum(dim=1).max().clamp(min=1))
                source = source[:, :width]
                batch = Batch(source=source, source_mask=source != PAD)
                loss = F.binary_cross_entropy_with_logits(
                    self.lexicon_scores(batch)[:, self.dictionary], bags[chosen][:, self.dictionary]
                )
                optimizer.zero_grad(set_to_none=True)
                loss.backward()  # type: ignore[no-untyped-call]  # torch leaves backward unannotated
                optimizer.step()  # type: ignore[no-untyped-call]
        self.lexicon.weight.requires_grad_(False)

    def lexicon_of(self, batch: Batch) -> torch.Tensor:
        """[B, V] l = sigmoid(maxpool w_i) of each source (for inspection, e.g. Thrush's Figure 2)."""
        with torch.no_grad():
            return torch.sigmoid(self.lexicon_scores(batch))
