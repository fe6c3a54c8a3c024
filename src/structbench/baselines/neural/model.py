"""What the harness side of every neural baseline shares, whatever it answers (transductions,
sentence log-probabilities, labels): the budget and `--set` overrides, the resolved settings that
key its runs (`configuration`), the threads it trains on, and its compute report. It also answers
what the engine asks only of built-in baselines about their recipes
(`structbench.protocols.BuiltInRecipes`: `in_quickstart`, `budget_shortfall`).

One class instead of a copy in each of `NeuralTransducer`, `NeuralLanguageModel` and
`NeuralClassifier`, so that a rule about identity (the device never keys a run, the thread count does) or about
compute holds for all of them at once.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any, ClassVar

from pydantic import BaseModel

from structbench.baselines.neural import checkpoint
from structbench.baselines.neural.settings import (
    BUDGETS,
    check_overrides,
    load_recipe,
    quickstart_models,
    resolve_settings,
    task_of,
)
from structbench.devices import resolve_device
from structbench.errors import UserError
from structbench.seeding import seed_everything

if TYPE_CHECKING:
    import torch


class NeuralModel:
    """A neural baseline's settings, identity and compute; subclasses train and answer."""

    name: ClassVar[str]
    settings_class: ClassVar[type[BaseModel]]
    comparable: ClassVar[bool] = True
    """False for entries that see test-time information (oracle guidance)."""
    revision: ClassVar[int] = 0
    """Raised when the family's code changes its numbers under unchanged settings (a fix of its
    arithmetic): from 1 on it is part of every run's key and checkpoint (`described`), so that
    neither the store nor a checkpoint answers with the numbers the old code gave."""
    unkeyed_settings: ClassVar[frozenset[str]] = frozenset({"device"})
    """Where it trains: neither part of the run key nor of the label. Its thread count is both
    (`structbench.runs.threads`)."""
    keyed_when_set: ClassVar[frozenset[str]] = frozenset({"lr_decay", "max_decays"})
    """Settings added after runs without them were stored: part of the key only when not None, so that
    those runs (which trained as None says) keep their keys."""

    def __init__(self, budget: str = "cpu-small", **overrides: Any) -> None:
        if budget not in BUDGETS:
            raise UserError(f"unknown budget {budget!r}; use one of {', '.join(BUDGETS)}.")
        check_overrides(self.settings_class, self.name, overrides)
        self.budget = budget
        self.overrides = overrides
        self.citation = ""
        self.history: dict[str, Any] = {}
        self._device: torch.device | None = None
        self.log: Callable[[str], None] = lambda message: print(message, file=sys.stderr)
        self._threads_before: int | None = None

    @property
    def device(self) -> torch.device:
        """Where the run trains and answers: the CPU until `begin` resolves the settings' `device`. Made
        when first asked for, so that building the model to key its runs (`configuration`) needs no PyTorch."""
        if self._device is None:
            import torch

            self._device = torch.device("cpu")
        return self._device

    @device.setter
    def device(self, device: torch.device) -> None:
        self._device = device

    @classmethod
    def configuration(cls, suite: str, budget: str = "cpu-small", **overrides: Any) -> dict[str, Any]:
        """The settings a run on `suite` trains with: the recipe's budget with the overrides applied.

        The runner stores runs under them, so a run is answered from the store only while the
        recipe still says what it said when the run was made.
        """
        model = cls(budget, **overrides)
        return model.described(model.resolve(suite)[0])

    @classmethod
    def budget_shortfall(cls, suite_id: str, configuration: Mapping[str, Any]) -> str | None:
        """The recipe's measured shortfall of its `cpu-small` budget on `suite_id`'s task, for a run of
        that budget (`structbench.protocols.BuiltInRecipes.budget_shortfall`); None otherwise."""
        if configuration.get("budget") != "cpu-small":
            return None
        return load_recipe(cls.name, task_of(suite_id))[1].cpu_small_shortfall or None

    @classmethod
    def in_quickstart(cls, suite_id: str) -> bool:
        """Whether `structbench quickstart --neural` trains this model on `suite_id`: its recipe for the
        suite's task lists the suite under `quickstart` (`structbench.protocols.BuiltInRecipes.in_quickstart`)."""
        return cls.name in quickstart_models(suite_id)

    def resolve(self, suite: str) -> tuple[Any, str]:
        """This run's settings on `suite` (recipe budget, then overrides) and the recipe's citation."""
        return resolve_settings(self.settings_class, self.name, suite, self.budget, self.overrides)

    def described(self, settings: BaseModel) -> dict[str, Any]:
        """What identifies a run's training (its thread count and the code's `revision` too; not where it runs)."""
        revised = {"revision": self.revision} if self.revision else {}
        unset = {key for key in self.keyed_when_set if getattr(settings, key, None) is None}
        return {
            "budget": self.budget,
            **settings.model_dump(mode="json", exclude=set(self.unkeyed_settings) | unset),
            **revised,
        }

    def use_threads(self, threads: int) -> None:
        """Train and answer on `threads` CPU threads (the runner holds a run to them already; this is
        for a caller that drives the model itself); `close` restores the count from before the first
        call, however often a run calls it."""
        import torch

        if self._threads_before is None:
            self._threads_before = torch.get_num_threads()
        torch.set_num_threads(threads)

    def begin(self, settings: Any, seed: int) -> None:
        """Where every training starts: `settings.threads` threads, `settings.device`, torch seeded with `seed`."""
        self.use_threads(settings.threads)
        self.device = resolve_device(settings.device)
        seed_everything(seed)

    def save_trained(
        self, path: Path, net: torch.nn.Module, suite: str, seed: int, settings: BaseModel, **extra: Any
    ) -> None:
        """Save the trained weights with what a reload checks and a reader wants to know: the model,
        suite, seed, settings, citation and training history, and the subclass's `extra` (its
        vocabularies, the figure it selected on)."""
        meta = {
            "model": self.name,
            "suite": suite,
            "seed": seed,
            "settings": json.loads(settings.model_dump_json()),
            "citation": self.citation,
            **extra,
            "history": self.history,
        }
        checkpoint.save(path, net.state_dict(), meta)

    def reload_trained(self, path: Path, net: torch.nn.Module, seed: int, **expected: Any) -> dict[str, Any] | None:
        """Give `net` the weights saved at `path` when there are some and they were trained on the same data
        (each of `expected`, e.g. the vocabularies, equals what the checkpoint recorded): then `history` is
        the saved one, `net` is on the run's device and the checkpoint's metadata is returned. Else None:
        the run trains."""
        if not path.is_file():
            return None
        state, meta = checkpoint.load(path)
        if any(meta.get(key) != value for key, value in expected.items()):
            return None
        net.load_state_dict(state)
        net.to(self.device)
        self.history = meta.get("history", {})
        self.log(f"{self.name} seed {seed}: reloaded the trained weights from {path}")
        return meta

    def compute(self) -> dict[str, int | str]:
        """The run's compute for the leaderboard: `parameters`, the number of trainable scalars of
        the network (every `requires_grad` tensor of `self.net`, a tied embedding counted once), and
        `device`, where it trained and predicted (e.g. "cpu", "cuda:0"). Before `fit` there is no
        network, so only the device is reported. A bare "cuda" is given its index ("cuda:0"), so
        that runs on different GPUs of one machine are told apart."""
        import torch

        device = self.device
        if device.type == "cuda" and device.index is None and torch.cuda.is_available():
            device = torch.device("cuda", torch.cuda.current_device())
        reported: dict[str, int | str] = {"device": str(device)}
        net = getattr(self, "net", None)
        if isinstance(net, torch.nn.Module):
            reported["parameters"] = sum(p.numel() for p in net.parameters() if p.requires_grad)
        return reported

    def convergence(self) -> dict[str, Any]:
        """Whether training reached the recipe's criterion (`structbench.convergence`), as the training
        history recorded it (a reload's too); empty without a criterion or before training."""
        judged = self.history.get("convergence")
        return dict(judged) if isinstance(judged, dict) else {}

    def close(self) -> None:
        """Give torch back the thread count it had before `threads` changed it (the runner calls this)."""
        if self._threads_before is not None:
            import torch

            torch.set_num_threads(self._threads_before)
            self._threads_before = None
