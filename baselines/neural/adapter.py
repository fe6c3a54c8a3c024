"""The harness side of every neural baseline: recipe -> network -> trained weights -> predictions.

`NeuralTransducer` speaks the transduction protocol. `fit` resolves the settings from the
model's recipe for the suite (budget `cpu-small` unless `--set budget=paper`), builds the
vocabularies from the training split only, and either reloads the run's checkpoint or
trains and saves one. Subclasses say which settings they take and build their network.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Callable
from typing import Any, ClassVar

import torch

from structbench.baselines.neural import checkpoint
from structbench.baselines.neural.device import resolve_device, seed_everything
from structbench.baselines.neural.net import TransductionNet
from structbench.baselines.neural.settings import BUDGETS, TrainSettings, check_overrides, resolve_settings
from structbench.baselines.neural.trainer import History, Trainer, decode_all
from structbench.baselines.neural.vocab import Vocabulary
from structbench.errors import UserError
from structbench.specs import Split


class NeuralTransducer:
    """A trainable transducer whose network and settings come from a subclass and its recipes."""

    name: ClassVar[str]
    protocols: ClassVar[tuple[str, ...]] = ("transduction",)
    settings_class: ClassVar[type[TrainSettings]] = TrainSettings
    comparable: ClassVar[bool] = True
    """False for entries that see test-time information (oracle guidance)."""
    unkeyed_settings: ClassVar[frozenset[str]] = frozenset({"device", "threads"})
    """Where and on how many threads it trains: neither part of the run key nor of the label."""
    net_class: ClassVar[Callable[..., TransductionNet]]
    """The network, built from (settings, source vocabulary size, target vocabulary size)."""

    def __init__(self, budget: str = "cpu-small", **overrides: Any) -> None:
        if budget not in BUDGETS:
            raise UserError(f"unknown budget {budget!r}; use one of {', '.join(BUDGETS)}.")
        check_overrides(self.settings_class, self.name, overrides)
        self.budget = budget
        self.overrides = overrides
        self.settings: TrainSettings | None = None
        self.citation = ""
        self.net: TransductionNet | None = None
        self.history: dict[str, Any] = {}
        self.device = torch.device("cpu")
        self.max_length = 64
        self.log: Callable[[str], None] = lambda message: print(message, file=sys.stderr)
        self._threads_before: int | None = None

    @classmethod
    def configuration(cls, suite: str, budget: str = "cpu-small", **overrides: Any) -> dict[str, Any]:
        """The settings a run on `suite` trains with: the recipe's budget with the overrides applied.

        The runner stores runs under them, so a run is answered from the store only while the
        recipe still says what it said when the run was made.
        """
        model = cls(budget, **overrides)
        settings, _ = resolve_settings(cls.settings_class, cls.name, suite, model.budget, model.overrides)
        return model.described(settings)

    def described(self, settings: TrainSettings) -> dict[str, Any]:
        """What identifies a run's training (not where or on how many threads it runs)."""
        return {"budget": self.budget, **settings.model_dump(mode="json", exclude={"device", "threads"})}

    def build_net(self, settings: Any, source: Vocabulary, target: Vocabulary, train: Split) -> TransductionNet:
        """The untrained network for this run; a subclass that needs more than the sizes overrides it."""
        return self.net_class(settings, len(source), len(target))

    def fit(self, train: Split, dev: Split | None, *, seed: int) -> None:
        settings, self.citation = resolve_settings(
            self.settings_class, self.name, train.suite, self.budget, self.overrides
        )
        self.settings = settings
        if settings.threads:
            self._threads_before = torch.get_num_threads()
            torch.set_num_threads(settings.threads)
        self.device = resolve_device(settings.device)
        seed_everything(seed)
        source = Vocabulary.build(e.input for e in train.examples)
        target = Vocabulary.build(e.target or [] for e in train.examples)
        longest = max((len(e.target or []) for e in train.examples), default=0)
        self.max_length = settings.max_length or max(64, 2 * longest + 1)
        self.net = self.build_net(settings, source, target, train)
        self.source, self.target = source, target
        path = checkpoint.checkpoint_path(train.suite, train.draw, self.name, self.described(settings), seed)
        if path.is_file():
            state, meta = checkpoint.load(path)
            if meta.get("source") == source.tokens and meta.get("target") == target.tokens:
                self.net.load_state_dict(state)
                self.net.to(self.device)
                self.history = meta.get("history", {})
                self.log(f"{self.name} seed {seed}: reloaded the trained weights from {path}")
                return
        trainer = Trainer(
            self.net,
            settings,
            source,
            target,
            self.device,
            seed=seed,
            max_length=self.max_length,
            description=f"{self.name} seed {seed}",
        )
        history: History = trainer.train(train.examples, dev.examples if dev else None)
        self.history = history.as_dict()
        checkpoint.save(
            path,
            self.net.state_dict(),
            {
                "model": self.name,
                "suite": train.suite,
                "seed": seed,
                "settings": json.loads(settings.model_dump_json()),
                "citation": self.citation,
                "source": source.tokens,
                "target": target.tokens,
                "history": self.history,
            },
        )

    def transduce(self, inputs: list[list[str]]) -> list[list[str]]:
        if self.net is None:
            raise RuntimeError(f"{self.name} must be fitted before it can transduce")
        ids = decode_all(self.net, inputs, self.source, self.max_length, self.device)
        return [self.target.decode(row.tolist()) for row in ids]

    def compute(self) -> dict[str, int | str]:
        """The run's compute for the leaderboard: `parameters`, the number of trainable scalars of
        the network (every `requires_grad` tensor of `self.net`, adversary and lexicon included where
        the model has them), and `device`, where it trained and predicted (e.g. "cpu", "cuda:0").
        Before `fit` there is no network, so only the device is reported. A bare "cuda" is given
        its index ("cuda:0"), so that runs on different GPUs of one machine are told apart."""
        device = self.device
        if device.type == "cuda" and device.index is None and torch.cuda.is_available():
            device = torch.device("cuda", torch.cuda.current_device())
        reported: dict[str, int | str] = {"device": str(device)}
        if self.net is not None:
            reported["parameters"] = sum(p.numel() for p in self.net.parameters() if p.requires_grad)
        return reported

    def close(self) -> None:
        """Give torch back the thread count it had before `threads` changed it (the runner calls this)."""
        if self._threads_before is not None:
            torch.set_num_threads(self._threads_before)
            self._threads_before = None
