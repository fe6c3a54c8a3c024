"""The contract between a transduction network and the shared trainer.

A network maps a `Batch` to per-step output logits (teacher-forced or free-running),
optionally exposing its attention (for attentive guidance and inspection) and an extra
loss of its own (e.g. an adversary's). It also decodes greedily. Everything else —
optimisation, model selection, checkpoints, devices — is the trainer's job.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import torch
from torch import nn

from structbench.baselines.neural.batching import Batch
from structbench.baselines.neural.vocab import EOS, SOS


@dataclass
class NetOutput:
    """What a network returns for a batch with targets."""

    logits: torch.Tensor
    """[B, T, V] unnormalised scores of each target step (T = the batch's target width)."""
    attention: torch.Tensor | None = None
    """[B, T, S] attention probabilities over source positions, if the network attends."""
    aux_loss: torch.Tensor | None = None
    """A scalar loss the network adds to its own objective (already weighted)."""


class TransductionNet(nn.Module):
    """Base class: subclasses implement `forward` (training) and `decode` (greedy inference).

    `pretrain` is an optional phase before the main training (e.g. LLA's lexicon unit).
    """

    def forward(self, batch: Batch, teacher_forcing: bool) -> NetOutput:  # pragma: no cover - interface
        raise NotImplementedError

    def decode(self, batch: Batch, max_length: int) -> torch.Tensor:  # pragma: no cover - interface
        """[B, L] greedy output ids; rows may continue after their EOS (the caller cuts there)."""
        raise NotImplementedError

    def pretrain(self, batches: Callable[[int], list[Batch]], device: torch.device, progress: bool) -> None:
        """A training phase before the main one; `batches(epoch)` gives that epoch's batches."""


def greedy_loop(
    step: Callable[[torch.Tensor, int], torch.Tensor], batch_size: int, max_length: int, device: torch.device
) -> torch.Tensor:
    """Run `step(previous_ids, t) -> logits [B, V]` greedily until every row has emitted EOS."""
    previous = torch.full((batch_size,), SOS, dtype=torch.long, device=device)
    finished = torch.zeros(batch_size, dtype=torch.bool, device=device)
    outputs = []
    for t in range(max_length):
        previous = step(previous, t).argmax(dim=-1)
        outputs.append(previous)
        finished |= previous == EOS
        if bool(finished.all()):
            break
    return torch.stack(outputs, dim=1) if outputs else torch.empty(batch_size, 0, dtype=torch.long, device=device)
