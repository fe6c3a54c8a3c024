"""The base of every neural transducer: recipe -> network -> trained weights -> decoded outputs.

`NeuralTransducer` (a `structbench.baselines.neural.model.NeuralModel`) speaks the transduction
protocol. `fit` resolves the settings from the model's recipe for the suite (budget `cpu-small`
unless `--set budget=paper`), builds the vocabularies from the training split only, and either
reloads the run's checkpoint or trains and saves one. Subclasses say which settings they take and build their network.

PyTorch is imported where a run trains or answers, never with the class (docs/architecture.md,
"Model classes load without PyTorch").
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, ClassVar

from structbench.baselines.neural import checkpoint
from structbench.baselines.neural.model import NeuralModel
from structbench.baselines.neural.settings import TrainSettings
from structbench.baselines.neural.vocab import Vocabulary
from structbench.progress import run_bar
from structbench.specs import Split

if TYPE_CHECKING:
    from structbench.baselines.neural.net import TransductionNet


class NeuralTransducer(NeuralModel):
    """A trainable transducer whose network and settings come from a subclass and its recipes."""

    protocols: ClassVar[tuple[str, ...]] = ("transduction",)
    settings_class: ClassVar[type[TrainSettings]] = TrainSettings

    def __init__(self, budget: str = "cpu-small", **overrides: Any) -> None:
        super().__init__(budget, **overrides)
        self.settings: TrainSettings | None = None
        self.net: TransductionNet | None = None
        self.max_length = 64

    def build_net(self, settings: Any, source: Vocabulary, target: Vocabulary, train: Split) -> TransductionNet:
        """The untrained network for this run. Each subclass imports its `nets` module here, where a run
        trains: PyTorch is no part of what the registry loads to key and label the model's runs."""
        raise NotImplementedError(f"{type(self).__name__} must build its network")

    def fit(self, train: Split, dev: Split | None, *, seed: int) -> None:
        from structbench.baselines.neural.resume import Resume
        from structbench.baselines.neural.trainer import Trainer

        settings, self.citation = self.resolve(train.suite)
        self.settings = settings
        self.begin(settings, seed)
        source = Vocabulary.build(e.input for e in train.examples)
        target = Vocabulary.build(e.target or [] for e in train.examples)
        longest = max((len(e.target or []) for e in train.examples), default=0)
        self.max_length = settings.max_length or max(64, 2 * longest + 1)
        self.net = self.build_net(settings, source, target, train)
        self.source, self.target = source, target
        path = checkpoint.checkpoint_path(train.suite, train.draw, self.name, self.described(settings), seed)
        if self.reload_trained(path, self.net, seed, source=source.tokens, target=target.tokens) is not None:
            return
        trainer = Trainer(
            self.net,
            settings,
            source,
            target,
            self.device,
            seed=seed,
            max_length=self.max_length,
            description=run_bar(train.suite, self.name, seed),
        )
        identity = {
            "settings": self.described(settings),
            "seed": seed,
            "source": source.tokens,
            "target": target.tokens,
        }
        resume = Resume(path.with_suffix(".resume"), identity, log=self.log)
        history = trainer.train(train.examples, dev.examples if dev else None, resume=resume)
        self.history = history.as_dict()
        self.save_trained(path, self.net, train.suite, seed, settings, source=source.tokens, target=target.tokens)

    def transduce(self, inputs: list[list[str]]) -> list[list[str]]:
        if self.net is None:
            raise RuntimeError(f"{self.name} must be fitted before it can transduce")
        from structbench.baselines.neural.trainer import decode_all

        ids = decode_all(self.net, inputs, self.source, self.max_length, self.device)
        return [self.target.decode(row.tolist()) for row in ids]
