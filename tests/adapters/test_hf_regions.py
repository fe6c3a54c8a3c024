"""Region surprisals of the Hugging Face causal adapter (SyntaxGym) on a tiny random GPT-2 whose byte-level
BPE tokenizer is trained here: which sub-words make up a region, and the surprisals against a direct
transformers computation."""

from __future__ import annotations

import json
import math
from collections.abc import Iterator
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest

pytest.importorskip("transformers")

import torch

from structbench import registry
from structbench.adapters.hf.causal import HfCausalLm, token_regions
from structbench.cli import main
from structbench.data import freeze
from structbench.errors import UserError
from tests.support.hf_models import byte_level_bpe, tiny_gpt2

SUITES = ("mvrr", "npz_ambig", "subordination", "cleft")
"""The suites whose sentences the BPE is trained on and the tests ask about."""


def sentences() -> list[list[list[str]]]:
    """Every condition of the first items of `SUITES`, as its non-empty regions."""
    suite = registry.suite("syntaxgym")
    manifest = freeze.ensure_built(suite)
    out: list[list[list[str]]] = []
    for name in SUITES:
        for example in freeze.load_split(suite, manifest, 0, name).examples[:3]:
            out.extend([region for region in c.regions if region] for c in example.conditions or [])
    return out


def text(regions: list[list[str]]) -> str:
    return " ".join(" ".join(region) for region in regions)


@pytest.fixture(scope="module")
def asked() -> list[list[list[str]]]:
    return sentences()


@pytest.fixture(scope="module")
def tokenizer(asked: list[list[list[str]]]) -> Any:
    # a vocabulary too small for whole words: most words are split into several sub-words
    return byte_level_bpe([text(regions) for regions in asked], vocab_size=300)


@pytest.fixture(scope="module")
def gpt2(tmp_path_factory: pytest.TempPathFactory, tokenizer: Any) -> Iterator[HfCausalLm]:
    folder = tiny_gpt2([], tmp_path_factory.mktemp("models") / "gpt2-bpe", tokenizer=tokenizer)
    model = HfCausalLm(pretrained=str(folder), threads=1, batch_size=3)
    yield model
    model.close()


def test_a_sub_word_belongs_to_the_region_of_its_first_character_and_a_leading_space_to_the_next(
    tokenizer: Any, asked: list[list[list[str]]]
) -> None:
    split_words = 0
    for regions in asked:
        encoded = tokenizer(text(regions), add_special_tokens=False, return_offsets_mapping=True)
        pieces = [tokenizer.decode([i]) for i in encoded["input_ids"]]
        owner = token_regions(regions, encoded["offset_mapping"])
        assert owner == sorted(owner), "regions follow one another"
        # the sub-words of each region spell it, with the space that joins it to the one before
        for index, region in enumerate(regions):
            spelled = "".join(piece for piece, r in zip(pieces, owner, strict=True) if r == index)
            assert spelled == (" " if index else "") + " ".join(region)
        split_words += len(pieces) - len(text(regions).split())
    assert split_words > 100, "the BPE splits words into sub-words"
    # a token that is the joining space alone (`Ġ` before `bro` `ugh` `t`) opens the next region
    offsets = [(0, 3), (3, 9), (9, 10), (10, 13), (13, 16), (16, 17)]
    assert token_regions([["The"], ["woman"], ["brought"]], offsets) == [0, 1, 2, 2, 2, 2]


def direct_surprisals(model: HfCausalLm, regions: list[list[str]]) -> list[float]:
    """Each region's surprisal from one unpadded forward pass in float64, its sub-words found by spelling
    (the tokens' decoded text), not by offsets."""
    ids = model.tokenizer(text(regions), add_special_tokens=False)["input_ids"]
    row = [model.tokenizer.bos_token_id, *ids]
    with torch.no_grad():
        logits = model.model(input_ids=torch.tensor([row])).logits[0].double()
    logprobs = torch.log_softmax(logits, dim=-1)
    bits = [-float(logprobs[t - 1, row[t]]) / math.log(2) for t in range(1, len(row))]
    ends, at = [], 0
    for index, region in enumerate(regions):
        at += len(" ".join(region)) + (1 if index else 0)
        ends.append(at)
    out = [0.0] * len(regions)
    spelled = 0
    for token, value in zip(ids, bits, strict=True):
        piece = model.tokenizer.decode([token])
        first = spelled + (1 if piece.startswith(" ") and spelled else 0)  # the word's first character
        out[next(i for i, end in enumerate(ends) if first < end)] += value
        spelled += len(piece)
    return out


def test_region_surprisals_match_a_direct_transformers_computation(
    gpt2: HfCausalLm, asked: list[list[list[str]]]
) -> None:
    answers = gpt2.region_surprisals(asked)  # batches of 3 sentences of different lengths: padding moves nothing
    assert len(answers) == len(asked)
    for regions, answer in zip(asked, answers, strict=True):
        assert answer == pytest.approx(direct_surprisals(gpt2, regions), abs=1e-4)
        assert all(value > 0 for value in answer)
    # the first region is read after the start token, so it has a surprisal of its own
    assert answers[0][0] > 0
    # in bits: the sum over regions is -log2 of the sentence's probability the adapter's logprob gives
    assert sum(answers[0]) == pytest.approx(-gpt2.logprob([text(asked[0]).split()])[0] / math.log(2), abs=1e-4)


def test_a_tokenizer_without_offsets_is_refused_in_one_sentence(gpt2: HfCausalLm) -> None:
    """A slow (Python) tokenizer gives no character offsets (transformers' `is_fast` is False)."""
    fast = gpt2.tokenizer
    try:
        gpt2.tokenizer = SimpleNamespace(is_fast=False)
        with pytest.raises(UserError, match=r"slow \(Python\) one, which gives no character offsets.*tokenizer\.json"):
            gpt2.region_surprisals([[["The"], ["woman"]]])
    finally:
        gpt2.tokenizer = fast


def test_hf_runs_syntaxgym_end_to_end(gpt2: HfCausalLm, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    folder = gpt2.pretrained
    store = tmp_path / "results.sqlite"
    args = ["run", "--suite", "syntaxgym", "--model", "hf", "--set", f"pretrained={folder}", "--limit", "2"]
    assert main([*args, "--store", str(store), "--json", "--no-progress"]) == 0
    record = json.loads(capsys.readouterr().out)
    assert record["status"] == {"0": "done"} and record["partial"] == 2
    assert len(record["scores"]) == 34
    assert all(0.0 <= metrics["accuracy"]["mean"] <= 1.0 for metrics in record["scores"].values())
