"""The shared training loop: the epoch's training loss is the weighted mean of its batches', evaluations
are made every `eval_every` epochs and after the last, selection keeps the best weights and stops on
patience, and a non-finite loss ends training with the reason."""

from __future__ import annotations

from collections.abc import Callable

import pytest
import torch

from structbench.baselines.neural.fit import Evaluation, Figures, History, Schedule, Selector, fit


def run(
    losses: list[list[tuple[float, int]]],
    selector: Selector,
    figures: Callable[[int, float], Figures],
    eval_every: int = 1,
) -> tuple[History, torch.nn.Linear, list[float]]:
    """Fit a one-weight network whose weight is set to the epoch number by each epoch's first batch."""
    net = torch.nn.Linear(1, 1, bias=False)
    epochs = iter(range(1, len(losses) + 1))
    seen: list[float] = []
    state = {"epoch": 0}

    def batches() -> list[tuple[float, int]]:
        state["epoch"] = next(epochs)
        return losses[state["epoch"] - 1]

    def step(batch: tuple[float, int], update: Callable[[torch.Tensor], None]) -> tuple[float, int]:
        with torch.no_grad():
            net.weight.fill_(float(state["epoch"]))
        return batch

    def evaluate(train_loss: float) -> Figures:
        seen.append(train_loss)
        return figures(state["epoch"], train_loss)

    schedule = Schedule(epochs=len(losses), lr=0.1, clip=None, eval_every=eval_every)
    history = fit(net, schedule, selector, batches=batches, step=step, evaluate=evaluate, description="test")
    return history, net, seen


def test_the_training_loss_is_the_weighted_mean_and_the_best_weights_are_kept() -> None:
    accuracy = {1: 0.2, 2: 0.9, 3: 0.5}
    history, net, seen = run(
        [[(1.0, 1), (4.0, 3)], [(2.0, 2)], [(0.5, 4), (1.5, 4)]],
        Selector("dev_accuracy", None, None),
        lambda epoch, loss: {"train_loss": loss, "dev_loss": 1.0, "dev_accuracy": accuracy[epoch]},
    )
    assert seen == [13.0 / 4, 2.0, 1.0]
    assert history.selected_epoch == 2 and history.stopped == "epochs"
    assert float(net.weight.detach()) == 2.0
    assert history.as_dict()["selected_epoch"] == 2
    assert [e.as_dict()["epoch"] for e in history.evaluations] == [1, 2, 3]
    assert list(history.evaluations[0].as_dict()) == ["epoch", "train_loss", "dev_loss", "dev_accuracy", "seconds"]
    kept = history.selected()
    assert kept is not None and kept.figures["dev_accuracy"] == 0.9


def test_evaluations_follow_eval_every_and_the_last_epoch() -> None:
    history, _, _ = run([[(1.0, 1)]] * 5, Selector("last", None, None), lambda e, loss: {"train_loss": loss}, 2)
    assert [e.epoch for e in history.evaluations] == [2, 4, 5]
    assert history.selected_epoch == 5


def test_patience_stops_with_the_selection_s_words() -> None:
    perplexity = {1: 5.0, 2: 4.0, 3: 4.5, 4: 4.2, 5: 1.0}
    history, net, _ = run(
        [[(1.0, 1)]] * 5,
        Selector("dev_perplexity", None, 2, worse="no lower dev perplexity"),
        lambda epoch, loss: {"dev_perplexity": perplexity[epoch]},
    )
    assert [e.epoch for e in history.evaluations] == [1, 2, 3, 4]
    assert history.stopped == "no lower dev perplexity in 2 evaluations"
    assert history.selected_epoch == 2 and float(net.weight.detach()) == 2.0


def test_stop_at_ends_training_once_dev_accuracy_reaches_it() -> None:
    history, _, _ = run(
        [[(1.0, 1)]] * 4,
        Selector("dev_accuracy", 0.5, None),
        lambda epoch, loss: {"dev_accuracy": 0.25 * epoch},
    )
    assert history.selected_epoch == 2 and history.stopped == "dev accuracy 0.500 reached stop_at"


def test_a_non_finite_training_loss_is_an_error() -> None:
    with pytest.raises(FloatingPointError, match="epoch 1"):
        run([[(float("nan"), 1)]], Selector("last", None, None), lambda e, loss: {})


def test_selection_falls_back_to_the_last_epoch_without_dev() -> None:
    class Settings:
        selection, stop_at, patience = "dev_accuracy", None, None

    assert Selector.of(Settings(), has_dev=False).selection == "last"
    assert Selector.of(Settings(), has_dev=True).selection == "dev_accuracy"
    assert Evaluation(3, {"x": None}, 1.5).as_dict() == {"epoch": 3, "x": None, "seconds": 1.5}
