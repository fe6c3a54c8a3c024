"""The `hf` adapter on BLiMP scores every sentence as lm-evaluation-harness 0.4's `blimp` task does, checked
against a direct transformers forward pass on a small GPT-2 with a byte-level BPE tokenizer trained here.

lm-eval's rule, as its code reads (v0.4.9.2): the task's context is empty and each choice's continuation is
`" " + sentence` (`lm_eval/api/task.py`, target delimiter " "); an empty context becomes the prefix token,
the tokenizer's BOS, else its EOS (`lm_eval/models/huggingface.py`, `prefix_token_id`), and the continuation
is encoded alone without special tokens (`lm_eval/api/model.py`, `TemplateLM.loglikelihood`); the model reads
prefix + continuation less its last token and the continuation's log-probabilities are summed; `acc` is
`argmax([good, bad]) == 0`, so a tie counts right (the suite's `accuracy_lm_eval`; its `accuracy` counts a tie
wrong, as the paper does)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np
import pytest

pytest.importorskip("transformers")

import torch

from structbench import registry
from structbench.adapters.hf.causal import HfCausalLm
from structbench.data import freeze
from structbench.protocols import ask
from structbench.specs import Example, Split
from tests.support.hf_models import bpe_gpt2

SPLITS = (
    "anaphor_gender_agreement",
    "passive_1",
    "principle_A_case_2",
    "wh_island",
    "npi_present_1",
    "ellipsis_n_bar_2",
)
PER_SPLIT = 12


def blimp_split(name: str) -> Split:
    suite = registry.suite("blimp")
    return freeze.load_split(suite, freeze.ensure_built(suite), 0, name)


@pytest.fixture(scope="module")
def pairs() -> list[Example]:
    """The first pairs of six paradigms, and passive_1's pair 324, whose two sentences are the same upstream."""
    chosen = [example for name in SPLITS for example in blimp_split(name).examples[:PER_SPLIT]]
    (identical,) = [e for e in blimp_split("passive_1").examples if e.id == "passive_1-324"]
    return [*chosen, identical]


@pytest.fixture(scope="module")
def corpus() -> list[str]:
    """A few hundred BLiMP sentences (good and bad) of other paradigms, to train the tokenizer on."""
    return [" ".join(c) for e in blimp_split("transitive").examples[:200] for c in e.candidates or []]


@pytest.fixture(scope="module")
def gpt2_dir(tmp_path_factory: pytest.TempPathFactory, corpus: list[str]) -> Path:
    return bpe_gpt2(corpus, tmp_path_factory.mktemp("models") / "bpe-gpt2", layers=2, width=48, heads=2)


@pytest.fixture(scope="module")
def gpt2(gpt2_dir: Path) -> Iterator[HfCausalLm]:
    model = HfCausalLm(pretrained=str(gpt2_dir), threads=1, batch_size=4)
    yield model
    model.close()


def lm_eval_loglikelihood(model: Any, tokenizer: Any, sentence: str) -> float:
    """lm-eval's log-likelihood of the request ("", " " + sentence), from one unpadded forward pass in float64."""
    prefix = tokenizer.bos_token_id if tokenizer.bos_token_id is not None else tokenizer.eos_token_id
    encoded = list(tokenizer(" " + sentence, add_special_tokens=False)["input_ids"])
    if encoded[0] == prefix:  # a continuation that starts with the prefix token is its own context
        context, continuation = encoded[:1], encoded[1:]
    else:
        context, continuation = [prefix], encoded
    whole = context + continuation
    with torch.no_grad():
        logits = model(input_ids=torch.tensor([whole[:-1]])).logits[0]
    logprobs = torch.log_softmax(logits.double(), dim=-1)
    first = len(context) - 1
    return float(sum(logprobs[first + i, token] for i, token in enumerate(continuation)))


def test_each_sentence_is_scored_as_lm_eval_scores_it(gpt2: HfCausalLm, pairs: list[Example]) -> None:
    spec = registry.suite("blimp").spec
    predictions = ask(gpt2, spec, pairs, batch_size=5)  # batches of pairs: padding must move no score
    sentences = [" ".join(c) for e in pairs for c in e.candidates or []]
    expected = [lm_eval_loglikelihood(gpt2.model, gpt2.tokenizer, s) for s in sentences]
    got = [value for scores in predictions for value in scores]
    assert got == pytest.approx(expected, abs=1e-4)
    # the leading space is lm-eval's, and this tokenizer reads it: the test tells the two rules apart
    bare = gpt2.logprob([s.split() for s in sentences[:6]])
    assert any(
        gpt2.tokenizer(" " + s, add_special_tokens=False)["input_ids"]
        != gpt2.tokenizer(s, add_special_tokens=False)["input_ids"]
        for s in sentences
    )
    assert max(abs(b - e) for b, e in zip(bare, expected[:6], strict=True)) > 1e-3


def test_accuracy_is_the_strict_rule_and_accuracy_lm_eval_is_lm_evals_argmax(
    gpt2: HfCausalLm, pairs: list[Example]
) -> None:
    suite = registry.suite("blimp")
    split = Split(suite=suite.spec.key, name="passive_1", role="test", draw=0, examples=pairs)
    predictions = ask(gpt2, suite.spec, pairs, batch_size=3)
    scored = suite.score(split, predictions)
    argmax = [float(np.argmax(scores) == 0) for scores in predictions]  # lm-eval's acc, gold index 0
    strict = [float(scores[0] > scores[1]) for scores in predictions]
    assert scored.metrics["accuracy"] == (sum(strict) / len(pairs), len(pairs))
    assert scored.metrics["accuracy_lm_eval"] == (sum(argmax) / len(pairs), len(pairs))
    # the upstream pair whose two sentences are one string: an exact tie, wrong for the paper, right for lm-eval
    good, bad = predictions[-1]
    assert good == bad
    assert scored.correct[-1] is False
    assert scored.metrics["accuracy_lm_eval"][0] - scored.metrics["accuracy"][0] == pytest.approx(1 / len(pairs))


def test_a_constructed_tie_counts_wrong_in_accuracy_and_right_in_accuracy_lm_eval(gpt2: HfCausalLm) -> None:
    suite = registry.suite("blimp")
    words = "The cat was seen by Susan .".split()
    examples = [
        Example(id="tie", input=[], candidates=[words, list(words)], answer=0),
        Example(id="other", input=[], candidates=[words, ["Susan", "seen", "."]], answer=0),
    ]
    predictions = ask(gpt2, suite.spec, examples)
    assert predictions[0][0] == predictions[0][1]
    split = Split(suite=suite.spec.key, name="passive_1", role="test", draw=0, examples=examples)
    scored = suite.score(split, predictions)
    other = float(predictions[1][0] > predictions[1][1])
    assert scored.metrics["accuracy"] == ((0.0 + other) / 2, 2)
    assert scored.metrics["accuracy_lm_eval"] == ((1.0 + other) / 2, 2)
    assert scored.correct[0] is False


def test_without_a_bos_token_the_prefix_is_eos(tmp_path: Path, corpus: list[str], pairs: list[Example]) -> None:
    folder = bpe_gpt2(corpus, tmp_path / "no-bos", bos=False, layers=1, width=32)
    model = HfCausalLm(pretrained=str(folder), threads=1)
    try:
        assert model.tokenizer.bos_token_id is None and model.start_id == model.tokenizer.eos_token_id
        sentences = [" ".join(c) for e in pairs[:3] for c in e.candidates or []]
        got = model.loglikelihood([([], s.split()) for s in sentences])
        assert got == pytest.approx(
            [lm_eval_loglikelihood(model.model, model.tokenizer, s) for s in sentences], abs=1e-4
        )
    finally:
        model.close()
