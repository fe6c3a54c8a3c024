"""Models with controlled behaviour, loaded by `module:Class` path in tests."""

from __future__ import annotations

from structbench.specs import Split

CONSTRUCTED: list[str] = []


class CountingCopy:
    """Copies its input and records every construction, to prove the store answers repeats."""

    name = "counting-copy"
    protocols = ("transduction",)

    def __init__(self, tag: str = "") -> None:
        CONSTRUCTED.append(tag)

    def transduce(self, inputs: list[list[str]]) -> list[list[str]]:
        return [list(tokens) for tokens in inputs]


class CrashOnSeed:
    """Raises during fit for one seed, otherwise copies."""

    name = "crash-on-seed"
    protocols = ("transduction",)

    def __init__(self, crash_seed: int = 0) -> None:
        self.crash_seed = crash_seed

    def fit(self, train: Split, dev: Split | None, *, seed: int) -> None:
        if seed == self.crash_seed:
            raise RuntimeError(f"exploding gradient at seed {seed}")

    def transduce(self, inputs: list[list[str]]) -> list[list[str]]:
        return [list(tokens) for tokens in inputs]


class InterruptOnSeed:
    """Simulates Ctrl-C while predicting one seed."""

    name = "interrupt-on-seed"
    protocols = ("transduction",)

    def __init__(self, interrupt_seed: int = 1) -> None:
        self.interrupt_seed = interrupt_seed
        self.seed = -1

    def fit(self, train: Split, dev: Split | None, *, seed: int) -> None:
        self.seed = seed

    def transduce(self, inputs: list[list[str]]) -> list[list[str]]:
        if self.seed == self.interrupt_seed:
            raise KeyboardInterrupt
        return [list(tokens) for tokens in inputs]


class ClassifierOnly:
    """Speaks only classification."""

    name = "classifier-only"
    protocols = ("classification",)

    def classify(self, inputs: list[list[str]], labels: list[str]) -> list[str]:
        return [labels[0] for _ in inputs]
