"""How a transducer trains and decodes: the transduction side of the shared loop (`fit.py`).

Token-level cross-entropy (plus the attention loss of attentive guidance and any loss the
network adds itself), teacher forcing decided per batch, dev loss and greedy sequence
accuracy for model selection and the convergence criterion on the dev split only (the test
splits are never seen before the harness asks for predictions; greedy accuracy on the training
split too where the criterion reads it or there is no dev split), and batched greedy decoding.
"""

from __future__ import annotations

import random
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np
import torch
import torch.nn.functional as F

from structbench.baselines.neural.batching import IGNORE, Batch, example_batches, length_buckets, make_batch
from structbench.baselines.neural.fit import Figures, History, Schedule, Selector, fit
from structbench.baselines.neural.net import NetOutput, TransductionNet
from structbench.baselines.neural.resume import Resume
from structbench.baselines.neural.settings import TrainSettings
from structbench.baselines.neural.vocab import EOS, PAD, Vocabulary
from structbench.specs import Example


def attention_loss(attention: torch.Tensor, targets: torch.Tensor) -> torch.Tensor:
    """Mean over guided steps of -log a_t(target_t) (Hupkes et al. 2018, eq. 5.1 of Korrel 2018)."""
    steps = min(attention.shape[1], targets.shape[1])
    attention, targets = attention[:, :steps], targets[:, :steps]
    valid = (targets != IGNORE) & (targets < attention.shape[2])
    if not bool(valid.any()):
        return attention.sum() * 0.0
    picked = attention.gather(2, targets.clamp(min=0, max=attention.shape[2] - 1).unsqueeze(2)).squeeze(2)
    return -(picked.clamp_min(1e-9).log() * valid).sum() / valid.sum()


def batch_loss(output: NetOutput, batch: Batch, guidance: float) -> torch.Tensor:
    assert batch.target is not None
    logits = output.logits.float()
    loss = F.cross_entropy(logits.reshape(-1, logits.shape[-1]), batch.target.reshape(-1), ignore_index=PAD)
    if guidance > 0 and output.attention is not None and batch.attention is not None:
        loss = loss + guidance * attention_loss(output.attention.float(), batch.attention)
    if output.aux_loss is not None:
        loss = loss + output.aux_loss
    return loss


def sequence_matches(predicted: torch.Tensor, target: torch.Tensor) -> torch.Tensor:
    """[B] whether each predicted row equals its target up to and including EOS."""
    width = target.shape[1]
    if predicted.shape[1] < width:
        pad = torch.full((predicted.shape[0], width - predicted.shape[1]), PAD, device=predicted.device)
        predicted = torch.cat([predicted, pad], dim=1)
    predicted = predicted[:, :width]
    # positions after the first EOS of the prediction do not count; a missing EOS is wrong
    after_eos = (predicted == EOS).long().cumsum(dim=1) - (predicted == EOS).long() > 0
    predicted = predicted.masked_fill(after_eos, PAD)
    return (predicted == target).all(dim=1)


def decode_all(
    net: TransductionNet,
    sources: Sequence[Sequence[str]],
    source_vocab: Vocabulary,
    max_length: int,
    device: torch.device,
    batch_size: int = 256,
    attention: Sequence[Sequence[int] | None] | None = None,
) -> list[torch.Tensor]:
    """Greedy output ids for every source, in the given order (batched by length).

    `attention` (one list per source) is passed only to networks that read attention
    targets at test time (oracle guidance).
    """
    net.eval()
    out: list[torch.Tensor] = [torch.empty(0)] * len(sources)
    with torch.inference_mode():
        for indices in length_buckets([len(s) for s in sources], batch_size, None):
            chosen = None if attention is None else [attention[i] for i in indices]
            batch = make_batch([sources[i] for i in indices], source_vocab, attention=chosen, order=indices).to(device)
            ids = net.decode(batch, max_length).cpu()
            for row, i in enumerate(indices):
                out[i] = ids[row]
    return out


class Trainer:
    """Trains one network on one training split, selecting on the dev split."""

    def __init__(
        self,
        net: TransductionNet,
        settings: TrainSettings,
        source_vocab: Vocabulary,
        target_vocab: Vocabulary,
        device: torch.device,
        *,
        seed: int,
        max_length: int,
        description: str = "train",
    ) -> None:
        self.net = net
        self.settings = settings
        self.source_vocab = source_vocab
        self.target_vocab = target_vocab
        self.device = device
        self.seed = seed
        self.max_length = max_length
        self.description = description
        self.schedule = Schedule.of(settings, device)

    def batches(self, examples: Sequence[Example], rng: np.random.Generator | None) -> list[Batch]:
        return example_batches(examples, self.source_vocab, self.target_vocab, self.settings.batch_size, rng)

    def limited(self, examples: Sequence[Example]) -> list[Example]:
        """The first `dev_limit` of `examples` (all where it is None): what an evaluation reads."""
        limit = self.settings.dev_limit
        return list(examples[:limit] if limit else examples)

    def evaluate(self, dev: Sequence[Example]) -> tuple[float, float]:
        """Teacher-forced loss and greedy sequence accuracy on `dev`."""
        self.net.eval()
        losses, weights, correct = 0.0, 0, 0
        with torch.inference_mode():
            for batch in self.batches(dev, None):
                batch = batch.to(self.device)
                assert batch.target_mask is not None and batch.target is not None
                with torch.autocast("cuda", enabled=self.schedule.amp):
                    output = self.net(batch, True)
                    tokens = int(batch.target_mask.sum())
                    losses += float(batch_loss(output, batch, self.settings.guidance)) * tokens
                    weights += tokens
                    # a prediction is right only if it equals its target through the target's EOS, so the
                    # steps past the target's width cannot change a verdict: decoding stops there (exact)
                    predicted = self.net.decode(batch, min(self.max_length, batch.target.shape[1]))
                correct += int(sequence_matches(predicted, batch.target).sum())
        return losses / max(weights, 1), correct / max(len(dev), 1)

    def train(
        self,
        train: Sequence[Example],
        dev: Sequence[Example] | None,
        *,
        progress: bool | None = None,
        resume: Resume | None = None,
    ) -> History:
        """Train on `train`, selecting on `dev`; with `resume`, going on from its saved state (its
        generators are set to this training's batch order and teacher-forcing coin here)."""
        settings = self.settings
        net = self.net.to(self.device)
        rng = np.random.default_rng(self.seed)
        coin = random.Random(self.seed)
        if resume is not None:
            resume.generators = lambda: {"order": rng.bit_generator.state, "coin": coin.getstate()}

            def restore(state: dict[str, Any]) -> None:
                rng.bit_generator.state = state["order"]
                coin.setstate(state["coin"])

            resume.restore_generators = restore
        net.pretrain(lambda epoch: self.batches(train, rng), self.device, progress is not False)
        dev_set = self.limited(dev) if dev else []

        def step(batch: Batch, update: Callable[[torch.Tensor], None]) -> tuple[float, int]:
            batch = batch.to(self.device)
            with torch.autocast("cuda", enabled=self.schedule.amp):
                loss = batch_loss(net(batch, coin.random() < settings.teacher_forcing), batch, settings.guidance)
            update(loss)
            return float(loss.detach()), len(batch.order)

        # greedy accuracy on the training data where the criterion reads it, or where there is no dev split
        # to say how far training got (MiniSCAN's 14 pairs are their own validation set)
        judged_on_train = settings.criterion is not None and settings.criterion.statistic == "train_accuracy"
        train_set = self.limited(train) if judged_on_train or not dev_set else []

        def evaluate(train_loss: float) -> Figures:
            dev_loss, dev_accuracy = self.evaluate(dev_set) if dev_set else (None, None)
            figures: Figures = {"train_loss": train_loss, "dev_loss": dev_loss, "dev_accuracy": dev_accuracy}
            if train_set:
                figures["train_accuracy"] = self.evaluate(train_set)[1]
            return figures

        return fit(
            net,
            self.schedule,
            Selector.of(settings, bool(dev_set)),
            batches=lambda: self.batches(train, rng),
            step=step,
            evaluate=evaluate,
            description=self.description,
            progress=progress,
            resume=resume,
        )
