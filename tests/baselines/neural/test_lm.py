"""Neural word-level LMs (`lstm-lm`, `fan-lm`; Tran 2018 ch. 5): scoring, sentence level, training, the harness."""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any

import pytest
import torch

from structbench import registry
from structbench.analysis.rescore import rescore
from structbench.baselines.neural.lm.model import (
    FanLanguageModel,
    LstmLanguageModel,
    NeuralLanguageModel,
    build_vocabulary,
    lm_sentences,
)
from structbench.baselines.neural.lm.nets import FanLm, FanSubLayer, LstmLm
from structbench.baselines.neural.lm.settings import FanLmArchitecture, LstmLmArchitecture
from structbench.baselines.neural.rmn.model import Rmn
from structbench.baselines.neural.settings import BUDGETS
from structbench.baselines.neural.transformer.nets import sinusoids
from structbench.baselines.neural.vocab import EOS, SOS, UNK
from structbench.data import freeze
from structbench.errors import NotApplicable, UserError
from structbench.runs.key import ModelKey
from structbench.runs.request import ModelRequest
from structbench.runs.runner import Runner
from structbench.specs import ModelSpec, Split
from structbench.store import run_statistics

pytestmark = pytest.mark.usefixtures("one_torch_thread")

ATTRACTORS = "agreement-attractors"
TINY: dict[str, dict[str, Any]] = {
    "lstm-lm": {"layers": 2, "embedding": 16, "hidden": 16, "epochs": 2, "batch_size": 32},
    "fan-lm": {"layers": 2, "d_model": 16, "heads": 2, "feedforward": 32, "epochs": 2, "batch_size": 32},
}
MODELS: dict[str, type[NeuralLanguageModel]] = {"lstm-lm": LstmLanguageModel, "fan-lm": FanLanguageModel}
SUBSET = 1500
"""Training sentences the unit tests fit on (a prefix of the suite's 20,000), to keep them at a second or two."""


def split(name: str, suite_id: str = ATTRACTORS, limit: int | None = None) -> Split:
    suite = registry.suite(suite_id)
    loaded = freeze.load_split(suite, freeze.ensure_built(suite), 0, name)
    return loaded if limit is None else loaded.model_copy(update={"examples": loaded.examples[:limit]})


def fitted(name: str, seed: int = 0, **changes: Any) -> NeuralLanguageModel:
    model = MODELS[name](**{**TINY[name], **changes})
    model.log = lambda message: None
    model.fit(split("train", limit=SUBSET), split("dev", limit=300), seed=seed)
    return model


def direct_logprob(model: NeuralLanguageModel, words: list[str]) -> float:
    """The sentence's log-probability computed position by position from the network alone."""
    assert model.net is not None
    ids = [SOS, *model.vocabulary.encode(words), EOS]
    model.net.eval()
    total = 0.0
    with torch.no_grad():
        for t in range(1, len(ids)):
            logits = model.net(torch.tensor([ids[:t]]))[0, -1]
            total += float(torch.log_softmax(logits.double(), dim=-1)[ids[t]])
    return total


@pytest.mark.parametrize("name", list(MODELS))
def test_logprob_is_the_sum_of_the_word_and_end_probabilities(name: str) -> None:
    model = fitted(name)
    sentences = [
        ["the", "dog", "is", "here", "."],
        ["the", "cats", "near", "the", "dog", "that", "saw", "the", "authors", "are", "tired", "."],
        [],
        ["the", "zebra", "sleeps", "."],  # zebra is no training word: it counts as <unk>
    ]
    scores = model.logprob(sentences)
    for words, score in zip(sentences, scores, strict=True):
        assert score == pytest.approx(direct_logprob(model, words), abs=1e-4)
        assert score < 0
    assert "zebra" not in model.vocabulary.ids
    assert model.logprob([["the", "<unk>", "sleeps", "."]])[0] == pytest.approx(scores[3], abs=1e-5)


@pytest.mark.parametrize("name", list(MODELS))
def test_loglikelihood_is_the_continuation_given_its_context_with_no_end(name: str) -> None:
    model = fitted(name)
    requests = [
        (["the", "dogs", "near", "the", "cat"], ["are"]),
        (["the", "dogs", "near", "the", "cat"], ["is"]),
        (["the", "dog"], ["is", "here", "."]),  # longer than a word: scored on its own row
        ([], ["the"]),
        (["the", "zebra"], ["sleeps"]),
    ]
    scores = model.loglikelihood(requests)
    for (context, words), score in zip(requests, scores, strict=True):
        assert model.net is not None
        ids = [SOS, *model.vocabulary.encode(context), *model.vocabulary.encode(words)]
        with torch.no_grad():
            logits = model.net.eval()(torch.tensor([ids[:-1]]))[0]
        direct = torch.log_softmax(logits.double(), dim=-1)
        assert score == pytest.approx(
            sum(float(direct[t - 1, ids[t]]) for t in range(len(ids) - len(words), len(ids))), abs=1e-4
        )
    assert model.loglikelihood(requests[::-1]) == pytest.approx(scores[::-1], abs=1e-5)


@pytest.mark.parametrize("name", list(MODELS))
def test_sentences_are_scored_independently_of_their_batch(name: str) -> None:
    """Sentence level: no state passes between sequences, and padding changes nothing."""
    model = fitted(name)
    target = ["the", "dogs", "behind", "the", "cat", "are", "happy", "."]
    others = [["the", "cat", "that", "the", "pilots", "saw", "has", "left", "."] * 3, ["the", "dog"], ["."]]
    alone = model.logprob([target])[0]
    for batch in ([*others, target], [target, *others], [others[0], target, others[1]]):
        assert model.logprob(batch)[batch.index(target)] == pytest.approx(alone, abs=1e-5)
    assert model.logprob([target, target]) == pytest.approx([alone, alone], abs=1e-5)


@pytest.mark.parametrize(
    "net",
    [
        LstmLm(LstmLmArchitecture(layers=2, embedding=8, hidden=8), 12),
        FanLm(FanLmArchitecture(layers=2, d_model=8, heads=2, feedforward=16), 12),
    ],
    ids=["lstm", "fan"],
)
def test_networks_are_causal(net: torch.nn.Module) -> None:
    """Position t predicts token t+1 from tokens 0..t only: changing a later token leaves earlier logits alone."""
    net.eval()
    ids = torch.tensor([[1, 4, 5, 6, 7, 8]])
    changed = ids.clone()
    changed[0, 4] = 9
    with torch.no_grad():
        before, after = net(ids), net(changed)
    assert before.shape == (1, 6, 12)
    assert torch.allclose(before[0, :4], after[0, :4], atol=1e-6)
    assert not torch.allclose(before[0, 4:], after[0, 4:], atol=1e-4)


def test_the_fan_sub_layer_computes_eqs_5_1_to_5_4() -> None:
    """Z = [Z_1; Z_2] W_o with Z_i = softmax(Q_i K_i^T / sqrt(d_h)) V_i over positions 0..t and no projection
    biases (eqs. 5.5-5.9), H0 = LN(X + Z), Y = LN(FFN(H0) + H0): computed here head by head, step by step."""
    torch.manual_seed(0)
    layer = FanSubLayer(8, 2, 16, 0.2).eval()
    x = torch.randn(2, 5, 8)
    assert layer.query.bias is None and layer.key.bias is None and layer.value.bias is None and layer.mix.bias is None
    with torch.no_grad():
        q, k, v = layer.query(x), layer.key(x), layer.value(x)
        z = torch.zeros(2, 5, 8)
        for t in range(5):
            for h in (slice(0, 4), slice(4, 8)):
                scores = torch.einsum("bd,bsd->bs", q[:, t, h], k[:, : t + 1, h]) / 2.0  # sqrt(d_h) = 2
                z[:, t, h] = torch.einsum("bs,bsd->bd", torch.softmax(scores, dim=-1), v[:, : t + 1, h])
        h0 = layer.attention_norm(x + layer.mix(z))
        expected = layer.output_norm(layer.feedforward(h0) + h0)
        torch.testing.assert_close(layer(x), expected, rtol=1e-5, atol=1e-5)


def test_the_fan_drops_only_the_feed_forward_output_and_does_not_scale_its_embeddings() -> None:
    """As the authors' FAN LM (ketranm/fan_vs_rnn layers.py `Transformer`, modules.py `ResFF`): the first
    sub-layer reads embedding + position as they are, and with every feed-forward output zeroed, training
    mode at dropout 0.9 computes exactly what evaluation does: nothing else is dropped."""
    torch.manual_seed(0)
    net = FanLm(FanLmArchitecture(layers=2, d_model=8, heads=2, feedforward=16, dropout=0.9), 12)
    ids = torch.tensor([[1, 4, 5, 6, 7, 8], [1, 9, 10, 2, 0, 0]])
    seen: list[torch.Tensor] = []
    net.layers[0].register_forward_hook(lambda module, inputs, output: seen.append(inputs[0]))
    with torch.no_grad():
        for layer in net.layers:
            assert isinstance(layer, FanSubLayer)
            last = layer.feedforward[2]
            assert isinstance(last, torch.nn.Linear)
            last.weight.zero_()
            last.bias.zero_()
        net.train()
        first, second = net(ids), net(ids)
        net.eval()
        evaluated = net(ids)
    torch.testing.assert_close(seen[0], net.embedding(ids) + sinusoids(6, 8), rtol=0, atol=0)
    assert torch.equal(first, second) and torch.equal(first, evaluated)


def test_tied_embeddings_share_one_matrix() -> None:
    lstm = LstmLm(LstmLmArchitecture(layers=1, embedding=8, hidden=8), 12)
    fan = FanLm(FanLmArchitecture(layers=1, d_model=8, heads=2, feedforward=16), 12)
    assert lstm.output.weight is lstm.embedding.weight and fan.output.weight is fan.embedding.weight
    untied = LstmLm(LstmLmArchitecture(layers=1, embedding=8, hidden=8, tie_embeddings=False), 12)
    assert untied.output.weight is not untied.embedding.weight


@pytest.mark.parametrize("name", list(MODELS))
def test_training_lowers_dev_perplexity_and_reports_the_kept_epoch(name: str) -> None:
    model = fitted(name, epochs=3, lr=0.01)
    evaluations = model.history["evaluations"]
    assert [e["epoch"] for e in evaluations] == [1, 2, 3]
    dev = lm_sentences(split("dev", limit=300))
    kept = min(evaluations, key=lambda e: e["dev_perplexity"])
    assert model.history["selected_epoch"] == kept["epoch"]
    assert model.statistics() == {"dev_perplexity": pytest.approx(kept["dev_perplexity"])}
    assert model.perplexity(dev) == pytest.approx(kept["dev_perplexity"], rel=1e-5)  # the kept weights are loaded
    untrained = MODELS[name](**TINY[name])
    untrained.vocabulary = model.vocabulary
    assert model.net is not None
    untrained.net = type(model.net)(untrained.settings_class.model_validate(TINY[name]), len(model.vocabulary))
    before = untrained.perplexity(dev)
    assert before > 0.8 * len(model.vocabulary)  # small initial weights: close to uniform over the vocabulary
    assert kept["dev_perplexity"] < 0.5 * before
    assert evaluations[-1]["dev_perplexity"] < evaluations[0]["dev_perplexity"]


def test_dev_sentences_are_the_correct_candidates() -> None:
    dev = split("dev", limit=5)
    sentences = lm_sentences(dev)
    assert all(s == e.candidates[e.answer or 0] for s, e in zip(sentences, dev.examples, strict=True) if e.candidates)
    assert lm_sentences(split("train", limit=3)) == [e.input for e in split("train", limit=3).examples]


def test_vocabulary_keeps_the_most_frequent_training_words() -> None:
    sentences = [["a", "b", "b", "c"], ["c", "c", "d"]]
    assert build_vocabulary(sentences).tokens[4:] == ["a", "b", "c", "d"]
    assert build_vocabulary(sentences, max_vocabulary=2).tokens[4:] == ["b", "c"]
    assert build_vocabulary(sentences, min_count=2).tokens[4:] == ["b", "c"]
    assert build_vocabulary(sentences, max_vocabulary=2).encode(["a", "c"]) == [UNK, 5]


def test_same_seed_same_numbers_and_checkpoint_reuse(fresh_home: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    sentences = [e.candidates[1] for e in split("attractors-3", limit=20).examples if e.candidates]
    first = fitted("lstm-lm", seed=5)
    files = sorted((fresh_home / "checkpoints").rglob("seed5.pt"))
    assert len(files) == 1
    files[0].rename(files[0].with_suffix(".old"))  # retrain from scratch: a CPU run repeats exactly
    again = fitted("lstm-lm", seed=5)
    assert again.logprob(sentences) == first.logprob(sentences)
    assert again.statistics() == first.statistics()
    other = fitted("lstm-lm", seed=6)
    assert other.logprob(sentences) != first.logprob(sentences)

    def no_training(*args: object, **kwargs: object) -> None:
        raise AssertionError("trained again instead of reloading the checkpoint")

    monkeypatch.setattr(NeuralLanguageModel, "_train", no_training)
    reloaded = MODELS["lstm-lm"](**TINY["lstm-lm"])
    messages: list[str] = []
    reloaded.log = messages.append
    reloaded.fit(split("train", limit=SUBSET), split("dev", limit=300), seed=5)
    assert messages and "reloaded the trained weights" in messages[0]
    assert reloaded.logprob(sentences) == first.logprob(sentences)
    assert reloaded.statistics() == first.statistics()
    changed = MODELS["lstm-lm"](**{**TINY["lstm-lm"], "lr": 0.01})  # another setting is another checkpoint
    changed.log = lambda message: None
    with pytest.raises(AssertionError, match="trained again"):
        changed.fit(split("train", limit=SUBSET), split("dev", limit=300), seed=5)


def test_an_empty_train_split_leaves_the_model_untrained_and_not_applicable() -> None:
    model = LstmLanguageModel(**TINY["lstm-lm"])
    model.log = lambda message: None
    model.fit(split("train", "agreement-gulordava"), None, seed=0)
    assert model.net is None and model.statistics() == {}
    with pytest.raises(NotApplicable, match="agreement-gulordava has none: train it elsewhere"):
        model.logprob([["the", "dog", "sleeps"]])
    with pytest.raises(NotApplicable, match="not trained"):
        FanLanguageModel().logprob([["a"]])  # never fitted at all


def test_train_on_another_suite() -> None:
    model = LstmLanguageModel(**{**TINY["lstm-lm"], "epochs": 1, "batch_size": 256}, train_on=ATTRACTORS)
    model.log = lambda message: None
    model.fit(split("train", "agreement-gulordava"), None, seed=0)
    assert model.net is not None and "dev_perplexity" in model.statistics()
    assert len(model.vocabulary) < 100  # the grammar's words, not Gulordava's
    assert all(math.isfinite(v) for v in model.logprob([["the", "dog", "sleeps", "."]]))


def test_settings_are_checked_and_key_the_run() -> None:
    with pytest.raises(UserError, match="no setting 'hiden'"):
        LstmLanguageModel(hiden=3)
    with pytest.raises(UserError, match="unknown budget"):
        FanLanguageModel(budget="huge")
    with pytest.raises(UserError, match="embedding == hidden"):
        LstmLanguageModel.configuration(ATTRACTORS, embedding=64)
    with pytest.raises(UserError, match="multiple of heads"):
        FanLanguageModel.configuration(ATTRACTORS, heads=3)
    for name, model in MODELS.items():
        facts = ModelKey.of(ATTRACTORS, ModelRequest.of(ModelSpec(name=name))).facts["configuration"]
        assert facts["budget"] == "cpu-small" and facts["lr"] == 0.001 and facts["threads"] == 1
        paper = model.configuration(ATTRACTORS, budget="paper")
        assert (paper["layers"], paper["dropout"], paper["tie_embeddings"], paper["max_vocabulary"]) == (
            4,
            0.2,
            True,
            10_000,
        )
        # both ch. 5 LMs train as the authors' lm.py does: halve the rate on a dev plateau, stop at the sixth
        assert (paper["lr_decay"], paper["max_decays"], facts["lr_decay"], facts["max_decays"]) == (0.5, 5, 0.5, 5)
        assert paper["loss"] == facts["loss"] == "mean"  # the stated deviation: lm.py sums it
        assert paper != facts
        for budget in BUDGETS:
            model.configuration("sentence-completion", budget=budget)
    assert FanLanguageModel.configuration(ATTRACTORS, budget="paper")["heads"] == 2


@pytest.mark.parametrize("budget", BUDGETS)
def test_the_msr_lstm_baseline_and_rmn_are_compared_in_one_setting(budget: str) -> None:
    """Tran 2018 Table 4.4 compares its LSTM baseline and the RMN in §4.6's one setting: on the sentence-completion
    suites lstm-lm resolves to every setting rmn has but the Memory Block (the vocabulary too, so that an answer
    and a distractor both outside it tie, and count wrong, for both alike), untied and dropping after each LSTM
    layer only; the ch. 5 recipe (4 layers, tied, 10,000 words) stays on the agreement suites."""
    for suite in ("msr-sentence-completion", "sentence-completion"):
        lstm = LstmLanguageModel.configuration(suite, budget=budget)
        rmn = Rmn.configuration(suite, budget=budget)
        shared = set(lstm) & set(rmn)
        assert shared >= {"layers", "embedding", "hidden", "dropout", "init_range", "max_vocabulary", "min_count"}
        assert shared >= {"batch_size", "epochs", "lr", "clip", "loss", "max_decays", "criterion"}
        assert {key: lstm[key] for key in shared} == {key: rmn[key] for key in shared}
        assert (lstm["layers"], lstm["dropout"], lstm["max_vocabulary"], lstm["init_range"]) == (3, 0.3, 64_000, 0.05)
        assert (lstm["tie_embeddings"], lstm["embedding_dropout"], lstm["init"]) == (False, False, "all")
        assert lstm["embedding"] == (256 if budget == "paper" else 128)
    agreement = LstmLanguageModel.configuration(ATTRACTORS, budget=budget)
    assert (agreement["layers"], agreement["tie_embeddings"], agreement["max_vocabulary"]) == (4, True, 10_000)


def test_without_a_dev_split_the_msr_setting_is_judged_on_its_training_perplexity() -> None:
    """The MSR challenge has no dev split: its recipe's plateau reads the training perplexity, so a run there still
    records whether it learned its training text instead of carrying no record."""
    model = LstmLanguageModel(layers=1, embedding=16, hidden=16, epochs=3, batch_size=64, lr=0.01)
    model.log = lambda message: None
    model.fit(split("train", "sentence-completion", limit=SUBSET), None, seed=0)
    judged = model.history["convergence"]
    train_perplexities = [e["train_perplexity"] for e in model.history["evaluations"]]
    assert judged["criterion"] == {"statistic": "train_perplexity", "plateau": 0.02, "at_least": None, "at_most": None}
    assert (judged["reached"], judged["epochs"]) == (False, 3)  # still falling fast after 3 epochs: under-trained
    assert judged["value"] == pytest.approx(min(train_perplexities))


def test_the_thesis_initialisation_and_dropout_after_each_lstm_layer() -> None:
    """`init=all`: every parameter uniform in (-0.05, 0.05), forget-gate biases 1 (§4.4.2); `embedding_dropout=false`:
    the LSTM reads the embeddings undropped in training (§4.6), while its output is still dropped."""
    torch.manual_seed(0)
    settings = LstmLmArchitecture(
        layers=2, embedding=8, hidden=8, dropout=0.5, tie_embeddings=False, init="all", init_range=0.05
    )
    net = LstmLm(settings.model_copy(update={"embedding_dropout": False}), 12)
    for name, parameter in net.named_parameters():
        if name.startswith("lstm.bias_ih"):
            assert bool((parameter[8:16] == 1.0).all()) and bool((parameter[:8].abs() < 0.05).all())
        elif name.startswith("lstm.bias_hh"):
            assert bool((parameter[8:16] == 0.0).all())
        else:
            assert bool((parameter.abs() < 0.05).all()), name
    seen: list[torch.Tensor] = []
    net.lstm.register_forward_hook(lambda module, inputs, output: seen.append(inputs[0]))
    ids = torch.tensor([[1, 4, 5, 6]])
    net.train()
    first, second = net(ids), net(ids)
    assert torch.equal(seen[0], net.embedding(ids)) and not torch.equal(first, second)
    dropped = LstmLm(settings, 12).train()
    dropped.lstm.register_forward_hook(lambda module, inputs, output: seen.append(inputs[0]))
    dropped(ids)
    assert not torch.equal(seen[-1], dropped.embedding(ids))


@pytest.mark.parametrize("name", list(MODELS))
def test_through_the_runner(runner: Runner, name: str) -> None:
    params = {**TINY[name], "epochs": 1, "batch_size": 256, "threads": 1}
    record = runner.evaluate(ATTRACTORS, ModelSpec(name=name, params=params), [0])
    assert record.status == {"0": "done"}
    suite = registry.suite(ATTRACTORS)
    assert set(record.scores) == {s.name for s in suite.spec.splits_with_role("test")}
    runs = runner.store.runs().set_index("id")
    run_id = int(runs.index.max())
    stored = runner.store.stored_predictions(run_id)
    for split, (ids, predictions, _) in stored.items():
        assert len(ids) == 500
        assert all(len(p) == 2 and all(isinstance(v, float) and v < 0 for v in p) for p in predictions)
        # the cell is the share of pairs whose grammatical sentence (first) is strictly more probable
        preferred = sum(good > bad for good, bad in predictions) / len(predictions)
        assert record.scores[split]["accuracy"].mean == pytest.approx(preferred)
    assert rescore(runner.store, run_id, suite)  # the stored log-probabilities score again
    statistics = run_statistics(str(runs.loc[run_id, "environment"]))
    assert 1.0 < statistics["dev_perplexity"] < 100.0
    gulordava = runner.evaluate("agreement-gulordava", ModelSpec(name=name, params=params), [0])
    assert gulordava.status == {"0": "n/a"}
    assert "agreement-gulordava has none: train it elsewhere" in gulordava.errors["0"]


@pytest.mark.parametrize("name", list(MODELS))
def test_region_surprisals_sum_each_words_bits_given_the_sentence_before_it(name: str) -> None:
    """SyntaxGym's regions: -log2 p of each region's words, each given `<s>` and every word before it, no `</s>`."""
    model = fitted(name)
    sentences = [
        [["the", "dogs"], ["near", "the", "cat"], ["are"], ["happy", "."]],
        [["the"]],
        [["the", "zebra"], ["sleeps"]],  # zebra is no training word: it counts as <unk>
    ]
    answers = model.region_surprisals(sentences)
    assert model.net is not None
    for regions, answer in zip(sentences, answers, strict=True):
        ids = [SOS, *model.vocabulary.encode([w for region in regions for w in region])]
        with torch.no_grad():
            logits = model.net.eval()(torch.tensor([ids[:-1]]))[0]
        direct = torch.log_softmax(logits.double(), dim=-1)
        bits = [-float(direct[t - 1, ids[t]]) / math.log(2) for t in range(1, len(ids))]
        expected, start = [], 0
        for region in regions:
            expected.append(sum(bits[start : start + len(region)]))
            start += len(region)
        assert answer == pytest.approx(expected, abs=1e-4)
    # the regions of a sentence add up to its words' log-probability without the end token
    words = [w for region in sentences[0] for w in region]
    assert sum(answers[0]) == pytest.approx(-model.loglikelihood([([], words)])[0] / math.log(2), abs=1e-4)
    untrained = MODELS[name](**TINY[name])
    with pytest.raises(NotApplicable):
        untrained.region_surprisals(sentences)
