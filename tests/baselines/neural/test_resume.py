"""A training stopped after some epochs goes on from its saved state and ends where the uninterrupted
one ends, bit for bit (`structbench.baselines.neural.resume`): a resumed reference run keeps its key."""

from __future__ import annotations

import random
from collections.abc import Callable
from pathlib import Path

import pytest
import torch

from structbench.baselines.neural.fit import History
from structbench.baselines.neural.net import TransductionNet
from structbench.baselines.neural.resume import Resume
from structbench.baselines.neural.seq2seq.nets import Seq2SeqNet
from structbench.baselines.neural.seq2seq.settings import Seq2SeqSettings
from structbench.baselines.neural.trainer import Trainer
from structbench.baselines.neural.transformer.nets import TransformerNet
from structbench.baselines.neural.transformer.settings import TransformerSettings
from structbench.baselines.neural.vocab import Vocabulary
from structbench.seeding import seed_everything
from structbench.specs import Example

SOURCE = Vocabulary(list("abcdef"))
TARGET = Vocabulary(list("ABCDEF"))


def examples(seed: int, count: int) -> list[Example]:
    draw = random.Random(seed)
    made = []
    for number in range(count):
        source = [draw.choice("abcdef") for _ in range(draw.randint(1, 6))]
        made.append(Example(id=f"{seed}-{number}", input=source, target=[s.upper() for s in reversed(source)]))
    return made


TRAIN, DEV = examples(0, 48), examples(1, 12)


def seq2seq() -> tuple[TransductionNet, Seq2SeqSettings]:
    settings = Seq2SeqSettings(
        hidden=16, embedding=8, dropout=0.3, teacher_forcing=0.5, epochs=5, batch_size=8, lr=0.01
    )
    return Seq2SeqNet(settings, len(SOURCE), len(TARGET), 16), settings


def transformer() -> tuple[TransductionNet, TransformerSettings]:
    settings = TransformerSettings(
        d_model=16, heads=2, encoder_layers=1, decoder_layers=1, feedforward=16, dropout=0.3, epochs=5, batch_size=8
    )
    return TransformerNet(settings, len(SOURCE), len(TARGET)), settings


NETS = {"seq2seq": seq2seq, "transformer": transformer}


class Stopped(Exception):
    """Stands for the process being stopped between two epochs."""


def trained(
    make: Callable[[], tuple[TransductionNet, Seq2SeqSettings | TransformerSettings]],
    resume: Resume | None,
    stop_before_epoch: int | None = None,
) -> tuple[dict[str, torch.Tensor], History]:
    seed_everything(3)  # what every run does first (`NeuralModel.begin`)
    net, settings = make()
    trainer = Trainer(net, settings, SOURCE, TARGET, torch.device("cpu"), seed=3, max_length=14)
    if stop_before_epoch is not None:
        epochs = iter(range(1, 100))
        drawn = trainer.batches

        def batches(examples: object, order: object) -> object:
            if order is not None and next(epochs) == stop_before_epoch:  # a training epoch's batches
                raise Stopped
            return drawn(examples, order)  # type: ignore[arg-type]

        trainer.batches = batches  # type: ignore[method-assign]
    history = trainer.train(TRAIN, DEV, progress=False, resume=resume)
    return net.state_dict(), history


def without_seconds(history: History) -> dict[str, object]:
    record = history.as_dict()
    record["evaluations"] = [{k: v for k, v in e.items() if k != "seconds"} for e in record["evaluations"]]  # type: ignore[attr-defined]
    if "convergence" in record:
        record["convergence"] = {k: v for k, v in record["convergence"].items() if k != "seconds"}  # type: ignore[attr-defined]
    return record


def same(a: dict[str, torch.Tensor], b: dict[str, torch.Tensor]) -> bool:
    return a.keys() == b.keys() and all(torch.equal(a[key], b[key]) for key in a)


@pytest.mark.parametrize("name", list(NETS))
def test_a_stopped_training_resumed_ends_as_the_uninterrupted_one(name: str, tmp_path: Path) -> None:
    make = NETS[name]
    whole, whole_history = trained(make, None)
    path = tmp_path / "seed3.resume"
    with pytest.raises(Stopped):
        trained(make, Resume(path, {"run": 1}, every=0.0), stop_before_epoch=4)
    assert path.is_file()
    messages: list[str] = []
    resumed, resumed_history = trained(make, Resume(path, {"run": 1}, every=0.0, log=messages.append))
    assert messages == [m for m in messages if "after epoch 3" in m] and messages
    assert same(whole, resumed)
    assert without_seconds(whole_history) == without_seconds(resumed_history)
    assert not path.exists(), "the saved state is deleted once training has ended"


def test_saving_the_state_changes_nothing_the_training_makes(tmp_path: Path) -> None:
    plain, plain_history = trained(seq2seq, None)
    saving, saving_history = trained(seq2seq, Resume(tmp_path / "s.resume", {"run": 1}, every=0.0))
    assert same(plain, saving)
    assert without_seconds(plain_history) == without_seconds(saving_history)


def test_a_state_saved_for_another_run_or_damaged_is_not_used(tmp_path: Path) -> None:
    whole, _ = trained(seq2seq, None)
    path = tmp_path / "s.resume"
    with pytest.raises(Stopped):
        trained(seq2seq, Resume(path, {"run": 1}, every=0.0), stop_before_epoch=3)
    messages: list[str] = []
    other, _ = trained(seq2seq, Resume(path, {"run": 2}, every=0.0, log=messages.append))
    assert same(whole, other)
    assert "saved by another training" in messages[0]
    path.write_bytes(b"not a torch file")
    messages.clear()
    damaged, _ = trained(seq2seq, Resume(path, {"run": 1}, every=0.0, log=messages.append))
    assert same(whole, damaged)
    assert "cannot be resumed from" in messages[0] and str(path) in messages[0]
