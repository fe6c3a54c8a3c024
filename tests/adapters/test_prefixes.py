"""Shared prefixes (`structbench.adapters.hf.prefixes`, `HfCausalLm(share_prefixes=...)`): rows that open
alike are grouped so that each group saves token reads, and reading a group's prefix once gives every
row the log-probability it gets when read whole."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

pytest.importorskip("transformers")

from structbench import registry
from structbench.adapters.hf.causal import HfCausalLm
from structbench.adapters.hf.prefixes import prefix_groups
from structbench.data import freeze
from structbench.specs import Example
from tests.support.hf_models import bpe_gpt2


def test_rows_are_grouped_by_their_longest_shared_prefix_and_each_keeps_a_token_of_its_own() -> None:
    rows = [[1, 2, 3, 4, 5], [1, 2, 3, 4, 6], [7, 8], [1, 2, 9], [1, 2, 3, 4, 5]]
    # rows 0 and 4 are the same: the prefix stops one token short so that each row has a token to score
    assert prefix_groups(rows, 2) == [(4, [0, 4, 1]), (0, [3]), (0, [2])]
    # row 3 shares only 2 tokens: joining the group would save 2 reads and cost the other rows 4
    assert prefix_groups([[1, 2, 3, 4, 5], [1, 2, 3, 4, 6], [1, 2, 9]], 2) == [(4, [0, 1]), (0, [2])]
    assert prefix_groups([[1, 2, 9], [1, 2, 8], [1, 7]], 2) == [(2, [1, 0]), (0, [2])]
    assert prefix_groups([[1, 2, 9], [1, 2, 8]], 3) == [(0, [1]), (0, [0])]
    assert prefix_groups([], 2) == []


def blimp_pairs(split: str, count: int) -> list[Example]:
    suite = registry.suite("blimp")
    return freeze.load_split(suite, freeze.ensure_built(suite), 0, split).examples[:count]


@pytest.fixture(scope="module")
def gpt2_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    corpus = [" ".join(c) for e in blimp_pairs("transitive", 150) for c in e.candidates or []]
    return bpe_gpt2(corpus, tmp_path_factory.mktemp("models") / "bpe-gpt2", layers=2, width=48, heads=2)


@pytest.fixture(scope="module")
def models(gpt2_dir: Path) -> Iterator[tuple[HfCausalLm, HfCausalLm]]:
    shared = HfCausalLm(pretrained=str(gpt2_dir), threads=1, batch_size=7, share_prefixes=True)
    whole = HfCausalLm(pretrained=str(gpt2_dir), threads=1, batch_size=7)
    yield shared, whole
    shared.close()
    whole.close()


def test_a_shared_prefix_gives_each_sentence_its_whole_reading(models: tuple[HfCausalLm, HfCausalLm]) -> None:
    shared, whole = models
    # pairs that differ late (one_prefix_method) and early, in batches whose prefixes and tails differ in length
    examples = blimp_pairs("wh_island", 10) + blimp_pairs("anaphor_gender_agreement", 10)
    requests = [([], candidate) for e in examples for candidate in e.candidates or []]
    rows = [[shared.start_id, *ids] for ids in shared._encode([" " + " ".join(words) for _, words in requests])]
    assert sum(len(members) for length, members in prefix_groups(rows, 2) if length) >= 20
    assert shared.loglikelihood(requests) == pytest.approx(whole.loglikelihood(requests), abs=1e-5)


def test_a_context_longer_than_the_shared_prefix_is_not_scored(models: tuple[HfCausalLm, HfCausalLm]) -> None:
    """Classification's rows: a prompt (not scored) whose first words two rows share, then labels."""
    shared, whole = models
    words = "Who had the teacher seen".split()
    requests = [(words, ["Susan"]), (words, ["the", "dog", "."]), ([*words, "the"], ["cat", "."]), (words[:2], ["run"])]
    assert shared.loglikelihood(requests) == pytest.approx(whole.loglikelihood(requests), abs=1e-5)
