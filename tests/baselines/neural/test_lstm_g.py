"""LSTM-g (Monner 2011, ch. 2) and its BPTT twin: the local rule against autograd, the original LSTM
algorithm, Monner's weight count, both answering modes, seeding, and a run through the harness."""

from __future__ import annotations

import random
from pathlib import Path
from typing import Any

import numpy as np
import pytest
import torch
import torch.nn.functional as F

from structbench import registry
from structbench.baselines.neural.lstm_g.model import LstmBptt, LstmG, LstmGModel
from structbench.baselines.neural.lstm_g.nets import LocalLearner, LstmNetwork
from structbench.baselines.neural.lstm_g.settings import Architecture, Rule
from structbench.runs.runner import Runner
from structbench.specs import Example, ModelSpec, Split
from structbench.store import run_statistics
from tests.support.helpers import check_stored_run

pytestmark = pytest.mark.usefixtures("one_torch_thread")

ALPHA = 0.1
TARGETS, DISTRACTORS, PROMPTS = ("t1", "t2", "t3", "t4"), ("d1", "d2", "d3", "d4"), ("p1", "p2")


def tiny_network(peepholes: bool, recurrent: bool = False, direct: bool = True, seed: int = 1) -> LstmNetwork:
    """3 inputs, 2 blocks, 2 outputs, weights large enough that every term matters."""
    architecture = Architecture(inputs=3, blocks=2, outputs=2, peepholes=peepholes, direct=direct, recurrent=recurrent)
    net = LstmNetwork(architecture)
    net.initialise(np.random.default_rng(seed), 0.8)
    return net


def sequence(steps: int = 6, seed: int = 2) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    return rng.uniform(0.0, 1.0, (steps, 3)), rng.integers(0, 2, (steps, 2)).astype(np.float64)


def local_changes(net: LstmNetwork, rule: Rule, x: np.ndarray, y: np.ndarray) -> dict[str, np.ndarray]:
    """The summed weight changes of a sequence, weights held fixed (updates not applied)."""
    learner = LocalLearner(net, ALPHA, rule)
    learner.reset()
    for t in range(len(x)):
        learner.step(x[t], y[t], apply=False)
    return learner.pending


def truncated_changes(net: LstmNetwork, x: np.ndarray, y: np.ndarray) -> dict[str, np.ndarray]:
    """-α times the autograd gradient of the per-step cross-entropies, previous-step activations detached
    on every recurrent or peephole connection, the cells' self-connection s_{t-1} kept in the graph."""
    out, _ = net.run(torch.from_numpy(x).unsqueeze(0), truncate=True)
    loss = F.binary_cross_entropy_with_logits(out[0], torch.from_numpy(y), reduction="sum")
    names = [name for name, _ in net.named_parameters()]
    gradients = torch.autograd.grad(loss, list(net.parameters()))
    return {name: -ALPHA * g.numpy() for name, g in zip(names, gradients, strict=True)}


def largest_difference(a: dict[str, np.ndarray], b: dict[str, np.ndarray]) -> float:
    assert a.keys() == b.keys()
    return max(float(np.abs(a[name] - b[name]).max()) for name in a)


def original_lstm(net: LstmNetwork, x: np.ndarray, y: np.ndarray) -> dict[str, np.ndarray]:
    """Summed weight changes of the LSTM algorithm, eqs. 2.1-2.13, transcribed unit by unit (the
    peepholes being further inputs of the gates, from f(ŝ_c) into ι and φ, f(s_c) into ω)."""
    w = {name: p.detach().numpy().copy() for name, p in net.named_parameters()}
    blocks, outputs, inputs = w["cell"].shape[0], w["out_cell"].shape[0], w["cell"].shape[1]
    change = {name: np.zeros_like(value) for name, value in w.items()}

    def f(v: float) -> float:
        return 1.0 / (1.0 + np.exp(-v))

    state, activation = [0.0] * blocks, [0.0] * blocks
    eps_c = [[0.0] * inputs for _ in range(blocks)]
    eps_i = [[0.0] * (inputs + 1) for _ in range(blocks)]  # the last column: the peephole
    eps_f = [[0.0] * (inputs + 1) for _ in range(blocks)]
    for t in range(len(x)):
        u = list(x[t])
        y_i, y_f, x_c, y_o, y_c, s_new, a_new = [], [], [], [], [], [], []
        for j in range(blocks):
            x_i = sum(w["gates"][0, j, k] * u[k] for k in range(inputs)) + w["peepholes"][0, j] * activation[j]
            x_f = sum(w["gates"][1, j, k] * u[k] for k in range(inputs)) + w["peepholes"][1, j] * activation[j]
            y_i.append(f(x_i))  # (2.1-2.2)
            y_f.append(f(x_f))
            x_c.append(sum(w["cell"][j, k] * u[k] for k in range(inputs)))
            s_new.append(y_f[j] * state[j] + y_i[j] * x_c[j])  # (2.3)
            a_new.append(f(s_new[j]))
            x_o = sum(w["gates"][2, j, k] * u[k] for k in range(inputs)) + w["peepholes"][2, j] * a_new[j]
            y_o.append(f(x_o))
            y_c.append(y_o[j] * a_new[j])  # (2.4)
            for k in range(inputs + 1):
                source = u[k] if k < inputs else activation[j]
                if k < inputs:
                    eps_c[j][k] = y_f[j] * eps_c[j][k] + y_i[j] * u[k]  # (2.6)
                eps_f[j][k] = y_f[j] * eps_f[j][k] + state[j] * y_f[j] * (1 - y_f[j]) * source  # (2.7)
                eps_i[j][k] = y_f[j] * eps_i[j][k] + x_c[j] * y_i[j] * (1 - y_i[j]) * source  # (2.8)
        y_out = [
            f(
                sum(w["out_cell"][m, j] * y_c[j] for j in range(blocks))
                + sum(w["out_direct"][m, k] * u[k] for k in range(inputs))
            )
            for m in range(outputs)
        ]
        delta_out = [y[t][m] - y_out[m] for m in range(outputs)]  # (2.10)
        for j in range(blocks):
            back = sum(delta_out[m] * w["out_cell"][m, j] for m in range(outputs))
            delta_o = y_o[j] * (1 - y_o[j]) * a_new[j] * back  # (2.11)
            delta_c = a_new[j] * (1 - a_new[j]) * y_o[j] * back  # (2.12), shared by ι, φ, c
            for k in range(inputs):
                change["gates"][2, j, k] += ALPHA * delta_o * u[k]  # (2.13) with (2.5)
                change["cell"][j, k] += ALPHA * delta_c * eps_c[j][k]
                change["gates"][0, j, k] += ALPHA * delta_c * eps_i[j][k]
                change["gates"][1, j, k] += ALPHA * delta_c * eps_f[j][k]
            change["peepholes"][2, j] += ALPHA * delta_o * a_new[j]
            change["peepholes"][0, j] += ALPHA * delta_c * eps_i[j][inputs]
            change["peepholes"][1, j] += ALPHA * delta_c * eps_f[j][inputs]
            for m in range(outputs):
                change["out_cell"][m, j] += ALPHA * delta_out[m] * y_c[j]  # (2.13) with (2.5)
        for m in range(outputs):
            for k in range(inputs):
                change["out_direct"][m, k] += ALPHA * delta_out[m] * u[k]
        state, activation = s_new, a_new
    return change


def test_lstm_g_equals_truncated_gradients_on_the_canonical_lstm(capsys: pytest.CaptureFixture[str]) -> None:
    """Monner §2.5: without peepholes LSTM-g's weight changes are LSTM's, the gradient of each step's
    error through the cells' state alone; both rules agree there."""
    x, y = sequence()
    differences = []
    for recurrent in (False, True):
        for direct in (False, True):
            net = tiny_network(peepholes=False, recurrent=recurrent, direct=direct)
            expected = truncated_changes(net, x, y)
            for rule in ("lstm-g", "lstm"):
                differences.append(largest_difference(local_changes(net, rule, x, y), expected))
    largest = max(differences)
    with capsys.disabled():
        print(f"\nLSTM-g vs truncated autograd, no peepholes: largest |Δw difference| = {largest:.3e}")
    assert largest < 1e-10
    assert min(float(np.abs(v).max()) for v in truncated_changes(tiny_network(False), x, y).values()) > 1e-3


def test_peepholes_add_lstm_g_error_term_and_lstm_is_the_original_algorithm(
    capsys: pytest.CaptureFixture[str],
) -> None:
    """Monner §2.6: with peepholes LSTM-g still follows the truncated gradient (its extra error term,
    eq. 2.124, is that gradient's path over the output gate's peephole), while rule=lstm drops the
    term (eq. 2.125) and reproduces eqs. 2.5-2.13 unit by unit."""
    x, y = sequence()
    net = tiny_network(peepholes=True)
    lstm_g = local_changes(net, "lstm-g", x, y)
    lstm = local_changes(net, "lstm", x, y)
    with_peepholes = largest_difference(lstm_g, truncated_changes(net, x, y))
    against_original = largest_difference(lstm, original_lstm(net, x, y))
    with capsys.disabled():
        print(
            f"\nwith peepholes: lstm-g vs autograd {with_peepholes:.3e}; lstm vs eqs. 2.5-2.13 {against_original:.3e}"
        )
    assert with_peepholes < 1e-10
    assert against_original < 1e-10
    assert largest_difference(lstm_g, lstm) > 1e-4
    assert np.array_equal(lstm_g["out_cell"], lstm["out_cell"])  # the extra term reaches cells and their gates only
    assert np.array_equal(lstm_g["gates"][2], lstm["gates"][2])
    assert not np.allclose(lstm_g["cell"], lstm["cell"])
    assert not np.allclose(lstm_g["gates"][:2], lstm["gates"][:2])


def test_numpy_and_torch_dynamics_agree_and_updates_are_applied() -> None:
    x, y = sequence(steps=8)
    net = tiny_network(peepholes=True, recurrent=True)
    with torch.no_grad():
        expected = torch.sigmoid(net.run(torch.from_numpy(x).unsqueeze(0))[0][0]).numpy()
    learner = LocalLearner(net, ALPHA)
    outputs = np.stack([learner.step(x[t], None) for t in range(len(x))])
    assert np.abs(outputs - expected).max() < 1e-12
    before = {name: p.detach().clone() for name, p in net.named_parameters()}
    learner.reset()
    learner.step(x[0], y[0])
    assert all(not torch.equal(before[name], p) for name, p in net.named_parameters())


def test_the_dsr_network_has_monners_416_weights() -> None:
    architecture = Architecture(inputs=10, blocks=8, outputs=4)
    assert architecture.weight_count() == 416  # §2.7.1
    assert sum(p.numel() for p in LstmNetwork(architecture).parameters()) == 416
    assert Architecture(inputs=10, blocks=8, outputs=4, peepholes=False, direct=False).weight_count() == 416 - 24 - 40


def dsr_like(count: int, seed: int, distractors: int = 6) -> list[Example]:
    """Short DSR trials: `distractors` + 2 symbols, two targets among them, then the prompts."""
    rng = random.Random(seed)
    examples = []
    for i in range(count):
        symbols = [rng.choice(DISTRACTORS) for _ in range(distractors + 2)]
        first, second = sorted(rng.sample(range(len(symbols)), 2))
        targets = [rng.choice(TARGETS), rng.choice(TARGETS)]
        symbols[first], symbols[second] = targets
        examples.append(Example(id=f"x{i}", input=[*symbols, *PROMPTS], target=targets))
    return examples


def reverse_pairs(count: int, seed: int) -> list[Example]:
    """A toy output-phase task: two or three symbols, answered reversed."""
    rng = random.Random(seed)
    examples = []
    for i in range(count):
        tokens = [rng.choice("abc") for _ in range(rng.choice((2, 3)))]
        examples.append(Example(id=f"r{i}", input=tokens, target=[t.upper() for t in reversed(tokens)]))
    return examples


def split(name: str, examples: list[Example], suite: str) -> Split:
    return Split(suite=suite, name=name, role="train" if name == "train" else "dev", draw=0, examples=examples)


def fitted(
    cls: type[LstmGModel], train: list[Example], dev: list[Example], seed: int = 0, **settings: Any
) -> LstmGModel:
    model = cls(**settings)
    model.log = lambda message: None
    model.fit(split("train", train, "dsr"), split("dev", dev, "dsr"), seed=seed)
    return model


SHORT_DSR: dict[str, Any] = {
    "answer_at": ["p1", "p2"],
    "alpha": 0.3,
    "criterion": 0.9,
    "check_every": 200,
    "max_trials": 20_000,
}


@pytest.mark.long_running
@pytest.mark.parametrize("cls", [LstmG, LstmBptt])
def test_answer_at_mode_learns_short_recall(cls: type[LstmGModel], fresh_home: Path) -> None:
    train, dev = dsr_like(3000, 1, distractors=2), dsr_like(300, 2, distractors=2)
    model = fitted(cls, train, dev, **SHORT_DSR)
    statistics = model.statistics()
    assert statistics["criterion_reached"] == 1.0
    assert statistics["trials_to_criterion"] == statistics["trials_trained"] < SHORT_DSR["max_trials"]
    assert statistics["trials_to_criterion"] % SHORT_DSR["check_every"] == 0
    assert statistics["dev_strict_accuracy"] >= 0.9
    answers = model.transduce([e.input for e in dev])
    assert all(len(a) == 2 for a in answers)
    assert sum(a == e.target for a, e in zip(answers, dev, strict=True)) / len(dev) >= 0.9


def test_answer_at_mode_reports_a_missed_criterion(fresh_home: Path) -> None:
    model = fitted(LstmG, dsr_like(200, 1), dsr_like(100, 2), **{**SHORT_DSR, "max_trials": 300, "check_every": 100})
    assert model.statistics() == {"trials_trained": 300.0, "dev_strict_accuracy": 0.0, "criterion_reached": 0.0}


@pytest.mark.parametrize("cls", [LstmG, LstmBptt])
def test_output_phase_mode_learns_to_reverse(cls: type[LstmGModel], fresh_home: Path) -> None:
    train, dev = reverse_pairs(500, 1), reverse_pairs(100, 2)
    settings = {"answer_at": None, "blocks": 8, "recurrent": True, "alpha": 0.3, "criterion": 0.95, "check_every": 250}
    model = fitted(cls, train, dev, **settings, max_trials=15_000)
    assert model.statistics()["criterion_reached"] == 1.0
    answers = model.transduce([e.input for e in dev])
    assert sum(a == e.target for a, e in zip(answers, dev, strict=True)) / len(dev) >= 0.95
    assert model.transduce([]) == []


@pytest.mark.parametrize("cls", [LstmG, LstmBptt])
def test_same_seed_same_weights_and_checkpoint_reuse(
    cls: type[LstmGModel], fresh_home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:

    train, dev = dsr_like(300, 1), dsr_like(50, 2)
    settings = {**SHORT_DSR, "max_trials": 200, "check_every": 100}
    first = fitted(cls, train, dev, seed=3, **settings)
    for path in (fresh_home / "checkpoints").rglob("seed3.pt"):
        path.unlink()  # retrain from scratch: a CPU run repeats exactly
    again = fitted(cls, train, dev, seed=3, **settings)
    other = fitted(cls, train, dev, seed=4, **settings)
    assert first.net is not None and again.net is not None and other.net is not None
    for (name, a), b, c in zip(
        first.net.named_parameters(), again.net.parameters(), other.net.parameters(), strict=True
    ):
        assert torch.equal(a, b), name
        assert not torch.equal(a, c), name
    assert again.statistics() == first.statistics()

    def no_training(*args: object, **kwargs: object) -> None:
        raise AssertionError("trained again instead of reloading the checkpoint")

    monkeypatch.setattr(LstmGModel, "_train", no_training)
    reloaded = fitted(cls, train, dev, seed=3, **settings)
    assert reloaded.net is not None
    assert all(torch.equal(a, b) for a, b in zip(first.net.parameters(), reloaded.net.parameters(), strict=True))
    assert reloaded.statistics() == first.statistics()
    assert reloaded.transduce([e.input for e in dev]) == first.transduce([e.input for e in dev])


def test_same_initial_weights_for_both_rules() -> None:
    """lstm-g, rule=lstm and lstm-bptt start a seed from the same network."""
    net_a, net_b = (LstmNetwork(Architecture(inputs=10, blocks=8, outputs=4)) for _ in range(2))
    net_a.initialise(np.random.default_rng(7), 0.1)
    net_b.initialise(np.random.default_rng(7), 0.1)
    values = torch.cat([p.detach().flatten() for p in net_a.parameters()])
    assert torch.equal(values, torch.cat([p.flatten() for p in net_b.parameters()]))
    assert float(values.min()) >= -0.1 and float(values.max()) < 0.1


def test_recipes_give_monners_dsr_settings() -> None:
    for cls in (LstmG, LstmBptt):
        for budget in ("paper", "cpu-small"):
            settings = cls.configuration("dsr", budget=budget)
            assert (settings["blocks"], settings["alpha"], settings["init_range"]) == (8, 0.1, 0.1)
            assert settings["peepholes"] and settings["direct"] and not settings["recurrent"]
            assert settings["answer_at"] == ["p1", "p2"] and settings["criterion"] == 0.95
            assert settings["threads"] == 1  # the thread count keys a run
    assert LstmG.configuration("dsr")["rule"] == "lstm-g"
    assert LstmG.configuration("dsr", rule="lstm")["rule"] == "lstm"
    assert LstmG.configuration("grounded-weak", budget="paper")["alpha"] == 0.01


@pytest.mark.parametrize("cls", [LstmG, LstmBptt])
def test_grounded_paper_budget_trains_monners_3_million_pairs_without_a_criterion(cls: type[LstmGModel]) -> None:
    """Monner §4.2.4 trains every grounded network on 3 million pairs with no stopping rule (the 95%
    criterion is §2.7.1's, for DSR): the paper budget trains them all; cpu-small's criterion is the project's."""
    paper = cls.configuration("grounded-weak", budget="paper")
    assert (paper["max_trials"], paper["criterion"], paper["alpha"], paper["blocks"]) == (3_000_000, None, 0.01, 90)
    assert cls.configuration("grounded-weak", budget="cpu-small")["criterion"] == 0.95


@pytest.mark.parametrize("name", ["lstm-g", "lstm-bptt"])
def test_through_the_runner(runner: Runner, name: str) -> None:
    params = {"max_trials": 300, "check_every": 100, "dev_limit": 200}
    record = runner.evaluate("dsr", ModelSpec(name=name, params=params), [0])
    assert record.status == {"0": "done"}
    outputs = check_stored_run(runner, "dsr")
    assert all(len(answer) == 2 for answer in outputs["test"])
    runs = runner.store.runs().set_index("id")
    statistics = run_statistics(str(runs.loc[int(runs.index.max()), "environment"]))
    assert statistics["criterion_reached"] == 0.0 and statistics["trials_trained"] == 300.0
    suite = registry.suite("dsr")
    assert set(record.scores) == {s.name for s in suite.spec.splits_with_role("test")}
