"""The one training loop every epoch-trained neural baseline runs, and the record of what it did.

`fit` makes passes over the training data: each epoch draws its batches (`batches()`, called
once at the start of the epoch, so the order is drawn exactly when every family always drew
it), hands each to the family's `step` (the loss of a batch and the update; most families
take one optimiser step per batch, the neural HMM several), averages the training loss,
evaluates every `eval_every` epochs (and after the last) and lets a `Selector` keep the best
evaluation's weights and say when to stop. The training loss and each family's figures are
what a family reports in `History`: one record shape for transducers, classifiers and
language models alike, which checkpoints store and `statistics()` read.

The updates themselves are the shared optimiser's: Adam, gradient clipping and loss scaling
(`Optimiser`). A schedule may decay the learning rate after every evaluation that is no better
than the best so far, and end training after a number of such decays (`Schedule.lr_decay`, as
the authors' LM script of Tran 2018 ch. 5 trains): the evaluations decide it, so a run repeats
it exactly. A family with its own learning rule and no epochs (LSTM-g) has its own loop.
"""

from __future__ import annotations

import copy
import math
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import Any, TypeVar

import torch
from tqdm import tqdm

from structbench.baselines.neural.resume import Resume
from structbench.convergence import Convergence, Criterion, recent_improvement

Figures = dict[str, float | None]
"""What one evaluation measured, by name (e.g. `train_loss`, `dev_accuracy`, `dev_perplexity`)."""
B = TypeVar("B")


class Optimiser:
    """Adam over a network's trainable parameters, with clipping and (on CUDA, with `amp`) loss scaling."""

    def __init__(self, net: torch.nn.Module, lr: float, clip: float | None, amp: bool) -> None:
        self.parameters = [p for p in net.parameters() if p.requires_grad]
        self.optimizer = torch.optim.Adam(self.parameters, lr=lr)
        self.scaler = torch.amp.GradScaler("cuda", enabled=amp)
        self.clip = clip
        self.updates = 0
        """Steps taken so far."""

    def update(self, loss: torch.Tensor) -> None:
        """One step down the gradient of `loss`, as every neural baseline trains: gradients (scaled for
        mixed precision on CUDA; the scaler is a no-op otherwise), clipped to global norm `clip` where
        given, then the step."""
        self.optimizer.zero_grad(set_to_none=True)
        self.scaler.scale(loss).backward()  # type: ignore[no-untyped-call]  # torch leaves backward unannotated
        if self.clip is not None:
            self.scaler.unscale_(self.optimizer)
            torch.nn.utils.clip_grad_norm_(self.parameters, self.clip)
        self.scaler.step(self.optimizer)
        self.scaler.update()
        self.updates += 1

    def decay(self, factor: float) -> None:
        """Multiply the learning rate of every parameter group by `factor` (Adam's moments are kept)."""
        for group in self.optimizer.param_groups:
            group["lr"] *= factor


@dataclass
class Evaluation:
    """One evaluation of the model during training."""

    epoch: int
    """The pass over the training data after which it was made (for LSTM-g, which learns online, the
    check's number: its figures say after how many training sequences)."""
    figures: Figures
    """What was measured, e.g. the epoch's training loss and the dev accuracy."""
    seconds: float
    """Since training started."""
    updates: int | None = None
    """Optimiser updates since training started (None where the loop does not count them)."""

    def as_dict(self) -> dict[str, Any]:
        counted = {} if self.updates is None else {"updates": self.updates}
        return {"epoch": self.epoch, **self.figures, "seconds": self.seconds, **counted}


@dataclass
class History:
    """What training did: every evaluation, which one was kept, and why training ended."""

    evaluations: list[Evaluation] = field(default_factory=list)
    selected_epoch: int = 0
    stopped: str = "epochs"
    convergence: Convergence | None = None
    """How training went against the recipe's criterion; None without one (or without the dev split it reads)."""
    decayed_after: list[int] = field(default_factory=list)
    """The epochs after whose evaluation the learning rate was decayed (`Schedule.lr_decay`)."""

    def as_dict(self) -> dict[str, object]:
        judged = {} if self.convergence is None else {"convergence": self.convergence.model_dump(mode="json")}
        decayed = {"decayed_after": list(self.decayed_after)} if self.decayed_after else {}
        return {
            "evaluations": [e.as_dict() for e in self.evaluations],
            "selected_epoch": self.selected_epoch,
            "stopped": self.stopped,
            **judged,
            **decayed,
        }

    @classmethod
    def of_dict(cls, record: dict[str, Any]) -> History:
        """The history `as_dict` gave (a resumed training's, `structbench.baselines.neural.resume`)."""
        evaluations = []
        for saved in record["evaluations"]:
            figures = {k: v for k, v in saved.items() if k not in ("epoch", "seconds", "updates")}
            evaluations.append(Evaluation(saved["epoch"], figures, saved["seconds"], saved.get("updates")))
        judged = record.get("convergence")
        return cls(
            evaluations,
            record["selected_epoch"],
            record["stopped"],
            None if judged is None else Convergence.model_validate(judged),
            list(record.get("decayed_after", [])),
        )

    def selected(self) -> Evaluation | None:
        """The evaluation whose weights were kept."""
        return next((e for e in self.evaluations if e.epoch == self.selected_epoch), None)


def selection_key(selection: str, evaluation: Evaluation) -> tuple[float, ...]:
    """Larger is better: what model selection compares between evaluations."""
    figures = evaluation.figures
    if selection == "dev_accuracy":
        return (figures.get("dev_accuracy") or 0.0, -(figures.get("dev_loss") or 0.0))
    if selection == "dev_loss":
        return (-(figures.get("dev_loss") or 0.0),)
    if selection == "dev_perplexity":
        return (-(figures.get("dev_perplexity") or 0.0),)
    if selection == "train_loss":
        return (-(figures.get("train_loss") or 0.0),)
    return (float(evaluation.epoch),)


def judged(criterion: Criterion, evaluations: list[Evaluation]) -> Convergence:
    """`criterion` against a run's evaluations: where it first held (the statistic, epoch, updates and
    seconds there), else the best value measured and the whole run's epochs, updates and seconds."""
    values = [(e, e.figures.get(criterion.statistic)) for e in evaluations]
    measured = [(e, float(v)) for e, v in values if v is not None]
    so_far: list[float] = []
    change: float | None = None
    for evaluation, value in measured:
        so_far.append(value)
        change = recent_improvement(so_far) if criterion.plateau is not None else None
        if criterion.holds(so_far):
            took = {"epochs": evaluation.epoch, "updates": evaluation.updates, "seconds": evaluation.seconds}
            return Convergence(criterion=criterion, reached=True, value=value, change=change, **took)
    last = evaluations[-1] if evaluations else None
    took = {} if last is None else {"epochs": last.epoch, "updates": last.updates, "seconds": last.seconds}
    if not measured:
        return Convergence(criterion=criterion, reached=False, **took)
    best = (max if criterion.at_least is not None else min)(value for _, value in measured)
    return Convergence(criterion=criterion, reached=False, value=best, change=change, **took)


def criterion_of(settings: Any, has_dev: bool) -> Criterion | None:
    """The recipe's criterion, unless it reads a dev split there is none of."""
    criterion: Criterion | None = settings.criterion
    if criterion is not None and criterion.statistic.startswith("dev_") and not has_dev:
        return None
    return criterion


@dataclass
class Selector:
    """Model selection over one training run: records each evaluation in `history`, keeps the
    network's state at the best by `selection`, and says when to stop (`criterion` reached, or
    `patience` run out)."""

    selection: str
    criterion: Criterion | None
    patience: int | None
    worse: str = "no improvement"
    """How the stop by `patience` is told: `{worse} in N evaluations`."""
    history: History = field(default_factory=History)
    best_key: tuple[float, ...] | None = None
    best_state: dict[str, torch.Tensor] | None = None
    waited: int = 0

    @classmethod
    def of(cls, settings: Any, has_dev: bool) -> Selector:
        """The recipe's selection and criterion; without a dev split, the last epoch and no criterion
        that reads dev."""
        selection = settings.selection if has_dev or settings.selection in ("train_loss", "last") else "last"
        return cls(selection, criterion_of(settings, has_dev), settings.patience)

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
        if self.criterion is not None:
            self.history.convergence = judged(self.criterion, self.history.evaluations)
            if self.history.convergence.reached:
                self.history.stopped = f"criterion {self.criterion.shown()} reached"
                return True
        if self.patience is not None and self.waited >= self.patience:
            self.history.stopped = f"{self.worse} in {self.waited} evaluations"
            return True
        return False

    def saved_state(self) -> dict[str, Any]:
        """What `restore_state` takes: the history, the kept weights and the count of evaluations waited."""
        return {
            "history": self.history.as_dict(),
            "best_key": None if self.best_key is None else list(self.best_key),
            "best_state": self.best_state,
            "waited": self.waited,
        }

    def restore_state(self, state: dict[str, Any]) -> None:
        """Go on from `saved_state` (a resumed training's)."""
        self.history = History.of_dict(state["history"])
        self.best_key = None if state["best_key"] is None else tuple(state["best_key"])
        self.best_state = state["best_state"]
        self.waited = int(state["waited"])

    def restore(self, net: torch.nn.Module) -> History:
        """Give `net` the kept state; the history of the run."""
        if self.best_state is not None:
            net.load_state_dict(self.best_state)
        return self.history


@dataclass(frozen=True)
class Schedule:
    """How long and how often: the epochs, the evaluation interval and the optimiser's settings."""

    epochs: int
    lr: float
    clip: float | None
    amp: bool = False
    eval_every: int = 1
    lr_decay: float | None = None
    """Multiply the learning rate by this after every evaluation that the selector did not keep
    (no better than the best so far); None keeps it constant."""
    max_decays: int | None = None
    """With `lr_decay`: an evaluation not kept after this many decays ends training instead; None never does."""

    @classmethod
    def of(cls, settings: Any, device: torch.device) -> Schedule:
        """The schedule a run's settings give (mixed precision only on CUDA)."""
        return cls(
            settings.epochs,
            settings.lr,
            settings.clip,
            settings.amp and device.type == "cuda",
            settings.eval_every,
            settings.lr_decay,
            settings.max_decays,
        )


def fit(
    net: torch.nn.Module,
    schedule: Schedule,
    selector: Selector,
    *,
    batches: Callable[[], Iterable[B]],
    step: Callable[[B, Callable[[torch.Tensor], None]], tuple[float, int]],
    evaluate: Callable[[float], Figures],
    description: str,
    progress: bool | None = None,
    resume: Resume | None = None,
) -> History:
    """Train `net` for `schedule.epochs` passes; the kept weights are restored into it.

    `batches()` gives one epoch's training batches; `step(batch, update)` trains on one of them,
    calling `update(loss)` for each optimiser step, and answers the batch's loss and its weight
    (examples or tokens), whose weighted mean is the epoch's training loss; `evaluate(train_loss)`
    measures the model after an epoch (its figures; `net` is back in training mode after it).
    With `resume`, training goes on after the epoch its saved state was saved after, and saves it
    now and then (`structbench.baselines.neural.resume`).
    """
    optimiser = Optimiser(net, schedule.lr, schedule.clip, schedule.amp)
    done, seconds_before = resume.restore(net, optimiser, selector) if resume is not None else (0, 0.0)
    bar = tqdm(
        range(done + 1, schedule.epochs + 1),
        desc=description,
        unit="epoch",
        disable=progress is False or None,
        leave=False,
    )
    started = time.perf_counter() - seconds_before
    for epoch in bar:
        net.train()
        total, count = 0.0, 0
        for batch in batches():
            loss, weight = step(batch, optimiser.update)
            total += loss * weight
            count += weight
        train_loss = total / max(count, 1)
        if not math.isfinite(train_loss):
            raise FloatingPointError(f"training loss became {train_loss} in epoch {epoch}; lower lr or set clip.")
        if not epoch % schedule.eval_every or epoch == schedule.epochs:
            evaluation = Evaluation(epoch, evaluate(train_loss), time.perf_counter() - started, optimiser.updates)
            figures = evaluation.figures
            bar.set_postfix({name: "-" if value is None else f"{value:.3f}" for name, value in figures.items()})
            if selector.consider(net, evaluation):
                break
            if schedule.lr_decay is not None and selector.history.selected_epoch != epoch:
                history = selector.history
                if schedule.max_decays is not None and len(history.decayed_after) >= schedule.max_decays:
                    history.stopped = f"no improvement after {len(history.decayed_after)} learning-rate decays"
                    break
                optimiser.decay(schedule.lr_decay)
                history.decayed_after.append(epoch)
        if resume is not None:
            resume.save_now_and_then(epoch, time.perf_counter() - started, net, optimiser, selector)
    bar.close()
    if resume is not None:
        resume.discard()
    return selector.restore(net)
