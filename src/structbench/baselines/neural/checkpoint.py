"""Per-run checkpoints: trained weights with the vocabularies and settings that produced them.

A checkpoint lives at `STRUCTBENCH_HOME/checkpoints/SUITE@VERSION/drawD/MODEL/SETTINGS_HASH/seedS.pt`,
so a run asked again with the same settings reloads its weights instead of retraining.
It holds only tensors, strings and numbers and is read with `weights_only=True`.
"""

from __future__ import annotations

import hashlib
import json
import os
from pathlib import Path
from typing import TYPE_CHECKING, Any

from structbench.errors import UserError
from structbench.paths import checkpoints_dir

if TYPE_CHECKING:
    import torch


def settings_hash(settings: dict[str, Any]) -> str:
    return hashlib.sha256(json.dumps(settings, sort_keys=True).encode()).hexdigest()[:16]


def checkpoint_path(suite: str, draw: int, model: str, settings: dict[str, Any], seed: int) -> Path:
    return checkpoints_dir() / suite / f"draw{draw}" / model / settings_hash(settings) / f"seed{seed}.pt"


def save(path: Path, state: dict[str, torch.Tensor], meta: dict[str, Any]) -> None:
    """Write atomically, so that an interrupted save never leaves a half checkpoint behind."""
    import torch

    path.parent.mkdir(parents=True, exist_ok=True)
    partial = path.with_suffix(".pt.partial")
    torch.save({"state": {k: v.detach().cpu() for k, v in state.items()}, "meta": json.dumps(meta)}, partial)
    os.replace(partial, path)


def load(path: Path) -> tuple[dict[str, torch.Tensor], dict[str, Any]]:
    """Weights and metadata of a checkpoint, loaded without unpickling arbitrary objects."""
    import torch

    try:
        blob = torch.load(path, map_location="cpu", weights_only=True)
        return blob["state"], json.loads(blob["meta"])
    except Exception as error:
        raise UserError(f"checkpoint {path} cannot be read ({error}); delete it to retrain.") from None
