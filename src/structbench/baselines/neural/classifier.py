"""The harness side of a trained neural classifier: recipe -> network -> trained weights -> labels.

Tran (2018, ch. 5) trains classifiers for two tasks: the number of the verb that follows a
sentence prefix (§5.5, the number-prediction objective of Linzen et al. 2016) and the
natural-logic relation between two formulas (§5.6, the setup of Bowman et al. 2015b, where a
premise and a hypothesis are encoded separately and the two vectors classified together).
`NeuralClassifier` speaks the classification protocol for both. `fit` resolves the settings
from the model's recipe for the suite (budget `cpu-small` unless `--set budget=paper`), builds
the vocabulary from the training split only (any other token reads as `<unk>`), and either
reloads the run's checkpoint or trains with cross-entropy on (input, label) and saves one.
Model selection sees the dev split only: the epoch with the best dev accuracy over the whole
dev split (for the logic suites that is Tran's pooled validation accuracy, every operator
count together) is kept, and `statistics()` reports that accuracy with the run.

The loop is the classification counterpart of the shared transduction trainer (`trainer.py`):
Adam with gradient clipping, length-bucketed batches, optional mixed precision on CUDA, the
same selection rules, patience and `stop_at`. Subclasses name their settings and network
(`classifier_nets.py`); `pair = True` models read `premise <sep> hypothesis`.
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, ClassVar

import numpy as np
import torch
import torch.nn.functional as F
from pydantic import PositiveInt
from torch import nn
from torch.nn.utils.rnn import pad_sequence
from tqdm import tqdm

from structbench.baselines.neural import checkpoint
from structbench.baselines.neural.batching import length_buckets
from structbench.baselines.neural.run import NeuralRun
from structbench.baselines.neural.settings import TrainSettings
from structbench.baselines.neural.trainer import Evaluation, History, Selector, optimizer_step
from structbench.baselines.neural.vocab import PAD, Vocabulary
from structbench.errors import NotApplicable, UserError
from structbench.specs import Example, Split

SEP = "<sep>"
"""The token between premise and hypothesis in the logic suites' inputs."""
TRANSDUCTION_ONLY = ("teacher_forcing", "guidance", "max_length")
"""Shared settings that only a decoder reads; a classifier refuses them rather than ignore them."""
PREDICT_BATCH = 256
"""Examples per forward pass when evaluating on dev and classifying."""

UNSEEN = -1
"""The label id of an input whose label is unknown (at prediction) or was never seen in training."""
Encoded = tuple[tuple[list[int], ...], int]
"""One example as the network reads it: the token ids of each segment, and its label id (or UNSEEN)."""


class ClassifierSettings(TrainSettings):
    """The shared training settings, as a classifier reads them.

    `teacher_forcing`, `guidance` and `max_length` belong to decoders and are refused; the
    selection rules, `stop_at`, `patience` and `eval_every` mean what they mean for every
    neural baseline, with accuracy being label accuracy."""

    dev_limit: PositiveInt | None = 2000
    """Evaluate on at most this many dev examples, evenly spaced through the frozen dev split (a
    dev split ordered by condition, as the logic suites' is by operator count, stays pooled)."""
    train_limit: PositiveInt | None = None
    """Train on at most this many training examples, a random subset drawn with the run's seed
    (a compute budget, never a paper setting); None trains on all."""


@dataclass(frozen=True)
class ClassifierBatch:
    """Padded token ids of each input segment (one for a sentence, two for a premise-hypothesis pair)."""

    segments: tuple[torch.Tensor, ...]
    """Each [B, T]: token ids padded on the right with PAD; every row has at least one real token."""
    labels: torch.Tensor
    """[B] label ids (UNSEEN where unknown)."""
    order: tuple[int, ...]
    """Positions of these rows in the list the batch was made from."""

    def to(self, device: torch.device) -> ClassifierBatch:
        return ClassifierBatch(
            tuple(s.to(device, non_blocking=True) for s in self.segments),
            self.labels.to(device, non_blocking=True),
            self.order,
        )


class ClassifierNet(nn.Module):
    """Base of the classifier networks: padded segments in, one row of label scores per example out."""

    def forward(self, segments: tuple[torch.Tensor, ...]) -> torch.Tensor:  # pragma: no cover - interface
        """[B, n_labels] unnormalised label scores."""
        raise NotImplementedError


def real_lengths(ids: torch.Tensor) -> torch.Tensor:
    """[B] number of real (non-padding) tokens of each row of a right-padded [B, T] id tensor."""
    return ids.ne(PAD).sum(dim=1)


def make_batch(rows: Sequence[Encoded], order: Sequence[int]) -> ClassifierBatch:
    """A padded batch of encoded examples."""
    n_segments = len(rows[0][0])
    segments = tuple(
        pad_sequence([torch.tensor(row[0][k], dtype=torch.long) for row in rows], batch_first=True, padding_value=PAD)
        for k in range(n_segments)
    )
    labels = torch.tensor([row[1] for row in rows], dtype=torch.long)
    return ClassifierBatch(segments, labels, tuple(order))


def batches(rows: Sequence[Encoded], batch_size: int, rng: np.random.Generator | None) -> list[ClassifierBatch]:
    """Batches of similar total length: shuffled with `rng` (training), else in a fixed order."""
    lengths = [sum(len(segment) for segment in row[0]) for row in rows]
    return [make_batch([rows[i] for i in indices], indices) for indices in length_buckets(lengths, batch_size, rng)]


def evenly_spaced(items: Sequence[Any], limit: int | None) -> list[Any]:
    """At most `limit` items taken at even steps through `items` (all of them when `limit` is None)."""
    if limit is None or len(items) <= limit:
        return list(items)
    return [items[(i * len(items)) // limit] for i in range(limit)]


class ClassifierTrainer:
    """Trains one classifier network on encoded training examples, selecting on dev."""

    def __init__(
        self,
        net: ClassifierNet,
        settings: ClassifierSettings,
        device: torch.device,
        *,
        seed: int,
        description: str = "train",
    ) -> None:
        self.net = net
        self.settings = settings
        self.device = device
        self.seed = seed
        self.description = description
        self.amp = settings.amp and device.type == "cuda"

    def evaluate(self, dev: Sequence[Encoded]) -> tuple[float, float]:
        """Mean cross-entropy and label accuracy on `dev`."""
        self.net.eval()
        loss, correct = 0.0, 0
        with torch.inference_mode():
            for batch in batches(dev, PREDICT_BATCH, None):
                batch = batch.to(self.device)
                with torch.autocast("cuda", enabled=self.amp):
                    logits = self.net(batch.segments).float()
                loss += float(F.cross_entropy(logits, batch.labels, reduction="sum", ignore_index=UNSEEN))
                correct += int((logits.argmax(dim=-1) == batch.labels).sum())
        return loss / max(len(dev), 1), correct / max(len(dev), 1)

    def train(self, train: Sequence[Encoded], dev: Sequence[Encoded], *, progress: bool | None = None) -> History:
        settings = self.settings
        net = self.net.to(self.device)
        rng = np.random.default_rng(self.seed)
        parameters = [p for p in net.parameters() if p.requires_grad]
        optimizer = torch.optim.Adam(parameters, lr=settings.lr)
        scaler = torch.amp.GradScaler("cuda", enabled=self.amp)
        selector = Selector.of(settings, bool(dev))
        bar = tqdm(
            range(1, settings.epochs + 1),
            desc=self.description,
            unit="epoch",
            disable=progress is False or None,
            leave=False,
        )
        started = time.perf_counter()
        for epoch in bar:
            net.train()
            total = 0.0
            for batch in batches(train, settings.batch_size, rng):
                batch = batch.to(self.device)
                with torch.autocast("cuda", enabled=self.amp):
                    loss = F.cross_entropy(net(batch.segments).float(), batch.labels)
                optimizer_step(loss, optimizer, scaler, parameters, settings.clip)
                total += float(loss.detach()) * len(batch.order)
            train_loss = total / max(len(train), 1)
            if not math.isfinite(train_loss):
                raise FloatingPointError(f"training loss became {train_loss} in epoch {epoch}; lower lr or set clip.")
            if epoch % settings.eval_every and epoch != settings.epochs:
                continue
            dev_loss, dev_accuracy = self.evaluate(dev) if dev else (None, None)
            evaluation = Evaluation(epoch, train_loss, dev_loss, dev_accuracy, time.perf_counter() - started)
            bar.set_postfix(loss=f"{train_loss:.3f}", dev_acc="-" if dev_accuracy is None else f"{dev_accuracy:.3f}")
            if selector.consider(net, evaluation):
                break
        bar.close()
        return selector.restore(net)


class NeuralClassifier(NeuralRun):
    """A trainable classifier whose network and settings come from a subclass and its recipes."""

    protocols: ClassVar[tuple[str, ...]] = ("classification",)
    settings_class: ClassVar[type[ClassifierSettings]] = ClassifierSettings
    net_class: ClassVar[Callable[..., ClassifierNet]]
    """The network, built from (settings, vocabulary size, number of labels)."""
    pair: ClassVar[bool] = False
    """True for models that encode the premise and the hypothesis of `premise <sep> hypothesis` separately."""
    unkeyed_settings: ClassVar[frozenset[str]] = frozenset({"device", "threads", *TRANSDUCTION_ONLY})
    """Where and on how many threads it trains, and the decoder settings it refuses: not part of its key."""

    def __init__(self, budget: str = "cpu-small", **overrides: Any) -> None:
        refused = sorted(set(overrides) & set(TRANSDUCTION_ONLY))
        if refused:
            raise UserError(
                f"{', '.join(map(repr, refused))} only apply to decoders; {self.name!r} is a classifier: drop the --set."
            )
        super().__init__(budget, **overrides)
        self.settings: ClassifierSettings | None = None
        self.net: ClassifierNet | None = None
        self.vocabulary = Vocabulary([])
        self.labels: list[str] = []

    def segments(self, tokens: Sequence[str], where: str) -> tuple[list[str], ...]:
        """The token lists the network reads: the whole input, or (premise, hypothesis) split at `<sep>`.

        An empty segment, or a pair model's input without exactly one `<sep>`, cannot be encoded:
        the model does not apply to such a suite."""
        if not self.pair:
            parts: tuple[list[str], ...] = (list(tokens),)
        else:
            if list(tokens).count(SEP) != 1:
                raise NotApplicable(
                    f"{self.name} reads `premise {SEP} hypothesis` pairs, but {where} has "
                    f"{list(tokens).count(SEP)} {SEP} tokens; use it on the logic suites."
                )
            cut = list(tokens).index(SEP)
            parts = (list(tokens[:cut]), list(tokens[cut + 1 :]))
        if any(not part for part in parts):
            raise NotApplicable(f"{self.name} cannot read {where}: it has an empty {'side' if self.pair else 'input'}.")
        return parts

    def encode(self, tokens: Sequence[str], label: int, where: str) -> Encoded:
        return tuple(self.vocabulary.encode(part) for part in self.segments(tokens, where)), label

    def fit(self, train: Split, dev: Split | None, *, seed: int) -> None:
        settings, self.citation = self.resolve(train.suite)
        self.settings = settings
        self.begin(settings, seed)
        examples = self.training_examples(train, settings, seed)
        self.labels = sorted({str(e.label) for e in examples})
        self.vocabulary = Vocabulary.build(
            part for e in examples for part in self.segments(e.input, f"example {e.id} of {train.suite}")
        )
        self.net = self.net_class(settings, len(self.vocabulary), len(self.labels))
        path = checkpoint.checkpoint_path(train.suite, train.draw, self.name, self.described(settings), seed)
        if path.is_file():
            state, meta = checkpoint.load(path)
            if meta.get("vocabulary") == self.vocabulary.tokens and meta.get("labels") == self.labels:
                self.net.load_state_dict(state)
                self.net.to(self.device)
                self.history = meta.get("history", {})
                self.log(f"{self.name} seed {seed}: reloaded the trained weights from {path}")
                return
        ids = {label: i for i, label in enumerate(self.labels)}
        rows = [self.encode(e.input, ids[str(e.label)], f"example {e.id}") for e in examples]
        dev_examples = evenly_spaced(dev.examples, settings.dev_limit) if dev else []
        # a dev label never seen in training can never be predicted: it counts as wrong and adds no loss
        dev_rows = [self.encode(e.input, ids.get(str(e.label), UNSEEN), f"dev example {e.id}") for e in dev_examples]
        trainer = ClassifierTrainer(self.net, settings, self.device, seed=seed, description=f"{self.name} seed {seed}")
        self.history = trainer.train(rows, dev_rows).as_dict()
        self.save_trained(
            path, self.net, train.suite, seed, settings, vocabulary=self.vocabulary.tokens, labels=self.labels
        )

    def training_examples(self, train: Split, settings: ClassifierSettings, seed: int) -> list[Example]:
        """The labelled examples this run trains on: all of them, or a seeded random `train_limit` of them."""
        unlabelled = next((e for e in train.examples if e.label is None), None)
        if unlabelled is not None:
            raise NotApplicable(f"{self.name} trains on labels, but example {unlabelled.id} of {train.suite} has none.")
        if not train.examples:
            raise NotApplicable(f"{self.name} must be trained, but the train split of {train.suite} is empty.")
        if settings.train_limit is None or len(train.examples) <= settings.train_limit:
            return list(train.examples)
        chosen = np.random.default_rng(seed).choice(len(train.examples), settings.train_limit, replace=False)
        return [train.examples[i] for i in sorted(chosen.tolist())]

    def scores(self, inputs: Sequence[Sequence[str]]) -> torch.Tensor:
        """[N, n_labels] the network's label scores for `inputs`, in their order (on the CPU)."""
        if self.net is None:
            raise NotApplicable(f"{self.name} must be trained first, and this suite has no train split.")
        rows = [self.encode(tokens, UNSEEN, f"input {i}") for i, tokens in enumerate(inputs)]
        out = torch.empty(len(rows), len(self.labels))
        self.net.eval()
        with torch.inference_mode():
            for batch in batches(rows, PREDICT_BATCH, None):
                logits = self.net(batch.to(self.device).segments).float().cpu()
                out[list(batch.order)] = logits
        return out

    def classify(self, inputs: list[list[str]], labels: list[str]) -> list[str]:
        """The highest-scoring label for each input among those of `labels` that training saw."""
        allowed = [i for i, label in enumerate(self.labels) if label in labels]
        if not allowed:
            raise NotApplicable(
                f"{self.name} was trained on the labels {', '.join(self.labels)} and is asked for {', '.join(labels)}."
            )
        if not inputs:
            return []
        scores = self.scores(inputs)
        mask = torch.full((len(self.labels),), float("-inf"))
        mask[allowed] = 0.0
        return [self.labels[i] for i in (scores + mask).argmax(dim=1).tolist()]

    def statistics(self) -> dict[str, float]:
        """`dev_accuracy`: label accuracy on dev of the epoch that model selection kept (empty without dev)."""
        selected = self.history.get("selected_epoch")
        for evaluation in self.history.get("evaluations", []):
            if evaluation["epoch"] == selected and evaluation["dev_accuracy"] is not None:
                return {"dev_accuracy": float(evaluation["dev_accuracy"])}
        return {}
