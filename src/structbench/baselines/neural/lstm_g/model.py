"""`lstm-g` and `lstm-bptt`: Monner's (2011) one-layer peephole LSTM as transducers, trained by LSTM-g's
local rule (or the LSTM algorithm) online, or by backpropagation through time.

What: the harness side of `structbench.baselines.neural.lstm_g`. Both models build the same
network (one layer of memory blocks with forget gates, peepholes, direct input→output connections,
logistic output units, no biases, weights uniform in [-0.1, 0.1); Monner 2011 §2.7.1), read one
one-hot token per time step and train their output units toward per-unit targets with the
cross-entropy of eq. 2.9:

- `lstm-g` changes the weights after every time step with a target by LSTM-g's rule (eqs.
  2.17-2.24), or with `--set rule=lstm` by the original LSTM algorithm (eqs. 2.5-2.13), Monner's
  comparator in Fig. 2.3 (§2.6: the two differ by the peephole error term of eq. 2.124);
- `lstm-bptt` computes the full gradient of the sequence's summed cross-entropy by
  backpropagation through time (torch autograd) and takes one plain SGD step of size α per
  sequence: the non-local comparison Monner excludes (§2.7.1 restricts itself to local methods).

Two ways of answering:
- `answer_at` (Distracted Sequence Recall, §2.7.1): the network answers at the input steps holding
  one of these tokens (the prompts); its targets are all-zero on every other step and the i-th
  answer token's unit at the i-th answer step; no output phase;
- otherwise (the grounded scenes of ch. 4): the whole input is read with all-zero targets, then an
  output phase emits one token per step, ending with an end-of-sequence unit; each output step's
  input is a go unit (first step) or the previous output token on units of their own (teacher
  forced in training, the argmax in greedy decoding at test): Monner's grounded-meaning model
  feeds the previous output back into the network (§4.2.2.1, Fig. 4.6).

Sample efficiency (§2.7.1): training draws sequences from the train split in a seed-shuffled
order (cycling) and, with a `criterion`, evaluates the dev split every `check_every` sequences with
Monner's strict correctness (every output unit on the right side of 0.5 at every step; in the
output-phase mode the dev sequences are teacher-forced, and strict correctness there implies a
correct greedy decoding); it stops once at least `criterion` of dev is correct, and reports
`trials_to_criterion` (training sequences consumed) and `criterion_reached`. Learning is online, one
sequence at a time by the model's own rule, so the loop is its own rather than the shared epoch loop
(`fit.py`); its dev checks are recorded in the shared `History` (one evaluation per check, the trials
trained so far among its figures).

How it was checked (tests/baselines/neural/test_lstm_g.py): both modes learn toy tasks; a seed repeats exactly and
reloads its checkpoint; runs through the harness runner are stored and rescored.

Deviations and what the dissertation leaves open: the go unit and the separate feedback units
(Monner feeds the previous output layer back, his sentences end without a marker); the
end-of-sequence unit (not stated, §4.2.1.3); teacher forcing in training (not stated); the
criterion is checked every `check_every` sequences, so trials to criterion are multiples of it
(Monner does not say how often he tested); the grounded recipes use this one-layer network with
delayed recurrence, not ch. 4's multi-pathway network (Fig. 4.6, 320 blocks, ~60k weights). On the
grounded suites Monner sets no criterion (§4.2.4: 3 million pairs per network), so their `paper`
budget trains all its pairs; the criterion of their `cpu-small` budget is structbench's own.

PyTorch (with `nets.py`, `fit.py` and scipy) is imported where a run trains or answers, never with the
classes (docs/architecture.md, "Model classes load without PyTorch").
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any, ClassVar, TypeAlias

import numpy as np
import numpy.typing as npt
from pydantic import PositiveFloat, PositiveInt
from tqdm import tqdm

from structbench.baselines.neural import checkpoint
from structbench.baselines.neural.lstm_g.settings import Architecture, Rule, Squash
from structbench.baselines.neural.model import NeuralModel
from structbench.baselines.neural.settings import Fraction
from structbench.convergence import Convergence, Criterion
from structbench.errors import NotApplicable
from structbench.progress import run_bar
from structbench.seeding import seed_everything
from structbench.specs import Example, Frozen, Split

if TYPE_CHECKING:
    import torch

    from structbench.baselines.neural.fit import History
    from structbench.baselines.neural.lstm_g.nets import LstmNetwork

IntArray = npt.NDArray[np.int64]
FloatArray = npt.NDArray[np.float64]
EOS = "<eos>"
"""The end-of-sequence output unit of the output-phase mode."""
NONE = -1
"""No unit on: an unknown input token, or an all-zero target."""
CHUNK = 512
"""Sequences per batched forward pass (evaluation and decoding)."""


class LstmGSettings(Frozen):
    """Architecture, training and stopping of Monner's one-layer LSTM (shared by both training rules)."""

    blocks: PositiveInt = 8
    """Memory blocks (one cell and its input, forget and output gate each)."""
    peepholes: bool = True
    """Peephole connections from each cell to its own gates."""
    direct: bool = True
    """Direct input→output connections."""
    recurrent: bool = False
    """Delayed recurrent connections from the previous step's gated cell outputs to all gates and cells."""
    cell_squash: Squash = "logistic"
    """The memory cells' squashing function."""
    init_range: PositiveFloat = 0.1
    """Initial weights uniform in [-init_range, init_range)."""
    alpha: PositiveFloat = 0.1
    """Learning rate α (per time step for lstm-g, per sequence for lstm-bptt)."""
    answer_at: tuple[str, ...] | None = None
    """Answer at the input steps holding these tokens (DSR's prompts) instead of in an output phase."""
    criterion: Fraction | None = None
    """Stop when this share of dev is strictly correct (None: train all `max_trials`)."""
    check_every: PositiveInt = 100
    """Training sequences between criterion checks on dev."""
    max_trials: PositiveInt = 100_000
    """Training sequences at most."""
    dev_limit: PositiveInt | None = None
    """Check on at most this many dev sequences (a fixed prefix); None: all."""
    max_length: PositiveInt | None = None
    """Longest output decoded, end unit included; None = twice the longest training target + 1."""
    threads: PositiveInt = 1
    """CPU threads for torch and BLAS; part of the run key (two threads may round otherwise than one)."""


class LstmGRuleSettings(LstmGSettings):
    """`lstm-g`'s settings: which local rule trains the network."""

    rule: Rule = "lstm-g"
    """`lstm-g` (eqs. 2.14-2.24) or `lstm`, the original LSTM algorithm without the peephole error term (eqs. 2.5-2.13)."""


class Coding:
    """Which unit each token is on: inputs, the go and feedback units of the output phase, outputs."""

    def __init__(self, inputs: Sequence[str], outputs: Sequence[str], answer_at: tuple[str, ...] | None) -> None:
        self.answer_at = answer_at
        self.inputs = list(inputs)
        self.input_index = {token: i for i, token in enumerate(self.inputs)}
        if answer_at is None:
            self.outputs = [*outputs, EOS]
            self.go = len(self.inputs)
            self.feedback = len(self.inputs) + 1
            self.width = len(self.inputs) + 1 + len(outputs)
        else:
            self.outputs = list(outputs)
            self.go = self.feedback = NONE
            self.width = len(self.inputs)
        self.output_index = {token: i for i, token in enumerate(self.outputs)}

    @classmethod
    def build(cls, examples: Sequence[Example], answer_at: tuple[str, ...] | None) -> Coding:
        """Units for every token of the training examples, in sorted order."""
        inputs = sorted({token for e in examples for token in e.input})
        outputs = sorted({token for e in examples for token in e.target or []})
        return cls(inputs, outputs, answer_at)

    def trial(self, tokens: Sequence[str], target: Sequence[str] | None) -> tuple[IntArray, IntArray]:
        """Per step, the input unit on and the target unit on (NONE: none, an all-zero target)."""
        target = target or []
        inputs = [self.input_index.get(token, NONE) for token in tokens]
        if self.answer_at is not None:
            outputs = [NONE] * len(tokens)
            answers = [i for i, token in enumerate(tokens) if token in self.answer_at]
            for step, token in zip(answers, target, strict=False):
                outputs[step] = self.output_index.get(token, NONE)
        else:
            fed = [self.feedback + self.output_index[t] if t in self.output_index else NONE for t in target]
            inputs += [self.go, *fed]
            outputs = [NONE] * len(tokens) + [self.output_index.get(t, NONE) for t in target]
            outputs.append(self.output_index[EOS])
        return np.array(inputs, dtype=np.int64), np.array(outputs, dtype=np.int64)

    def batch(self, trials: Sequence[tuple[IntArray, IntArray]]) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
        """Padded one-hot inputs [B, T, I], targets [B, T, K] and the mask of real steps [B, T]."""
        import torch

        steps = max(len(inputs) for inputs, _ in trials)
        x = torch.zeros(len(trials), steps, self.width, dtype=torch.float64)
        y = torch.zeros(len(trials), steps, len(self.outputs), dtype=torch.float64)
        mask = torch.zeros(len(trials), steps, dtype=torch.bool)
        for b, (inputs, outputs) in enumerate(trials):
            mask[b, : len(inputs)] = True
            on = np.flatnonzero(inputs >= 0)
            x[b, on, inputs[on]] = 1.0
            on = np.flatnonzero(outputs >= 0)
            y[b, on, outputs[on]] = 1.0
        return x, y, mask


def one_hot(ids: IntArray, width: int) -> FloatArray:
    """[T, width] rows with a 1 at each id (none for NONE)."""
    dense = np.zeros((len(ids), width))
    steps = np.flatnonzero(ids >= 0)
    dense[steps, ids[steps]] = 1.0
    return dense


Batches: TypeAlias = "list[tuple[torch.Tensor, torch.Tensor, torch.Tensor]]"


def batches(coding: Coding, trials: Sequence[tuple[IntArray, IntArray]]) -> Batches:
    """`trials` as padded one-hot batches of at most CHUNK sequences (built once, checked often)."""
    return [coding.batch(trials[start : start + CHUNK]) for start in range(0, len(trials), CHUNK)]


def strictly_correct(net: LstmNetwork, encoded: Batches) -> float:
    """Share of the sequences (teacher-forced) on which every output unit is on its target's side of 0.5 at every step."""
    import torch

    total = sum(x.shape[0] for x, _, _ in encoded)
    if not total:
        return 0.0
    correct = 0
    with torch.no_grad():
        for x, y, mask in encoded:
            out, _ = net.run(x, mask)
            agree = ((out > 0.0) == (y > 0.5)) | ~mask.unsqueeze(2)  # y_θ > 0.5 exactly when s_θ > 0
            correct += int(agree.all(dim=2).all(dim=1).sum())
    return correct / total


class LstmGModel(NeuralModel):
    """Fit, transduce and report for Monner's network; subclasses say how one sequence is learnt."""

    protocols: ClassVar[tuple[str, ...]] = ("transduction",)
    settings_class: ClassVar[type[LstmGSettings]] = LstmGSettings

    def __init__(self, budget: str = "cpu-small", **overrides: Any) -> None:
        super().__init__(budget, **overrides)
        self.settings: LstmGSettings | None = None
        self.net: LstmNetwork | None = None
        self.coding: Coding | None = None
        self.max_length = 64
        self.reported: dict[str, float] = {}

    def learner(self, net: LstmNetwork, settings: Any) -> Callable[[IntArray, IntArray], None]:
        """A function that trains `net` on one encoded sequence (input ids, target ids)."""
        raise NotImplementedError

    def fit(self, train: Split, dev: Split | None, *, seed: int) -> None:
        from structbench.baselines.neural.lstm_g.nets import LstmNetwork

        settings, self.citation = self.resolve(train.suite)
        self.settings = settings
        self.use_threads(settings.threads)
        if not train.examples:
            raise NotApplicable(f"{self.name} must be trained, and {train.suite} has no training examples")
        seed_everything(seed)
        coding = self.coding = Coding.build(train.examples, settings.answer_at)
        longest = max(len(e.target or []) for e in train.examples)
        self.max_length = settings.max_length or 2 * longest + 1
        architecture = Architecture(
            inputs=coding.width,
            blocks=settings.blocks,
            outputs=len(coding.outputs),
            peepholes=settings.peepholes,
            direct=settings.direct,
            recurrent=settings.recurrent,
            cell_squash=settings.cell_squash,
        )
        self.net = net = LstmNetwork(architecture)
        path = checkpoint.checkpoint_path(train.suite, train.draw, self.name, self.described(settings), seed)
        meta = self.reload_trained(path, net, seed, inputs=coding.inputs, outputs=coding.outputs)
        if meta is not None:
            self.reported = {str(k): float(v) for k, v in meta.get("statistics", {}).items()}
            return
        rng = np.random.default_rng(seed)
        net.initialise(rng, settings.init_range)
        self._train(net, coding, settings, train, dev, rng, seed)
        self.save_trained(
            path,
            net,
            train.suite,
            seed,
            settings,
            inputs=coding.inputs,
            outputs=coding.outputs,
            statistics=self.reported,
        )

    def _train(
        self,
        net: LstmNetwork,
        coding: Coding,
        settings: LstmGSettings,
        train: Split,
        dev: Split | None,
        rng: np.random.Generator,
        seed: int,
    ) -> None:
        """Train on sequences in a seed-shuffled order (cycling) until the criterion or `max_trials`."""
        from structbench.baselines.neural.fit import Evaluation, Figures, History

        trials = [coding.trial(e.input, e.target) for e in train.examples]
        dev_examples = (dev.examples if dev else [])[: settings.dev_limit]
        dev_trials = batches(coding, [coding.trial(e.input, e.target) for e in dev_examples])
        learn = self.learner(net, settings)
        history = History(stopped="max_trials")
        started = time.perf_counter()

        def check(consumed: int) -> float:
            """The share of dev strictly correct now, recorded as one evaluation (its figures say after how many trials)."""
            share = strictly_correct(net, dev_trials)
            figures: Figures = {"trials": float(consumed), "dev_strict_accuracy": share}
            history.evaluations.append(Evaluation(len(history.evaluations) + 1, figures, time.perf_counter() - started))
            history.selected_epoch = len(history.evaluations)  # online learning keeps the last weights
            return share

        reached: int | None = None
        order = rng.permutation(len(trials))
        position = 0
        consumed = 0
        bar = tqdm(range(settings.max_trials), desc=run_bar(train.suite, self.name, seed), unit="trial", disable=None)
        for _ in bar:
            if position == len(order):
                order, position = rng.permutation(len(trials)), 0
            learn(*trials[order[position]])
            position += 1
            consumed += 1
            if settings.criterion is not None and dev_trials and consumed % settings.check_every == 0:
                share = check(consumed)
                bar.set_postfix(dev=f"{share:.3f}")
                if share >= settings.criterion:
                    reached = consumed
                    history.stopped = f"dev criterion {settings.criterion} reached"
                    break
        bar.close()
        last = history.evaluations[-1].figures if history.evaluations else None
        if dev_trials and (last is None or last["trials"] != consumed):
            check(consumed)
        if settings.criterion is not None and dev_trials:
            history.convergence = self._judged(settings.criterion, history, grounded=settings.answer_at is None)
        self.history = history.as_dict()
        self.reported = {"trials_trained": float(consumed)}
        if history.evaluations:
            self.reported["dev_strict_accuracy"] = float(history.evaluations[-1].figures["dev_strict_accuracy"] or 0.0)
        if settings.criterion is not None and dev_trials:
            self.reported["criterion_reached"] = 1.0 if reached is not None else 0.0
            if reached is not None:
                self.reported["trials_to_criterion"] = float(reached)

    @staticmethod
    def _judged(criterion: float, history: History, *, grounded: bool) -> Convergence:
        """The dev criterion against the checks made (`fit.judged`), counted in training sequences, not
        epochs: learning is online. On Distracted Sequence Recall it is Monner's; in the output-phase mode
        (`grounded`) it is structbench's own, since Monner trains the grounded networks without one."""
        from structbench.baselines.neural.fit import judged

        source = (
            "structbench's own stopping rule on the grounded suites: Monner 2011 §4.2.4 trains every network on "
            "3 million pairs without one; the 95% threshold is §2.7.1's, for Distracted Sequence Recall"
            if grounded
            else "Monner 2011 §2.7.1: trained until 95% of never-seen trials are correct"
        )
        rule = Criterion(statistic="dev_strict_accuracy", at_least=criterion, source=source)
        found = judged(rule, history.evaluations)
        check = history.evaluations[(found.epochs or 1) - 1]  # checks are numbered from 1
        return found.model_copy(update={"epochs": int(check.figures["trials"] or 0)})

    def statistics(self) -> dict[str, float]:
        """`trials_to_criterion` (training sequences until the dev criterion held) and `criterion_reached`
        (1 or 0) when the recipe sets a criterion and there is a dev split; `trials_trained` always, and
        `dev_strict_accuracy` (the share of dev strictly correct at the end) with a dev split."""
        return dict(self.reported)

    def transduce(self, inputs: list[list[str]]) -> list[list[str]]:
        import torch

        if self.net is None or self.coding is None:
            raise RuntimeError(f"{self.name} must be fitted before it can transduce")
        answers: list[list[str]] = []
        with torch.no_grad():
            for start in range(0, len(inputs), CHUNK):
                answers += self._answer(self.net, self.coding, inputs[start : start + CHUNK])
        return answers

    def _answer(self, net: LstmNetwork, coding: Coding, inputs: list[list[str]]) -> list[list[str]]:
        import torch

        if coding.answer_at is not None:
            trials = [coding.trial(tokens, None) for tokens in inputs]
            x, _, mask = coding.batch(trials)
            chosen = net.run(x, mask)[0].argmax(dim=2)
            return [
                [coding.outputs[int(chosen[b, t])] for t, token in enumerate(tokens) if token in coding.answer_at]
                for b, tokens in enumerate(inputs)
            ]
        if not inputs:
            return []
        unknown = np.zeros(0, dtype=np.int64)
        read = [
            (np.array([coding.input_index.get(t, NONE) for t in tokens], dtype=np.int64), unknown) for tokens in inputs
        ]
        x, _, mask = coding.batch(read)
        _, state = net.run(x, mask)
        step = torch.zeros(len(inputs), 1, coding.width, dtype=torch.float64)
        step[:, 0, coding.go] = 1.0
        eos = coding.output_index[EOS]
        emitted: list[list[str]] = [[] for _ in inputs]
        finished = torch.zeros(len(inputs), dtype=torch.bool)
        for _ in range(self.max_length):
            out, state = net.run(step, state=state)
            chosen = out[:, 0].argmax(dim=1)
            for b in np.flatnonzero(~finished.numpy()):
                if int(chosen[b]) == eos:
                    finished[b] = True
                else:
                    emitted[b].append(coding.outputs[int(chosen[b])])
            if bool(finished.all()):
                break
            step = torch.zeros_like(step)
            feedback = torch.where(chosen == eos, coding.go, coding.feedback + chosen)
            step[torch.arange(len(inputs)), 0, feedback] = 1.0
        return emitted


class LstmG(LstmGModel):
    """`lstm-g`: trained online by LSTM-g's local rule (`--set rule=lstm`: the original LSTM algorithm)."""

    name = "lstm-g"
    settings_class = LstmGRuleSettings

    def learner(self, net: LstmNetwork, settings: LstmGRuleSettings) -> Callable[[IntArray, IntArray], None]:
        from structbench.baselines.neural.lstm_g.nets import LocalLearner

        local = LocalLearner(net, settings.alpha, settings.rule)
        width, outputs = net.architecture.inputs, net.architecture.outputs

        def learn(inputs: IntArray, targets: IntArray) -> None:
            x, y = one_hot(inputs, width), one_hot(targets, outputs)
            local.reset()
            for t in range(len(inputs)):
                local.step(x[t], y[t])  # every step has a target: all-zero off the answers (§2.7.1)

        return learn


class LstmBptt(LstmGModel):
    """`lstm-bptt`: the same network, one plain SGD step of size α per sequence on the BPTT gradient."""

    name = "lstm-bptt"

    def learner(self, net: LstmNetwork, settings: LstmGSettings) -> Callable[[IntArray, IntArray], None]:
        import torch
        import torch.nn.functional as F

        parameters = list(net.parameters())
        width, outputs, alpha = net.architecture.inputs, net.architecture.outputs, settings.alpha

        def learn(inputs: IntArray, targets: IntArray) -> None:
            x = torch.from_numpy(one_hot(inputs, width)).unsqueeze(0)
            y = torch.from_numpy(one_hot(targets, outputs)).unsqueeze(0)
            out, _ = net.run(x)
            loss = F.binary_cross_entropy_with_logits(out, y, reduction="sum")  # -(2.9) summed over the steps
            gradients = torch.autograd.grad(loss, parameters)
            with torch.no_grad():
                for parameter, gradient in zip(parameters, gradients, strict=True):
                    parameter.sub_(alpha * gradient)

        return learn
