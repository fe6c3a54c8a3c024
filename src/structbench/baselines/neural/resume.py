"""Training that goes on where it was stopped: the state of `fit` after an epoch, saved now and then.

A reference run of a few hours that is stopped (a laptop put to sleep, a sweep's machine taken
back, Ctrl-C) would otherwise start again from its first epoch. `fit` saves, at most every
`every` seconds and only after a whole epoch, everything the next epochs depend on: the weights,
Adam's moments and step counts, the selector's kept weights and history, the epoch and the
training seconds so far, and every random generator that training draws from (torch's, numpy's
and Python's global ones, and the family's own: its batch order, its teacher-forcing coin). A
training resumed from that state makes the numbers the uninterrupted one makes, bit for bit
(tests), so a resumed run keeps its key. The file sits beside the run's checkpoint, is written
atomically, read with `weights_only=True`, used only when it was saved for the same run
(`identity`: settings, seed, vocabularies) and deleted once the checkpoint is written.
"""

from __future__ import annotations

import json
import os
import random
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np
import torch

if TYPE_CHECKING:
    from structbench.baselines.neural.fit import Optimiser, Selector

Generators = dict[str, Any]
"""A family's own random state by name, as `torch.load(weights_only=True)` reads it back (numbers,
strings, lists, tuples, dicts and tensors)."""


def _numpy_state() -> dict[str, Any]:
    state: tuple[Any, ...] = tuple(np.random.get_state(legacy=True))
    name, key, position, has_gauss, gauss = state
    return {"name": name, "key": torch.from_numpy(key.astype(np.int64)), "pos": position, "gauss": [has_gauss, gauss]}


def _set_numpy_state(state: dict[str, Any]) -> None:
    key = state["key"].numpy().astype(np.uint32)
    np.random.set_state((state["name"], key, state["pos"], *state["gauss"]))


@dataclass
class Resume:
    """Where one training saves its state and goes on from it."""

    path: Path
    identity: dict[str, Any]
    """What the saved state must have been saved for (the run's settings, seed, vocabularies)."""
    generators: Callable[[], Generators] = dict
    """The family's own random state now (e.g. its numpy generator's `bit_generator.state`)."""
    restore_generators: Callable[[Generators], None] = lambda state: None
    every: float = 60.0
    """Seconds between saves: a save costs one copy of the weights and Adam's moments."""
    log: Callable[[str], None] = lambda message: print(message, file=sys.stderr)
    _saved_at: float = field(default_factory=time.perf_counter)

    def _identity(self) -> str:
        return json.dumps(self.identity, sort_keys=True)

    def restore(self, net: torch.nn.Module, optimiser: Optimiser, selector: Selector) -> tuple[int, float]:
        """Put the saved state into `net`, `optimiser`, `selector` and the random generators: the epoch
        it was saved after and the training seconds until then; (0, 0.0) where there is none to use."""
        if not self.path.is_file():
            return 0, 0.0
        try:
            blob = torch.load(self.path, map_location="cpu", weights_only=True)
            if blob["identity"] != self._identity():
                self.log(f"{self.path} was saved by another training; this one starts from its first epoch.")
                return 0, 0.0
            net.load_state_dict(blob["net"])
            optimiser.optimizer.load_state_dict(blob["optimizer"])
            optimiser.scaler.load_state_dict(blob["scaler"])
            optimiser.updates = int(blob["updates"])
            selector.restore_state(blob["selector"])
            torch.set_rng_state(blob["torch"])
            if blob["cuda"]:
                torch.cuda.set_rng_state_all(blob["cuda"])
            random.setstate(blob["random"])
            _set_numpy_state(blob["numpy"])
            self.restore_generators(blob["generators"])
        except Exception as error:  # a damaged or foreign file: train from the start rather than fail
            self.log(f"{self.path} cannot be resumed from ({error}); this training starts from its first epoch.")
            return 0, 0.0
        epoch, seconds = int(blob["epoch"]), float(blob["seconds"])
        self.log(f"resuming from {self.path} after epoch {epoch} ({seconds:.0f} s of training)")
        return epoch, seconds

    def save_now_and_then(
        self, epoch: int, seconds: float, net: torch.nn.Module, optimiser: Optimiser, selector: Selector
    ) -> None:
        """Save the state after `epoch` if `every` seconds have passed since the last save."""
        if time.perf_counter() - self._saved_at < self.every:
            return
        blob = {
            "identity": self._identity(),
            "epoch": epoch,
            "seconds": seconds,
            "net": {k: v.detach().cpu().clone() for k, v in net.state_dict().items()},
            "optimizer": optimiser.optimizer.state_dict(),
            "scaler": optimiser.scaler.state_dict(),
            "updates": optimiser.updates,
            "selector": selector.saved_state(),
            "torch": torch.get_rng_state(),
            "cuda": torch.cuda.get_rng_state_all() if torch.cuda.is_available() else [],
            "random": random.getstate(),
            "numpy": _numpy_state(),
            "generators": self.generators(),
        }
        self.path.parent.mkdir(parents=True, exist_ok=True)
        partial = self.path.with_suffix(".partial")
        torch.save(blob, partial)
        os.replace(partial, self.path)
        self._saved_at = time.perf_counter()

    def discard(self) -> None:
        """Delete the saved state: the training it was for has ended."""
        self.path.unlink(missing_ok=True)
