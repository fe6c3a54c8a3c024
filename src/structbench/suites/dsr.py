"""Distracted Sequence Recall (Monner 2011, §2.7.1): remember two targets among distractors, in order.

Reproduces the task of Monner's dissertation (§2.7.1, Figs 2.3 and 2.5), a variant of
Hochreiter & Schmidhuber's (1997) temporal-order task: 10 symbols, 4 targets (`t1`-`t4`), 4
distractors (`d1`-`d4`) and 2 prompts (`p1`, `p2`). A trial is 24 symbols: 2 targets and 20
distractors in random order, then the two prompts, which ask for the first and the second
target in the order they occurred. Here a trial is a transduction: `input` is the 24 symbols,
`target` the two targets in order, e.g. `d2 d4 t3 ... t1 d1 p1 p2 -> t3 t1`.

Its headline is sample efficiency, not accuracy: Monner trains on random trials "until they
achieve the performance criterion of 95% accuracy on a test set of 1000 randomly selected
sequences that the network had never encountered during training", and compares the number of
training trials that took (Fig. 2.3: all 50 runs of LSTM-g and of the LSTM algorithm reach it;
LSTM-g needs significantly fewer, Welch t ≈ 5.1, df ≈ 80.9, p < 1e-5, after removing outliers
more than 2 standard deviations from each sample's mean; the figure's means are not in the
text). The suite declares that statistic, `trials_to_criterion` (lower is better): training
sequences a model consumed until at least 95% of the `dev` split (1,000 sequences,
disjoint from `train` and `test`) was right, reported by the model after training
(`statistics()`). Monner's correctness is strict, per output unit: every unit below 0.5 on every
non-prompt step and only the right target unit above it at each prompt; a model with such
units checks that, any other model exact match of its answer. A model that does not reach the
criterion reports `criterion_reached: 0` and no trial count, only the trials it trained
(`trials_trained`): its trials to criterion are censored at that bound, and comparisons count
them so (the logrank test, see `structbench.analysis.statistics`) instead of dropping the seed,
which would flatter the slower model. The test split is scored by exact
match (`sequence_accuracy`), in-distribution (fresh trials of the training distribution).

Sizes: train 50,000 trials, dev 1,000 (the criterion set), test 1,000, all distinct (one draw;
seeds vary the models' initial weights and the order they draw training trials in). Monner
draws a fresh random trial for every update; a model that needs more than 50,000 trials cycles
through `train` again, which is harmless here: a training trial is never a criterion or test
trial, and the distinct trials number 16 x 231 x 4^20.

What the text leaves open and we chose: the two targets are drawn independently, so they may
be the same symbol (as in the temporal-order task, whose 16 outputs are every ordered pair),
and each distractor independently of the others (20 slots, 4 distractors).

How the suite was checked is declared in its spec (`CHECKED` below: the spec's `how_checked`), which
the suite card shows; it declares no deviation from the paper.
"""

from __future__ import annotations

import random
from collections.abc import Mapping
from typing import ClassVar

from structbench.specs import Example, Split, StatisticSpec, SuiteSpec, dev_split, scored_split, train_split
from structbench.suite import SourceFiles, Suite
from structbench.suites.common import GENERATED_LICENCE, RuleTransducer

CHECKED = """How it was checked (tests/suites/test_dsr.py): every input has 24 symbols, exactly two of them
targets among the first 22 and the prompts last; the oracle (which reads the targets off the
input) scores 1.0; the splits are disjoint; `trials_to_criterion` is declared lower-is-better."""
"""How the suites of this module were checked against their paper (`SuiteSpec.how_checked`)."""

TARGETS = ("t1", "t2", "t3", "t4")
DISTRACTORS = ("d1", "d2", "d3", "d4")
PROMPTS = ("p1", "p2")
N_SYMBOLS = 22
"""Targets and distractors before the prompts."""
SIZES = {"train": 50_000, "dev": 1_000, "test": 1_000}
SEED = 20110701
CRITERION = 0.95
FIRST_TARGET_BINS = ((1, 5), (6, 10), (11, 15), (16, 21))
"""Where the first target occurs (1-based among the 22 symbols), in bins: how long it must be held."""


def sample_trial(rng: random.Random) -> tuple[list[str], list[str]]:
    """One trial: its 24 input symbols and its two targets in order of occurrence."""
    symbols = [rng.choice(DISTRACTORS) for _ in range(N_SYMBOLS)]
    first, second = sorted(rng.sample(range(N_SYMBOLS), 2))
    targets = [rng.choice(TARGETS), rng.choice(TARGETS)]
    symbols[first], symbols[second] = targets
    return [*symbols, *PROMPTS], targets


def recall(tokens: list[str]) -> list[str]:
    """The targets of a trial, in order: what a perfect model answers."""
    if tokens[-len(PROMPTS) :] != list(PROMPTS):
        raise ValueError("a trial ends with its prompts")
    found = [token for token in tokens[: -len(PROMPTS)] if token in TARGETS]
    if len(found) != len(PROMPTS):
        raise ValueError("a trial holds exactly two targets")
    return found


def first_target_bin(position: int) -> str:
    """The bin of the first target's 1-based position among the 22 symbols, e.g. `06-10`."""
    low, high = next((low, high) for low, high in FIRST_TARGET_BINS if low <= position <= high)
    return f"{low:02d}-{high:02d}"


class DistractedSequenceRecall(Suite):
    """Two targets among twenty distractors, recalled in order at two prompts."""

    spec = SuiteSpec(
        id="dsr",
        version="1.0.0",
        family="memory",
        protocol="transduction",
        description="Recall, at two prompts, the two target symbols hidden in order among twenty distractors; "
        "headlined by how many training trials a model needs to get 95% of fresh trials right.",
        citation="Monner 2011, A Neurocomputational Model of Grounded Language Comprehension and Production at "
        "the Sentence Level (PhD dissertation, University of Maryland), §2.7.1 Distracted sequence recall",
        how_checked=CHECKED,
        primary_metric="sequence_accuracy",
        recipe="dsr",
        splits=[
            train_split(SIZES["train"], "random trials to train on, in any order, as often as needed"),
            dev_split(SIZES["dev"], "the criterion set: 1,000 trials never seen in training"),
            scored_split("test", SIZES["test"], "in-distribution", "1,000 further fresh trials"),
        ],
        statistics=[
            StatisticSpec(
                name="trials_to_criterion",
                description=f"training trials until at least {CRITERION:.0%} of the 1,000 dev trials are right "
                "(Monner's all-units criterion for networks with output units, else exact match)",
                higher_is_better=False,
                censored_by="trials_trained",
            )
        ],
    )
    licence = GENERATED_LICENCE
    breakdown_keys: ClassVar[tuple[str, ...]] = ("first_target", "repeated_target")

    def generate(self, draw: int, files: SourceFiles) -> dict[str, list[Example]]:
        rng = random.Random(SEED + draw)
        seen: set[tuple[str, ...]] = set()
        splits: dict[str, list[Example]] = {}
        for name in ("test", "dev", "train"):
            examples = splits[name] = []
            while len(examples) < SIZES[name]:
                tokens, targets = sample_trial(rng)
                if tuple(tokens) in seen:
                    continue
                seen.add(tuple(tokens))
                first = next(i for i, token in enumerate(tokens) if token in TARGETS) + 1
                meta = {"first_target": first_target_bin(first), "repeated_target": targets[0] == targets[1]}
                examples.append(Example(id=f"{name}-{len(examples):05d}", input=tokens, target=targets, meta=meta))
        return {name: splits[name] for name in ("train", "dev", "test")}

    def oracle(self, splits: Mapping[str, Split]) -> RuleTransducer:
        return RuleTransducer("dsr-recall", recall)
