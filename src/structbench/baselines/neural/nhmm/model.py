"""Neural HMM tag inducer (`nhmm`; Tran 2018, thesis ch. 6; Tran, Bisk, Vaswani, Marcu & Knight 2016).

Unsupervised part-of-speech induction with an HMM whose emission and transition
distributions come from networks (`nets.py`): eq. 6.26's chain with start and stop
transitions, eq. 6.27's emission softmax and eq. 6.28's transition matrix T = U q + b. Two
parts switch, giving the four rows "Our Work" of Table 6.2:

| Table 6.2 row  | label                                          | M-1 / 1-1 / VM on WSJ |
|----------------|------------------------------------------------|-----------------------|
| NHMM           | `nhmm[emission="linear",transition="matrix"]`  | 59.8 / 45.7 / 54.2    |
| + Conv         | `nhmm[transition="matrix"]`                    | 74.1 / 48.3 / 66.1    |
| + LSTM         | `nhmm[emission="linear"]`                      | 65.1 / 52.4 / 60.4    |
| + Conv & LSTM  | `nhmm` (the default: the thesis's best model)  | 79.1 / 60.7 / 71.7    |

Training is direct marginal likelihood (§6.5.2, after Salakhutdinov et al. 2003): the
log-space forward algorithm gives log p(x) of every sentence of a batch, and autograd its
gradient, which is eq. 6.29's posterior-weighted gradient of log p(x, z). As in §6.9, each
batch is updated repeatedly (at most `inner_loops` Adam steps, gradient norm clipped) until
the relative change of its log-likelihood falls below `tolerance`; training runs a fixed
number of epochs over the sentences of at most `max_train_length` words, and every sentence,
whatever its length, is then tagged with its Viterbi path ("the one-best latent sequence",
§6.8). No dev split and no gold tag is read (the thesis: "no values were tuned").

The protocol gives K only to `induce`, so `fit` keeps the training sentences and `induce`
trains on them and on any sentence it is asked about that training did not contain (the
task is transductive), as the Baum-Welch baseline `structbench.baselines.classical.hmm` does. The
trained weights are checkpointed per run and reloaded when the same run is asked again.

How it was checked: tests/baselines/neural/test_nhmm.py compares the forward algorithm's log p(x) and the
Viterbi path with enumeration of every tag sequence of a small random model (start, stop and
position-dependent LSTM transitions included, rows of different lengths in one batch), checks
that every variant raises the training log-likelihood and that a seed repeats exactly, and
runs the model through the harness on `pos-synthetic`. The settings were read against §6.9
and the authors' Torch code (github.com/ketranm/neuralHMM). On `pos-ud-ewt-xpos` at
`cpu-small` (three seeds) the variants order by V-measure as in Table 6.2 (+ Conv & LSTM >
+ Conv > + LSTM > NHMM), but all of them underfit: their per-word negative log-likelihood
after training is 6.8-7.1 nats against Baum-Welch's 5.55, and ten epochs instead of one take
the plain NHMM from 6.82 to 6.06 nats and its V-measure from 31.6 to 41.4 (the HMM: 32.3).

Deviations and what the thesis leaves open:
- Stop transitions are modelled (eq. 6.26 has n + 1 transitions); the authors' code has a
  start distribution but no stop.
- Emission (`linear`) is eq. 6.27 as printed, a tag embedding and a ReLU; the authors'
  `Emission.lua` adds a hidden layer. Their transition `FFTran.lua` feeds a constant through
  two ReLU layers to the K^2 outputs; `matrix` is eq. 6.28, a learned query q.
- The char-CNN's sizes (character embedding 15, 50-100-128-...-128 filters of widths 1-7,
  words cut at 15 characters with begin and end markers) are the authors' code's; the
  thesis gives only the widths. The epochs are the thesis's five, not the README's 20, and
  sentences of up to 40 words are trained on (the README's command says 81).
- The authors' code adds gradient noise and a "probing" restart; its README says neither
  was used in the thesis, and neither is used here.
- Adam's loss is the mean negative log-likelihood per word of the batch (the code's scaling
  differs; Adam is nearly invariant to it, the clipping threshold is not).
- Results on the `pos-ud-ewt-*` suites (50k tokens) are not comparable with Table 6.2 (full
  WSJ, about 1.2M tokens), and the `cpu-small` budget is smaller than the thesis's, see the
  recipe's notes.

PyTorch is imported where a run trains or answers, never with the class (docs/architecture.md,
"Model classes load without PyTorch"); its architecture is in `settings.py`, apart from `nets.py`.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence
from typing import TYPE_CHECKING, Any, ClassVar

import numpy as np
from pydantic import PositiveFloat, PositiveInt

from structbench.baselines.neural import checkpoint
from structbench.baselines.neural.model import NeuralModel
from structbench.baselines.neural.nhmm.settings import NhmmArchitecture
from structbench.convergence import Criterion
from structbench.devices import DeviceName
from structbench.errors import NotApplicable
from structbench.progress import run_bar
from structbench.specs import Split

if TYPE_CHECKING:
    import torch

    from structbench.baselines.neural.fit import Figures, History
    from structbench.baselines.neural.nhmm.nets import NeuralHmmNet

__all__ = ["NeuralHmm", "NhmmSettings", "padded"]

DECODE_BATCH = 256
"""Sentences tagged per batch after training."""


class NhmmSettings(NhmmArchitecture):
    """`nhmm`: the architecture and its training (Tran 2018 §6.9)."""

    device: DeviceName = "auto"
    """`cpu`, `cuda`, `cuda:N` or `auto` (CUDA when available); never part of the run key."""
    epochs: PositiveInt = 5
    """Passes over the training sentences (§6.9: five)."""
    batch_size: PositiveInt = 256
    """Sentences per batch (§6.9: 256)."""
    inner_loops: PositiveInt = 6
    """Most updates on one batch before the next (§6.9: six)."""
    tolerance: PositiveFloat = 1e-4
    """A batch's updates stop once its log-likelihood changes by less than this, relatively (§6.9: 10^-4)."""
    lr: PositiveFloat = 1e-3
    """Adam learning rate (§6.9: Adam's defaults, 0.001)."""
    clip: PositiveFloat | None = 5.0
    """Maximum gradient norm (§6.9: five); None disables clipping."""
    max_train_length: PositiveInt | None = 40
    """Train on sentences of at most this many words (§6.9: 40); all are tagged. None trains on all."""
    threads: PositiveInt = 1
    """CPU threads for torch and BLAS; part of the run key (two threads may round otherwise than one)."""
    criterion: Criterion | None = None
    """When training has converged (a plateau of `nll_per_word`); training stops there (`structbench.convergence`)."""


def padded(rows: Sequence[Sequence[int]], device: torch.device) -> tuple[torch.Tensor, torch.Tensor]:
    """[B, T] word ids right-padded with 0, and [B] lengths."""
    import torch

    lengths = [len(row) for row in rows]
    out = np.zeros((len(rows), max(lengths)), dtype=np.int64)
    for i, row in enumerate(rows):
        out[i, : len(row)] = row
    return torch.from_numpy(out).to(device), torch.tensor(lengths, device=device)


class NeuralHmm(NeuralModel):
    """Tran's neural HMM for unsupervised POS induction; `--set emission=linear|conv transition=matrix|lstm`."""

    name = "nhmm"
    revision = 1
    """1: the forward algorithm's log-space matrix product is exact (it clamped each sum at 1e-30 of
    the row's best path, which moved training under peaked transitions)."""
    protocols: ClassVar[tuple[str, ...]] = ("tag-induction",)
    settings_class: ClassVar[type[NhmmSettings]] = NhmmSettings

    def __init__(self, budget: str = "cpu-small", **overrides: Any) -> None:
        super().__init__(budget, **overrides)
        self.settings: NhmmSettings | None = None
        self.net: NeuralHmmNet | None = None
        self.train_sentences: list[list[str]] = []
        self.suite, self.draw, self.seed = "", 0, 0
        self.nll_per_word: float | None = None
        """Per-word negative log-likelihood (nats) of the tagged sentences under the trained model."""

    @classmethod
    def budget_shortfall(cls, suite_id: str, configuration: Mapping[str, Any]) -> str | None:
        """The recipe's shortfall, which only the char-CNN emissions have (linear ones reach the plateau
        within the CPU budget)."""
        if configuration.get("emission") != "conv":
            return None
        return super().budget_shortfall(suite_id, configuration)

    def fit(self, train: Split, dev: Split | None, *, seed: int) -> None:
        """Keep the training sentences; training waits for K, which `induce` is given."""
        self.settings, self.citation = self.resolve(train.suite)
        self.suite, self.draw, self.seed = train.suite, train.draw, seed
        self.train_sentences = [list(e.input) for e in train.examples]

    def induce(self, sentences: list[list[str]], n_clusters: int) -> list[list[int]]:
        """Train on the training sentences (and the new ones among `sentences`) with K = `n_clusters`,
        then tag `sentences` with their Viterbi paths."""
        from structbench.baselines.neural.nhmm.nets import NeuralHmmNet

        settings = self.settings
        if settings is None:
            raise NotApplicable(f"{self.name} trains on a suite's train split, and this suite has none.")
        self.begin(settings, self.seed)
        known = {tuple(s) for s in self.train_sentences}
        corpus = [s for s in self.train_sentences + [s for s in sentences if tuple(s) not in known] if s]
        words = sorted({w for s in corpus for w in s})
        ids = {w: i for i, w in enumerate(words)}
        self.net = NeuralHmmNet(settings, n_clusters, words).to(self.device)
        keyed = {**self.described(settings), "n_clusters": n_clusters}
        path = checkpoint.checkpoint_path(self.suite, self.draw, self.name, keyed, self.seed)
        if self.reload_trained(path, self.net, self.seed, words=words, n_clusters=n_clusters) is None:
            limit = settings.max_train_length
            train = [[ids[w] for w in s] for s in corpus if limit is None or len(s) <= limit]
            history = self._train(self.net, settings, train)
            self.history = history.as_dict()
            updates = history.evaluations[-1].updates
            nll = ", ".join(f"{e.figures['nll_per_word']:.3f}" for e in history.evaluations)
            self.log(
                f"{self.name} seed {self.seed}: {updates:.0f} updates in {history.evaluations[-1].seconds:.0f} s; "
                f"per-word NLL by epoch {nll}"
            )
            extra = {"words": words, "n_clusters": n_clusters}
            self.save_trained(path, self.net, self.suite, self.seed, settings, **extra)
        return self._decode(self.net, [[ids[w] for w in s] for s in sentences])

    def _train(self, net: NeuralHmmNet, settings: NhmmSettings, train: list[list[int]]) -> History:
        """Direct marginal likelihood in the shared loop: per batch, Adam steps on its mean negative
        log-likelihood per word until it changes by less than `tolerance` relatively or `inner_loops`
        steps were taken. Every epoch is recorded (its per-word NLL and updates); the last is kept."""
        from structbench.baselines.neural.batching import length_buckets
        from structbench.baselines.neural.fit import Schedule, Selector, fit
        from structbench.baselines.neural.nhmm.nets import forward_log_likelihood

        rng = np.random.default_rng(self.seed)
        lengths = [len(s) for s in train]

        def step(indices: list[int], update: Callable[[torch.Tensor], None]) -> tuple[float, int]:
            words, batch_lengths = padded([train[i] for i in indices], self.device)
            count = int(batch_lengths.sum())
            previous: float | None = None
            for _ in range(settings.inner_loops):
                loglik = forward_log_likelihood(net.potentials(words, batch_lengths)).sum()
                current = float(loglik.detach()) / count
                if not math.isfinite(current):
                    raise FloatingPointError(f"the log-likelihood became {current}; lower lr or set clip.")
                if previous is not None and (current - previous) / abs(previous) < settings.tolerance:
                    break
                update(-loglik / count)
                previous = current
            return -current, count

        def evaluate(nll_per_word: float) -> Figures:
            return {"nll_per_word": nll_per_word}

        return fit(
            net,
            Schedule(settings.epochs, settings.lr, settings.clip),
            Selector("last", settings.criterion, None),
            batches=lambda: length_buckets(lengths, settings.batch_size, rng),
            step=step,
            evaluate=evaluate,
            description=run_bar(self.suite, self.name, self.seed),
        )

    def _decode(self, net: NeuralHmmNet, sentences: list[list[int]]) -> list[list[int]]:
        """Viterbi paths of `sentences` (empty ones stay empty); also sets `nll_per_word`."""
        import torch

        from structbench.baselines.neural.batching import length_buckets
        from structbench.baselines.neural.nhmm.nets import forward_log_likelihood, viterbi

        net.eval()
        out: list[list[int]] = [[] for _ in sentences]
        order = [i for i in length_buckets([len(s) for s in sentences], DECODE_BATCH, None)]
        total, tokens = 0.0, 0
        with torch.inference_mode():
            for indices in order:
                indices = [i for i in indices if sentences[i]]
                if not indices:
                    continue
                words, lengths = padded([sentences[i] for i in indices], self.device)
                potentials = net.potentials(words, lengths)
                paths, _ = viterbi(potentials)
                total -= float(forward_log_likelihood(potentials).sum())
                tokens += int(lengths.sum())
                for row, i in enumerate(indices):
                    out[i] = paths[row, : len(sentences[i])].tolist()
        self.nll_per_word = total / tokens if tokens else None
        return out

    def statistics(self) -> dict[str, float]:
        """`nll_per_word`: the trained model's negative log-likelihood per word (nats, the stop event
        included) of the tagged sentences, no dropout; `updates`: Adam updates in training. Empty
        before `induce`; `updates` is absent for reloaded weights whose history lacks it."""
        reported: dict[str, float] = {}
        if self.nll_per_word is not None:
            reported["nll_per_word"] = float(self.nll_per_word)
        evaluations = self.history.get("evaluations")
        updates = evaluations[-1].get("updates") if isinstance(evaluations, list) and evaluations else None
        if isinstance(updates, int | float):
            reported["updates"] = float(updates)
        return reported
