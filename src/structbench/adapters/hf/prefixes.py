"""Shared prefixes of scored token rows: which rows a causal language model can read together.

A minimal pair's two sentences (BLiMP's, mostly) open with the same words; a causal model's state after
those words is the same for both, so the prefix need be run once and its keys and values reused for
every row that continues it (`HfCausalLm`'s `share_prefixes`). `prefix_groups` finds those rows:
rows are sorted, and neighbours whose common prefix is at least `minimum` tokens long form a group,
whose shared prefix is the common prefix of all its rows, cut so that every row keeps one token of
its own (the prefix's last position predicts it), and a row joins a group only where that saves more
token reads than it costs the group's rows in a shorter prefix. Sorting brings together every row that shares a
long prefix with another, wherever it stands in the request list; a row that shares less than
`minimum` tokens with its neighbours is a group of one (prefix 0: read whole).
"""

from __future__ import annotations

from collections.abc import Sequence


def common_prefix(first: Sequence[int], second: Sequence[int]) -> int:
    """How many leading tokens `first` and `second` share."""
    shared = 0
    for a, b in zip(first, second, strict=False):
        if a != b:
            break
        shared += 1
    return shared


def prefix_groups(rows: Sequence[Sequence[int]], minimum: int) -> list[tuple[int, list[int]]]:
    """(shared prefix length, row indices) for every row once, each group's rows in sorted order; a
    group of one row has prefix 0. A group's prefix is at least `minimum` tokens and shorter than
    each of its rows."""
    order = sorted(range(len(rows)), key=lambda i: tuple(rows[i]))
    groups: list[tuple[int, list[int]]] = []
    members: list[int] = []
    shared = 0
    for i in order:
        if members:
            joined = min(shared, common_prefix(rows[members[0]], rows[i]), len(rows[i]) - 1)
            # k rows sharing p tokens save (k - 1) p token reads: join only if the group saves more
            if joined >= minimum and len(members) * joined > (len(members) - 1) * shared:
                members.append(i)
                shared = joined
                continue
            groups.append((shared if len(members) > 1 else 0, members))
        members, shared = [i], len(rows[i]) - 1
    if members:
        groups.append((shared if len(members) > 1 else 0, members))
    return groups
