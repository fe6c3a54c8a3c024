"""Seeding every global generator a run draws from, so that a run on one CPU repeats exactly.

The runner seeds them before each seed's `fit` (`structbench.protocols.Trainable`), and the neural
baselines again where their training starts: the same rule in both places.
"""

from __future__ import annotations

import random
import sys

import numpy as np


def seed_everything(seed: int) -> None:
    """Seed Python's `random`, numpy's global generator and, where torch is imported, torch's
    generators on every device (`torch.manual_seed` seeds the CPU and every CUDA device). torch is not
    imported here: a model that does not use it does not pay for importing it."""
    random.seed(seed)
    np.random.seed(seed % 2**32)
    torch = sys.modules.get("torch")
    if torch is not None:
        torch.manual_seed(seed)
