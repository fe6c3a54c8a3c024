"""The Transformer decodes one position at a time from cached keys and values (`_CachedDecoder`):
its scores must be the whole-prefix pass's, and its greedy outputs the ones that pass gives."""

from __future__ import annotations

import random

import pytest
import torch

from structbench.baselines.neural.batching import make_batch
from structbench.baselines.neural.transformer.nets import TransformerNet, _CachedDecoder
from structbench.baselines.neural.transformer.settings import TransformerSettings
from structbench.baselines.neural.vocab import PAD, SOS, Vocabulary

SOURCE = Vocabulary(list("abcdefgh"))
TARGET = Vocabulary(list("VWXYZ"))


def net(seed: int, layers: int = 2) -> TransformerNet:
    torch.manual_seed(seed)
    settings = TransformerSettings(
        d_model=32, heads=4, encoder_layers=layers, decoder_layers=layers, feedforward=48, dropout=0.1
    )
    return TransformerNet(settings, len(SOURCE), len(TARGET)).eval()


def sources(seed: int, rows: int) -> list[list[str]]:
    draw = random.Random(seed)
    return [[draw.choice("abcdefgh") for _ in range(draw.randint(1, 9))] for _ in range(rows)]


def whole_prefix_greedy(model: TransformerNet, batch_sources: list[list[str]], steps: int) -> list[list[str]]:
    """Greedy outputs reading the whole prefix again at every step, cut at each row's EOS."""
    batch = make_batch(batch_sources, SOURCE)
    memory = model._encode(batch)
    prefix = torch.full((len(batch_sources), 1), SOS)
    for _ in range(steps):
        following = model._decode_logits(memory, batch, prefix)[:, -1].argmax(dim=-1, keepdim=True)
        prefix = torch.cat([prefix, following], dim=1)
    return [TARGET.decode(row.tolist()) for row in prefix[:, 1:]]


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_each_cached_step_scores_as_the_whole_prefix_does(seed: int) -> None:
    model = net(seed)
    batch_sources = sources(seed, 7)
    batch = make_batch(batch_sources, SOURCE)  # sources of 1 to 9 symbols: padded memory
    prefix = torch.cat([torch.full((7, 1), SOS), torch.randint(4, len(TARGET), (7, 11))], dim=1)
    with torch.inference_mode():
        memory = model._encode(batch)
        whole = model._decode_logits(memory, batch, prefix)
        cached = _CachedDecoder(model, memory, ~batch.source_mask, 12)
        stepped = torch.stack([cached.logits(prefix[:, t], t) for t in range(12)], dim=1)
    assert stepped.shape == whole.shape
    assert torch.allclose(stepped, whole, rtol=0, atol=1e-5)


def trained(seed: int) -> TransformerNet:
    """A net taught for a few steps to write one target symbol per source symbol, so that its rows
    end (write EOS) at different steps, as a trained model's do."""
    model = net(seed).train()
    optimiser = torch.optim.Adam(model.parameters(), lr=0.01)
    for step in range(40):
        batch_sources = sources(1000 + step, 32)
        targets = [[TARGET.tokens[4 + "abcdefgh".index(s) % 5] for s in row] for row in batch_sources]
        batch = make_batch(batch_sources, SOURCE, targets, TARGET)
        assert batch.target is not None
        logits = model(batch, True).logits
        loss = torch.nn.functional.cross_entropy(logits.flatten(0, 1), batch.target.flatten(), ignore_index=PAD)
        optimiser.zero_grad()
        loss.backward()
        optimiser.step()
    return model.eval()


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_greedy_outputs_are_the_whole_prefix_ones_while_rows_finish_at_different_steps(seed: int) -> None:
    model = trained(seed)
    batch_sources = sources(seed, 24)
    with torch.inference_mode():
        decoded = model.decode(make_batch(batch_sources, SOURCE), 30)
        expected = whole_prefix_greedy(model, batch_sources, decoded.shape[1])
    assert [TARGET.decode(row.tolist()) for row in decoded] == expected
    lengths = {len(row) for row in expected}
    assert len(lengths) > 3, "the test needs rows that finish at different steps"
