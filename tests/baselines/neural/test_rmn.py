"""The Recurrent Memory Network (Tran 2018 ch. 4): causality, the memory window, eqs. 4.1-4.7, the harness."""

from __future__ import annotations

import math

import pytest
import torch

from structbench import registry
from structbench.analysis.rescore import rescore
from structbench.baselines.neural.rmn.model import Rmn, RmnSettings
from structbench.baselines.neural.rmn.nets import MemoryBlock, RecurrentMemoryNetwork, memory_windows
from structbench.baselines.neural.settings import BUDGETS
from structbench.baselines.neural.vocab import PAD
from structbench.data import freeze
from structbench.errors import UserError
from structbench.runs.key import ModelKey
from structbench.runs.request import ModelRequest, build_model
from structbench.runs.runner import Runner
from structbench.specs import ModelSpec
from structbench.store import run_statistics
from structbench.suites.completion.grammar import CONSTRAINTS

pytestmark = pytest.mark.usefixtures("one_torch_thread")


VOCAB = 30
N = 4
COMPLETION = "sentence-completion"


def network(**settings: object) -> RecurrentMemoryNetwork:
    torch.manual_seed(0)
    values = {"embedding": 12, "hidden": 16, "layers": 2, "memory_size": N, **settings}
    return RecurrentMemoryNetwork(RmnSettings.model_validate(values), VOCAB).eval()


def block(**settings: object) -> MemoryBlock:
    torch.manual_seed(0)
    values: dict[str, object] = {"temporal": True, "composition": "gated", **settings}
    memory = MemoryBlock(VOCAB, 16, N, **values)  # type: ignore[arg-type]
    with torch.no_grad():  # larger than the (−0.05, 0.05) start, so that differences are not lost in rounding
        for parameter in memory.parameters():
            parameter.normal_(std=0.3)
    return memory.eval()


def tokens(length: int = 11, rows: int = 3) -> torch.Tensor:
    torch.manual_seed(1)
    return torch.randint(4, VOCAB, (rows, length))


@pytest.mark.parametrize("variant", ["RM", "RMR"])
@pytest.mark.parametrize("composition", ["gated", "linear"])
def test_the_network_is_causal(variant: str, composition: str) -> None:
    net = network(variant=variant, composition=composition)
    ids = tokens()
    changed = ids.clone()
    changed[:, 6] = (changed[:, 6] + 1 - 4) % (VOCAB - 4) + 4
    with torch.no_grad():
        before, after = net(ids), net(changed)
    assert before.shape == (3, 11, VOCAB)
    assert torch.equal(before[:, :6], after[:, :6])
    assert (before[:, 6:] - after[:, 6:]).abs().amax(dim=-1).min() > 0  # every later step sees the change


def test_right_padding_leaves_the_real_positions_alone() -> None:
    net = network()
    ids = tokens(length=7)
    padded = torch.cat([ids, torch.full((3, 5), PAD)], dim=1)
    with torch.no_grad():
        torch.testing.assert_close(net(padded)[:, :7], net(ids))


def test_windows_hold_the_current_word_and_the_ones_before_it() -> None:
    ids = torch.tensor([[11, 12, 13, 14, 15, 16]])
    windows, valid = memory_windows(ids, N)
    assert windows[0, 0].tolist() == [11, PAD, PAD, PAD]
    assert windows[0, 2].tolist() == [13, 12, 11, PAD]
    assert windows[0, 5].tolist() == [16, 15, 14, 13]
    starts = [[True, False, False, False], [True, True, False, False], [True, True, True, False]]
    assert valid.tolist() == [*starts, [True] * 4, [True] * 4, [True] * 4]


def test_the_memory_covers_exactly_the_last_n_words() -> None:
    """With h_t fixed, the MB output at t depends on the words t−n+1..t (n of them, x_t included), not on t−n."""
    memory = block()
    ids = tokens(length=10)
    hidden = torch.randn(3, 10, 16)
    t = 9

    def at_t(replace: int) -> tuple[torch.Tensor, torch.Tensor]:
        changed = ids.clone()
        changed[:, replace] = (changed[:, replace] + 1 - 4) % (VOCAB - 4) + 4
        with torch.no_grad():
            composed, weights = memory(changed, hidden)
        return composed[:, t], weights[:, t]

    with torch.no_grad():
        composed, weights = memory(ids, hidden)
    outside = at_t(t - N)
    assert torch.equal(outside[0], composed[:, t]) and torch.equal(outside[1], weights[:, t])
    for inside in range(t - N + 1, t + 1):
        changed_composed, changed_weights = at_t(inside)
        assert (changed_weights - weights[:, t]).abs().amax(dim=-1).min() > 1e-6, inside
        assert (changed_composed - composed[:, t]).abs().amax(dim=-1).min() > 1e-6, inside


@pytest.mark.parametrize("temporal", [True, False])
def test_vectorised_memory_equals_the_equations_step_by_step(temporal: bool) -> None:
    """Eqs. 4.1/4.2 and 4.3 computed one sentence and one step at a time, with T[0:k] for a k-word history."""
    memory = block(temporal=temporal)
    ids = tokens(length=7, rows=2)
    hidden = torch.randn(2, 7, 16)
    with torch.no_grad():
        weights, context = memory.attend(ids, hidden)
        for b in range(2):
            for t in range(7):
                window = ids[b, max(0, t - N + 1) : t + 1].flip(0)  # the current word first
                keys = memory.input_memory.weight[window]
                if temporal:
                    assert memory.temporal is not None
                    keys = keys + memory.temporal[: len(window)]
                p = torch.softmax(keys @ hidden[b, t], dim=0)
                s = memory.output_memory.weight[window].T @ p
                torch.testing.assert_close(weights[b, t, : len(window)], p)
                assert bool((weights[b, t, len(window) :] == 0).all())
                torch.testing.assert_close(context[b, t], s)


def test_without_the_temporal_matrix_equal_words_get_equal_attention() -> None:
    """Eq. 4.1 scores a word by its embedding alone; eq. 4.2 adds where in the window it stands."""
    ids = torch.tensor([[7, 7, 7, 7, 7]])
    hidden = torch.randn(1, 5, 16)
    with torch.no_grad():
        plain = block(temporal=False).attend(ids, hidden)[0][0, -1]
        timed = block(temporal=True).attend(ids, hidden)[0][0, -1]
    torch.testing.assert_close(plain, torch.full((N,), 1 / N))
    assert timed.std() > 0.01
    assert block(temporal=False).temporal is None


def test_gated_composition_follows_eqs_4_4_to_4_7() -> None:
    memory = block(composition="gated")
    hidden, context = torch.randn(2, 3, 16), torch.randn(2, 3, 16)
    w = memory.from_context.weight.detach()
    bias = memory.from_context.bias.detach()
    u_gates = memory.gates_from_hidden.weight.detach()
    u = memory.candidate_from_hidden.weight.detach()
    z = torch.sigmoid(context @ w[:16].T + bias[:16] + hidden @ u_gates[:16].T)
    r = torch.sigmoid(context @ w[16:32].T + bias[16:32] + hidden @ u_gates[16:].T)
    candidate = torch.tanh(context @ w[32:].T + bias[32:] + (r * hidden) @ u.T)
    with torch.no_grad():
        torch.testing.assert_close(memory.compose(context, hidden), (1 - z) * hidden + z * candidate)


def test_gated_and_linear_composition_both_run_and_differ() -> None:
    ids = tokens()
    gated, linear = network(composition="gated"), network(composition="linear")
    with torch.no_grad():
        gated_logits, linear_logits = gated(ids), linear(ids)
    assert gated_logits.shape == linear_logits.shape == (3, 11, VOCAB)
    assert bool(gated_logits.isfinite().all()) and bool(linear_logits.isfinite().all())
    assert (gated_logits - linear_logits).abs().max() > 1e-4
    memory = block(composition="linear")
    hidden, context = torch.randn(2, 3, 16), torch.randn(2, 3, 16)
    with torch.no_grad():  # H h_t + s_t
        torch.testing.assert_close(memory.compose(context, hidden), hidden @ memory.from_hidden.weight.T + context)


def test_architectures_and_initialisation_follow_the_thesis() -> None:
    rm, rmr = network(variant="RM", layers=3), network(variant="RMR", layers=1)
    assert rm.top is None and rm.lstm.num_layers == 3
    assert rmr.top is not None and rmr.lstm.num_layers == 1 and rmr.top.num_layers == 1
    for net in (rm, rmr):
        for name, parameter in net.named_parameters():
            if name.startswith(("lstm.bias", "top.bias")):
                size = parameter.shape[0] // 4
                forget = parameter[size : 2 * size]
                assert bool((forget == (1.0 if "bias_ih" in name else 0.0)).all()), name
                others = torch.cat([parameter[:size], parameter[2 * size :]])
                assert others.abs().max() <= 0.05
            else:
                assert parameter.abs().max() <= 0.05, name
    assert rmr.attention(tokens()).shape == (3, 11, N)


def test_the_memory_block_learns_to_attend_to_the_word_it_needs() -> None:
    """A toy target the memory answers directly: at step t, the word two positions back (slot 2 of the window)."""
    torch.manual_seed(0)
    settings = RmnSettings(embedding=16, hidden=16, layers=1, dropout=0.0, memory_size=N, composition="linear")
    net = RecurrentMemoryNetwork(settings, VOCAB)
    optimiser = torch.optim.Adam(net.parameters(), lr=0.03)
    generator = torch.Generator().manual_seed(0)

    def batch() -> torch.Tensor:
        return torch.randint(4, VOCAB, (32, 12), generator=generator)

    def loss(ids: torch.Tensor) -> torch.Tensor:
        logits = net(ids)[:, 2:]
        targets = ids[:, :-2]  # x_{t-2} for every t >= 2
        return torch.nn.functional.cross_entropy(logits.reshape(-1, VOCAB), targets.reshape(-1))

    for _ in range(40):
        optimiser.zero_grad()
        loss(batch()).backward()  # type: ignore[no-untyped-call]  # torch leaves backward unannotated
        optimiser.step()
    net.eval()
    ids = batch()
    with torch.no_grad():
        assert loss(ids).item() < 0.5
        weights = net.attention(ids)[:, 2:]
    assert weights[..., 2].mean() > 0.5


def test_recipes_give_the_thesis_settings_and_key_the_run() -> None:
    paper = Rmn.configuration(COMPLETION, budget="paper")
    assert {k: paper[k] for k in ("variant", "composition", "temporal", "memory_size", "layers", "dropout")} == {
        "variant": "RM",
        "composition": "gated",
        "temporal": True,
        "memory_size": 15,
        "layers": 3,
        "dropout": 0.3,
    }  # Table 4.4's unidirectional-RM(+tM-g) on three LSTM layers, §4.6
    assert (paper["embedding"], paper["hidden"], paper["batch_size"], paper["epochs"], paper["clip"]) == (
        256,
        256,
        20,
        15,
        5.0,
    )  # Table 4.4's RM at the LSTM baseline's d = 256 (its best row, d = 512, is a --set away)
    assert paper["init_range"] == 0.05 and paper["max_vocabulary"] == 64_000  # §4.6: "about 64,000"
    small = ModelKey.of(COMPLETION, ModelRequest.of(ModelSpec(name="rmn"))).facts["configuration"]
    assert small["budget"] == "cpu-small" and small["memory_size"] == 15 and small["threads"] == 1
    for budget in BUDGETS:
        Rmn.configuration("msr-sentence-completion", budget=budget)
    linear = ModelKey.of(COMPLETION, ModelRequest.of(ModelSpec(name="rmn", params={"composition": "linear"}))).facts[
        "configuration"
    ]
    assert linear["composition"] == "linear" and linear != small
    with pytest.raises(UserError, match="composition"):
        Rmn.configuration(COMPLETION, composition="sum")
    with pytest.raises(UserError, match="no setting 'memory'"):
        Rmn(memory=3)
    assert isinstance(build_model(ModelSpec(name="rmn")), Rmn)


def test_through_the_runner_on_sentence_completion(runner: Runner) -> None:
    params = {"layers": 1, "embedding": 16, "hidden": 16, "epochs": 1, "batch_size": 256, "threads": 1}
    record = runner.evaluate(COMPLETION, ModelSpec(name="rmn", params=params), [0])
    assert record.status == {"0": "done"}
    assert set(record.breakdowns["test"]["accuracy"]["constraint"]) == set(CONSTRAINTS)
    runs = runner.store.runs().set_index("id")
    run_id = int(runs.index.max())
    ids, predictions, _ = runner.store.stored_predictions(run_id)["test"]
    assert len(ids) == 2000
    assert all(len(p) == 5 and all(isinstance(v, float) and math.isfinite(v) and v < 0 for v in p) for p in predictions)
    # the cell is the share of questions whose right candidate is strictly the most probable
    suite = registry.suite(COMPLETION)
    manifest = freeze.ensure_built(suite)
    answers = {e.id: e.answer for e in freeze.load_split(suite, manifest, 0, "test").examples}
    right = [
        p[answers[i]] > max(v for k, v in enumerate(p) if k != answers[i])
        for i, p in zip(ids, predictions, strict=True)
    ]
    assert record.scores["test"]["accuracy"].mean == pytest.approx(sum(right) / len(right))
    assert rescore(runner.store, run_id, registry.suite(COMPLETION))
    assert 1.0 < run_statistics(str(runs.loc[run_id, "environment"]))["dev_perplexity"] < 100.0
