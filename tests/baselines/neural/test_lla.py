"""LLA-LSTM (Thrush 2020): the Lexicon unit, gradient reversal, the three variants, determinism, the harness."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from structbench import registry
from structbench.baselines.neural.batching import example_batches, make_batch
from structbench.baselines.neural.lla.model import LlaLstm, LlaLstmNoAdversary, ThrushLstm
from structbench.baselines.neural.lla.nets import LlaNet, grad_reverse
from structbench.baselines.neural.lla.settings import LlaSettings
from structbench.baselines.neural.trainer import Trainer
from structbench.baselines.neural.vocab import PAD, Vocabulary
from structbench.data import freeze
from structbench.errors import UserError
from structbench.runs.runner import Runner
from structbench.seeding import seed_everything
from structbench.specs import ModelSpec, Split
from tests.support.helpers import check_stored_run

pytestmark = pytest.mark.usefixtures("one_torch_thread")


TINY = {"hidden": 16, "embedding": 8, "adversary_hidden": 16, "epochs": 3, "lexicon_epochs": 2}
COLOURS = {"dax": "RED", "lug": "BLUE", "wif": "GREEN", "zup": "YELLOW"}
MODELS = {"lla-lstm": LlaLstm, "lla-lstm-noadv": LlaLstmNoAdversary, "lstm-thrush": ThrushLstm}


def miniscan_train() -> Split:
    suite = registry.suite("miniscan")
    return freeze.load_split(suite, freeze.ensure_built(suite), 0, "train")


def vocabularies(train: Split) -> tuple[Vocabulary, Vocabulary]:
    return Vocabulary.build(e.input for e in train.examples), Vocabulary.build(e.target or [] for e in train.examples)


def pretrained(seed: int) -> tuple[LlaNet, Vocabulary, Vocabulary]:
    """A net whose Lexicon unit is trained with Thrush's settings on MiniSCAN's 14 study items."""
    train = miniscan_train()
    source, target = vocabularies(train)
    seed_everything(seed)
    net = LlaNet(LlaSettings(hidden=8, embedding=8, adversary_hidden=8), len(source), len(target))
    rng = np.random.default_rng(seed)
    net.pretrain(lambda epoch: example_batches(train.examples, source, target, 30, rng), torch.device("cpu"), False)
    return net, source, target


def test_the_data_pairs_each_primitive_with_one_colour() -> None:
    train = miniscan_train()
    assert len(train.examples) == 14
    alone = {e.input[0]: e.target for e in train.examples if len(e.input) == 1}
    assert alone == {word: [colour] for word, colour in COLOURS.items()}


@pytest.mark.parametrize("seed", [0, 1])
def test_the_lexicon_unit_learns_the_colour_of_each_primitive(seed: int) -> None:
    net, source, target = pretrained(seed)
    colours = [target.ids[c] for c in COLOURS.values()]
    for word, colour in COLOURS.items():
        lexicon = net.lexicon_of(make_batch([[word]], source))[0]
        assert colours[int(lexicon[colours].argmax())] == target.ids[colour], word
        assert float(lexicon[target.ids[colour]]) > 0.9
        assert float(lexicon[target.ids["<eos>"]]) > 0.9  # every output ends with the stop token
    # the function words name no colour of their own: none gets a colour as strongly as a primitive does
    fep = net.lexicon_of(make_batch([["fep"]], source))[0]
    assert float(fep[colours].max()) < 0.5
    assert not net.lexicon.weight.requires_grad  # frozen for the main phase
    # max pooling: a sequence's l is the elementwise max of its words'
    words = ["wif", "kiki", "dax"]
    pooled = net.lexicon_of(make_batch([words], source))[0]
    each = torch.stack([net.lexicon_of(make_batch([[w]], source))[0] for w in words])
    assert torch.allclose(pooled, each.max(dim=0).values)


def test_gradient_reversal_multiplies_the_gradient_by_minus_the_scale() -> None:
    x = torch.tensor([1.0, -2.0, 3.0], requires_grad=True)
    y = grad_reverse(x, 1e-4)
    assert torch.equal(y, x)
    (y * torch.tensor([3.0, 4.0, 5.0])).sum().backward()
    assert x.grad is not None
    assert torch.allclose(x.grad, torch.tensor([-3e-4, -4e-4, -5e-4]))


def test_the_adversary_reaches_the_encoder_reversed_and_scaled() -> None:
    """The encoder's gradient from the adversary's loss is -reversal times the unreversed one."""
    train = miniscan_train()
    source, target = vocabularies(train)
    batch = example_batches(train.examples, source, target, 30, None)[0]
    grads = {}
    for reversal in (-1.0, 1e-4):  # reversal = -1 multiplies by +1: the plain gradient
        seed_everything(0)
        net = LlaNet(LlaSettings(reversal=reversal, **TINY), len(source), len(target))
        output = net(batch, True)
        assert output.aux_loss is not None
        output.aux_loss.backward()
        grads[reversal] = (net.encoder.weight_hh_l0.grad.clone(), net.adversary[0].weight.grad.clone())  # type: ignore[union-attr]
    assert float(grads[-1.0][0].abs().max()) > 0
    assert torch.allclose(grads[1e-4][0], -1e-4 * grads[-1.0][0], atol=1e-12)
    assert torch.allclose(grads[1e-4][1], grads[-1.0][1])  # the adversary itself learns undisturbed


def test_the_output_is_the_lexicon_times_the_decoder_distribution() -> None:
    """softmax(logits) is l ⊙ o_t at every token (so cross-entropy is Thrush's NLL), and decoding takes its argmax."""
    net, source, target = pretrained(0)
    train = miniscan_train()
    batch = example_batches(train.examples, source, target, 30, None)[0]
    with torch.no_grad():
        logits = net(batch, True).logits
        hidden, cell = net.encode(batch)
        o = torch.softmax(net.decoder_scores(hidden, cell, logits.shape[1]), dim=-1)
        product = net.lexicon_of(batch).unsqueeze(1) * o
        assert torch.allclose(torch.softmax(logits, dim=-1)[..., 1:], product[..., 1:], atol=1e-6)
        assert torch.allclose(torch.softmax(logits, dim=-1).sum(dim=-1), torch.ones(logits.shape[:2]), atol=1e-5)
        decoded = net.decode(batch, logits.shape[1])
        assert torch.equal(decoded, product[..., 1:].argmax(dim=-1) + 1)
        assert not bool((decoded == PAD).any())


@pytest.mark.parametrize("name", list(MODELS))
def test_each_variant_has_exactly_its_units(name: str) -> None:
    model = MODELS[name](**TINY)
    model.log = lambda message: None
    model.fit(miniscan_train(), None, seed=0)
    assert model.net is not None
    modules = {key.split(".")[0] for key, _ in model.net.named_parameters()}
    assert {"source_embedding", "encoder", "decoder", "output"} <= modules
    assert ("lexicon" in modules) == (name != "lstm-thrush")
    assert ("adversary" in modules) == (name == "lla-lstm")


def test_a_variant_refuses_the_other_variants_units() -> None:
    with pytest.raises(UserError, match="lla-lstm-noadv always has adversary=false"):
        LlaLstmNoAdversary(adversary=True)
    with pytest.raises(UserError, match="lstm-thrush always has lexicon=false"):
        ThrushLstm(lexicon=True)
    with pytest.raises(ValueError, match="needs lexicon"):
        LlaSettings(lexicon=False, adversary=True)


def test_same_seed_same_weights() -> None:
    train = miniscan_train()
    source, target = vocabularies(train)
    states = []
    for _ in range(2):
        seed_everything(5)
        net = LlaNet(LlaSettings(**TINY), len(source), len(target))
        trainer = Trainer(net, net.settings, source, target, torch.device("cpu"), seed=5, max_length=20)
        trainer.train(train.examples, None, progress=False)
        states.append(net.state_dict())
    assert states[0].keys() == states[1].keys()
    assert all(torch.equal(states[0][key], states[1][key]) for key in states[0])


@pytest.mark.parametrize("cls", ["LlaLstm", "LlaLstmNoAdversary", "ThrushLstm"])
def test_every_variant_runs_through_the_harness(runner: Runner, cls: str) -> None:
    params: dict[str, int | float | str | bool | None] = {**TINY, "epochs": 5, "max_length": 12}
    record = runner.evaluate(
        "miniscan", ModelSpec(name=f"structbench.baselines.neural.lla.model:{cls}", params=params), [0]
    )
    assert record.status == {"0": "done"}
    check_stored_run(runner, "miniscan")


def test_training_stops_at_the_recipe_criterion_and_reports_it() -> None:
    """MiniSCAN has no dev split: the recipe's criterion reads the training pairs, training stops at the first
    evaluation where all 14 are right, and the run says so; without the criterion it trains every epoch."""
    train = miniscan_train()
    model = ThrushLstm()
    model.log = lambda message: None
    model.fit(train, None, seed=0)
    judged = model.convergence()
    evaluations = model.history["evaluations"]
    assert judged["reached"] and judged["value"] == 1.0 and judged["criterion"]["statistic"] == "train_accuracy"
    assert judged["epochs"] == evaluations[-1]["epoch"] < 150 and evaluations[-2]["train_accuracy"] < 1.0
    assert model.history["stopped"] == "criterion train_accuracy ≥ 1 reached"
    unjudged = ThrushLstm(criterion=None, epochs=judged["epochs"] + 2)
    unjudged.log = lambda message: None
    unjudged.fit(train, None, seed=0)
    assert unjudged.convergence() == {} and len(unjudged.history["evaluations"]) == judged["epochs"] + 2
    assert "train_accuracy" in unjudged.history["evaluations"][0]  # still reported: there is no dev split
