"""Classifier batches: each example's input segments (a sentence, or a premise and a hypothesis) as token
ids, padded per segment and bucketed by total length, with its label id.

The classification counterpart of the shared `batching.py`, whose length buckets it reuses so that a
classifier's training order is drawn exactly as every other neural baseline's.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import torch
from torch.nn.utils.rnn import pad_sequence

from structbench.baselines.neural.batching import length_buckets
from structbench.baselines.neural.vocab import PAD

UNSEEN = -1
"""The label id of an input whose label is unknown (at prediction) or was never seen in training."""
Encoded = tuple[tuple[list[int], ...], int]
"""One example as the network reads it: the token ids of each segment, and its label id (or UNSEEN)."""


@dataclass(frozen=True)
class ClassifierBatch:
    """Padded token ids of each input segment (one for a sentence, two for a premise-hypothesis pair)."""

    segments: tuple[torch.Tensor, ...]
    """Each [B, T]: token ids padded on the right with PAD; every row has at least one real token."""
    labels: torch.Tensor
    """[B] label ids (UNSEEN where unknown)."""
    order: tuple[int, ...]
    """Positions of these rows in the list the batch was made from."""

    def to(self, device: torch.device) -> ClassifierBatch:
        return ClassifierBatch(
            tuple(s.to(device, non_blocking=True) for s in self.segments),
            self.labels.to(device, non_blocking=True),
            self.order,
        )


def make_batch(rows: Sequence[Encoded], order: Sequence[int]) -> ClassifierBatch:
    """A padded batch of encoded examples."""
    n_segments = len(rows[0][0])
    segments = tuple(
        pad_sequence([torch.tensor(row[0][k], dtype=torch.long) for row in rows], batch_first=True, padding_value=PAD)
        for k in range(n_segments)
    )
    labels = torch.tensor([row[1] for row in rows], dtype=torch.long)
    return ClassifierBatch(segments, labels, tuple(order))


def batches(rows: Sequence[Encoded], batch_size: int, rng: np.random.Generator | None) -> list[ClassifierBatch]:
    """Batches of similar total length: shuffled with `rng` (training), else in a fixed order."""
    lengths = [sum(len(segment) for segment in row[0]) for row in rows]
    return [make_batch([rows[i] for i in indices], indices) for indices in length_buckets(lengths, batch_size, rng)]
