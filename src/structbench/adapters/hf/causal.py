"""The Hugging Face causal-LM adapter: `--model hf --set pretrained=PATH_OR_NAME`.

Any checkpoint `AutoModelForCausalLM` loads (GPT-2, Pythia, Llama, ...), from a local folder or
the local Hugging Face cache, never from the network (`structbench.adapters.hf.common`). It serves every
protocol a language model can answer without training; the class docstring says how each is asked.

PyTorch and transformers are imported where the model is built or answers, never with the class
(docs/architecture.md, "Model classes load without PyTorch").
"""

from __future__ import annotations

import bisect
import hashlib
import heapq
import math
import sys
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any, ClassVar

import numpy as np
from pydantic import NonNegativeInt, PositiveInt

from structbench.adapters.hf.common import (
    Dtype,
    HfModel,
    by_length,
    check_template,
    checkpoint_fingerprint,
    fill,
    left_padded,
    load_pretrained,
    load_tokenizer,
    names_python_gelu,
    padded,
    require_transformers,
    resolve_checkpoint,
    sum_target_logprobs,
)
from structbench.devices import DeviceName, resolve_device
from structbench.errors import NotApplicable, UserError
from structbench.protocols import REGION_RULE, shared_contexts
from structbench.specs import Example, Split

if TYPE_CHECKING:
    import torch

TRANSDUCTION_PROMPT = "Input: {input}\nOutput:"
CLASSIFICATION_PROMPT = "{input}\nAnswer:"
SHOT_SEPARATOR = "\n\n"
TREE_PROBE_ROWS = 6
"""Rows read both ways when a model first shares prefixes (`HfCausalLm._trees_read_as_whole`)."""
TREE_CAPACITY = 128
"""Tokens in one packed prefix tree (`share_prefixes`; a longer row is packed alone): long enough to hold
many rows that share a prefix, short enough that attention over the packed sequence stays cheap."""


class NewlineStop:
    """A `generate` stopping criterion: a row is finished once its newest token's text holds a newline.

    `table[id]` says whether token `id` decodes to text with a newline, computed once per model
    (transformers' own `stop_strings` fails on tokenizers whose single tokens decode with spaces,
    e.g. word-level ones)."""

    def __init__(self, table: torch.Tensor) -> None:
        self.table = table

    def __call__(self, input_ids: torch.Tensor, scores: object, **_: object) -> torch.Tensor:
        return self.table[input_ids[:, -1]]


def token_regions(regions: Sequence[Sequence[str]], offsets: Sequence[tuple[int, int]]) -> list[int]:
    """The region (its index) of each token of the sentence `regions` make (their words joined by single
    spaces), from the tokens' character offsets: the region in which the token's first character falls,
    where a region opens at the space that joins it to the one before (`REGION_RULE`)."""
    edges, at = [], 0
    for region in regions:
        edges.append(max(at - 1, 0))
        at += len(" ".join(region)) + 1
    return [bisect.bisect_right(edges, int(first)) - 1 for first, _ in offsets]


class HfCausalLm(HfModel):
    """A Hugging Face causal language model, scored and prompted as is (no training): `--set pretrained=PATH_OR_NAME`.

    Text: a suite's whitespace tokens are joined by single spaces into one string, which the
    checkpoint's own tokenizer splits into sub-words (no special tokens added by the tokenizer).
    Every sequence the model reads starts with one start token: the tokenizer's BOS, or its EOS
    where it defines no BOS (GPT-2's BOS and EOS are the same `<|endoftext|>`), so that the first
    word is predicted from that token and scored like every other; a tokenizer with neither is
    refused.

    - minimal-pair, forced-choice (`logprob`): the sum of the natural-log probabilities of all
      sub-words of the sentence after the start token; no end-of-sequence token is scored. Where a
      suite's candidates continue a shared prefix (`loglikelihood`): the continuation's sub-words
      after the start token and the prefix, each prefix run once for all its one-sub-word candidates;
      the continuation is read as `" " + words` after the prefix's text, an empty prefix included
      (lm-evaluation-harness's rule, so BLiMP's sentences are `" " + sentence` after the start token).
    - classification (`classify`): the prompt is `classification_prompt` with `{input}` replaced
      by the input (default `"{input}\\nAnswer:"`); each label is scored as the continuation
      `" " + label`, by the summed log-probability of its sub-words (not length-normalised), and
      the best label is the answer (the first of equal ones, in the suite's label order). The
      continuation's sub-words are those of prompt + continuation beyond the prompt's own (the
      lm-evaluation-harness convention), so a tokenizer that merges across the space is scored on
      what it actually reads.
    - region-surprisal (`region_surprisals`, SyntaxGym): each sentence is its regions' words joined by
      single spaces, read from the start token; a region's surprisal is the sum, in bits, of its
      sub-words' -log2 p, where a sub-word belongs to the region in which its first character falls
      (by the fast tokenizer's character offsets) and the space joining a region to the one before
      it belongs to the region it opens (`structbench.protocols.REGION_RULE`), so GPT-2's `Ġword`
      is the region of `word`. No end-of-sequence token is scored. A slow tokenizer (no offsets) is
      refused.
    - transduction (`transduce`): greedy decoding after `transduction_prompt` (default
      `"Input: {input}\\nOutput:"`), for at most `max_new_tokens` sub-words; the continuation is
      cut at the first end-of-sequence token and at its first newline and split on whitespace.
    - shots (`--set shots=k`, transduction and classification): `fit` draws k examples of the
      train split without replacement, with numpy's generator seeded by the run's seed, so each
      seed has its own fixed set of shots (in drawn order) for every test item. Each shot is its
      prompt followed by `" " + answer` (the target tokens joined by spaces, or the label); shots
      and the query are separated by a blank line. A suite without a train split is `n/a` with
      shots; minimal-pair and forced-choice take no shots (they score bare sentences).

    Batching: `batch_size` sequences per forward pass, grouped by length and padded on the right with
    no attention mask (a causal model's real tokens never attend to the padding after them, so the
    model may take its fast causal attention, as lm-evaluation-harness does); log-probabilities come
    from one log-softmax and gather per batch, in float32 whatever `dtype` the weights are in.
    With `share_prefixes`, scored sequences are packed as prefix trees (`structbench.adapters.hf.prefixes`):
    sequences that open with the same sub-words (a minimal pair's sentences) share one reading of that
    prefix in a packed sequence where each token sits at its position in its own sequence and attends to
    that sequence's earlier tokens only (a custom 4-D attention mask and position ids). This changes a
    log-probability only by float rounding (the same sums, in other matrix shapes), like `batch_size`;
    a model that scores a packed tree differently from its rows read whole (one that ignores the mask
    or the position ids) is found on its first few rows and reads every row whole. It is on by default:
    on BLiMP on one CPU thread it took 0.65x the time of reading every sentence whole with a 6-layer,
    256-wide GPT-2 and 0.98x with a 2-layer, 64-wide one (docs/scoring-speed.md).

    Settings: `pretrained` (a local folder or a name in the local HF cache; required), `device`
    (`cpu`; `cuda`, `cuda:N`, `auto`: `structbench.devices`), `dtype` (`float32`; `float16`,
    `bfloat16`, `auto` = the checkpoint's own), `batch_size` (16), `threads` (torch's CPU threads, 1),
    `shots` (0), `max_new_tokens` (256), `transduction_prompt`, `classification_prompt`,
    `share_prefixes` (true; `false` reads every sequence whole), `fuse_gelu` (true: GPT-2's tanh-approximate
    GELU, written in transformers as eight tensor operations, computed by torch's fused kernel of the
    same function, `structbench.adapters.hf.gelu.fuse_tanh_gelu`; `false` keeps the checkpoint's modules). A
    template given on the command line as a JSON string may hold real newlines:
    `--set 'transduction_prompt="Q: {input}\\nA:"'`.
    """

    name = "hf"
    unlabelled = HfModel.unlabelled | {"share_prefixes", "fuse_gelu"}
    protocols: ClassVar[tuple[str, ...]] = (
        "minimal-pair",
        "forced-choice",
        "classification",
        "transduction",
        "region-surprisal",
    )

    def __init__(
        self,
        pretrained: str = "",
        device: DeviceName = "cpu",
        dtype: Dtype = "float32",
        batch_size: PositiveInt = 16,
        threads: PositiveInt = 1,
        shots: NonNegativeInt = 0,
        max_new_tokens: PositiveInt = 256,
        transduction_prompt: str = TRANSDUCTION_PROMPT,
        classification_prompt: str = CLASSIFICATION_PROMPT,
        share_prefixes: bool = True,
        fuse_gelu: bool = True,
    ) -> None:
        self.share_prefixes = bool(share_prefixes)
        self._trees_checked = False
        self.transduction_prompt = check_template("transduction_prompt", transduction_prompt)
        self.classification_prompt = check_template("classification_prompt", classification_prompt)
        self.pretrained = pretrained
        self.batch_size = int(batch_size)
        self.shots = int(shots)
        self.max_new_tokens = int(max_new_tokens)
        folder = resolve_checkpoint(pretrained)
        self._transformers = transformers = require_transformers()
        self.device = resolve_device(device)
        self.tokenizer: Any = load_tokenizer(pretrained, folder)
        self.model = load_pretrained(
            transformers.AutoModelForCausalLM,
            pretrained,
            folder,
            dtype=dtype,
            device=self.device,
            kind="a causal language model",
            hint="for an encoder-decoder (T5, BART) use --model hf-seq2seq",
        )
        if fuse_gelu:
            from structbench.adapters.hf.gelu import fuse_tanh_gelu

            fuse_tanh_gelu(self.model)
        start = self.tokenizer.bos_token_id
        if start is None:
            start = self.tokenizer.eos_token_id
        if start is None:
            raise UserError(
                f"the tokenizer of {pretrained!r} has neither a BOS nor an EOS token, so the first word of a "
                "sequence cannot be scored; add one to its tokenizer_config.json."
            )
        self.start_id = int(start)
        eos = self.tokenizer.eos_token_id
        self.eos_id: int | None = None if eos is None else int(eos)
        pad = self.tokenizer.pad_token_id
        self.pad_id = int(pad) if pad is not None else self.start_id
        context = getattr(self.model.config, "max_position_embeddings", None)
        self.context_size: int | None = int(context) if isinstance(context, int) else None
        self._newline_stop: NewlineStop | None = None
        self._shot_examples: list[Example] | None = None
        """The train examples shown before each prompt; None until `fit` (then [] without shots)."""
        self.use_threads(int(threads))  # last: a constructor that fails leaves torch as it was

    @classmethod
    def fingerprint(cls, pretrained: str = "", **settings: object) -> str:
        """The checkpoint's files by content (`checkpoint_fingerprint`: new weights are a new run), and
        whether `fuse_gelu` changes its activations' rounding: such runs differ in their last bits from
        runs made without it (before structbench fused them, or with `fuse_gelu=false`)."""
        files = checkpoint_fingerprint(pretrained)
        fused = settings.get("fuse_gelu", True) is not False
        if fused and names_python_gelu(pretrained):
            return hashlib.sha256(f"{files} fused-gelu".encode()).hexdigest()
        return files

    def fit(self, train: Split, dev: Split | None, *, seed: int) -> None:
        """Keep `shots` examples of `train` for the prompts (nothing is trained); `dev` is unused."""
        answered = [e for e in train.examples if e.target is not None or e.label is not None]
        if self.shots > len(answered):
            raise UserError(
                f"shots={self.shots} but the train split of {train.suite} has {len(answered)} examples with a "
                "target or label; lower shots."
            )
        chosen = np.random.default_rng(seed).choice(len(answered), size=self.shots, replace=False)
        self._shot_examples = [answered[int(i)] for i in chosen]
        self.check_readable(
            [" ".join(e.input) for e in self._shot_examples]
            + [" ".join(e.target) if e.target is not None else str(e.label) for e in self._shot_examples]
        )

    def _shot_prefix(self) -> str:
        """The shots, each followed by a blank line; "" without shots."""
        if not self.shots:
            return ""
        if self._shot_examples is None:
            raise NotApplicable(
                f"shots={self.shots} takes its examples from the suite's train split, and this suite has none"
            )
        rendered = []
        for example in self._shot_examples:
            if example.target is not None:
                rendered.append(f"{fill(self.transduction_prompt, example.input)} {' '.join(example.target)}")
            else:
                rendered.append(f"{fill(self.classification_prompt, example.input)} {example.label}")
        return "".join(shot + SHOT_SEPARATOR for shot in rendered)

    def _encode(self, texts: Sequence[str]) -> list[list[int]]:
        if not texts:
            return []
        encoded = self.tokenizer(list(texts), add_special_tokens=False)["input_ids"]
        return [list(map(int, ids)) for ids in encoded]

    def _check_context(self, length: int, what: str) -> None:
        if self.context_size is not None and length > self.context_size:
            raise ValueError(
                f"{what} is {length} tokens long, beyond the {self.context_size} positions of {self.pretrained!r}; "
                "lower shots or max_new_tokens, or use a model with a longer context."
            )

    def _score(self, contexts: Sequence[Sequence[int]], continuations: Sequence[Sequence[int]]) -> list[float]:
        """Summed log-probability of each continuation after its context (which starts with the start
        token); rows read as prefix trees where `share_prefixes` (`_score_trees`), else each whole."""
        rows = [[*context, *continuation] for context, continuation in zip(contexts, continuations, strict=True)]
        begins = [len(context) for context in contexts]
        if rows:
            self._check_context(max(len(row) for row in rows), "a scored sequence")
        scores = [0.0] * len(rows)
        if self.share_prefixes and rows and self._trees_read_as_whole(rows, begins):
            self._score_trees(rows, begins, scores)
        else:
            self._score_whole(rows, begins, scores)
        return scores

    def _score_whole(self, rows: Sequence[Sequence[int]], begins: Sequence[int], scores: list[float]) -> None:
        """Into `scores[i]`: the summed log-probability of row `i`'s tokens from position `begins[i]` on,
        each row read in full."""
        import torch

        for batch in by_length([len(row) for row in rows], self.batch_size):
            ids = padded([rows[i] for i in batch], self.pad_id, self.device)
            with torch.no_grad():  # no mask: a row's own positions never attend to the padding after them
                logits = self.model(input_ids=ids, use_cache=False).logits
            # logits at t predict the token at t + 1: score positions [begin, len(row)) of each row
            positions = torch.arange(1, ids.shape[1], device=self.device)
            first = torch.tensor([begins[i] for i in batch], device=self.device)
            ends = torch.tensor([len(rows[i]) for i in batch], device=self.device)
            scored = (positions[None, :] >= first[:, None]) & (positions[None, :] < ends[:, None])
            sums = sum_target_logprobs(logits[:, :-1], ids[:, 1:], scored)
            for i, value in zip(batch, sums.tolist(), strict=True):
                scores[i] = float(value)

    def _score_trees(self, rows: Sequence[Sequence[int]], begins: Sequence[int], scores: list[float]) -> None:
        """As `_score_whole`, the rows packed as prefix trees (`structbench.adapters.hf.prefixes`): one
        pass per batch of packed sequences, each token at its position in its row and attending to its
        row's earlier tokens only, so each distinct prefix is read once; the log-softmax is taken only
        at the positions that predict a scored token, each once."""
        import torch

        from structbench.adapters.hf.prefixes import ancestor_mask, prefix_trees

        capacity = max(TREE_CAPACITY, max(len(row) for row in rows))
        trees = sorted(prefix_trees(rows, begins, capacity), key=lambda tree: -len(tree.tokens))
        per_pass = max(1, round(self.batch_size * sum(map(len, rows)) / len(rows) / capacity))
        dtype = self.model.dtype
        totals = torch.zeros(len(rows), dtype=torch.float64, device=self.device)
        for start in range(0, len(trees), per_pass):
            batch = trees[start : start + per_pass]
            ids = padded([tree.tokens for tree in batch], self.pad_id, self.device)
            depths = padded([tree.depths for tree in batch], -1, self.device)
            parents = padded([tree.parents for tree in batch], -1, self.device)
            allowed = ancestor_mask(parents, depths)
            mask = torch.zeros(allowed.shape, dtype=dtype, device=self.device)
            mask = mask.masked_fill(~allowed, torch.finfo(dtype).min)[:, None]
            with torch.no_grad():
                logits = self.model(
                    input_ids=ids, attention_mask=mask, position_ids=depths.clamp(min=0), use_cache=False
                ).logits
            width = ids.shape[1]
            sources = torch.tensor(
                [b * width + s for b, tree in enumerate(batch) for s in tree.sources], device=self.device
            )
            predicting, which = torch.unique(sources, return_inverse=True)
            logprobs = torch.log_softmax(logits.reshape(-1, logits.shape[-1])[predicting].float(), dim=-1)
            targets = torch.tensor([t for tree in batch for t in tree.targets], device=self.device)
            owners = torch.tensor([o for tree in batch for o in tree.owners], device=self.device)
            totals.index_add_(0, owners, logprobs[which, targets].double())
        scores[:] = totals.tolist()

    def _trees_read_as_whole(self, rows: Sequence[Sequence[int]], begins: Sequence[int]) -> bool:
        """Whether this model reads prefix trees as it reads rows whole, checked once per model on the
        first few rows that sort together (so they share prefixes): a model that ignores a custom
        attention mask or position ids would score them differently. One that does is warned about and
        reads every row whole from then on."""
        import torch

        if self._trees_checked:
            return self.share_prefixes
        self._trees_checked = True
        probe = heapq.nsmallest(TREE_PROBE_ROWS, range(len(rows)), key=lambda i: list(rows[i]))
        probe_rows, probe_begins = [rows[i] for i in probe], [begins[i] for i in probe]
        tree, whole = [0.0] * len(probe), [0.0] * len(probe)
        self._score_whole(probe_rows, probe_begins, whole)
        try:
            self._score_trees(probe_rows, probe_begins, tree)
        except (TypeError, ValueError, RuntimeError) as error:  # a forward without position_ids or 4-D masks
            reason = f"its forward pass refuses a packed tree ({type(error).__name__}: {error})"
        else:
            tolerance = 1e-4 if self.model.dtype == torch.float32 else 2e-2
            if all(abs(a - b) <= tolerance * max(1.0, abs(b)) for a, b in zip(tree, whole, strict=True)):
                return True
            reason = (
                "it scores a packed tree differently from its rows read whole "
                "(it ignores a custom attention mask or position ids)"
            )
        self.share_prefixes = False
        print(
            f"structbench: {self.pretrained!r}: {reason}, so share_prefixes is off for it: every row is read whole.",
            file=sys.stderr,
        )
        return False

    def _token_logprobs(self, rows: Sequence[Sequence[int]]) -> list[list[float]]:
        """Per row (which starts with the start token), the natural-log probability of each token after
        the first given the tokens before it: one log-softmax and gather per batch, as `_score`."""
        import torch

        if rows:
            self._check_context(max(len(row) for row in rows), "a scored sequence")
        out: list[list[float]] = [[] for _ in rows]
        for batch in by_length([len(row) for row in rows], self.batch_size):
            ids = padded([rows[i] for i in batch], self.pad_id, self.device)
            with torch.no_grad():  # no mask: right padding is never attended by a causal model's real tokens
                logits = self.model(input_ids=ids, use_cache=False).logits
            logprobs = torch.log_softmax(logits[:, :-1].float(), dim=-1)
            picked = logprobs.gather(-1, ids[:, 1:].unsqueeze(-1)).squeeze(-1).double().tolist()
            for row, i in enumerate(batch):
                out[i] = picked[row][: len(rows[i]) - 1]
        return out

    def region_surprisals(self, sentences: list[list[list[str]]]) -> list[list[float]]:
        """Each region's surprisal in bits, its sub-words chosen by their character offsets (the class
        docstring, `REGION_RULE`), every sentence read after the start token."""
        if self.shots:
            raise UserError(
                f"shots={self.shots} applies to transduction and classification only; region surprisals are "
                "read from bare sentences, so drop --set shots."
            )
        if not getattr(self.tokenizer, "is_fast", False):
            raise UserError(
                f"the tokenizer of {self.pretrained!r} is a slow (Python) one, which gives no character offsets, and "
                f"region surprisals need them ({REGION_RULE}); save a fast tokenizer (tokenizer.json) beside the model."
            )
        texts = [" ".join(" ".join(region) for region in regions) for regions in sentences]
        self.check_readable(texts)
        if not texts:
            return []
        encoded = self.tokenizer(texts, add_special_tokens=False, return_offsets_mapping=True)
        rows = [[self.start_id, *map(int, ids)] for ids in encoded["input_ids"]]
        out = []
        for regions, logprobs, offsets in zip(
            sentences, self._token_logprobs(rows), encoded["offset_mapping"], strict=True
        ):
            sums = [0.0] * len(regions)
            for logprob, region in zip(logprobs, token_regions(regions, offsets), strict=True):
                sums[region] -= logprob / math.log(2)
            out.append(sums)
        return out

    def logprob(self, sequences: list[list[str]]) -> list[float]:
        """Summed natural-log probability of each whole sequence (its words joined by spaces), after the start token."""
        if self.shots:
            raise UserError(
                f"shots={self.shots} applies to transduction and classification only; minimal-pair and "
                "forced-choice score bare sentences, so drop --set shots."
            )
        texts = [" ".join(tokens) for tokens in sequences]
        self.check_readable(texts)
        continuations = self._encode(texts)
        return self._score([[self.start_id]] * len(continuations), continuations)

    def loglikelihood(self, requests: list[tuple[list[str], list[str]]]) -> list[float]:
        """Summed natural-log probability of each continuation's sub-words after the start token and its
        context (words joined by spaces), with no end token: lm-evaluation-harness's `loglikelihood`.

        The continuation's sub-words are those of context + " " + continuation beyond the context's own,
        as in `classify`; after an empty context, those of " " + continuation (lm-eval's continuation of an
        empty context, whose space is its target delimiter: BLiMP's sentences). With `share_prefixes` every
        request is read as part of a prefix tree (`_score`), so that a context and the beginnings contexts
        share are read once; without it, a one-sub-word continuation (an agreement verb, mostly) is read off
        one forward pass over its context, shared by every candidate after that context, and a longer one
        is scored on its own row."""
        import torch

        if self.shots:
            raise UserError(
                f"shots={self.shots} applies to transduction and classification only; continuations are "
                "scored after their bare context, so drop --set shots."
            )
        texts = [" ".join(context) for context, _ in requests]
        wholes = [f"{text} {' '.join(words)}" for text, (_, words) in zip(texts, requests, strict=True)]
        distinct = list(dict.fromkeys([*texts, *wholes]))  # each string tokenized once (contexts repeat)
        encoded = dict(zip(distinct, self._encode(distinct), strict=True))
        self.check_readable(texts, [encoded[text] for text in texts])
        context_ids = [[self.start_id, *encoded[text]] for text in texts]
        continuations = [encoded[whole][len(context) - 1 :] for whole, context in zip(wholes, context_ids, strict=True)]
        self.check_readable([" ".join(words) for _, words in requests], continuations)
        if self.share_prefixes:  # contexts and their common beginnings read once across all requests
            return self._score(context_ids, continuations)
        scores = [0.0] * len(requests)
        single = [i for i, ids in enumerate(continuations) if len(ids) == 1]
        contexts, asked = shared_contexts(context_ids, single)
        if contexts:
            self._check_context(max(len(c) for c in contexts) + 1, "a scored sequence")
        for batch in by_length([len(c) for c in contexts], self.batch_size):
            ids = padded([contexts[j] for j in batch], self.pad_id, self.device)
            with torch.no_grad():  # no mask: right padding is never attended by a causal model's real tokens
                logits = self.model(input_ids=ids, use_cache=False).logits
            last = torch.tensor([len(contexts[j]) - 1 for j in batch], device=self.device)
            following = torch.log_softmax(logits[torch.arange(len(batch), device=self.device), last].float(), dim=-1)
            rows = [row for row, j in enumerate(batch) for _ in asked[j]]
            words = [continuations[i][0] for j in batch for i in asked[j]]
            for i, value in zip((i for j in batch for i in asked[j]), following[rows, words].tolist(), strict=True):
                scores[i] = float(value)
        longer = [i for i, ids in enumerate(continuations) if len(ids) != 1]
        for i, value in zip(
            longer, self._score([context_ids[i] for i in longer], [continuations[i] for i in longer]), strict=True
        ):
            scores[i] = value
        return scores

    def classify(self, inputs: list[list[str]], labels: list[str]) -> list[str]:
        """The label whose continuation `" " + label` is most probable after the classification prompt."""
        if not inputs:
            return []
        self.check_readable([*(" ".join(tokens) for tokens in inputs), *labels])
        prefix = self._shot_prefix()
        prompts = [prefix + fill(self.classification_prompt, tokens) for tokens in inputs]
        prompt_ids = self._encode(prompts)
        whole_ids = self._encode([f"{prompt} {label}" for prompt in prompts for label in labels])
        contexts = [[self.start_id, *ids] for ids in prompt_ids for _ in labels]
        continuations = [whole[len(context) - 1 :] for whole, context in zip(whole_ids, contexts, strict=True)]
        scores = np.array(self._score(contexts, continuations)).reshape(len(inputs), len(labels))
        return [labels[int(best)] for best in scores.argmax(axis=1)]

    def _stop_at_newline(self) -> NewlineStop:
        import torch

        if self._newline_stop is None:
            size = max(len(self.tokenizer), int(self.model.config.vocab_size))
            pieces = self.tokenizer.batch_decode([[i] for i in range(len(self.tokenizer))])
            table = torch.zeros(size, dtype=torch.bool)
            table[[i for i, piece in enumerate(pieces) if "\n" in piece]] = True
            self._newline_stop = NewlineStop(table.to(self.device))
        return self._newline_stop

    def transduce(self, inputs: list[list[str]]) -> list[list[str]]:
        """Greedy continuation of the transduction prompt, up to end-of-sequence or newline, split on whitespace."""
        import torch

        self.check_readable([" ".join(tokens) for tokens in inputs])
        prefix = self._shot_prefix()
        rows = [
            [self.start_id, *ids] for ids in self._encode([prefix + fill(self.transduction_prompt, t) for t in inputs])
        ]
        if rows:
            self._check_context(max(len(row) for row in rows) + self.max_new_tokens, "a prompt plus max_new_tokens")
        outputs: list[list[str]] = [[] for _ in rows]
        for batch in by_length([len(row) for row in rows], self.batch_size):
            ids, mask = left_padded([rows[i] for i in batch], self.pad_id, self.device)
            with torch.no_grad():
                generated = self.model.generate(
                    input_ids=ids,
                    attention_mask=mask,
                    max_new_tokens=self.max_new_tokens,
                    do_sample=False,
                    num_beams=1,
                    pad_token_id=self.pad_id,
                    eos_token_id=self.eos_id,
                    stopping_criteria=self._transformers.StoppingCriteriaList([self._stop_at_newline()]),
                )
            for i, new in zip(batch, generated[:, ids.shape[1] :].tolist(), strict=True):
                outputs[i] = self.words(new)
        return outputs
