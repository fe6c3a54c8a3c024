"""A copying transducer that writes, when it fits, the garbage collector's thresholds of the process it
fits in to the file named by `STRUCTBENCH_TEST_THRESHOLDS` (tests/execution/test_collector.py)."""

from __future__ import annotations

import gc
import json
import os

from structbench.specs import Split

THRESHOLDS_FILE = "STRUCTBENCH_TEST_THRESHOLDS"


class Thresholds:
    name = "thresholds"
    protocols = ("transduction",)

    def fit(self, train: Split, dev: Split | None, *, seed: int) -> None:
        with open(os.environ[THRESHOLDS_FILE], "w", encoding="utf-8") as written:
            json.dump(gc.get_threshold(), written)

    def transduce(self, inputs: list[list[str]]) -> list[list[str]]:
        return [list(tokens) for tokens in inputs]
