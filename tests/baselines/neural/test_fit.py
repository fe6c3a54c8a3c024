"""The shared training loop: the epoch's training loss is the weighted mean of its batches', evaluations
are made every `eval_every` epochs and after the last, selection keeps the best weights and stops on
patience, the recipe's criterion ends training and is judged (reached where and when, or the best value
seen), and a non-finite loss ends training with the reason."""

from __future__ import annotations

from collections.abc import Callable

import pytest
import torch

from structbench.baselines.neural.fit import Evaluation, Figures, History, Schedule, Selector, fit
from structbench.baselines.neural.seq2seq.model import Seq2SeqGruAttention
from structbench.convergence import Criterion


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
    assert list(history.evaluations[0].as_dict()) == [
        "epoch",
        "train_loss",
        "dev_loss",
        "dev_accuracy",
        "seconds",
        "updates",
    ]
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


def test_the_criterion_ends_training_once_reached_and_says_when() -> None:
    history, _, _ = run(
        [[(1.0, 1)]] * 4,
        Selector("dev_accuracy", Criterion(statistic="dev_accuracy", at_least=0.5), None),
        lambda epoch, loss: {"dev_accuracy": 0.25 * epoch},
    )
    assert history.selected_epoch == 2 and history.stopped == "criterion dev_accuracy ≥ 0.5 reached"
    judged = history.convergence
    assert judged is not None and judged.reached and (judged.value, judged.epochs, judged.updates) == (0.5, 2, 0)
    assert history.as_dict()["convergence"] == judged.model_dump(mode="json")


def test_a_run_that_never_reaches_the_criterion_reports_its_best_value() -> None:
    accuracy = {1: 0.3, 2: 0.39, 3: 0.2}
    history, _, _ = run(
        [[(1.0, 1)]] * 3,
        Selector("dev_accuracy", Criterion(statistic="dev_accuracy", at_least=0.95), None),
        lambda epoch, loss: {"dev_accuracy": accuracy[epoch]},
    )
    judged = history.convergence
    assert judged is not None and not judged.reached and judged.value == 0.39 and judged.epochs == 3
    assert judged.shown() == "under-trained: dev_accuracy 0.39 < 0.95"
    assert history.stopped == "epochs"


def test_a_plateau_is_reached_when_the_best_value_stops_falling_over_two_evaluations() -> None:
    nll = {1: 7.0, 2: 6.5, 3: 6.6, 4: 6.48, 5: 6.0}  # one evaluation that rises (3) does not end training
    history, _, _ = run(
        [[(1.0, 1)]] * 5,
        Selector("last", Criterion(statistic="nll_per_word", plateau=0.01), None),
        lambda epoch, loss: {"nll_per_word": nll[epoch]},
    )
    judged = history.convergence
    assert judged is not None and judged.reached and judged.epochs == 4 and judged.value == 6.48
    assert judged.change == pytest.approx(0.02 / 6.5)
    assert [e.epoch for e in history.evaluations] == [1, 2, 3, 4]


def test_a_non_finite_training_loss_is_an_error() -> None:
    with pytest.raises(FloatingPointError, match="epoch 1"):
        run([[(float("nan"), 1)]], Selector("last", None, None), lambda e, loss: {})


def test_selection_falls_back_to_the_last_epoch_without_dev() -> None:
    class Settings:
        selection, criterion, patience = "dev_accuracy", Criterion(statistic="dev_accuracy", at_least=0.9), None

    assert Selector.of(Settings(), has_dev=False).selection == "last"
    assert Selector.of(Settings(), has_dev=False).criterion is None  # nothing to judge it on
    assert Selector.of(Settings(), has_dev=True).selection == "dev_accuracy"
    assert Evaluation(3, {"x": None}, 1.5).as_dict() == {"epoch": 3, "x": None, "seconds": 1.5}


def test_the_learning_rate_decays_after_each_evaluation_not_kept_and_training_ends_after_the_last_decay() -> None:
    """`lr_decay` as the authors' LM script of Tran 2018 ch. 5 trains (ketranm/fan_vs_rnn lm.py): every epoch
    whose dev perplexity is no lower than the best so far halves the learning rate for the epochs after it,
    and the first such epoch after the fifth halving ends training; the kept weights are the best epoch's."""
    net = torch.nn.Linear(1, 1, bias=False)
    perplexities = [10.0, 9.0, 9.5, 8.0, 8.2, 8.5, 7.0, 7.5, 7.6, 7.7, 7.8, 7.9]
    rates: list[float] = []
    epoch = {"now": 0}

    def batches() -> list[int]:
        epoch["now"] += 1
        return [0]

    def step(batch: int, update: Callable[[torch.Tensor], None]) -> tuple[float, int]:
        loss = (net.weight**2).sum()
        update(loss)
        rates.append(update.__self__.optimizer.param_groups[0]["lr"])  # type: ignore[attr-defined]
        return float(loss.detach()), 1

    schedule = Schedule(epochs=len(perplexities), lr=0.01, clip=None, lr_decay=0.5, max_decays=5)
    history = fit(
        net,
        schedule,
        Selector("dev_perplexity", None, None),
        batches=batches,
        step=step,
        evaluate=lambda loss: {"dev_perplexity": perplexities[epoch["now"] - 1]},
        description="test",
    )
    assert history.decayed_after == [3, 5, 6, 8, 9]
    assert rates == [0.01, 0.01, 0.01, 0.005, 0.005, 0.0025, 0.00125, 0.00125, 0.000625, 0.0003125]
    assert len(history.evaluations) == 10 and history.selected_epoch == 7
    assert history.stopped == "no improvement after 5 learning-rate decays"
    assert history.as_dict()["decayed_after"] == [3, 5, 6, 8, 9]
    assert "decayed_after" not in History().as_dict()  # a run without decays records as before


def test_a_transducer_decays_its_rate_from_its_settings_and_keys_the_decay_only_when_set() -> None:
    """A recipe or `--set lr_decay=0.5` gives any epoch-trained baseline the decay; without `max_decays` it never
    ends training. The setting joins the run key only when set, so runs stored before it existed keep theirs."""
    plain = Seq2SeqGruAttention.configuration("scan-simple")
    decayed = Seq2SeqGruAttention.configuration("scan-simple", lr_decay=0.5)
    assert "lr_decay" not in plain and "max_decays" not in plain
    assert {key: value for key, value in decayed.items() if key != "lr_decay"} == plain and decayed["lr_decay"] == 0.5
    settings = Seq2SeqGruAttention(lr_decay=0.5).resolve("scan-simple")[0]
    schedule = Schedule.of(settings, torch.device("cpu"))
    assert (schedule.lr_decay, schedule.max_decays) == (0.5, None)
    net = torch.nn.Linear(1, 1, bias=False)
    accuracies = iter([0.5, 0.4, 0.3, 0.2, 0.1])

    def step(batch: int, update: Callable[[torch.Tensor], None]) -> tuple[float, int]:
        update((net.weight**2).sum())
        return 0.0, 1

    history = fit(
        net,
        Schedule(epochs=5, lr=0.01, clip=None, lr_decay=0.5),
        Selector("dev_accuracy", None, None),
        batches=lambda: [0],
        step=step,
        evaluate=lambda loss: {"dev_accuracy": next(accuracies)},
        description="test",
    )
    assert history.decayed_after == [2, 3, 4, 5] and history.stopped == "epochs"  # the cap ends it, not a decay count
