"""Shared prefixes (`structbench.adapters.hf.prefixes`, `HfCausalLm(share_prefixes=...)`): rows packed as
prefix trees hold each distinct prefix once, each token attends to its own row's earlier tokens only, and
reading the trees gives every row the log-probability it gets read whole and position by position; a
model that ignores the packed mask is found and reads its rows whole."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
import torch

pytest.importorskip("transformers")

from structbench import registry
from structbench.adapters.hf.causal import HfCausalLm
from structbench.adapters.hf.prefixes import ancestor_mask, prefix_trees
from structbench.data import freeze
from structbench.specs import Example
from tests.support.hf_models import bpe_gpt2

ROWS = [[1, 2, 3, 4, 5], [1, 2, 3, 4, 6], [7, 8], [1, 2, 9], [1, 2, 3, 4, 5]]


def test_rows_are_packed_in_sorted_order_each_distinct_prefix_once_and_each_row_keeps_a_token() -> None:
    (tree,) = prefix_trees(ROWS, [1] * 5, capacity=100)
    # order 0, 4 (the same row: it keeps its last token), 1, 3, 2
    assert tree.tokens == [1, 2, 3, 4, 5, 5, 6, 9, 7, 8]
    assert tree.depths == [0, 1, 2, 3, 4, 4, 4, 2, 0, 1]
    assert tree.parents == [-1, 0, 1, 2, 3, 3, 3, 1, -1, 8]
    # row 3 ([1, 2, 9]) from position 1: 2 after the shared 1, then its own 9 after the shared 2
    assert [(s, t) for s, t, o in zip(tree.sources, tree.targets, tree.owners, strict=True) if o == 3] == [
        (0, 2),
        (1, 9),
    ]
    assert sorted(tree.owners) == sorted(i for i, row in enumerate(ROWS) for _ in row[1:])


def test_a_packed_sequence_holds_at_most_its_capacity_and_a_longer_row_alone() -> None:
    trees = prefix_trees(ROWS, [1] * 5, capacity=6)
    assert [tree.tokens for tree in trees] == [[1, 2, 3, 4, 5, 5], [1, 2, 3, 4, 6, 9], [7, 8]]
    assert [tree.tokens for tree in prefix_trees([[1, 2, 3, 4, 5]], [3], capacity=2)] == [[1, 2, 3, 4, 5]]
    # from position 3: positions 0-2 are context, only tokens 4 and 5 are scored
    assert prefix_trees([[1, 2, 3, 4, 5]], [3], capacity=2)[0].targets == [4, 5]
    assert prefix_trees([], [], capacity=6) == []


def test_a_packed_token_attends_to_itself_and_its_own_rows_earlier_tokens_only() -> None:
    (tree,) = prefix_trees(ROWS, [1] * 5, capacity=100)
    parents, depths = torch.tensor([[*tree.parents, -1]]), torch.tensor([[*tree.depths, -1]])  # one pad
    allowed = ancestor_mask(parents, depths)[0]
    attended = [set(torch.nonzero(row).flatten().tolist()) for row in allowed]
    assert attended[5] == {0, 1, 2, 3, 5}  # row 4's last 5: not row 0's 5 at index 4
    assert attended[7] == {0, 1, 7}  # row 3's 9
    assert attended[9] == {8, 9}  # row 2's 8
    assert attended[10] == {10}  # padding


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
    whole = HfCausalLm(pretrained=str(gpt2_dir), threads=1, batch_size=7, share_prefixes=False)
    yield shared, whole
    shared.close()
    whole.close()


def test_a_shared_prefix_gives_each_sentence_its_whole_reading(models: tuple[HfCausalLm, HfCausalLm]) -> None:
    shared, whole = models
    # pairs that differ late (one_prefix_method) and early, in batches whose prefixes and tails differ in length
    examples = blimp_pairs("wh_island", 10) + blimp_pairs("anaphor_gender_agreement", 10)
    requests = [([], candidate) for e in examples for candidate in e.candidates or []]
    rows = [[shared.start_id, *ids] for ids in shared._encode([" " + " ".join(words) for _, words in requests])]
    packed = sum(len(tree.tokens) for tree in prefix_trees(rows, [1] * len(rows), capacity=128))
    assert packed < 0.8 * sum(map(len, rows))
    assert shared.loglikelihood(requests) == pytest.approx(whole.loglikelihood(requests), abs=1e-5)


def test_continuations_after_contexts_read_as_trees_score_as_each_context_read_once(
    models: tuple[HfCausalLm, HfCausalLm],
) -> None:
    shared, whole = models
    suite = registry.suite("agreement-attractors")
    manifest = freeze.ensure_built(suite)
    examples = [
        e for split in ("attractors-2", "mixed") for e in freeze.load_split(suite, manifest, 0, split).examples[:8]
    ]
    requests = [(e.input, candidate) for e in examples for candidate in e.candidates or []]
    requests.append((examples[0].input, ["has", "smiled", "."]))  # a continuation of several sub-words too
    assert shared.loglikelihood(requests) == pytest.approx(whole.loglikelihood(requests), abs=1e-5)


def test_a_packed_reading_equals_a_position_by_position_reading(models: tuple[HfCausalLm, HfCausalLm]) -> None:
    shared, _ = models
    examples = blimp_pairs("wh_island", 3)
    requests = [([], candidate) for e in examples for candidate in e.candidates or []]
    rows = [[shared.start_id, *ids] for ids in shared._encode([" " + " ".join(words) for _, words in requests])]
    one_by_one = []
    with torch.no_grad():
        for row in rows:
            total = 0.0
            for end in range(1, len(row)):
                logits = shared.model(input_ids=torch.tensor([row[:end]])).logits[0, -1]
                total += float(torch.log_softmax(logits, dim=-1)[row[end]])
            one_by_one.append(total)
    assert shared.loglikelihood(requests) == pytest.approx(one_by_one, abs=1e-5)


def ignoring_custom_masks(forward: Callable[..., Any]) -> Callable[..., Any]:
    def wrapped(*args: Any, attention_mask: torch.Tensor | None = None, **kwargs: Any) -> Any:
        custom = attention_mask is not None and attention_mask.dim() == 4
        return forward(*args, attention_mask=None if custom else attention_mask, **kwargs)

    return wrapped


def refusing_position_ids(forward: Callable[..., Any]) -> Callable[..., Any]:
    def wrapped(*args: Any, position_ids: torch.Tensor | None = None, **kwargs: Any) -> Any:
        if position_ids is not None:
            raise TypeError("forward() got an unexpected keyword argument 'position_ids'")
        return forward(*args, **kwargs)

    return wrapped


@pytest.mark.parametrize(
    ("patch", "said"),
    [(ignoring_custom_masks, "differently from its rows read whole"), (refusing_position_ids, "refuses a packed tree")],
)
def test_a_model_that_cannot_read_a_packed_tree_reads_its_rows_whole(
    gpt2_dir: Path,
    models: tuple[HfCausalLm, HfCausalLm],
    capsys: pytest.CaptureFixture[str],
    patch: Callable[[Callable[..., Any]], Callable[..., Any]],
    said: str,
) -> None:
    _, whole = models
    blind = HfCausalLm(pretrained=str(gpt2_dir), threads=1, batch_size=7, share_prefixes=True)
    blind.model.forward = patch(blind.model.forward)
    requests = [([], candidate) for e in blimp_pairs("wh_island", 5) for candidate in e.candidates or []]
    try:
        assert blind.loglikelihood(requests) == pytest.approx(whole.loglikelihood(requests), abs=1e-5)
    finally:
        blind.close()
    assert not blind.share_prefixes
    err = capsys.readouterr().err
    assert said in err and "share_prefixes is off for it" in err
