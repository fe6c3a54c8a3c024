"""The registered recurrent encoder-decoders: `seq2seq` and its per-paper presets, and Attentive Guidance.

Each class names its recipe (`recipes/NAME/`) and builds `Seq2SeqNet` (`nets.py`, imported where a
run trains); the shared `NeuralTransducer` trains and checkpoints it. Attentive Guidance refuses suites without attention
targets; its oracle variant also reads them at test time, so it is flagged as not comparable.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from structbench import registry
from structbench.baselines.neural.seq2seq.settings import Seq2SeqSettings
from structbench.baselines.neural.transducer import NeuralTransducer
from structbench.baselines.neural.vocab import Vocabulary
from structbench.data import freeze
from structbench.errors import NotApplicable
from structbench.specs import Split

if TYPE_CHECKING:
    from structbench.baselines.neural.seq2seq.nets import Seq2SeqNet


class Seq2Seq(NeuralTransducer):
    """`seq2seq`: every architecture setting free (`--set cell=lstm layers=2 attention=luong-dot ...`)."""

    name = "seq2seq"
    settings_class = Seq2SeqSettings

    def build_net(self, settings: Seq2SeqSettings, source: Vocabulary, target: Vocabulary, train: Split) -> Seq2SeqNet:
        from structbench.baselines.neural.seq2seq.nets import Seq2SeqNet

        longest = max((len(e.input) for e in train.examples), default=1)
        return Seq2SeqNet(settings, len(source), len(target), max(64, 2 * longest))


class Seq2SeqLstm(Seq2Seq):
    """`seq2seq-lstm`: Lake & Baroni's overall-best, 2-layer LSTM of 200 units, dropout 0.5, no attention."""

    name = "seq2seq-lstm"


class Seq2SeqGruAttention(Seq2Seq):
    """`seq2seq-gru-attn`: a GRU encoder-decoder with attention (per task: Lake & Baroni, McCoy, Korrel)."""

    name = "seq2seq-gru-attn"


class Seq2SeqSrn(Seq2Seq):
    """`seq2seq-srn`: simple recurrent networks (McCoy et al.'s SRN variants)."""

    name = "seq2seq-srn"


class AttentiveGuidance(Seq2Seq):
    """`attentive-guidance`: learned guidance, attention loss (lambda = 1) toward the suite's targets in training only."""

    name = "attentive-guidance"

    def fit(self, train: Split, dev: Split | None, *, seed: int) -> None:
        if not any(e.attention for e in train.examples):
            raise NotApplicable(f"{self.name} needs attention targets, and {train.suite} has none")
        super().fit(train, dev, seed=seed)


class AttentiveGuidanceOracle(AttentiveGuidance):
    """`attentive-guidance-oracle`: oracle guidance, the target attention at training *and* test time.

    It reads the attention targets of the examples it is asked about, which no real model
    can: an upper bound, flagged as not comparable on the leaderboard.
    """

    name = "attentive-guidance-oracle"
    comparable = False

    def __init__(self, budget: str = "cpu-small", **overrides: Any) -> None:
        super().__init__(budget, **{**overrides, "oracle_attention": True})

    def fit(self, train: Split, dev: Split | None, *, seed: int) -> None:
        super().fit(train, dev, seed=seed)
        suite = registry.suite(train.suite)
        manifest = freeze.ensure_built(suite)
        self.targets: dict[tuple[str, ...], list[int]] = {}
        for split in suite.spec.splits:
            for example in freeze.load_split(suite, manifest, train.draw, split.name).examples:
                if example.attention is not None:
                    self.targets[tuple(example.input)] = example.attention

    def transduce(self, inputs: list[list[str]]) -> list[list[str]]:
        assert self.net is not None
        from structbench.baselines.neural.trainer import decode_all

        attention = [self.targets.get(tuple(tokens)) for tokens in inputs]
        ids = decode_all(self.net, inputs, self.source, self.max_length, self.device, attention=attention)
        return [self.target.decode(row.tolist()) for row in ids]
