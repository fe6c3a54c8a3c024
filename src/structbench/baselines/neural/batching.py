"""Padded, masked batches of examples, bucketed by length so that little compute goes to padding.

A batch holds the source ids, the gold target ids followed by EOS (when known) and the
attention targets of attentive guidance (one source index per target step, EOS included;
-100 where there is none, which cross-entropy ignores).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace

import numpy as np
import torch
import torch.nn.functional as F

from structbench.baselines.neural.vocab import EOS, PAD, Vocabulary
from structbench.specs import Example

IGNORE = -100


@dataclass(frozen=True)
class Batch:
    """One padded batch; every tensor is batch-first."""

    source: torch.Tensor
    """[B, S] source ids, padded with PAD."""
    source_mask: torch.Tensor
    """[B, S] True at real source tokens."""
    target: torch.Tensor | None = None
    """[B, T] target ids with a final EOS, padded with PAD; None at inference."""
    target_mask: torch.Tensor | None = None
    """[B, T] True at real target steps (EOS included)."""
    attention: torch.Tensor | None = None
    """[B, T] source index each target step should attend to; IGNORE where unknown."""
    order: tuple[int, ...] = ()
    """Positions of these rows in the list the batch was made from."""

    @property
    def source_lengths(self) -> torch.Tensor:
        """[B] number of real source tokens (on the CPU, as packing wants)."""
        return self.source_mask.sum(dim=1).cpu()

    def to(self, device: torch.device) -> Batch:
        def move(tensor: torch.Tensor | None) -> torch.Tensor | None:
            return None if tensor is None else tensor.to(device, non_blocking=True)

        return replace(
            self,
            source=self.source.to(device, non_blocking=True),
            source_mask=self.source_mask.to(device, non_blocking=True),
            target=move(self.target),
            target_mask=move(self.target_mask),
            attention=move(self.attention),
        )


def _pad(rows: Sequence[Sequence[int]], fill: int) -> torch.Tensor:
    width = max((len(r) for r in rows), default=0)
    out = np.full((len(rows), max(width, 1)), fill, dtype=np.int64)
    for i, row in enumerate(rows):
        out[i, : len(row)] = row
    return torch.from_numpy(out)


def make_batch(
    sources: Sequence[Sequence[str]],
    source_vocab: Vocabulary,
    targets: Sequence[Sequence[str]] | None = None,
    target_vocab: Vocabulary | None = None,
    attention: Sequence[Sequence[int] | None] | None = None,
    order: Sequence[int] = (),
) -> Batch:
    """A batch of `sources` (and their targets and attention targets, for training)."""
    source = _pad([source_vocab.encode(s) for s in sources], PAD)
    target = target_mask = attention_tensor = None
    if targets is not None:
        assert target_vocab is not None
        target = _pad([[*target_vocab.encode(t), EOS] for t in targets], PAD)
        target_mask = target != PAD
    if attention is not None and any(a is not None for a in attention):
        attention_tensor = _pad([list(a) if a is not None else [] for a in attention], IGNORE)
        if target is not None:
            width = target.shape[1]
            attention_tensor = F.pad(attention_tensor, (0, max(0, width - attention_tensor.shape[1])), value=IGNORE)
            attention_tensor = attention_tensor[:, :width]
    return Batch(
        source=source,
        source_mask=source != PAD,
        target=target,
        target_mask=target_mask,
        attention=attention_tensor,
        order=tuple(order),
    )


def length_buckets(
    lengths: Sequence[int] | Sequence[tuple[int, ...]], batch_size: int, rng: np.random.Generator | None
) -> list[list[int]]:
    """Index lists of at most `batch_size`, of similar lengths.

    With `rng`, a fresh random order per call: examples are shuffled, sorted by length
    within pools of 50 batches, cut into batches and the batches shuffled. Without it, a
    fixed order sorted by length (for prediction). A length may be a tuple (target, source):
    sorted on the first, ties on the next.
    """
    n = len(lengths)
    if rng is None:
        ordered = sorted(range(n), key=lambda i: lengths[i])
        return [ordered[i : i + batch_size] for i in range(0, n, batch_size)]
    shuffled = rng.permutation(n).tolist()
    pool = batch_size * 50
    batches: list[list[int]] = []
    for start in range(0, n, pool):
        chunk = sorted(shuffled[start : start + pool], key=lambda i: lengths[i])
        batches.extend(chunk[i : i + batch_size] for i in range(0, len(chunk), batch_size))
    return [batches[i] for i in rng.permutation(len(batches))]


def example_batches(
    examples: Sequence[Example],
    source_vocab: Vocabulary,
    target_vocab: Vocabulary,
    batch_size: int,
    rng: np.random.Generator | None,
) -> list[Batch]:
    """Training batches of `examples` (targets and attention targets included), bucketed by target
    length, then source length: the decoder's steps are most of a transducer's work (on SCAN, bucketing
    by source length alone had the decoder compute twice the target steps there are)."""
    lengths = [(len(e.target or []), len(e.input)) for e in examples]
    out = []
    for indices in length_buckets(lengths, batch_size, rng):
        chosen = [examples[i] for i in indices]
        out.append(
            make_batch(
                [e.input for e in chosen],
                source_vocab,
                [e.target or [] for e in chosen],
                target_vocab,
                [e.attention for e in chosen],
                indices,
            )
        )
    return out
