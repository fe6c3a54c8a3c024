"""Training throughput of the neural trainer, and wall time to 95% on scan-simple.

Part 1, side by side in one run: training examples per second of `seq2seq-gru-attn`
(cpu-small recipe for SCAN: GRU 128, Luong dot attention) through our trainer — padded,
length-bucketed batches of 32 — against a per-example loop of the very same network
(batch size 1, one update per example), on the same SCAN training examples. Both do
forward, backward, clipping and an Adam step, with the recipe's teacher forcing ratio.

Part 2: wall time of `structbench run --suite scan-simple --model seq2seq-gru-attn` from
an untrained model to 95% dev sequence accuracy (`stop_at=0.95`, checked every epoch on
500 dev examples), then its test sequence accuracy.

    STRUCTBENCH_SOURCE_DIR=../shared/data python bench/train_throughput.py [--examples 8192]
"""

from __future__ import annotations

import argparse
import os
import random
import tempfile
import time
from pathlib import Path

import numpy as np
import torch

from baselines.neural.batching import example_batches
from baselines.neural.seq2seq import Seq2SeqNet, Seq2SeqSettings
from baselines.neural.settings import resolve_settings
from baselines.neural.trainer import batch_loss
from baselines.neural.vocab import Vocabulary
from harness import freeze, registry
from harness.specs import Example


def examples_per_second(
    net: Seq2SeqNet,
    examples: list[Example],
    batch_size: int,
    teacher_forcing: float,
    source: Vocabulary,
    target: Vocabulary,
) -> float:
    """Train `net` on `examples` once in batches of `batch_size`; examples per wall-clock second."""
    optimizer = torch.optim.Adam(net.parameters(), lr=1e-3)
    batches = example_batches(examples, source, target, batch_size, np.random.default_rng(0))
    coin = random.Random(0)
    net.train()
    started = time.perf_counter()
    for batch in batches:
        loss = batch_loss(net(batch, coin.random() < teacher_forcing), batch, 0.0)
        optimizer.zero_grad(set_to_none=True)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(net.parameters(), 5.0)
        optimizer.step()
    return len(examples) / (time.perf_counter() - started)


def throughput(n_examples: int) -> None:
    suite = registry.suite("scan-simple")
    train = freeze.load_split(suite, freeze.ensure_built(suite), 0, "train")
    settings, _ = resolve_settings(Seq2SeqSettings, "seq2seq-gru-attn", "scan-simple", "cpu-small", {})
    source = Vocabulary.build(e.input for e in train.examples)
    target = Vocabulary.build(e.target or [] for e in train.examples)
    examples = train.examples[:n_examples]
    single = examples[: max(n_examples // 8, 64)]
    torch.manual_seed(0)
    net = Seq2SeqNet(settings, len(source), len(target), 64)
    batched = examples_per_second(net, examples, settings.batch_size, settings.teacher_forcing, source, target)
    torch.manual_seed(0)
    net = Seq2SeqNet(settings, len(source), len(target), 64)
    per_example = examples_per_second(net, single, 1, settings.teacher_forcing, source, target)
    print(f"torch threads: {torch.get_num_threads()}, cpus: {os.cpu_count()}")
    print(f"{'loop':<28}{'examples':>10}{'examples/s':>14}")
    print(f"{'batch size 1 (per example)':<28}{len(single):>10}{per_example:>14.1f}")
    print(f"{f'our trainer (batches of {settings.batch_size})':<28}{len(examples):>10}{batched:>14.1f}")
    print(f"ratio: {batched / per_example:.1f}x (goal: at least 10x)")


def time_to_accuracy(goal: float) -> None:
    from harness.runner import Runner
    from harness.specs import ModelSpec
    from harness.store import Store

    with tempfile.TemporaryDirectory() as folder:
        os.environ["STRUCTBENCH_HOME"] = folder  # a fresh home: no stored result or checkpoint to reuse
        freeze.ensure_built(registry.suite("scan-simple"))  # building the data is not training time
        with Store(Path(folder) / "results.sqlite") as store:
            runner = Runner(store, progress=False)
            runner.log = lambda message: None
            spec = ModelSpec(name="seq2seq-gru-attn", params={"stop_at": goal, "epochs": 30})
            started = time.perf_counter()
            record = runner.evaluate("scan-simple", spec, [0])
            wall = time.perf_counter() - started
    accuracy = record.scores["test"]["sequence_accuracy"].mean if record.status["0"] == "done" else float("nan")
    print(
        f"scan-simple, seq2seq-gru-attn cpu-small, stop at {goal:.0%} dev accuracy: "
        f"{wall:.0f} s wall (goal: under 300 s), test sequence accuracy {accuracy:.3f}, status {record.status['0']}"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--examples", type=int, default=8192, help="training examples for the batched loop")
    parser.add_argument("--goal", type=float, default=0.95, help="dev accuracy to train to in part 2")
    parser.add_argument("--skip-time-to-accuracy", action="store_true")
    arguments = parser.parse_args()
    throughput(arguments.examples)
    if not arguments.skip_time_to_accuracy:
        time_to_accuracy(arguments.goal)


if __name__ == "__main__":
    main()
