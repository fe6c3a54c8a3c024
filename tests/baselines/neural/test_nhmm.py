"""The neural HMM tag inducer (`nhmm`; Tran 2018 ch. 6): exact inference, training, seeds, the harness."""

from __future__ import annotations

import itertools
import math
import os
from pathlib import Path
from typing import Any

import numpy as np
import pytest
import torch

from structbench import registry
from structbench.analysis.rescore import rescore
from structbench.baselines.neural.nhmm.model import NeuralHmm, NhmmSettings, padded
from structbench.baselines.neural.nhmm.nets import (
    NeuralHmmNet,
    Potentials,
    forward_log_likelihood,
    log_matmul,
    viterbi,
)
from structbench.baselines.neural.nhmm.settings import EmissionKind, NhmmArchitecture, TransitionKind
from structbench.errors import UserError
from structbench.runs.key import ModelKey
from structbench.runs.request import ModelRequest, model_label
from structbench.runs.runner import Runner
from structbench.scoring import induction_metrics
from structbench.seeding import seed_everything
from structbench.specs import Example, ModelSpec, Split
from structbench.store import run_statistics

pytestmark = pytest.mark.usefixtures("one_torch_thread", "fresh_home")

VARIANTS: list[tuple[EmissionKind, TransitionKind]] = [(e, t) for e in ("linear", "conv") for t in ("matrix", "lstm")]
SUITE = "pos-synthetic@1.0.0"
"""Any registered suite of the `default` recipe task; the unit tests give their own sentences."""
TINY: dict[str, Any] = {"hidden": 16, "conv_hidden": 16, "layers": 2, "char_embedding": 4, "threads": 1}


def tiny_net(emission: EmissionKind, transition: TransitionKind, n_states: int, words: list[str]) -> NeuralHmmNet:
    architecture = NhmmArchitecture(
        emission=emission,
        transition=transition,
        hidden=8,
        conv_hidden=8,
        layers=2,
        dropout=0.0,
        char_embedding=4,
        feature_maps=(3, 4, 2),
    )
    torch.manual_seed(7)
    return NeuralHmmNet(architecture, n_states, words).eval()


def joint(potentials: Potentials, row: int, words: int, tags: tuple[int, ...]) -> float:
    """log p(x, z) of one row and tag sequence, read off the potentials term by term (eq. 6.26)."""
    table = potentials.transitions[min(row, potentials.transitions.shape[0] - 1)]

    def at(j: int) -> torch.Tensor:  # one shared position for `matrix`
        return table[min(j, table.shape[0] - 1)]

    total = at(0)[-1, tags[0]] + at(words)[tags[-1], -1]  # start, then stop after the last word
    moves = sum(float(at(t)[tags[t - 1], tags[t]]) for t in range(1, words))
    return float(total) + moves + sum(float(potentials.emit[row, t, tags[t]]) for t in range(words))


@pytest.mark.parametrize(("emission", "transition"), VARIANTS)
def test_forward_and_viterbi_equal_enumeration(emission: EmissionKind, transition: TransitionKind) -> None:
    """log p(x) is the log of the sum of p(x, z) over all K^n tag sequences, and Viterbi's path is their
    argmax, for rows of different lengths padded into one batch."""
    net = tiny_net(emission, transition, 3, ["a", "b", "cc", "ddd", "eeeee"])
    rows = [[0, 1, 2, 3], [4, 2], [1], [3, 3, 0]]
    words, lengths = padded(rows, torch.device("cpu"))
    with torch.no_grad():
        potentials = net.potentials(words, lengths)
        likelihoods = forward_log_likelihood(potentials)
        paths, best = viterbi(potentials)
    for row, sentence in enumerate(rows):
        scores = {
            z: joint(potentials, row, len(sentence), z) for z in itertools.product(range(3), repeat=len(sentence))
        }
        assert float(likelihoods[row]) == pytest.approx(float(np.logaddexp.reduce(list(scores.values()))), abs=1e-4)
        argmax = max(scores, key=lambda z: scores[z])
        assert tuple(paths[row, : len(sentence)].tolist()) == argmax
        assert float(best[row]) == pytest.approx(scores[argmax], abs=1e-4)


@pytest.mark.parametrize(("emission", "transition"), VARIANTS)
def test_the_networks_give_distributions(emission: EmissionKind, transition: TransitionKind) -> None:
    """Every emission row sums to 1 over the vocabulary, every transition row over the next states and
    stop; start never stops at once. With `matrix`, the sentences of each length n sum to
    start · M^(n-1) · stop, the length distribution the transitions alone imply."""
    vocabulary = ["a", "bb", "c"]
    net = tiny_net(emission, transition, 2, vocabulary)
    with torch.no_grad():
        assert torch.allclose(net.emission().exp().sum(dim=1), torch.ones(2))
        table = net.potentials(*padded([[0, 1, 2]], torch.device("cpu"))).transitions.exp()
        assert torch.allclose(table.sum(dim=-1), torch.ones_like(table[..., 0]))
        assert float(table[..., -1, -1].max()) == 0.0
        if transition == "matrix":
            shared = table[0, 0]
            for n in (1, 2, 3):
                sentences = [list(s) for s in itertools.product(range(3), repeat=n)]
                mass = forward_log_likelihood(net.potentials(*padded(sentences, torch.device("cpu")))).exp().sum()
                implied = shared[-1, :2] @ torch.linalg.matrix_power(shared[:2, :2], n - 1) @ shared[:2, -1]
                assert float(mass) == pytest.approx(float(implied), rel=1e-4)


def broadcast_logsumexp(alpha: torch.Tensor, moves: torch.Tensor) -> torch.Tensor:
    """The forward step's sums as the definition has them: logsumexp over the B x K x K broadcast sum."""
    return torch.logsumexp(alpha[:, :, None] + moves, dim=1)


def test_a_peaked_transition_keeps_its_exact_log_probability() -> None:
    """The state the messages sit in moves to state 1 with probability 1e-40 and the state that does move
    there is e^-100 less likely: the true logsumexp is -92.1, which a sum clamped at 1e-30 of the best
    path gave as -69.1. Every entry equals torch.logsumexp on the broadcast sum, shared or per-row moves."""
    alpha = torch.tensor([[0.0, -100.0], [-3.0, -1.0]])
    moves = torch.tensor([[1.0, 1e-40], [1e-40, 1.0]], dtype=torch.float64).log().float()[None]
    exact = broadcast_logsumexp(alpha, moves)
    assert float(exact[0, 1]) == pytest.approx(-92.103, abs=1e-3)
    torch.testing.assert_close(log_matmul(alpha, moves), exact, rtol=0, atol=1e-5)
    per_row = torch.cat([moves, torch.randn(1, 2, 2).log_softmax(dim=-1)])
    torch.testing.assert_close(log_matmul(alpha, per_row), broadcast_logsumexp(alpha, per_row), rtol=0, atol=1e-5)


def test_the_log_matmul_is_logsumexp_with_its_gradient_for_any_peakedness() -> None:
    """45 states as Table 6.2 induces, transitions from flat to peaked (logits spread 1 to 100): values and
    gradients equal logsumexp's on the broadcast sum; a row or column that is all -inf gives -inf, not NaN."""
    torch.manual_seed(0)
    for spread in (1.0, 30.0, 100.0):
        alpha = (5 * torch.randn(8, 45)).requires_grad_()
        moves = (spread * torch.randn(8, 45, 45)).log_softmax(dim=-1).requires_grad_()
        fast, slow = log_matmul(alpha, moves), broadcast_logsumexp(alpha, moves)
        torch.testing.assert_close(fast, slow, rtol=0, atol=1e-5)
        weights = torch.randn(8, 45)
        fast_grads = torch.autograd.grad((fast * weights).sum(), (alpha, moves))
        slow_grads = torch.autograd.grad((slow * weights).sum(), (alpha, moves))
        for fast_grad, slow_grad in zip(fast_grads, slow_grads, strict=True):
            torch.testing.assert_close(fast_grad, slow_grad, rtol=1e-4, atol=1e-4)
    alpha = torch.randn(3, 4)
    alpha[1] = -math.inf
    moves = torch.randn(1, 4, 4).log_softmax(dim=-1)
    moves[0, :, 2] = -math.inf
    alpha.requires_grad_()
    product = log_matmul(alpha, moves)
    expected = broadcast_logsumexp(alpha.detach(), moves)
    assert torch.equal(product.isinf(), expected.isinf()) and bool(product[1].isinf().all())
    finite = ~product.isinf()
    torch.testing.assert_close(product[finite], expected[finite], rtol=0, atol=1e-6)
    (grad,) = torch.autograd.grad(product[finite].sum(), alpha)
    assert not bool(grad.isnan().any())


def corpus(seed: int, n: int = 120) -> tuple[list[list[str]], list[list[str]]]:
    """Sentences `det noun (det noun)*` over disjoint word classes, and their tags."""
    rng = np.random.default_rng(seed)
    dets, nouns = ["the", "a", "some"], ["dog", "cat", "yak", "newt", "owl"]
    sentences, tags = [], []
    for _ in range(n):
        pairs = int(rng.integers(1, 4))
        sentences.append([w for _ in range(pairs) for w in (str(rng.choice(dets)), str(rng.choice(nouns)))])
        tags.append(["D", "N"] * pairs)
    return sentences, tags


def trained(
    sentences: list[list[str]], n_clusters: int, seed: int = 0, **settings: Any
) -> tuple[NeuralHmm, list[list[int]]]:

    model = NeuralHmm(**{**TINY, **settings})
    model.log = lambda message: None
    train = Split(suite=SUITE, name="train", role="train", draw=0,
                  examples=[Example(id=str(i), input=s) for i, s in enumerate(sentences)])  # fmt: skip
    model.fit(train, None, seed=seed)
    return model, model.induce(sentences, n_clusters)


@pytest.mark.parametrize(("emission", "transition"), VARIANTS)
def test_every_variant_raises_the_likelihood(emission: EmissionKind, transition: TransitionKind) -> None:
    """Training lowers the per-word negative log-likelihood of the corpus well below that of the same
    seed's untrained network; sentences longer than the training limit are tagged too."""
    sentences, _ = corpus(0)
    long = sentences[0] * 5
    corpus_ = [*sentences, long]
    settings: dict[str, Any] = {"emission": emission, "transition": transition, "dropout": 0.0, "lr": 0.01}
    model, clusters = trained(corpus_, 2, epochs=4, batch_size=16, max_train_length=6, **settings)
    words = sorted({w for s in corpus_ for w in s})
    seed_everything(0)  # as `induce` does before it builds the network
    untrained = NeuralHmmNet(NhmmSettings(**{**TINY, **settings}), 2, words).eval()
    ids = padded([[words.index(w) for w in s] for s in corpus_], torch.device("cpu"))
    with torch.no_grad():
        before = -float(forward_log_likelihood(untrained.potentials(*ids)).sum()) / sum(map(len, corpus_))
    after = model.statistics()["nll_per_word"]
    assert after < before - 0.5
    by_epoch = [evaluation["nll_per_word"] for evaluation in model.history["evaluations"]]
    assert by_epoch[-1] < by_epoch[0]
    assert 0 < model.statistics()["updates"] <= 4 * math.ceil(len(sentences) / 16) * 6
    assert [len(c) for c in clusters] == [len(s) for s in corpus_]
    assert all(0 <= c < 2 for cs in clusters for c in cs)
    assert model.net is not None
    assert model.compute()["parameters"] == sum(p.numel() for p in model.net.parameters() if p.requires_grad)


def test_same_seed_same_clusters_and_a_checkpoint_answers_again(fresh_home: Path, tmp_path: Path) -> None:
    """A seed repeats exactly, from scratch or from the run's checkpoint; the linear HMM finds the classes."""
    sentences, tags = corpus(1)
    settings: dict[str, Any] = {"emission": "linear", "transition": "matrix", "epochs": 6, "batch_size": 16}
    settings["criterion"] = None  # all six epochs: the classes need them
    first, clusters = trained(sentences, 2, seed=3, **settings)
    assert list(fresh_home.glob("checkpoints/**/seed3.pt"))
    reloaded, again = trained(sentences, 2, seed=3, **settings)
    assert again == clusters and reloaded.history == first.history
    other = tmp_path / "other-home"
    other.mkdir()
    (other / "suites").symlink_to(fresh_home / "suites", target_is_directory=True)
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("STRUCTBENCH_HOME", str(other))
        assert trained(sentences, 2, seed=3, **settings)[1] == clusters
        assert not list(fresh_home.glob("checkpoints/**/seed3.pt.partial"))
    scores = induction_metrics([t for ts in tags for t in ts], [c for cs in clusters for c in cs])
    assert scores["many_to_one"] == 1.0


def test_settings_are_checked_keyed_and_labelled() -> None:
    with pytest.raises(UserError, match="no setting 'hiden'"):
        NeuralHmm(hiden=3)
    with pytest.raises(UserError, match="invalid settings"):
        NeuralHmm.configuration(SUITE, emission="cnn")
    factory = registry.model_factory("nhmm")
    default = ModelKey.of(SUITE, ModelRequest.of(ModelSpec(name="nhmm"))).facts["configuration"]
    assert (default["emission"], default["transition"], default["budget"]) == ("conv", "lstm", "cpu-small")
    assert default["threads"] == 1 and "device" not in default
    assert default["revision"] == 1  # the exact forward algorithm: runs of the clamped one are other runs
    plain = ModelSpec(name="nhmm", params={"emission": "linear", "transition": "matrix", "device": "cpu"})
    assert ModelKey.of(SUITE, ModelRequest.of(plain)).facts["configuration"] != default
    assert model_label(plain, factory) == 'nhmm[emission="linear",transition="matrix"]'
    two = ModelSpec(name="nhmm", params={"threads": 2})  # two threads may round otherwise: another run
    assert ModelKey.of(SUITE, ModelRequest.of(two)).facts["configuration"] == {**default, "threads": 2}
    assert model_label(two, factory) == "nhmm[threads=2]"
    assert model_label(ModelSpec(name="nhmm"), factory) == "nhmm"
    paper = NeuralHmm.configuration(SUITE, budget="paper")
    assert (paper["hidden"], paper["conv_hidden"], paper["layers"], paper["dropout"]) == (512, 128, 3, 0.5)
    assert (paper["epochs"], paper["batch_size"], paper["inner_loops"], paper["clip"]) == (5, 256, 6, 5.0)
    assert (paper["tolerance"], paper["lr"], paper["max_train_length"]) == (1e-4, 1e-3, 40)
    assert len(paper["feature_maps"]) == 7  # kernel widths 1 to 7 (§6.6)


def test_through_the_runner(runner: Runner) -> None:
    """The default (conv + LSTM) model, at a tiny budget, stores a finished run on `pos-synthetic` whose
    stored clusters score again, with its likelihood among the run's statistics."""
    params = {**TINY, "layers": 1, "epochs": 1, "batch_size": 500, "inner_loops": 2}
    record = runner.evaluate("pos-synthetic", ModelSpec(name="nhmm", params=params), [0])
    assert record.status == {"0": "done"}, record.errors
    assert record.model.startswith("nhmm[") and "threads" not in record.model  # threads=1 is the default
    suite = registry.suite("pos-synthetic")
    runs = runner.store.runs().set_index("id")
    run_id = int(runs.index.max())
    (ids, predictions, _), = runner.store.stored_predictions(run_id).values()  # fmt: skip
    assert len(ids) == 3000 and all(0 <= c < 11 for p in predictions for c in p)
    assert rescore(runner.store, run_id, suite)
    statistics = run_statistics(str(runs.loc[run_id, "environment"]))
    assert 0 < statistics["nll_per_word"] < 10 and statistics["updates"] >= 6


def test_on_the_users_wsj(runner: Runner, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """`pos-wsj`, built from a user's `word<TAB>tag` export (the two-sentence fixture), is tagged with
    one of K = 45 clusters per word, Tran's own setting."""
    from tests.suites.test_pos_induction import WSJ_SAMPLE, write_wsj

    session_suites = Path(os.environ["STRUCTBENCH_HOME"]) / "suites"
    monkeypatch.setenv("STRUCTBENCH_SOURCE_DIR", str(write_wsj(tmp_path, monkeypatch, WSJ_SAMPLE)))
    params = {**TINY, "layers": 1, "epochs": 1, "inner_loops": 2}
    record = runner.evaluate("pos-wsj", ModelSpec(name="nhmm", params=params), [0])
    assert record.status == {"0": "done"}, record.errors
    (ids, predictions, _), = runner.store.stored_predictions(int(runner.store.runs()["id"].max())).values()  # fmt: skip
    assert ids == ["s00000", "s00001"] and [len(p) for p in predictions] == [6, 5]
    assert all(0 <= cluster < 45 for p in predictions for cluster in p)
    assert not list(session_suites.glob("pos-wsj*")), "the fixture's pos-wsj leaked into the session's suites"
