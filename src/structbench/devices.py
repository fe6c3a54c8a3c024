"""The torch device a model's `device` setting names: one rule for every model that takes one.

The neural baselines and the Hugging Face adapters accept the same names, `cpu`, `auto` (CUDA
where torch sees a GPU, else the CPU), `cuda` and `cuda:N`, and refuse anything else with the same
sentence: checked once where the setting is validated (`DeviceName`, before any data is built) and
again where the device is made (`resolve_device`, which also refuses a GPU that is not there).
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING, Annotated

from pydantic import AfterValidator

from structbench.errors import UserError

if TYPE_CHECKING:
    import torch

DEVICE_NAMES = ("cpu", "auto", "cuda", "cuda:N")
"""What a `device` setting may be; N is a GPU's index."""
_DEVICE = re.compile(r"cpu|auto|cuda(?::(\d+))?")


def device_problem(name: object) -> str | None:
    """Why `name` is no device setting, in one sentence; None where it is one."""
    if isinstance(name, str) and _DEVICE.fullmatch(name):
        return None
    return f"device={name!r} is not one of {', '.join(DEVICE_NAMES)} (N a GPU's index); use e.g. --set device=cpu."


def _checked(name: str) -> str:
    if (problem := device_problem(name)) is not None:
        raise ValueError(problem)
    return name


DeviceName = Annotated[str, AfterValidator(_checked)]
"""A `device` setting as a model's settings or constructor annotate it, so that a bad one is refused
before any data is built."""


def resolve_device(name: str) -> torch.device:
    """The device `name` asks for (see the module docstring); a name that is none, or a GPU torch does
    not see, is a `UserError`."""
    import torch

    if (problem := device_problem(name)) is not None:
        raise UserError(problem)
    if name == "auto":
        return torch.device("cuda" if torch.cuda.is_available() else "cpu")
    if name.startswith("cuda"):
        found = torch.cuda.device_count() if torch.cuda.is_available() else 0
        index = int(name.partition(":")[2] or 0)
        if index >= found:
            seen = {0: "no CUDA GPU", 1: "1 CUDA GPU (cuda:0)"}.get(
                found, f"{found} CUDA GPUs (cuda:0 to cuda:{found - 1})"
            )
            raise UserError(f"device={name} was asked for but torch sees {seen}; use --set device=cpu or device=auto.")
    return torch.device(name)
