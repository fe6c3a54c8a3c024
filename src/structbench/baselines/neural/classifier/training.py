"""How a classifier trains and is scored on dev: cross-entropy on (input, label) in the loop every
neural baseline shares (`structbench.baselines.neural.fit`), selecting on label accuracy on dev.

Apart from `model.py` because it needs PyTorch: `model.py` holds the registered classes, which the
registry loads without PyTorch to key, label and check runs; their `fit` imports this module.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

import numpy as np
import torch
import torch.nn.functional as F

from structbench.baselines.neural.classifier.batching import UNSEEN, ClassifierBatch, Encoded, batches
from structbench.baselines.neural.classifier.nets import ClassifierNet
from structbench.baselines.neural.classifier.settings import ClassifierSettings
from structbench.baselines.neural.fit import Figures, History, Schedule, Selector, fit

PREDICT_BATCH = 256
"""Examples per forward pass when evaluating on dev and classifying."""


def evaluate(net: ClassifierNet, dev: Sequence[Encoded], device: torch.device, amp: bool) -> tuple[float, float]:
    """Mean cross-entropy and label accuracy of `net` on `dev`."""
    net.eval()
    loss, correct = 0.0, 0
    with torch.inference_mode():
        for batch in batches(dev, PREDICT_BATCH, None):
            batch = batch.to(device)
            with torch.autocast("cuda", enabled=amp):
                logits = net(batch.segments).float()
            loss += float(F.cross_entropy(logits, batch.labels, reduction="sum", ignore_index=UNSEEN))
            correct += int((logits.argmax(dim=-1) == batch.labels).sum())
    return loss / max(len(dev), 1), correct / max(len(dev), 1)


def train_classifier(
    net: ClassifierNet,
    settings: ClassifierSettings,
    device: torch.device,
    train: Sequence[Encoded],
    dev: Sequence[Encoded],
    *,
    seed: int,
    description: str = "train",
    progress: bool | None = None,
) -> History:
    """Cross-entropy on (input, label) in the shared loop, selecting on label accuracy on `dev`."""
    net = net.to(device)
    rng = np.random.default_rng(seed)
    schedule = Schedule.of(settings, device)

    def step(batch: ClassifierBatch, update: Callable[[torch.Tensor], None]) -> tuple[float, int]:
        batch = batch.to(device)
        with torch.autocast("cuda", enabled=schedule.amp):
            loss = F.cross_entropy(net(batch.segments).float(), batch.labels)
        update(loss)
        return float(loss.detach()), len(batch.order)

    def figures(train_loss: float) -> Figures:
        dev_loss, dev_accuracy = evaluate(net, dev, device, schedule.amp) if dev else (None, None)
        return {"train_loss": train_loss, "dev_loss": dev_loss, "dev_accuracy": dev_accuracy}

    return fit(
        net,
        schedule,
        Selector.of(settings, bool(dev)),
        batches=lambda: batches(train, settings.batch_size, rng),
        step=step,
        evaluate=figures,
        description=description,
        progress=progress,
    )
