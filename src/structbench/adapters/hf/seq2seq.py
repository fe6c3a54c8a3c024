"""The Hugging Face encoder-decoder adapter: `--model hf-seq2seq --set pretrained=PATH_OR_NAME [--set finetune=true]`.

Any checkpoint `AutoModelForSeq2SeqLM` loads (T5, BART, ...), from a local folder or the local
Hugging Face cache, never from the network (`structbench.adapters.hf.common`); optionally fine-tuned on the
suite's train split before it is asked. The class docstring says how each protocol is asked.

PyTorch and transformers are imported where the model is built, trains or answers, never with the
class (docs/architecture.md, "Model classes load without PyTorch").
"""

from __future__ import annotations

import sys
from collections.abc import Callable, Mapping, Sequence
from typing import TYPE_CHECKING, Any, ClassVar

import numpy as np
from pydantic import PositiveFloat, PositiveInt

from structbench.adapters.hf.common import (
    Dtype,
    HfModel,
    by_length,
    check_template,
    checkpoint_name,
    fill,
    load_pretrained,
    load_tokenizer,
    require_transformers,
    resolve_checkpoint,
    right_padded,
    sum_target_logprobs,
)
from structbench.devices import DeviceName, resolve_device
from structbench.errors import NotApplicable, UserError
from structbench.specs import Example, Split

if TYPE_CHECKING:
    import torch

GRADIENT_CLIP = 1.0
"""Largest global gradient norm of a fine-tuning step."""


class HfSeq2Seq(HfModel):
    """A Hugging Face encoder-decoder (T5, BART), asked as is or fine-tuned on the suite's train split first.

    Text: a suite's whitespace tokens are joined by single spaces. The encoder reads `prompt`
    with `{input}` replaced by the input (default `"{input}"`, the input alone), encoded with the
    tokenizer's own special tokens (T5 appends `</s>`, BART wraps in `<s> ... </s>`). The decoder
    starts from the model's `decoder_start_token_id`; a target is its words' sub-words without
    special tokens.

    - transduction (`transduce`): greedy decoding, at most `max_new_tokens` sub-words, cut at
      end-of-sequence (and at a newline), special tokens dropped, split on whitespace.
    - classification (`classify`): each label is scored as the decoder target given the input,
      by the summed log-probability of its sub-words (no end-of-sequence, not length-normalised);
      the best label is the answer (the first of equal ones, in the suite's label order).
    - minimal-pair, forced-choice (`logprob`): the protocol hands over whole sentences only, so
      each is scored as the decoder target given an empty input (the prompt with `{input}`
      empty): the decoder as a language model, the summed log-probability of the sentence's
      sub-words (no end-of-sequence). Meaningful after fine-tuning on the suite's train
      sentences (which train exactly that: empty input -> sentence) or for a checkpoint trained
      to reconstruct text (BART); T5's span-corruption pre-training does not make its decoder a
      language model.

    Fine-tuning (`--set finetune=true`, in `fit`): every train example becomes an (input,
    output) pair: its target (transduction), its label (classification), else the example's own
    words as the output of an empty input (the language-model sentences of minimal-pair and
    forced-choice suites); a dev example likewise, its correct candidate for minimal-pair and
    forced-choice. The loss is the mean cross-entropy over output sub-words plus the
    end-of-sequence token; AdamW (`lr`, no weight decay, constant rate), `batch_size` pairs per
    step in an order shuffled per epoch, gradients clipped at norm 1.0, dropout as the
    checkpoint configures it, all random draws from the run's seed (a CPU run repeats exactly).
    After each of `epochs` epochs the dev loss (mean cross-entropy per sub-word on the dev
    pairs) is measured and the weights of the epoch with the lowest are kept; a suite without a
    dev split keeps the last epoch, because selecting on the training data would only
    reward fitting it. Without `finetune` the checkpoint is evaluated as is and `fit` does
    nothing; with it, a suite without a train split is `n/a`.

    Settings: `pretrained` (a local folder or a name in the local HF cache; required), `device`
    (`cpu`; `cuda`, `cuda:N`, `auto`: `structbench.devices`), `dtype` (`float32`; `float16`,
    `bfloat16`, `auto` = the checkpoint's own), `batch_size` (16: pairs per forward pass, and per fine-tuning step),
    `threads` (torch's CPU threads, 1), `max_new_tokens` (256), `prompt`
    (`{input}`), `finetune` (false), `epochs` (3), `lr` (3e-4).
    """

    name = "hf-seq2seq"
    protocols: ClassVar[tuple[str, ...]] = ("transduction", "classification", "minimal-pair", "forced-choice")
    training_settings: ClassVar[frozenset[str]] = frozenset({"epochs", "lr", "batch_size"})
    """Settings that change results only when fine-tuning."""

    def __init__(
        self,
        pretrained: str = "",
        device: DeviceName = "cpu",
        dtype: Dtype = "float32",
        batch_size: PositiveInt = 16,
        threads: PositiveInt = 1,
        max_new_tokens: PositiveInt = 256,
        prompt: str = "{input}",
        finetune: bool = False,
        epochs: PositiveInt = 3,
        lr: PositiveFloat = 3e-4,
    ) -> None:
        self.prompt = check_template("prompt", prompt)
        self.pretrained = pretrained
        self.batch_size = int(batch_size)
        self.max_new_tokens = int(max_new_tokens)
        self.finetune = bool(finetune)
        self.epochs = int(epochs)
        self.lr = float(lr)
        folder = resolve_checkpoint(pretrained)
        transformers = require_transformers()
        self.device = resolve_device(device)
        self.tokenizer: Any = load_tokenizer(pretrained, folder)
        self.model = load_pretrained(
            transformers.AutoModelForSeq2SeqLM,
            pretrained,
            folder,
            dtype=dtype,
            device=self.device,
            kind="an encoder-decoder",
            hint="for a decoder-only language model (GPT-2, Llama) use --model hf",
        )
        start = getattr(self.model.config, "decoder_start_token_id", None)
        if start is None:
            start = getattr(self.model.generation_config, "decoder_start_token_id", None)
        if not isinstance(start, int):
            raise UserError(
                f"{pretrained!r} defines no decoder_start_token_id, so its decoder cannot be started; "
                "set it in the checkpoint's config.json."
            )
        self.start_id = start
        eos = self.tokenizer.eos_token_id
        self.eos_id: int | None = None if eos is None else int(eos)
        pad = self.tokenizer.pad_token_id
        self.pad_id = int(pad) if pad is not None else self.start_id
        self.fitted = False
        self.history: dict[str, Any] = {}
        """What fine-tuning did: per-epoch train and dev losses, the epoch kept."""
        self.log: Callable[[str], None] = lambda message: print(message, file=sys.stderr)
        self.use_threads(int(threads))  # last: a constructor that fails leaves torch as it was

    @classmethod
    def labelled_settings(cls, settings: Mapping[str, object]) -> dict[str, object]:
        """Fine-tuning settings (batch size included) only when fine-tuning; never device, dtype or the path."""
        shown = {key: value for key, value in settings.items() if key not in {"pretrained", "device", "dtype"}}
        if not settings.get("finetune"):
            shown = {key: value for key, value in shown.items() if key not in cls.training_settings}
        return shown

    # encoding

    def _sources(self, inputs: Sequence[Sequence[str]]) -> list[list[int]]:
        """Encoder ids of each input in the prompt, with the tokenizer's special tokens (never empty)."""
        if not inputs:
            return []
        self.check_readable([" ".join(tokens) for tokens in inputs])
        encoded = self.tokenizer([fill(self.prompt, tokens) for tokens in inputs])["input_ids"]
        fallback = self.eos_id if self.eos_id is not None else self.pad_id
        return [list(map(int, ids)) or [fallback] for ids in encoded]

    def _targets(self, outputs: Sequence[Sequence[str]]) -> list[list[int]]:
        """Decoder target ids of each output's words joined by spaces, without special tokens."""
        if not outputs:
            return []
        texts = [" ".join(tokens) for tokens in outputs]
        self.check_readable(texts)
        encoded = self.tokenizer(texts, add_special_tokens=False)["input_ids"]
        return [list(map(int, ids)) for ids in encoded]

    def _ready(self) -> None:
        if self.finetune and not self.fitted:
            raise NotApplicable("finetune=true trains on the suite's train split, and this suite has none")

    # scoring

    def _target_logprobs(
        self, sources: Sequence[Sequence[int]], targets: Sequence[Sequence[int]], *, batch_size: int | None = None
    ) -> list[torch.Tensor]:
        """Per pair, the summed log-probability of the target given the source, as a 0-d tensor (with
        gradients when they are enabled), in the order given."""
        import torch

        sums: list[torch.Tensor] = [torch.zeros((), dtype=torch.float64)] * len(sources)
        lengths = [len(s) + len(t) for s, t in zip(sources, targets, strict=True)]
        for batch in by_length(lengths, batch_size or self.batch_size):
            ids, mask = right_padded([sources[i] for i in batch], self.pad_id, self.device)
            decoder, decoder_mask = right_padded(
                [[self.start_id, *targets[i]] for i in batch], self.pad_id, self.device
            )
            logits = self.model(
                input_ids=ids, attention_mask=mask, decoder_input_ids=decoder, decoder_attention_mask=decoder_mask
            ).logits
            # the logits at decoder position t predict the target token at t + 1
            batch_sums = sum_target_logprobs(logits[:, :-1], decoder[:, 1:], decoder_mask[:, 1:].bool())
            for i, value in zip(batch, batch_sums, strict=True):
                sums[i] = value
        return sums

    def _scores(self, sources: Sequence[Sequence[int]], targets: Sequence[Sequence[int]]) -> list[float]:
        import torch

        with torch.no_grad():
            return [float(value) for value in self._target_logprobs(sources, targets)]

    def logprob(self, sequences: list[list[str]]) -> list[float]:
        """Summed log-probability of each sentence as the decoder's output for an empty input."""
        self._ready()
        return self._scores(self._sources([[]] * len(sequences)), self._targets(sequences))

    def classify(self, inputs: list[list[str]], labels: list[str]) -> list[str]:
        """The label most probable as the decoder's output for the input."""
        self._ready()
        if not inputs:
            return []
        sources = [ids for ids in self._sources(inputs) for _ in labels]
        label_ids = self._targets([[label] for label in labels])
        scores = np.array(self._scores(sources, label_ids * len(inputs))).reshape(len(inputs), len(labels))
        return [labels[int(best)] for best in scores.argmax(axis=1)]

    def transduce(self, inputs: list[list[str]]) -> list[list[str]]:
        """Greedy decoding for each input, split on whitespace."""
        import torch

        self._ready()
        sources = self._sources(inputs)
        outputs: list[list[str]] = [[] for _ in sources]
        for batch in by_length([len(ids) for ids in sources], self.batch_size):
            ids, mask = right_padded([sources[i] for i in batch], self.pad_id, self.device)
            with torch.no_grad():
                generated = self.model.generate(
                    input_ids=ids,
                    attention_mask=mask,
                    max_new_tokens=self.max_new_tokens,
                    do_sample=False,
                    num_beams=1,
                    decoder_start_token_id=self.start_id,
                    pad_token_id=self.pad_id,
                    eos_token_id=self.eos_id,
                )
            for i, row in zip(batch, generated[:, 1:].tolist(), strict=True):
                outputs[i] = self.words(row)
        return outputs

    # fine-tuning

    def _pairs(self, examples: Sequence[Example]) -> tuple[list[list[int]], list[list[int]]]:
        """(encoder ids, decoder targets with end-of-sequence) of each example (see the class docstring)."""
        inputs: list[list[str]] = []
        outputs: list[list[str]] = []
        for example in examples:
            if example.target is not None:
                inputs.append(example.input)
                outputs.append(example.target)
            elif example.label is not None:
                inputs.append(example.input)
                outputs.append([example.label])
            elif example.candidates is not None:
                inputs.append([])
                outputs.append(example.candidates[example.answer or 0])
            else:
                inputs.append([])
                outputs.append(example.input)
        end = [] if self.eos_id is None else [self.eos_id]
        return self._sources(inputs), [[*ids, *end] for ids in self._targets(outputs)]

    def _mean_loss(self, sources: Sequence[Sequence[int]], targets: Sequence[Sequence[int]]) -> float:
        """Mean cross-entropy per target sub-word over all pairs, without gradients."""
        import torch

        with torch.no_grad():
            total = sum(float(value) for value in self._target_logprobs(sources, targets))
        return -total / max(1, sum(len(target) for target in targets))

    def fit(self, train: Split, dev: Split | None, *, seed: int) -> None:
        """Fine-tune on `train` when `finetune` is set, keeping the epoch with the lowest dev loss."""
        import torch

        if not self.finetune:
            return
        if not train.examples:
            raise NotApplicable(f"finetune=true needs training examples, and the train split of {train.suite} is empty")
        sources, targets = self._pairs(train.examples)
        dev_sources, dev_targets = self._pairs(dev.examples) if dev is not None else ([], [])
        devices = [self.device.index or 0] if self.device.type == "cuda" else []
        with torch.random.fork_rng(devices=devices, device_type=self.device.type):
            torch.manual_seed(seed)
            self._train(sources, targets, dev_sources, dev_targets, seed)
        self.fitted = True
        kept = self.history["best_epoch"]
        where = f" (dev loss {self.history['dev_loss'][kept - 1]:.4f})" if dev_targets else " (no dev split: the last)"
        self.log(
            f"hf-seq2seq {checkpoint_name(self.pretrained)}: fine-tuned {self.epochs} epochs, kept epoch {kept}{where}"
        )

    def _train(
        self,
        sources: list[list[int]],
        targets: list[list[int]],
        dev_sources: list[list[int]],
        dev_targets: list[list[int]],
        seed: int,
    ) -> None:
        import torch

        optimizer = torch.optim.AdamW(self.model.parameters(), lr=self.lr, weight_decay=0.0)
        order = torch.Generator().manual_seed(seed)
        history: dict[str, Any] = {"train_loss": [], "dev_loss": [], "best_epoch": self.epochs}
        best: tuple[float, dict[str, torch.Tensor]] | None = None
        for epoch in range(1, self.epochs + 1):
            self.model.train()
            permutation = torch.randperm(len(sources), generator=order).tolist()
            losses = []
            for start in range(0, len(permutation), self.batch_size):
                chosen = permutation[start : start + self.batch_size]
                batch_targets = [targets[i] for i in chosen]
                total = torch.stack(
                    self._target_logprobs([sources[i] for i in chosen], batch_targets, batch_size=len(chosen))
                ).sum()
                loss = -total / sum(len(target) for target in batch_targets)
                optimizer.zero_grad()
                loss.backward()  # type: ignore[no-untyped-call]  # torch leaves backward unannotated
                torch.nn.utils.clip_grad_norm_(self.model.parameters(), GRADIENT_CLIP)
                optimizer.step()
                losses.append(float(loss.detach()))
            self.model.eval()
            history["train_loss"].append(float(np.mean(losses)))
            if dev_targets:
                dev_loss = self._mean_loss(dev_sources, dev_targets)
                history["dev_loss"].append(dev_loss)
                if best is None or dev_loss < best[0]:
                    best = (dev_loss, {k: v.detach().clone() for k, v in self.model.state_dict().items()})
                    history["best_epoch"] = epoch
        if best is not None:
            self.model.load_state_dict(best[1])
        self.history = history
