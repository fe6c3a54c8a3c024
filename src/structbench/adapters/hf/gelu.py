"""GPT-2's tanh-approximated GELU in torch's fused kernel, in place of transformers' modules (the `hf`
adapter's `fuse_gelu`).

Apart from `common.py` because it subclasses a torch module: the adapters' classes, which the registry
loads without PyTorch, import it where a model is built.
"""

from __future__ import annotations

import importlib

import torch

from structbench.adapters.hf.common import PYTHON_GELU


class FusedGeluTanh(torch.nn.Module):
    """The tanh approximation of GELU in torch's fused kernel (`gelu(x, approximate="tanh")`)."""

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.nn.functional.gelu(x, approximate="tanh")


def fuse_tanh_gelu(model: torch.nn.Module) -> None:
    """Put `FusedGeluTanh` in place of every activation module of `model` that transformers builds for a
    `PYTHON_GELU` name (`NewGELUActivation`, `FastGELUActivation`): the tanh approximation of GELU in
    separate tensor operations.

    The function is the same; only float rounding differs (within 7e-6 of a sentence's log-probability
    on BLiMP, docs/scoring-speed.md). On one CPU thread those modules took a quarter of a small GPT-2's
    forward pass: eight elementwise tensor operations, each a pass over memory, against one."""
    classes = importlib.import_module("transformers.activations").ACT2CLS
    python_written = tuple(classes[name] for name in PYTHON_GELU)
    for parent in list(model.modules()):
        for name, child in list(parent.named_children()):
            if type(child) in python_written:
                setattr(parent, name, FusedGeluTanh())
