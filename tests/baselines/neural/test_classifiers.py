"""Tran's (2018, ch. 5) neural classifiers: number prediction and logical inference, at tiny budgets."""

from __future__ import annotations

import random
from pathlib import Path
from typing import Any

import pytest
import torch

from structbench import registry
from structbench.baselines.neural import checkpoint
from structbench.baselines.neural.classifier.batching import make_batch
from structbench.baselines.neural.classifier.model import (
    SEP,
    BowLogic,
    FanLogic,
    FanNumber,
    LstmLogic,
    LstmNumber,
    NeuralClassifier,
    evenly_spaced,
)
from structbench.baselines.neural.classifier.nets import (
    BowLogicNet,
    FanLogicNet,
    FanNumberNet,
    LstmLogicNet,
    LstmNumberNet,
    PairNet,
)
from structbench.baselines.neural.classifier.settings import (
    BowLogicSettings,
    ClassifierSettings,
    FanLogicSettings,
    FanNumberSettings,
    LstmLogicSettings,
    NumberSettings,
)
from structbench.baselines.neural.settings import BUDGETS, load_recipe, resolve_settings
from structbench.errors import UserError
from structbench.runs.key import ModelKey
from structbench.runs.request import ModelRequest, build_model
from structbench.runs.runner import Runner
from structbench.specs import Example, ModelSpec, Split
from structbench.store import Store, run_statistics
from tests.suites.agreement.test_linzen import PATH as LINZEN
from tests.suites.agreement.test_linzen import write_fixture

NUMBER_SUITE = "agreement-attractors-number@1.0.0"
LOGIC_SUITE = "logic-inference-le3@1.0.0"
LINZEN_ROWS = 3000
"""Fixture rows: 10% of them train."""
TOY_DRAW = 7
"""The toy splits' draw: keeps their checkpoints apart from those of the suites' own data."""
TINY_NUMBER: dict[str, Any] = {"d_model": 16, "layers": 1, "dropout": 0.0, "batch_size": 16, "threads": 1}
TINY_FAN: dict[str, Any] = {**TINY_NUMBER, "heads": 2, "feedforward": 32}
TINY_LOGIC: dict[str, Any] = {"d_model": 16, "mlp_hidden": 16, "batch_size": 16, "threads": 1}
MODELS: dict[str, tuple[type[NeuralClassifier], str, dict[str, Any]]] = {
    "lstm-number": (LstmNumber, NUMBER_SUITE, TINY_NUMBER),
    "fan-number": (FanNumber, NUMBER_SUITE, TINY_FAN),
    "lstm-logic": (LstmLogic, LOGIC_SUITE, {**TINY_LOGIC, "layers": 1}),
    "fan-logic": (FanLogic, LOGIC_SUITE, {**TINY_LOGIC, "layers": 1, "heads": 2, "feedforward": 32}),
    "bow-logic": (BowLogic, LOGIC_SUITE, TINY_LOGIC),
}


def toy_split(suite: str, name: str, rows: list[tuple[list[str], str]]) -> Split:
    role = "train" if name == "train" else "dev"
    examples = [Example(id=f"{name}-{i}", input=tokens, label=label) for i, (tokens, label) in enumerate(rows)]
    return Split(suite=suite, name=name, role=role, draw=TOY_DRAW, examples=examples)


def number_rows(n: int, seed: int) -> list[tuple[list[str], str]]:
    """`the key(s) [very] [old]`: the subject's number decides, whatever follows it."""
    rng = random.Random(seed)
    rows = []
    for _ in range(n):
        plural = rng.random() < 0.5
        filler = rng.sample(["very", "old", "big"], rng.randint(0, 2))
        rows.append((["the", "keys" if plural else "key", *filler], "plural" if plural else "singular"))
    return rows


def logic_rows(n: int, seed: int) -> list[tuple[list[str], str]]:
    """`x <sep> y`, one variable a side: `=` when they are the same variable, `#` otherwise (half each)."""
    rng = random.Random(seed)
    rows = []
    for i in range(n):
        x = rng.choice("abcdef")
        y = x if i % 2 else rng.choice([v for v in "abcdef" if v != x])
        rows.append(([x, SEP, y], "=" if x == y else "#"))
    return rows


def toy(name: str) -> tuple[Split, Split]:
    suite = MODELS[name][1]
    rows = number_rows if suite == NUMBER_SUITE else logic_rows
    return toy_split(suite, "train", rows(240, 0)), toy_split(suite, "dev", rows(60, 1))


def fitted(name: str, seed: int = 0, **overrides: Any) -> NeuralClassifier:
    cls, _, tiny = MODELS[name]
    model = cls(**{**tiny, "epochs": 12, "lr": 0.01, **overrides})
    model.log = lambda message: None
    train, dev = toy(name)
    model.fit(train, dev, seed=seed)
    return model


def accuracy(model: NeuralClassifier, split: Split) -> float:
    labels = sorted({str(e.label) for e in split.examples})
    answers = model.classify([e.input for e in split.examples], labels)
    return sum(a == e.label for a, e in zip(answers, split.examples, strict=True)) / len(split.examples)


@pytest.mark.parametrize("name", list(MODELS))
def test_every_budget_of_the_recipe_resolves_and_cites_the_thesis(name: str) -> None:
    model = build_model(ModelSpec(name=name))
    assert isinstance(model, MODELS[name][0])
    _, recipe = load_recipe(name, "default")
    assert "Tran 2018" in recipe.citation and "§5." in recipe.citation
    for suite in ("agreement-attractors-number", "logic-bowman-le6", "logic-inference-le3"):
        for budget in BUDGETS:
            settings, _ = resolve_settings(model.settings_class, name, suite, budget, {})
            assert settings.threads == 1
    configuration = ModelKey.of("logic-bowman-le6", ModelRequest.of(ModelSpec(name=name))).facts["configuration"]
    assert configuration["budget"] == "cpu-small"
    assert not {"device", "teacher_forcing", "guidance", "max_length"} & set(configuration)
    assert configuration["threads"] == 1  # the thread count keys a run


def test_the_paper_budgets_carry_the_thesis_settings() -> None:
    """§5.5.2: 4 layers, dropout 0.2, d = 128, 2 heads, Adam 0.001; §5.2: d_f = 2d."""
    number, _ = resolve_settings(NumberSettings, "lstm-number", NUMBER_SUITE, "paper", {})
    fan, _ = resolve_settings(FanNumberSettings, "fan-number", NUMBER_SUITE, "paper", {})
    assert (number.layers, number.dropout, number.d_model, number.lr) == (4, 0.2, 128, 0.001)
    assert (fan.layers, fan.dropout, fan.d_model, fan.heads, fan.feedforward) == (4, 0.2, 128, 2, 256)
    lstm, _ = resolve_settings(LstmLogicSettings, "lstm-logic", LOGIC_SUITE, "paper", {})
    assert lstm.layers == 2  # §5.6.2: "a 2-layer LSTM with skip connections"


def test_settings_errors_name_the_problem() -> None:
    with pytest.raises(UserError, match="only apply to decoders"):
        LstmNumber(teacher_forcing=0.5)
    with pytest.raises(UserError, match="no setting 'pooling'"):
        LstmLogic(pooling="max")
    with pytest.raises(UserError, match="multiple of heads"):
        FanNumber.configuration(NUMBER_SUITE, d_model=10, heads=3)
    with pytest.raises(UserError, match="pooling"):
        BowLogic.configuration(LOGIC_SUITE, pooling="median")


@pytest.mark.parametrize("name", list(MODELS))
def test_training_on_a_trivial_toy_split_learns_it(name: str) -> None:
    model = fitted(name)
    _, dev = toy(name)
    assert accuracy(model, dev) >= 0.9
    assert model.convergence()["reached"]  # training stopped at the recipe's criterion, and says so
    stats = model.statistics()
    assert stats["dev_accuracy"] == pytest.approx(accuracy(model, dev))  # the kept epoch is the one answering
    evaluations = model.history["evaluations"]
    best = max(evaluations, key=lambda e: (e["dev_accuracy"], -e["dev_loss"]))
    assert model.history["selected_epoch"] == best["epoch"]
    compute = model.compute()
    assert compute["device"] == "cpu" and isinstance(compute["parameters"], int) and compute["parameters"] > 0


@pytest.mark.parametrize("name", ["fan-number", "bow-logic"])
def test_answers_are_labels_asked_for(name: str) -> None:
    model = fitted(name, epochs=1)
    _, dev = toy(name)
    inputs = [e.input for e in dev.examples]
    labels = sorted({str(e.label) for e in dev.examples})
    assert set(model.classify(inputs, labels)) <= set(labels)
    assert model.classify(inputs, [labels[0], "never-trained"]) == [labels[0]] * len(inputs)
    assert model.classify([], labels) == []


def test_an_untrained_label_scores_wrong_on_dev_but_does_not_break_training() -> None:
    train, dev = toy("lstm-number")
    odd = Example(id="dev-odd", input=["the", "key"], label="dual")
    dev = dev.model_copy(update={"examples": [*dev.examples, odd]})
    model = LstmNumber(**TINY_NUMBER, epochs=1)
    model.log = lambda message: None
    model.fit(train, dev, seed=0)
    assert model.labels == ["plural", "singular"]
    assert 0.0 <= model.statistics()["dev_accuracy"] <= 60 / 61


def test_same_seed_same_numbers_another_seed_other_numbers(structbench_environment: Path) -> None:
    first = fitted("fan-logic", seed=3, epochs=2)
    for path in (structbench_environment / "checkpoints").rglob("seed3.pt"):
        path.rename(path.with_suffix(".old"))  # retrain from scratch rather than reload
    again = fitted("fan-logic", seed=3, epochs=2)
    other = fitted("fan-logic", seed=4, epochs=2)
    assert first.net is not None and again.net is not None and other.net is not None
    pairs = zip(first.net.state_dict().values(), again.net.state_dict().values(), strict=True)
    assert all(torch.equal(a, b) for a, b in pairs)
    untimed = [{k: v for k, v in e.items() if k != "seconds"} for e in first.history["evaluations"]]
    assert untimed == [{k: v for k, v in e.items() if k != "seconds"} for e in again.history["evaluations"]]
    pairs = zip(first.net.state_dict().values(), other.net.state_dict().values(), strict=True)
    assert not all(torch.equal(a, b) for a, b in pairs)


def test_a_repeated_run_reloads_its_checkpoint(structbench_environment: Path) -> None:
    first = fitted("lstm-number", seed=5, epochs=2)
    files = sorted((structbench_environment / "checkpoints").rglob("lstm-number/*/seed5.pt"))
    assert len(files) == 1
    _, meta = checkpoint.load(files[0])  # weights_only=True: tensors, strings and numbers only
    assert meta["labels"] == ["plural", "singular"] and meta["vocabulary"][:4] == ["<pad>", "<sos>", "<eos>", "<unk>"]
    messages: list[str] = []
    reloaded = LstmNumber(**{**TINY_NUMBER, "epochs": 2, "lr": 0.01})
    reloaded.log = messages.append
    train, dev = toy("lstm-number")
    reloaded.fit(train, dev, seed=5)
    assert messages and "reloaded the trained weights" in messages[0]
    assert reloaded.statistics() == first.statistics()
    inputs = [e.input for e in dev.examples]
    assert reloaded.classify(inputs, ["singular", "plural"]) == first.classify(inputs, ["singular", "plural"])
    retrained = LstmNumber(**{**TINY_NUMBER, "epochs": 2, "lr": 0.02})  # other settings: another checkpoint
    retrained.log = messages.append
    retrained.fit(train, dev, seed=5)
    assert (
        len(messages) == 1 and len(list((structbench_environment / "checkpoints").rglob("lstm-number/*/seed5.pt"))) == 2
    )


def test_train_limit_draws_a_seeded_subset_and_dev_limit_spans_the_dev_split() -> None:
    train, _ = toy("lstm-number")
    model = LstmNumber(train_limit=50)
    settings = ClassifierSettings(train_limit=50)
    subset = model.training_examples(train, settings, 0)
    assert len(subset) == 50 and subset == model.training_examples(train, settings, 0)
    assert subset != model.training_examples(train, settings, 1)
    assert len(model.training_examples(train, ClassifierSettings(), 0)) == 240
    assert evenly_spaced(list(range(10)), 4) == [0, 2, 5, 7]
    assert evenly_spaced(list(range(3)), 4) == [0, 1, 2]
    assert evenly_spaced(list(range(3)), None) == [0, 1, 2]


def ids(*rows: list[int]) -> torch.Tensor:
    """[B, T] the rows' token ids, padded on the right."""
    (padded,) = make_batch([((row,), 0) for row in rows], range(len(rows))).segments
    return padded


@pytest.mark.parametrize("net_class", [LstmNumberNet, FanNumberNet])
def test_a_prefix_reads_the_same_alone_and_beside_a_longer_one(net_class: type[torch.nn.Module]) -> None:
    settings = FanNumberSettings(d_model=16, layers=2, heads=2, feedforward=32, dropout=0.0)
    torch.manual_seed(0)
    net = net_class(settings, 12, 2).eval()
    short, long = [4, 5, 6], [7, 8, 9, 10, 11, 4]
    with torch.no_grad():
        alone = net((ids(short),))
        padded = net((ids(short, long),))
        # a later token (here padding) never changes the state the prefix ends in
        assert torch.allclose(alone[0], padded[0], atol=1e-5)
        assert not torch.allclose(net((ids([4, 5, 7]),)), alone, atol=1e-4)  # but the prefix's own last word does


def pair_nets() -> list[PairNet]:
    torch.manual_seed(0)
    return [
        LstmLogicNet(LstmLogicSettings(d_model=16, mlp_hidden=16, layers=2), 12, 7).eval(),
        FanLogicNet(FanLogicSettings(d_model=16, mlp_hidden=16, layers=1, feedforward=32, dropout=0.0), 12, 7).eval(),
        BowLogicNet(BowLogicSettings(d_model=16, mlp_hidden=16, pooling="max"), 12, 7).eval(),
    ]


@pytest.mark.parametrize("net", pair_nets(), ids=["lstm", "fan", "bow"])
def test_premise_and_hypothesis_are_encoded_separately(net: PairNet) -> None:
    premise, hypothesis, other = [4, 5, 6], [7, 8], [9, 10, 11, 4, 5]
    with torch.no_grad():
        features = net.features((ids(premise, premise), ids(hypothesis, other)))
        width = net.encoder.width
        alone = net.encoder(ids(premise))[0]
        # the premise's half is the premise's own encoding, whatever hypothesis (and padding) stands beside it
        assert torch.allclose(features[0, :width], alone, atol=1e-5)
        assert torch.allclose(features[1, :width], alone, atol=1e-5)
        assert torch.allclose(features[0, width:], net.encoder(ids(hypothesis))[0], atol=1e-5)
        assert not torch.allclose(features[0, width:], features[1, width:], atol=1e-4)
        swapped = net.features((ids(hypothesis), ids(premise)))
        assert torch.allclose(swapped[0], torch.cat([features[0, width:], features[0, :width]]), atol=1e-5)
        assert not torch.allclose(swapped[0], features[0], atol=1e-4)  # the classifier sees which side is which


def test_bag_of_words_ignores_order_and_its_poolings_differ() -> None:
    sentence, shuffled = [4, 5, 6, 4, 9], [9, 4, 6, 5, 4]
    encodings = {}
    for pooling in ("sum", "mean", "max"):
        torch.manual_seed(0)  # the same embeddings for every pooling
        net = BowLogicNet(BowLogicSettings(d_model=8, mlp_hidden=8, pooling=pooling), 12, 7).eval()
        with torch.no_grad():
            net.encoder.embedding.weight.sub_(3.0)  # every value negative: padding's zeros must not win a max
            both = net.encoder(ids(sentence, shuffled))
            assert torch.allclose(both[0], both[1], atol=1e-6)  # word order changes nothing
            padded = net.encoder(ids([4, 5], sentence))[0]
            assert torch.allclose(padded, net.encoder(ids([4, 5]))[0], atol=1e-6)
            encodings[pooling] = both[0]
    embedding = net.encoder.embedding.weight.detach()
    assert torch.allclose(encodings["sum"], embedding[sentence].sum(dim=0), atol=1e-5)
    assert torch.allclose(encodings["mean"], embedding[sentence].mean(dim=0), atol=1e-5)
    assert torch.allclose(encodings["max"], embedding[sentence].max(dim=0).values, atol=1e-5)
    assert not torch.allclose(encodings["sum"], encodings["mean"]) and not torch.allclose(
        encodings["mean"], encodings["max"]
    )


def test_the_fan_pools_with_two_trained_queries() -> None:
    """§5.6.2: z_i = softmax(q_i Y^T / sqrt(d)) Y, z = [z_1, z_2]."""
    (net,) = [n for n in pair_nets() if isinstance(n, FanLogicNet)]
    encoder = net.encoder
    row = ids([4, 5, 6])
    with torch.no_grad():
        states = encoder.encoder(encoder.positions(encoder.embedding(row)))
        weights = torch.softmax(encoder.queries @ states[0].T / 16**0.5, dim=-1)
        assert torch.allclose(encoder(row)[0], (weights @ states[0]).reshape(-1), atol=1e-5)
    assert encoder.width == 32 and encoder.queries.requires_grad


def only_run(runner: Runner) -> dict[str, Any]:
    runs = runner.store.runs()
    return runner.store.run_record(int(runs["id"].max()))


@pytest.mark.parametrize(
    ("suite", "name", "params"),
    [
        ("agreement-attractors-number", "lstm-number", {**TINY_NUMBER, "train_limit": 600}),
        ("agreement-attractors-number", "fan-number", {**TINY_FAN, "train_limit": 600}),
        ("logic-inference-le3", "lstm-logic", {**TINY_LOGIC, "layers": 1, "train_limit": 600}),
        ("logic-inference-le3", "fan-logic", {**TINY_LOGIC, "layers": 1, "feedforward": 32, "train_limit": 600}),
        ("logic-inference-le3", "bow-logic", {**TINY_LOGIC, "pooling": "mean", "train_limit": 600}),
    ],
)
def test_every_classifier_runs_through_the_harness(
    runner: Runner, suite: str, name: str, params: dict[str, Any]
) -> None:
    spec = ModelSpec(name=name, params={**params, "epochs": 1, "dev_limit": 200})
    record = runner.evaluate(suite, spec, [0])
    assert record.status == {"0": "done"}
    labels = set(registry.suite(suite).spec.labels or [])
    stored = runner.store.stored_predictions(int(runner.store.runs()["id"].max()))
    assert set(stored) == set(record.scores)
    assert all(set(predictions) <= labels for _, predictions, _ in stored.values())
    if suite.startswith("logic"):
        assert {f"ops-{k:02d}" for k in range(13)} <= set(record.scores)
    else:
        assert {f"attractors-{k}" for k in range(5)} <= set(record.scores)
    statistics = run_statistics(only_run(runner)["environment"])
    assert set(statistics) == {"dev_accuracy"} and 0.0 <= statistics["dev_accuracy"] <= 1.0


def test_a_pair_model_is_not_applicable_to_single_sentences(runner: Runner) -> None:
    record = runner.evaluate("agreement-attractors-number", ModelSpec(name="bow-logic", params=TINY_LOGIC), [0])
    assert record.status == {"0": "n/a"}


def test_lstm_number_learns_the_linzen_fixture(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The user-supplied Linzen corpus (here its test fixture) through the harness: the subject decides."""
    monkeypatch.setenv("STRUCTBENCH_HOME", str(tmp_path / "home"))  # the fixture's own local manifest
    source = write_fixture(tmp_path / "data", rows=LINZEN_ROWS)
    params = {**TINY_NUMBER, "d_model": 32, "epochs": 6, "lr": 0.01, "dev_limit": None}
    with Store(tmp_path / "r.sqlite") as store:
        runner = Runner(store, source_dir=source, progress=False)
        runner.log = lambda message: None
        record = runner.evaluate(LINZEN, ModelSpec(name="lstm-number", params=params), [0])
    assert record.status == {"0": "done"}
    assert record.scores["attractors-0"]["accuracy"].mean >= 0.9
