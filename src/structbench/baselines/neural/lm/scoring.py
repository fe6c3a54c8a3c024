"""Scoring sentences with a trained word-level LM network: the PyTorch side of `NeuralLanguageModel`.

`sequence_logprobs` (whole sentences and `</s>`), `word_logprobs` (each word) and
`continuation_logprobs` (continuations of a context) run the network over length-sorted batches of
rows `<s> w1 ... wn [</s>]`, right-padded (`padded`); the training loop builds its batches with
the same `framed` and `padded`. They are apart from `model.py` so that the registered language
models (`structbench.baselines.neural.lm.model`) load without PyTorch: the registry loads them to
key, label and check runs in processes that never train; a run imports this module where it trains
or answers.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

import numpy as np
import torch

from structbench.baselines.neural.vocab import EOS, PAD, SOS
from structbench.protocols import shared_contexts

if TYPE_CHECKING:
    from structbench.baselines.neural.lm.nets import LanguageModelNet

__all__ = ["continuation_logprobs", "framed", "padded", "sequence_logprobs", "word_logprobs"]

SCORE_ELEMENTS = 2**23
"""Largest batch of logits scored at once (rows x steps x vocabulary), about 32 MB in float32."""


def padded(rows: Sequence[Sequence[int]]) -> torch.Tensor:
    """The rows as one [rows, longest] tensor of ids, each right-padded with `PAD`."""
    width = max(len(row) for row in rows)
    out = np.full((len(rows), width), PAD, dtype=np.int64)
    for i, row in enumerate(rows):
        out[i, : len(row)] = row
    return torch.from_numpy(out)


def framed(ids: Sequence[int]) -> list[int]:
    """One sentence as a row: `<s>`, its word ids, `</s>`."""
    return [SOS, *ids, EOS]


def _score_batches(lengths: Sequence[int], vocab_size: int) -> list[list[int]]:
    """Index lists sorted by length, each as many rows as fit in `SCORE_ELEMENTS` logits."""
    ordered = sorted(range(len(lengths)), key=lambda i: lengths[i])
    batches: list[list[int]] = []
    current: list[int] = []
    for i in ordered:  # ascending lengths: the newest row is the widest of its batch
        if current and (len(current) + 1) * (lengths[i] + 1) * vocab_size > SCORE_ELEMENTS:
            batches.append(current)
            current = []
        current.append(i)
    if current:
        batches.append(current)
    return batches


def sequence_logprobs(
    net: LanguageModelNet,
    sentences: Sequence[Sequence[int]],
    device: torch.device,
    *,
    vocab_size: int,
    amp: bool = False,
) -> list[float]:
    """Sum of natural-log probabilities of every sentence's ids and `</s>`, each given `<s>` and
    the ids before it, in the given order.

    Vectorised: per batch, one forward pass, one log-softmax and one gather of the target ids;
    padding (after `</s>`) is masked out of the sums. The network is causal, so a sentence's
    score does not depend on the other rows of its batch or on their lengths.
    """
    net.eval()
    out = [0.0] * len(sentences)
    with torch.inference_mode():
        for indices in _score_batches([len(s) + 1 for s in sentences], vocab_size):
            ids = padded([framed(sentences[i]) for i in indices]).to(device)
            with torch.autocast("cuda", enabled=amp and device.type == "cuda"):
                logits = net(ids[:, :-1])
            targets = ids[:, 1:]
            picked = logits.float().log_softmax(dim=-1).gather(2, targets.unsqueeze(2)).squeeze(2)
            sums = picked.masked_fill(targets == PAD, 0.0).double().sum(dim=1).cpu().tolist()
            for row, i in enumerate(indices):
                out[i] = sums[row]
    return out


def word_logprobs(
    net: LanguageModelNet,
    sentences: Sequence[Sequence[int]],
    device: torch.device,
    *,
    vocab_size: int,
    amp: bool = False,
) -> list[list[float]]:
    """Per sentence, the natural-log probability of each of its ids given `<s>` and the ids before it,
    with no `</s>`, in the given order: `sequence_logprobs` before the sum."""
    net.eval()
    out: list[list[float]] = [[] for _ in sentences]
    asked = [i for i, sentence in enumerate(sentences) if sentence]  # an empty sentence has no word to score
    with torch.inference_mode():
        for batch in _score_batches([len(sentences[i]) + 1 for i in asked], vocab_size):
            indices = [asked[k] for k in batch]
            ids = padded([[SOS, *sentences[i]] for i in indices]).to(device)
            with torch.autocast("cuda", enabled=amp and device.type == "cuda"):
                logits = net(ids[:, :-1])
            picked = logits.float().log_softmax(dim=-1).gather(2, ids[:, 1:].unsqueeze(2)).squeeze(2)
            rows = picked.double().cpu().tolist()
            for row, i in enumerate(indices):
                out[i] = rows[row][: len(sentences[i])]
    return out


def continuation_logprobs(
    net: LanguageModelNet,
    requests: Sequence[tuple[Sequence[int], Sequence[int]]],
    device: torch.device,
    *,
    vocab_size: int,
    amp: bool = False,
) -> list[float]:
    """Sum of natural-log probabilities of each request's continuation ids given `<s>` and its context
    ids, with no `</s>`, in the given order.

    A one-word continuation (an agreement suite's verb) is read off one pass over its context: each
    distinct context is run once and every candidate after it is gathered from the same next-word
    distribution, so a minimal pair costs one prefix, not two sentences. A longer continuation is
    scored on its own row, context included. The network is causal, so right padding moves no score.
    """
    net.eval()
    out = [0.0] * len(requests)
    single = [i for i, (_, continuation) in enumerate(requests) if len(continuation) == 1]
    contexts, asked = shared_contexts([context for context, _ in requests], single)
    longer = [i for i, (_, continuation) in enumerate(requests) if len(continuation) != 1]
    with torch.inference_mode():
        for indices in _score_batches([len(c) + 1 for c in contexts], vocab_size):
            ids = padded([[SOS, *contexts[j]] for j in indices]).to(device)
            with torch.autocast("cuda", enabled=amp and device.type == "cuda"):
                logits = net(ids)
            last = torch.tensor([len(contexts[j]) for j in indices], device=device)
            following = logits[torch.arange(len(indices), device=device), last].float().log_softmax(dim=-1)
            rows = [row for row, j in enumerate(indices) for _ in asked[j]]
            words = [requests[i][1][0] for j in indices for i in asked[j]]
            picked = following[rows, words].double().cpu().tolist()
            for i, value in zip((i for j in indices for i in asked[j]), picked, strict=True):
                out[i] = value
        for indices in _score_batches([len(requests[i][0]) + len(requests[i][1]) + 1 for i in longer], vocab_size):
            chosen = [longer[k] for k in indices]
            ids = padded([[SOS, *requests[i][0], *requests[i][1]] for i in chosen]).to(device)
            with torch.autocast("cuda", enabled=amp and device.type == "cuda"):
                logits = net(ids[:, :-1])
            picked = logits.float().log_softmax(dim=-1).gather(2, ids[:, 1:].unsqueeze(2)).squeeze(2)
            positions = torch.arange(ids.shape[1] - 1, device=device)
            begins = torch.tensor([len(requests[i][0]) for i in chosen], device=device)
            ends = begins + torch.tensor([len(requests[i][1]) for i in chosen], device=device)
            scored = (positions[None, :] >= begins[:, None]) & (positions[None, :] < ends[:, None])
            sums = picked.masked_fill(~scored, 0.0).double().sum(dim=1).cpu().tolist()
            for i, value in zip(chosen, sums, strict=True):
                out[i] = value
    return out
