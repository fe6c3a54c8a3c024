"""Choosing the device and seeding every generator a training run draws from."""

from __future__ import annotations

import random

import numpy as np
import torch

from structbench.errors import UserError


def resolve_device(name: str) -> torch.device:
    """`cpu`, `cuda` or `auto` (CUDA when available); asking for CUDA without it is a user error."""
    if name == "auto":
        return torch.device("cuda" if torch.cuda.is_available() else "cpu")
    if name == "cuda" and not torch.cuda.is_available():
        raise UserError("device=cuda was asked for but torch sees no CUDA GPU; use --set device=cpu or device=auto.")
    return torch.device(name)


def seed_everything(seed: int) -> None:
    """Seed Python, numpy and torch (CPU and every GPU) so that a CPU run repeats exactly."""
    random.seed(seed)
    np.random.seed(seed % 2**32)
    torch.manual_seed(seed)
    if torch.cuda.is_available():
        torch.cuda.manual_seed_all(seed)
