"""The harness side of every neural word-level language model: recipe -> network -> weights -> log-probabilities.

`NeuralLanguageModel` is the language-model counterpart of `NeuralTransducer`
(`structbench.baselines.neural.transducer`): it serves the minimal-pair and forced-choice
protocols with `logprob`, trains a next-word LM on the `input` sentences of the suite's train
split and keeps the epoch with the lowest dev perplexity. Settings come from the model's recipe
for the suite's task (`recipes/MODEL/TASK.yaml`, budget `cpu-small` unless `--set
budget=paper`), weights are checkpointed per run under `STRUCTBENCH_HOME/checkpoints/` and
reloaded when the same run is asked again, and a run is seeded so that the same seed on the
same CPU gives the same numbers. Subclasses name their settings and build their network
(`build_net`, from (settings, vocabulary), see `nets.LanguageModelNet`).

PyTorch is imported where a run trains or answers, never with the class (docs/architecture.md,
"Model classes load without PyTorch"): the network comes from `nets.py` in `build_net`, the scoring
from `scoring.py` in the methods that score, the architectures' sizes from `settings.py`.

Modelling follows Tran (2018), *Predicting and Discovering Linguistic Structure with Neural
Networks*, PhD thesis, Universiteit van Amsterdam:
- sentence level: "the hidden states of LSTMs are reset to zeros, which ensures that the data
  is modeled at the sentence level" (§4.4.2; §4.4 begins on p. 54); every sentence is one
  row, starting with `<s>` and ending with `</s>`, and no state passes between sentences;
- the vocabulary is the 10,000 most frequent training words (§5.5.1; §5.5 begins on p. 71),
  the others becoming `<unk>` (the thesis replaces them by their part of speech, which our
  suites do not carry); it is built from the train split only;
- model selection by validation perplexity ("We use perplexity to choose the best model",
  Table 4.4; §5.5.2 quotes the validation perplexities, LSTM 75.17 and FAN 71.39);
- Adam at learning rate 0.001 (§5.5.2).

`loglikelihood` answers the sum of the natural-log probabilities of a continuation's words given
`<s>` and its context, with no `</s>` (agreement scored at the verb), each context computed once
for all its one-word candidates. `logprob` answers the sum of the natural-log probabilities of a
sequence's words and of the closing `</s>`, each given `<s>` and the words before it: the probability of the whole
sentence, as the n-gram baselines give it (`structbench.baselines.classical.ngram`). `</s>` is included
so that the score is a proper probability over sentences (and a minimal pair's two candidates
have the same length, so it moves both alike). Perplexity is per token, the tokens being the
words plus `</s>` (`<s>` is given, never predicted): exp(-sum log p / tokens).

`region_surprisals` (SyntaxGym) answers, per sentence given as regions of words, each region's summed
-log2 p of its words, each given `<s>` and every word before it in the sentence, with no `</s>`.
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Iterable, Sequence
from typing import TYPE_CHECKING, Any, ClassVar, Literal

import numpy as np
from pydantic import NonNegativeInt, PositiveInt

from structbench import registry
from structbench.baselines.neural import checkpoint
from structbench.baselines.neural.lm.settings import FanLmArchitecture, LstmLmArchitecture
from structbench.baselines.neural.model import NeuralModel
from structbench.baselines.neural.settings import NeuralSettings
from structbench.baselines.neural.vocab import PAD, Vocabulary
from structbench.data import freeze
from structbench.errors import NotApplicable, UserError
from structbench.progress import run_bar
from structbench.specs import Split

if TYPE_CHECKING:
    from collections.abc import Callable

    from structbench.baselines.neural.fit import History
    from structbench.baselines.neural.lm.nets import LanguageModelNet

__all__ = [
    "FanLanguageModel",
    "FanLmSettings",
    "LmSettings",
    "LstmLanguageModel",
    "LstmLmSettings",
    "NeuralLanguageModel",
    "build_vocabulary",
    "lm_sentences",
    "per_token_perplexity",
]


class LmSettings(NeuralSettings):
    """Settings every neural LM shares: the run's (model selection by the lowest dev perplexity,
    Adam at 0.001 as in Tran 2018 §5.5.2), plus the vocabulary."""

    epochs: PositiveInt = 13
    """Maximum passes over the training sentences."""
    dev_limit: PositiveInt | None = None
    """Evaluate on at most this many dev sentences (a fixed prefix of the frozen dev split); None = all."""
    max_vocabulary: PositiveInt | None = 10_000
    """Keep the most frequent training words (10k in Tran 2018 §5.5.1); the rest become `<unk>`. None = all."""
    min_count: PositiveInt = 1
    """Words seen fewer times in training become `<unk>`."""
    train_on: str | None = None
    """Train on this suite's train (and dev) split instead of the evaluated suite's, e.g. for a suite without one."""
    loss: Literal["mean", "sum"] = "mean"
    """The batch's loss Adam descends: the mean token cross-entropy, or its sum over the batch's tokens
    (the authors' ch. 5 LM script, ketranm/fan_vs_rnn lm.py `build_crit`: `NLLLoss(size_average=False)`);
    the two differ through gradient clipping, which sees the summed gradient's larger norm."""
    max_decays: NonNegativeInt | None = 5
    """With `lr_decay`: an epoch with no lower dev perplexity after this many decays ends training (lm.py
    stops once the rate falls below lr x 0.5^5, which is the sixth halving)."""


class LstmLmSettings(LmSettings, LstmLmArchitecture):
    """`lstm-lm`: the shared LM settings and the stacked LSTM's sizes."""


class FanLmSettings(LmSettings, FanLmArchitecture):
    """`fan-lm`: the shared LM settings and the FAN's sizes."""


def lm_sentences(split: Split) -> list[list[str]]:
    """The sentences of a split a language model reads: each example's `input`, or, for an example
    with `candidates` (a minimal pair or a forced choice), its correct candidate (`answer`, else the
    first). The train split of `agreement-attractors` holds whole sentences as `input`; its dev
    split holds minimal pairs, whose correct member is the whole sentence."""
    out = []
    for example in split.examples:
        if example.candidates:
            out.append(list(example.candidates[example.answer or 0]))
        else:
            out.append(list(example.input))
    return out


def build_vocabulary(
    sentences: Iterable[Sequence[str]], max_vocabulary: int | None = None, min_count: int = 1
) -> Vocabulary:
    """The words seen at least `min_count` times, at most the `max_vocabulary` most frequent (ties by
    spelling, so that the vocabulary does not depend on sentence order), in sorted order."""
    counts = Counter(word for sentence in sentences for word in sentence)
    kept = sorted((word for word, count in counts.items() if count >= min_count), key=lambda w: (-counts[w], w))
    if max_vocabulary is not None:
        kept = kept[:max_vocabulary]
    return Vocabulary(sorted(kept))


def per_token_perplexity(logprobs: Sequence[float], sentences: Sequence[Sequence[int]]) -> float:
    """Per-token perplexity: exp of minus the summed log-probability over words plus one `</s>` per sentence."""
    tokens = sum(len(s) + 1 for s in sentences)
    return math.exp(-sum(logprobs) / max(tokens, 1))


class NeuralLanguageModel(NeuralModel):
    """A word-level LM trained on the suite's train sentences, scoring whole sentences for the harness.

    Subclasses set `name` and `settings_class` (an `LmSettings` with the network's sizes) and build
    their network (`build_net`). After `fit`, `logprob` scores sentences and `statistics` reports the dev
    perplexity of the kept epoch. A suite whose train split is empty (`agreement-gulordava`)
    leaves the model untrained, and `logprob` then raises `NotApplicable`, so the run is `n/a`
    with the reason, never a row of chance-level numbers; `--set train_on=SUITE` trains on
    another suite's train split instead.
    """

    protocols: ClassVar[tuple[str, ...]] = ("minimal-pair", "forced-choice", "region-surprisal")
    settings_class: ClassVar[type[LmSettings]] = LmSettings

    def __init__(self, budget: str = "cpu-small", **overrides: Any) -> None:
        super().__init__(budget, **overrides)
        self.settings: LmSettings | None = None
        self.net: LanguageModelNet | None = None
        self.vocabulary = Vocabulary([])
        self.dev_perplexity: float | None = None
        self.untrained_reason = f"{self.name} was not trained: the suite has no train split; train it elsewhere."

    def resolve(self, suite: str) -> tuple[Any, str]:
        """As `NeuralModel.resolve`; a `train_on` suite that does not exist is one sentence now, before any data is built."""
        settings, citation = super().resolve(suite)
        if settings.train_on is not None:
            registry.suite(settings.train_on)
        return settings, citation

    def build_net(self, settings: Any, vocabulary: Vocabulary) -> LanguageModelNet:
        """The untrained network, from the run's settings and vocabulary. Each subclass imports its
        `nets` module here, where a run trains: PyTorch is no part of what the registry loads to key
        and label the model's runs."""
        raise NotImplementedError(f"{type(self).__name__} must build its network")

    def _training_splits(
        self, train: Split, dev: Split | None, settings: LmSettings, seed: int
    ) -> tuple[Split, Split | None]:
        """The evaluated suite's splits, or with `train_on` the train and dev splits of that suite's draw."""
        if settings.train_on is None:
            return train, dev
        other = registry.suite(settings.train_on)
        manifest = freeze.ensure_built(other)
        draw = seed % other.spec.n_draws
        trains = other.spec.splits_with_role("train")
        devs = other.spec.splits_with_role("dev")
        if not trains:
            raise UserError(
                f"train_on={settings.train_on!r} names a suite without a train split; name one that has one."
            )
        return (
            freeze.load_split(other, manifest, draw, trains[0].name),
            freeze.load_split(other, manifest, draw, devs[0].name) if devs else None,
        )

    def fit(self, train: Split, dev: Split | None, *, seed: int) -> None:
        settings, self.citation = self.resolve(train.suite)
        self.settings = settings
        train, dev = self._training_splits(train, dev, settings, seed)
        if not train.examples:
            suite = train.suite.split("@")[0]
            self.untrained_reason = (
                f"{self.name} is a language model trained on the suite's train split; {suite} has none: "
                "train it elsewhere (--set train_on=SUITE)."
            )
            self.log(f"{self.name} seed {seed}: {self.untrained_reason}")
            return
        self.begin(settings, seed)
        sentences = lm_sentences(train)
        vocabulary = build_vocabulary(sentences, settings.max_vocabulary, settings.min_count)
        self.vocabulary = vocabulary
        self.net = self.build_net(settings, vocabulary).to(self.device)
        path = checkpoint.checkpoint_path(train.suite, train.draw, self.name, self.described(settings), seed)
        meta = self.reload_trained(path, self.net, seed, vocabulary=vocabulary.tokens)
        if meta is not None:
            self.dev_perplexity = meta.get("dev_perplexity")
            return
        train_ids = [vocabulary.encode(s) for s in sentences]
        dev_sentences = lm_sentences(dev) if dev is not None else []
        if settings.dev_limit is not None:
            dev_sentences = dev_sentences[: settings.dev_limit]
        dev_ids = [vocabulary.encode(s) for s in dev_sentences]
        history = self._train(self.net, settings, train_ids, dev_ids, seed, run_bar(train.suite, self.name, seed))
        self.history = history.as_dict()
        kept = history.selected()
        self.dev_perplexity = kept.figures.get("dev_perplexity") if kept else None
        shown = "-" if self.dev_perplexity is None else f"{self.dev_perplexity:.2f}"
        seconds = history.evaluations[-1].seconds if history.evaluations else 0.0
        self.log(
            f"{self.name} seed {seed}: {len(history.evaluations)} evaluations in {seconds:.0f} s; "
            f"kept epoch {history.selected_epoch} (dev perplexity {shown}); stopped: {history.stopped}"
        )
        self.save_trained(
            path,
            self.net,
            train.suite,
            seed,
            settings,
            vocabulary=vocabulary.tokens,
            dev_perplexity=self.dev_perplexity,
        )

    def _train(
        self,
        net: LanguageModelNet,
        settings: LmSettings,
        train: list[list[int]],
        dev: list[list[int]],
        seed: int,
        description: str,
    ) -> History:
        """Adam on token-level cross-entropy (`loss`: mean or sum per batch) over length-bucketed batches of
        whole sentences, in the shared loop, the learning rate decayed on a dev plateau where `lr_decay` says;
        the parameters of the evaluation with the lowest dev perplexity are kept (the last without dev)."""
        import torch
        import torch.nn.functional as F

        from structbench.baselines.neural.batching import length_buckets
        from structbench.baselines.neural.fit import Figures, Schedule, Selector, criterion_of, fit
        from structbench.baselines.neural.lm.scoring import framed, padded, sequence_logprobs

        device = self.device
        schedule = Schedule.of(settings, device)
        rng = np.random.default_rng(seed)
        lengths = [len(s) + 2 for s in train]

        def step(indices: list[int], update: Callable[[torch.Tensor], None]) -> tuple[float, int]:
            ids = padded([framed(train[i]) for i in indices]).to(device)
            targets = ids[:, 1:]
            with torch.autocast("cuda", enabled=schedule.amp):
                logits = net(ids[:, :-1])
            loss = F.cross_entropy(
                logits.float().reshape(-1, logits.shape[-1]),
                targets.reshape(-1),
                ignore_index=PAD,
                reduction=settings.loss,
            )
            update(loss)
            tokens = int((targets != PAD).sum())
            per_token = float(loss.detach()) / (tokens if settings.loss == "sum" else 1)
            return per_token, tokens

        def evaluate(train_loss: float) -> Figures:
            dev_perplexity = (
                per_token_perplexity(
                    sequence_logprobs(net, dev, device, vocab_size=len(self.vocabulary), amp=schedule.amp), dev
                )
                if dev
                else None
            )
            return {"train_perplexity": math.exp(train_loss), "dev_perplexity": dev_perplexity}

        selection = "dev_perplexity" if dev else "last"
        return fit(
            net,
            schedule,
            Selector(selection, criterion_of(settings, bool(dev)), settings.patience, worse="no lower dev perplexity"),
            batches=lambda: length_buckets(lengths, settings.batch_size, rng),
            step=step,
            evaluate=evaluate,
            description=description,
        )

    def logprob(self, sequences: list[list[str]]) -> list[float]:
        """Natural-log probability of each sequence's words and `</s>` given `<s>`; words outside
        the training vocabulary count as `<unk>`. `NotApplicable` when the model was never trained."""
        from structbench.baselines.neural.lm.scoring import sequence_logprobs

        if self.net is None:
            raise NotApplicable(self.untrained_reason)
        ids = [self.vocabulary.encode(sequence) for sequence in sequences]
        amp = self.settings is not None and self.settings.amp
        return sequence_logprobs(self.net, ids, self.device, vocab_size=len(self.vocabulary), amp=amp)

    def loglikelihood(self, requests: list[tuple[list[str], list[str]]]) -> list[float]:
        """Natural-log probability of each continuation's words given `<s>` and its context, with no
        `</s>` (`continuation_logprobs`); words outside the training vocabulary count as `<unk>`.
        `NotApplicable` when the model was never trained."""
        from structbench.baselines.neural.lm.scoring import continuation_logprobs

        if self.net is None:
            raise NotApplicable(self.untrained_reason)
        encoded = [(self.vocabulary.encode(context), self.vocabulary.encode(words)) for context, words in requests]
        amp = self.settings is not None and self.settings.amp
        return continuation_logprobs(self.net, encoded, self.device, vocab_size=len(self.vocabulary), amp=amp)

    def region_surprisals(self, sentences: list[list[list[str]]]) -> list[list[float]]:
        """Each region's summed -log2 p of its words, each given `<s>` and the sentence's words before it,
        with no `</s>` (`word_logprobs`); words outside the training vocabulary count as `<unk>`.
        `NotApplicable` when the model was never trained."""
        from structbench.baselines.neural.lm.scoring import word_logprobs

        if self.net is None:
            raise NotApplicable(self.untrained_reason)
        ids = [self.vocabulary.encode([word for region in regions for word in region]) for regions in sentences]
        amp = self.settings is not None and self.settings.amp
        logprobs = word_logprobs(self.net, ids, self.device, vocab_size=len(self.vocabulary), amp=amp)
        out = []
        for regions, values in zip(sentences, logprobs, strict=True):
            sums, start = [], 0
            for region in regions:
                sums.append(-sum(values[start : start + len(region)]) / math.log(2))
                start += len(region)
            out.append(sums)
        return out

    def perplexity(self, sentences: Sequence[Sequence[str]]) -> float:
        """Per-token perplexity of the trained model on `sentences` (words plus `</s>`)."""
        ids = [self.vocabulary.encode(sentence) for sentence in sentences]
        return per_token_perplexity(self.logprob([list(s) for s in sentences]), ids)

    def statistics(self) -> dict[str, float]:
        """`dev_perplexity`: per-token perplexity on the dev sentences of the kept epoch (the number
        Tran 2018 §5.5.2 quotes: LSTM 75.17, FAN 71.39 on Linzen et al.'s data); empty when the model
        was not trained or had no dev split."""
        return {} if self.dev_perplexity is None else {"dev_perplexity": float(self.dev_perplexity)}


class LstmLanguageModel(NeuralLanguageModel):
    """`lstm-lm`: 4-layer LSTM LM, 128 dims, dropout 0.2, tied embeddings (Tran 2018 §5.5.2)."""

    name = "lstm-lm"
    settings_class = LstmLmSettings

    def build_net(self, settings: Any, vocabulary: Vocabulary) -> LanguageModelNet:
        from structbench.baselines.neural.lm.nets import LstmLm

        return LstmLm(settings, len(vocabulary))


class FanLanguageModel(NeuralLanguageModel):
    """`fan-lm`: 4-layer post-LN Transformer LM (FAN), 128 dims, 2 heads, inner 256, dropout 0.2,
    tied embeddings (Tran 2018 §5.2 and §5.5.2)."""

    name = "fan-lm"
    settings_class = FanLmSettings

    def build_net(self, settings: Any, vocabulary: Vocabulary) -> LanguageModelNet:
        from structbench.baselines.neural.lm.nets import FanLm

        return FanLm(settings, len(vocabulary))
