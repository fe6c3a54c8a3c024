"""The training loop every neural baseline shares.

Adam on token-level cross-entropy (plus the attention loss of attentive guidance and any
loss the network adds itself), teacher forcing decided per batch, gradient clipping,
optional mixed precision on CUDA, and model selection on the dev split only: the test
splits are never seen before the harness asks for predictions.
"""

from __future__ import annotations

import copy
import math
import random
import time
from collections.abc import Sequence
from dataclasses import asdict, dataclass, field

import numpy as np
import torch
import torch.nn.functional as F
from tqdm import tqdm

from structbench.baselines.neural.batching import IGNORE, Batch, example_batches, length_buckets, make_batch
from structbench.baselines.neural.net import NetOutput, TransductionNet
from structbench.baselines.neural.settings import TrainSettings
from structbench.baselines.neural.vocab import EOS, PAD, Vocabulary
from structbench.specs import Example


def optimizer_step(
    loss: torch.Tensor,
    optimizer: torch.optim.Optimizer,
    scaler: torch.amp.GradScaler,
    parameters: list[torch.nn.Parameter],
    clip: float | None,
) -> None:
    """One update from `loss`, as every neural baseline trains: gradients (scaled for mixed precision on
    CUDA; the scaler is a no-op otherwise), clipped to global norm `clip` where given, then the step."""
    optimizer.zero_grad(set_to_none=True)
    scaler.scale(loss).backward()  # type: ignore[no-untyped-call]  # torch leaves backward unannotated
    if clip is not None:
        scaler.unscale_(optimizer)
        torch.nn.utils.clip_grad_norm_(parameters, clip)
    scaler.step(optimizer)
    scaler.update()


@dataclass
class Evaluation:
    """One evaluation of the model during training."""

    epoch: int
    train_loss: float
    dev_loss: float | None
    dev_accuracy: float | None
    seconds: float


@dataclass
class History:
    """What training did: every evaluation, which one was kept, and why training ended."""

    evaluations: list[Evaluation] = field(default_factory=list)
    selected_epoch: int = 0
    stopped: str = "epochs"

    def as_dict(self) -> dict[str, object]:
        return {
            "evaluations": [asdict(e) for e in self.evaluations],
            "selected_epoch": self.selected_epoch,
            "stopped": self.stopped,
        }


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


def selection_key(selection: str, evaluation: Evaluation) -> tuple[float, ...]:
    """Larger is better: what model selection compares between evaluations."""
    if selection == "dev_accuracy":
        return (evaluation.dev_accuracy or 0.0, -(evaluation.dev_loss or 0.0))
    if selection == "dev_loss":
        return (-(evaluation.dev_loss or 0.0),)
    if selection == "train_loss":
        return (-evaluation.train_loss,)
    return (float(evaluation.epoch),)


@dataclass
class Selector:
    """Model selection over one training run: records each evaluation in `history`, keeps the
    network's state at the best by `selection`, and says when to stop (`stop_at`, `patience`)."""

    selection: str
    stop_at: float | None
    patience: int | None
    history: History = field(default_factory=History)
    best_key: tuple[float, ...] | None = None
    best_state: dict[str, torch.Tensor] | None = None
    waited: int = 0

    @classmethod
    def of(cls, settings: TrainSettings, has_dev: bool) -> Selector:
        """The recipe's selection, or the last epoch where it needs a dev split there is none of."""
        selection = settings.selection if has_dev or settings.selection in ("train_loss", "last") else "last"
        return cls(selection, settings.stop_at, settings.patience)

    def consider(self, net: torch.nn.Module, evaluation: Evaluation) -> bool:
        """Record `evaluation`, keeping `net`'s state if it is the best yet; True when training should stop."""
        self.history.evaluations.append(evaluation)
        key = selection_key(self.selection, evaluation)
        if self.best_key is None or key > self.best_key:
            self.best_key, self.waited = key, 0
            self.best_state = copy.deepcopy(net.state_dict())
            self.history.selected_epoch = evaluation.epoch
        else:
            self.waited += 1
        accuracy = evaluation.dev_accuracy
        if self.stop_at is not None and accuracy is not None and accuracy >= self.stop_at:
            self.history.stopped = f"dev accuracy {accuracy:.3f} reached stop_at"
            return True
        if self.patience is not None and self.waited >= self.patience:
            self.history.stopped = f"no improvement in {self.waited} evaluations"
            return True
        return False

    def restore(self, net: torch.nn.Module) -> History:
        """Give `net` the kept state; the history of the run."""
        if self.best_state is not None:
            net.load_state_dict(self.best_state)
        return self.history


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
        self.amp = settings.amp and device.type == "cuda"

    def batches(self, examples: Sequence[Example], rng: np.random.Generator | None) -> list[Batch]:
        return example_batches(examples, self.source_vocab, self.target_vocab, self.settings.batch_size, rng)

    def evaluate(self, dev: Sequence[Example]) -> tuple[float, float]:
        """Teacher-forced loss and greedy sequence accuracy on `dev`."""
        self.net.eval()
        losses, weights, correct = 0.0, 0, 0
        with torch.inference_mode():
            for batch in self.batches(dev, None):
                batch = batch.to(self.device)
                assert batch.target_mask is not None and batch.target is not None
                with torch.autocast("cuda", enabled=self.amp):
                    output = self.net(batch, True)
                    tokens = int(batch.target_mask.sum())
                    losses += float(batch_loss(output, batch, self.settings.guidance)) * tokens
                    weights += tokens
                    predicted = self.net.decode(batch, self.max_length)
                correct += int(sequence_matches(predicted, batch.target).sum())
        return losses / max(weights, 1), correct / max(len(dev), 1)

    def train(
        self, train: Sequence[Example], dev: Sequence[Example] | None, *, progress: bool | None = None
    ) -> History:
        settings = self.settings
        net = self.net.to(self.device)
        rng = np.random.default_rng(self.seed)
        coin = random.Random(self.seed)
        net.pretrain(lambda epoch: self.batches(train, rng), self.device, progress is not False)
        parameters = [p for p in net.parameters() if p.requires_grad]
        optimizer = torch.optim.Adam(parameters, lr=settings.lr)
        scaler = torch.amp.GradScaler("cuda", enabled=self.amp)
        dev_set = list(dev[: settings.dev_limit] if settings.dev_limit else dev) if dev else []
        selector = Selector.of(settings, bool(dev_set))
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
            total, count = 0.0, 0
            for batch in self.batches(train, rng):
                batch = batch.to(self.device)
                with torch.autocast("cuda", enabled=self.amp):
                    loss = batch_loss(net(batch, coin.random() < settings.teacher_forcing), batch, settings.guidance)
                optimizer_step(loss, optimizer, scaler, parameters, settings.clip)
                total += float(loss.detach()) * len(batch.order)
                count += len(batch.order)
            train_loss = total / max(count, 1)
            if not math.isfinite(train_loss):
                raise FloatingPointError(f"training loss became {train_loss} in epoch {epoch}; lower lr or set clip.")
            if epoch % settings.eval_every and epoch != settings.epochs:
                continue
            dev_loss, dev_accuracy = self.evaluate(dev_set) if dev_set else (None, None)
            evaluation = Evaluation(epoch, train_loss, dev_loss, dev_accuracy, time.perf_counter() - started)
            bar.set_postfix(loss=f"{train_loss:.3f}", dev_acc="-" if dev_accuracy is None else f"{dev_accuracy:.3f}")
            if selector.consider(net, evaluation):
                break
        bar.close()
        return selector.restore(net)
