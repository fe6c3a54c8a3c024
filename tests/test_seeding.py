"""`structbench.seeding`: the one function that seeds the global generators, for the runner and the baselines."""

from __future__ import annotations

import ast
import random
from pathlib import Path

import numpy as np
import torch

import structbench
from structbench.seeding import seed_everything

SOURCE = Path(structbench.__file__).parent
GLOBAL_SEEDERS = {
    "random.seed",
    "np.random.seed",
    "numpy.random.seed",
    "torch.manual_seed",
    "torch.cuda.manual_seed_all",
}


def _draws() -> tuple[float, float, float]:
    return random.random(), float(np.random.rand()), float(torch.rand(1))


def test_a_seed_repeats_every_generator_and_another_seed_does_not() -> None:
    seed_everything(7)
    first = _draws()
    seed_everything(7)
    assert _draws() == first
    seed_everything(8)
    assert all(a != b for a, b in zip(_draws(), first, strict=True))
    seed_everything(2**40 + 7)  # numpy takes 32 bits: a large seed is reduced, not refused
    assert _draws() != first


def test_no_other_function_seeds_the_global_generators() -> None:
    """A second seeder (the runner's and the baselines' once differed) would let two paths to one run
    seed differently: every function that seeds more than one global generator is `seed_everything`."""
    seeders = []
    for path in sorted(SOURCE.rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.FunctionDef):
                called = {ast.unparse(call.func) for call in ast.walk(node) if isinstance(call, ast.Call)}
                if len(called & GLOBAL_SEEDERS) > 1:
                    seeders.append(f"{path.relative_to(SOURCE)}:{node.name}")
    assert seeders == ["seeding.py:seed_everything"]
