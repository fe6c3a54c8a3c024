"""The harness side of a trained neural classifier: recipe -> network -> trained weights -> labels.

Tran (2018, ch. 5) trains classifiers for two tasks: the number of the verb that follows a
sentence prefix (§5.5, the number-prediction objective of Linzen et al. 2016) and the
natural-logic relation between two formulas (§5.6, the setup of Bowman et al. 2015b, where a
premise and a hypothesis are encoded separately and the two vectors classified together).
`NeuralClassifier` speaks the classification protocol for both. `fit` resolves the settings
from the model's recipe for the suite (budget `cpu-small` unless `--set budget=paper`), builds
the vocabulary from the training split only (any other token reads as `<unk>`), and either
reloads the run's checkpoint or trains with cross-entropy on (input, label) and saves one.
Model selection sees the dev split only: the epoch with the best dev accuracy over the whole
dev split (for the logic suites that is Tran's pooled validation accuracy, every operator
count together) is kept, and `statistics()` reports that accuracy with the run.

Training runs in the loop every neural baseline shares (`fit.py`, driven from `training.py`): Adam
with gradient clipping, length-bucketed batches, optional mixed precision on CUDA, the same
selection rules, patience and `stop_at`. Subclasses name their settings (`settings.py`) and build
their network (`build_net`, from `nets.py`); `pair = True` models read `premise <sep> hypothesis`.

PyTorch is imported where a run trains or answers, never with the classes (docs/architecture.md,
"Model classes load without PyTorch").
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any, ClassVar

import numpy as np

from structbench.baselines.neural import checkpoint
from structbench.baselines.neural.classifier.settings import (
    BowLogicSettings,
    ClassifierSettings,
    FanLogicSettings,
    FanNumberSettings,
    LstmLogicSettings,
    NumberSettings,
)
from structbench.baselines.neural.model import NeuralModel
from structbench.baselines.neural.vocab import Vocabulary
from structbench.errors import NotApplicable, UserError
from structbench.progress import run_bar
from structbench.specs import Example, Split

if TYPE_CHECKING:
    import torch

    from structbench.baselines.neural.classifier.batching import Encoded
    from structbench.baselines.neural.classifier.nets import ClassifierNet

SEP = "<sep>"
"""The token between premise and hypothesis in the logic suites' inputs."""
TRANSDUCTION_ONLY = ("teacher_forcing", "guidance", "max_length")
"""Shared settings that only a decoder reads; a classifier refuses them rather than ignore them."""


def evenly_spaced(items: Sequence[Any], limit: int | None) -> list[Any]:
    """At most `limit` items taken at even steps through `items` (all of them when `limit` is None)."""
    if limit is None or len(items) <= limit:
        return list(items)
    return [items[(i * len(items)) // limit] for i in range(limit)]


class NeuralClassifier(NeuralModel):
    """A trainable classifier whose network and settings come from a subclass and its recipes."""

    protocols: ClassVar[tuple[str, ...]] = ("classification",)
    settings_class: ClassVar[type[ClassifierSettings]] = ClassifierSettings
    pair: ClassVar[bool] = False
    """True for models that encode the premise and the hypothesis of `premise <sep> hypothesis` separately."""
    unkeyed_settings: ClassVar[frozenset[str]] = frozenset({"device", *TRANSDUCTION_ONLY})
    """Where it trains, and the decoder settings it refuses: not part of its key."""

    def __init__(self, budget: str = "cpu-small", **overrides: Any) -> None:
        refused = sorted(set(overrides) & set(TRANSDUCTION_ONLY))
        if refused:
            raise UserError(
                f"{', '.join(map(repr, refused))} only apply to decoders; {self.name!r} is a classifier: drop the --set."
            )
        super().__init__(budget, **overrides)
        self.settings: ClassifierSettings | None = None
        self.net: ClassifierNet | None = None
        self.vocabulary = Vocabulary([])
        self.labels: list[str] = []

    def build_net(self, settings: Any, vocabulary_size: int, labels: int) -> ClassifierNet:
        """The untrained network for this run, from its settings, the vocabulary's size and the number of
        labels. Each subclass imports its network from `nets.py` here, where a run trains: PyTorch is no
        part of what the registry loads to key and label the model's runs."""
        raise NotImplementedError(f"{type(self).__name__} must build its network")

    def segments(self, tokens: Sequence[str], where: str) -> tuple[list[str], ...]:
        """The token lists the network reads: the whole input, or (premise, hypothesis) split at `<sep>`.

        An empty segment, or a pair model's input without exactly one `<sep>`, cannot be encoded:
        the model does not apply to such a suite."""
        if not self.pair:
            parts: tuple[list[str], ...] = (list(tokens),)
        else:
            if list(tokens).count(SEP) != 1:
                raise NotApplicable(
                    f"{self.name} reads `premise {SEP} hypothesis` pairs, but {where} has "
                    f"{list(tokens).count(SEP)} {SEP} tokens; use it on the logic suites."
                )
            cut = list(tokens).index(SEP)
            parts = (list(tokens[:cut]), list(tokens[cut + 1 :]))
        if any(not part for part in parts):
            raise NotApplicable(f"{self.name} cannot read {where}: it has an empty {'side' if self.pair else 'input'}.")
        return parts

    def encode(self, tokens: Sequence[str], label: int, where: str) -> Encoded:
        return tuple(self.vocabulary.encode(part) for part in self.segments(tokens, where)), label

    def fit(self, train: Split, dev: Split | None, *, seed: int) -> None:
        from structbench.baselines.neural.classifier.batching import UNSEEN
        from structbench.baselines.neural.classifier.training import train_classifier

        settings, self.citation = self.resolve(train.suite)
        self.settings = settings
        self.begin(settings, seed)
        examples = self.training_examples(train, settings, seed)
        self.labels = sorted({str(e.label) for e in examples})
        self.vocabulary = Vocabulary.build(
            part for e in examples for part in self.segments(e.input, f"example {e.id} of {train.suite}")
        )
        self.net = self.build_net(settings, len(self.vocabulary), len(self.labels))
        path = checkpoint.checkpoint_path(train.suite, train.draw, self.name, self.described(settings), seed)
        if self.reload_trained(path, self.net, seed, vocabulary=self.vocabulary.tokens, labels=self.labels) is not None:
            return
        ids = {label: i for i, label in enumerate(self.labels)}
        rows = [self.encode(e.input, ids[str(e.label)], f"example {e.id}") for e in examples]
        dev_examples = evenly_spaced(dev.examples, settings.dev_limit) if dev else []
        # a dev label never seen in training can never be predicted: it counts as wrong and adds no loss
        dev_rows = [self.encode(e.input, ids.get(str(e.label), UNSEEN), f"dev example {e.id}") for e in dev_examples]
        history = train_classifier(
            self.net,
            settings,
            self.device,
            rows,
            dev_rows,
            seed=seed,
            description=run_bar(train.suite, self.name, seed),
        )
        self.history = history.as_dict()
        self.save_trained(
            path, self.net, train.suite, seed, settings, vocabulary=self.vocabulary.tokens, labels=self.labels
        )

    def training_examples(self, train: Split, settings: ClassifierSettings, seed: int) -> list[Example]:
        """The labelled examples this run trains on: all of them, or a seeded random `train_limit` of them."""
        unlabelled = next((e for e in train.examples if e.label is None), None)
        if unlabelled is not None:
            raise NotApplicable(f"{self.name} trains on labels, but example {unlabelled.id} of {train.suite} has none.")
        if not train.examples:
            raise NotApplicable(f"{self.name} must be trained, but the train split of {train.suite} is empty.")
        if settings.train_limit is None or len(train.examples) <= settings.train_limit:
            return list(train.examples)
        chosen = np.random.default_rng(seed).choice(len(train.examples), settings.train_limit, replace=False)
        return [train.examples[i] for i in sorted(chosen.tolist())]

    def scores(self, inputs: Sequence[Sequence[str]]) -> torch.Tensor:
        """[N, n_labels] the network's label scores for `inputs`, in their order (on the CPU)."""
        import torch

        from structbench.baselines.neural.classifier.batching import UNSEEN, batches
        from structbench.baselines.neural.classifier.training import PREDICT_BATCH

        if self.net is None:
            raise NotApplicable(f"{self.name} must be trained first, and this suite has no train split.")
        rows = [self.encode(tokens, UNSEEN, f"input {i}") for i, tokens in enumerate(inputs)]
        out = torch.empty(len(rows), len(self.labels))
        self.net.eval()
        with torch.inference_mode():
            for batch in batches(rows, PREDICT_BATCH, None):
                logits = self.net(batch.to(self.device).segments).float().cpu()
                out[list(batch.order)] = logits
        return out

    def classify(self, inputs: list[list[str]], labels: list[str]) -> list[str]:
        """The highest-scoring label for each input among those of `labels` that training saw."""
        import torch

        allowed = [i for i, label in enumerate(self.labels) if label in labels]
        if not allowed:
            raise NotApplicable(
                f"{self.name} was trained on the labels {', '.join(self.labels)} and is asked for {', '.join(labels)}."
            )
        if not inputs:
            return []
        scores = self.scores(inputs)
        mask = torch.full((len(self.labels),), float("-inf"))
        mask[allowed] = 0.0
        return [self.labels[i] for i in (scores + mask).argmax(dim=1).tolist()]

    def statistics(self) -> dict[str, float]:
        """`dev_accuracy`: label accuracy on dev of the epoch that model selection kept (empty without dev)."""
        selected = self.history.get("selected_epoch")
        for evaluation in self.history.get("evaluations", []):
            if evaluation["epoch"] == selected and evaluation["dev_accuracy"] is not None:
                return {"dev_accuracy": float(evaluation["dev_accuracy"])}
        return {}


class LstmNumber(NeuralClassifier):
    """`lstm-number`: Tran's (2018, §5.5) LSTM trained to predict the verb's number from the prefix."""

    name = "lstm-number"
    settings_class = NumberSettings

    def build_net(self, settings: Any, vocabulary_size: int, labels: int) -> ClassifierNet:
        from structbench.baselines.neural.classifier.nets import LstmNumberNet

        return LstmNumberNet(settings, vocabulary_size, labels)


class FanNumber(NeuralClassifier):
    """`fan-number`: Tran's (2018, §5.5) FAN (Transformer encoder, causal) trained to predict the verb's number."""

    name = "fan-number"
    settings_class = FanNumberSettings

    def build_net(self, settings: Any, vocabulary_size: int, labels: int) -> ClassifierNet:
        from structbench.baselines.neural.classifier.nets import FanNumberNet

        return FanNumberNet(settings, vocabulary_size, labels)


class LstmLogic(NeuralClassifier):
    """`lstm-logic`: Tran's (2018, §5.6) 2-layer skip-connected LSTM sentence encoder + 3-layer ReLU classifier."""

    name = "lstm-logic"
    settings_class = LstmLogicSettings
    pair = True

    def build_net(self, settings: Any, vocabulary_size: int, labels: int) -> ClassifierNet:
        from structbench.baselines.neural.classifier.nets import LstmLogicNet

        return LstmLogicNet(settings, vocabulary_size, labels)


class FanLogic(NeuralClassifier):
    """`fan-logic`: Tran's (2018, §5.6) FAN sentence encoder with two-query attention pooling + ReLU classifier."""

    name = "fan-logic"
    settings_class = FanLogicSettings
    pair = True

    def build_net(self, settings: Any, vocabulary_size: int, labels: int) -> ClassifierNet:
        from structbench.baselines.neural.classifier.nets import FanLogicNet

        return FanLogicNet(settings, vocabulary_size, labels)


class BowLogic(NeuralClassifier):
    """`bow-logic`: Tran's (2018, §5.6.1) bag-of-words control (`--set pooling=sum|mean|max`) + ReLU classifier."""

    name = "bow-logic"
    settings_class = BowLogicSettings
    pair = True

    def build_net(self, settings: Any, vocabulary_size: int, labels: int) -> ClassifierNet:
        from structbench.baselines.neural.classifier.nets import BowLogicNet

        return BowLogicNet(settings, vocabulary_size, labels)
