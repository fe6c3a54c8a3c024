"""Training throughput of the neural trainer, and wall time to the recipe's criterion on scan-simple.

Part 1, side by side in one run: training examples per second of `seq2seq-gru-attn`
(cpu-small recipe for SCAN: GRU 128, Luong dot attention) through our trainer — padded batches
of 32, bucketed by target then source length — against a per-example loop of the very same
network (batch size 1, one update per example) and against batches of 32 bucketed by source
length alone (the trainer before its decoder's padding was cut), on the same SCAN training
examples. All are one epoch of the shared `Trainer` with the recipe's settings (teacher
forcing, clipping, Adam), differing only in how batches are made.

Part 2: wall time of `structbench run --suite scan-simple --model seq2seq-gru-attn` in a fresh
home, building the suite included, with the recipe as shipped: it trains until its criterion
(99% of 500 dev examples right, checked every epoch) and is asked the test split; then the test
sequence accuracy and how training went. `--threads 2` runs it on two threads (a run keyed
`threads=2`).

    STRUCTBENCH_SOURCE_DIR=/path/to/data python bench/train_throughput.py [--examples 8192] [--repeats 3] [--threads 1] [--smoke]

The network, its settings and its vocabularies are the registered model's own (`registry`,
`resolve`, `build_net`), so the bench trains what `--model seq2seq-gru-attn` trains. `--smoke`
(256 examples, one repetition; part 2 for one epoch on lookup-tables-mt, a suite this model
trains on in seconds) runs the same code in seconds.
"""

from __future__ import annotations

import argparse
import os
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path

import numpy as np
import torch

from structbench import registry
from structbench.baselines.neural.batching import Batch, length_buckets, make_batch
from structbench.baselines.neural.net import TransductionNet
from structbench.baselines.neural.settings import TrainSettings
from structbench.baselines.neural.trainer import Trainer
from structbench.baselines.neural.vocab import Vocabulary
from structbench.data import freeze
from structbench.specs import Example
from structbench.store import run_convergence

MODEL = "seq2seq-gru-attn"
SMOKE_EXAMPLES, SMOKE_SUITE, SMOKE_EPOCHS = 256, "lookup-tables-mt", 1


class SourceBucketed(Trainer):
    """The trainer as it was before its batches were bucketed by target length: by source length alone."""

    def batches(self, examples: Sequence[Example], rng: np.random.Generator | None) -> list[Batch]:
        chosen = length_buckets([len(e.input) for e in examples], self.settings.batch_size, rng)
        return [
            make_batch(
                [examples[i].input for i in indices],
                self.source_vocab,
                [examples[i].target or [] for i in indices],
                self.target_vocab,
                [examples[i].attention for i in indices],
                indices,
            )
            for indices in chosen
        ]


def examples_per_second(
    net: TransductionNet,
    examples: list[Example],
    settings: TrainSettings,
    source: Vocabulary,
    target: Vocabulary,
    trainer_class: type[Trainer] = Trainer,
) -> float:
    """One epoch of `trainer_class` on `examples` with `settings`; training examples per wall-clock second."""
    trainer = trainer_class(net, settings, source, target, torch.device("cpu"), seed=0, max_length=64)
    started = time.perf_counter()
    trainer.train(examples, None, progress=False)
    return len(examples) / (time.perf_counter() - started)


def throughput(n_examples: int, repeats: int) -> None:
    suite = registry.suite("scan-simple")
    train = freeze.load_split(suite, freeze.ensure_built(suite), 0, "train")
    model = registry.model_factory(MODEL)()  # budget cpu-small
    settings, _ = model.resolve("scan-simple")
    source = Vocabulary.build(e.input for e in train.examples)
    target = Vocabulary.build(e.target or [] for e in train.examples)
    examples = train.examples[:n_examples]
    single = examples[: max(n_examples // 8, 64)]
    one_epoch = settings.model_copy(update={"epochs": 1, "selection": "last"})
    one_by_one = one_epoch.model_copy(update={"batch_size": 1})

    def fresh_net() -> TransductionNet:
        torch.manual_seed(0)
        net: TransductionNet = model.build_net(settings, source, target, train)
        return net

    # alternating repetitions, best of each: a shared machine's slow moments hit both loops alike
    batched, by_source, per_example = 0.0, 0.0, 0.0
    for _ in range(repeats):
        batched = max(batched, examples_per_second(fresh_net(), examples, one_epoch, source, target))
        by_source = max(
            by_source, examples_per_second(fresh_net(), examples, one_epoch, source, target, SourceBucketed)
        )
        per_example = max(per_example, examples_per_second(fresh_net(), single, one_by_one, source, target))
    print(f"torch threads: {torch.get_num_threads()}, cpus: {os.cpu_count()}, best of {repeats}")
    print(f"{'loop':<28}{'examples':>10}{'examples/s':>14}")
    print(f"{'batch size 1 (per example)':<28}{len(single):>10}{per_example:>14.1f}")
    print(f"{'source-length buckets':<28}{len(examples):>10}{by_source:>14.1f}")
    print(f"{f'our trainer (batches of {settings.batch_size})':<28}{len(examples):>10}{batched:>14.1f}")
    print(f"ratio: {batched / per_example:.1f}x (goal: at least 10x)")
    print(f"target-length over source-length buckets: {batched / by_source:.2f}x")


def time_to_criterion(threads: int, suite_id: str = "scan-simple", epochs: int | None = None) -> None:
    from structbench.runs.runner import Runner
    from structbench.specs import ModelSpec
    from structbench.store import Store

    params: dict[str, int] = {} if threads == 1 else {"threads": threads}
    if epochs is not None:
        params["epochs"] = epochs
    with tempfile.TemporaryDirectory() as folder:
        os.environ["STRUCTBENCH_HOME"] = folder  # a fresh home: no built suite, stored result or checkpoint to reuse
        started = time.perf_counter()
        with Store(Path(folder) / "results.sqlite") as store:
            runner = Runner(store, progress=False)
            runner.log = lambda message: None
            record = runner.evaluate(suite_id, ModelSpec(name=MODEL, params=params), [0])
            wall = time.perf_counter() - started
            judged = [run_convergence(environment) for environment in store.runs()["environment"]]
    test = registry.suite(suite_id).spec.splits_with_role("test")[0].name  # scan-simple: its one split, `test`
    accuracy = record.scores[test]["sequence_accuracy"].mean if record.status["0"] == "done" else float("nan")
    training = judged[0].shown() if judged and judged[0] is not None else "no criterion"
    print(
        f"{suite_id}, {MODEL} cpu-small on {threads} thread{'s' if threads > 1 else ''}, building included: "
        f"{wall:.0f} s wall (goal: at most 60 s on 2 cores), {test} sequence accuracy {accuracy:.4f} "
        f"(goal: at least 0.995), status {record.status['0']}; {training}"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--examples", type=int, default=8192, help="training examples for the batched loop")
    parser.add_argument("--repeats", type=int, default=3, help="repetitions of each loop; the best is reported")
    parser.add_argument("--threads", type=int, default=1, help="threads of the part 2 run")
    parser.add_argument("--skip-time-to-accuracy", action="store_true")
    parser.add_argument("--smoke", action="store_true", help="tiny sizes, the same code: seconds")
    arguments = parser.parse_args()
    if arguments.smoke:
        throughput(SMOKE_EXAMPLES, 1)
        if not arguments.skip_time_to_accuracy:
            time_to_criterion(arguments.threads, SMOKE_SUITE, SMOKE_EPOCHS)
        return
    throughput(arguments.examples, arguments.repeats)
    if not arguments.skip_time_to_accuracy:
        time_to_criterion(arguments.threads)


if __name__ == "__main__":
    main()
