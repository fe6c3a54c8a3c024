"""Prefix trees of scored token rows: rows a causal language model reads in one pass, each shared prefix once.

Rows that open with the same tokens (a minimal pair's two sentences, BLiMP's mostly) have the same
states over those tokens, so `HfCausalLm(share_prefixes=true)` reads them as a tree. Rows are sorted;
each row's tokens after its common prefix with the row before it are appended to a packed sequence, each
at its own position in its row and attending only to the tokens of its own row before it (its ancestors
in the tree). Sorting puts every row beside the row it shares most with, so a packed sequence holds each
distinct prefix of its rows once: on BLiMP's 134,000 sentences under a 1,000-sub-word BPE, packed in
sequences of 128, 65% of the tokens of reading them whole. `prefix_trees` packs the rows into sequences
of at most `capacity` tokens (a longer row alone) and says which packed position predicts each scored
token; `ancestor_mask` is a batch's attention mask.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

import torch


@dataclass
class PackedRows:
    """One packed sequence: its tokens with their positions and parents, and the tokens it scores."""

    tokens: list[int] = field(default_factory=list)
    depths: list[int] = field(default_factory=list)
    """Each token's position in its row (its position id)."""
    parents: list[int] = field(default_factory=list)
    """The packed index of the token before it in its row; -1 for a row's first token."""
    sources: list[int] = field(default_factory=list)
    """Per scored token: the packed index whose output predicts it."""
    targets: list[int] = field(default_factory=list)
    """Per scored token: its id."""
    owners: list[int] = field(default_factory=list)
    """Per scored token: the index of its row in the request."""


def prefix_trees(rows: Sequence[Sequence[int]], begins: Sequence[int], capacity: int) -> list[PackedRows]:
    """`rows` packed as prefix trees of at most `capacity` tokens (a longer row alone); the tokens of row
    `i` from position `begins[i]` on (never its first) are scored. Every row keeps its last token as its
    own, so a repeated row is scored like any other."""
    packed: list[PackedRows] = []
    current: PackedRows | None = None
    previous: Sequence[int] = ()
    path: list[int] = []  # packed index of each token of the row just added
    for i in sorted(range(len(rows)), key=lambda i: list(rows[i])):
        row = rows[i]
        if not row:
            continue
        shared = 0
        if current is not None:
            limit = min(len(previous), len(row) - 1)
            while shared < limit and previous[shared] == row[shared]:
                shared += 1
        if current is None or len(current.tokens) + len(row) - shared > capacity:
            current, shared = PackedRows(), 0
            packed.append(current)
        start, own = len(current.tokens), len(row) - shared
        del path[shared:]
        current.parents += [path[-1] if path else -1, *range(start, start + own - 1)]
        path += range(start, start + own)
        current.tokens += row[shared:]
        current.depths += range(shared, len(row))
        first = max(begins[i], 1)
        current.sources += path[first - 1 : len(row) - 1]
        current.targets += row[first:]
        current.owners += [i] * max(len(row) - first, 0)
        previous = row
    return packed


def ancestor_mask(parents: torch.Tensor, depths: torch.Tensor) -> torch.Tensor:
    """(B, W, W) booleans: packed token q may attend to token k iff k is q or an ancestor of q, from
    (B, W) parents and depths (-1 at padding, which attends to itself alone)."""
    batch, width = parents.shape
    allowed = torch.eye(width, dtype=torch.bool, device=parents.device).repeat(batch, 1, 1)
    for depth in range(1, int(depths.max()) + 1):
        rows, tokens = (depths == depth).nonzero(as_tuple=True)
        allowed[rows, tokens] |= allowed[rows, parents[rows, tokens]]
    return allowed
