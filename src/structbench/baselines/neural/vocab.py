"""Token vocabularies: the ids a network sees for a suite's whitespace tokens.

Ids 0-3 are reserved for padding, start and end of sequence and unknown tokens, so that
every vocabulary agrees on them and batches can be padded with 0.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

PAD, SOS, EOS, UNK = 0, 1, 2, 3
SPECIALS = ("<pad>", "<sos>", "<eos>", "<unk>")


class Vocabulary:
    """A fixed token <-> id map; tokens outside it encode as UNK."""

    def __init__(self, tokens: Sequence[str]) -> None:
        self.tokens: list[str] = list(SPECIALS) + [t for t in tokens if t not in SPECIALS]
        self.ids: dict[str, int] = {token: i for i, token in enumerate(self.tokens)}

    @classmethod
    def build(cls, sequences: Iterable[Sequence[str]]) -> Vocabulary:
        """The sorted set of tokens of `sequences` (sorted, so that ids do not depend on data order)."""
        return cls(sorted({token for sequence in sequences for token in sequence}))

    def __len__(self) -> int:
        return len(self.tokens)

    def encode(self, tokens: Sequence[str]) -> list[int]:
        return [self.ids.get(token, UNK) for token in tokens]

    def decode(self, ids: Iterable[int]) -> list[str]:
        """Tokens of `ids` up to (not including) the first EOS; padding and SOS are dropped."""
        out = []
        for i in ids:
            if i == EOS:
                break
            if i not in (PAD, SOS):
                out.append(self.tokens[i])
        return out
