"""Tiny, randomly initialised Hugging Face models over a suite's own words, for tests and manual runs.

A word-level tokenizer (tokenizers' `WordLevel` model after `WhitespaceSplit`, wrapped in
`PreTrainedTokenizerFast`) whose vocabulary is every token of the named suites' splits plus the
words of the adapters' default prompts, so that nothing a suite asks for is unknown. Models are a
2-layer, 32-dimension GPT-2 and a T5 of the same size, saved with `save_pretrained` (safetensors).
`bpe_gpt2` is a GPT-2 whose tokenizer is a byte-level BPE trained on given sentences, as GPT-2's own
(" word" and "word" are different tokens), for what depends on sub-words and spaces (BLiMP's scoring).
Nothing is downloaded.

    python tests/support/hf_models.py OUT_DIR [--suite agreement-attractors --suite miniscan]

writes OUT_DIR/gpt2 and OUT_DIR/t5, for `--model hf --set pretrained=OUT_DIR/gpt2` and
`--model hf-seq2seq --set pretrained=OUT_DIR/t5`.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any

DEFAULT_SUITES = ("agreement-attractors", "miniscan")
SPECIALS = ("<pad>", "</s>", "<unk>", "<s>")
"""Ids 0-3, in T5's order for the first three (pad 0 is also T5's decoder start)."""
PROMPT_WORDS = ("Input:", "Output:", "Answer:")
"""The words of the adapters' default prompt templates (whitespace-split)."""


def suite_words(suite_ids: Iterable[str]) -> list[str]:
    """Every input, target, candidate and label token of every split and draw of the suites, sorted."""
    from structbench import registry
    from structbench.data import freeze

    words: set[str] = set()
    for suite_id in suite_ids:
        suite = registry.suite(suite_id)
        manifest = freeze.ensure_built(suite)
        for draw in range(suite.spec.n_draws):
            for split in suite.spec.splits:
                for example in freeze.load_split(suite, manifest, draw, split.name).examples:
                    words.update(example.input)
                    words.update(example.target or [])
                    words.update(token for candidate in example.candidates or [] for token in candidate)
                    words.update(w for condition in example.conditions or [] for r in condition.regions for w in r)
                    if example.label is not None:
                        words.add(example.label)
        words.update(suite.spec.labels or [])
    return sorted(words)


def word_tokenizer(words: Iterable[str], *, bos: bool = True, append_eos: bool = False) -> Any:
    """A word-level `PreTrainedTokenizerFast`: whitespace-split words, `<unk>` for the rest.

    `bos=False` leaves the BOS token undefined (the adapter then starts sequences with EOS);
    `append_eos` adds `</s>` after every encoded text, as T5's tokenizer does."""
    from tokenizers import Tokenizer, models, pre_tokenizers, processors
    from transformers import PreTrainedTokenizerFast

    vocabulary = {token: index for index, token in enumerate(SPECIALS)}
    for word in sorted(set(words) | set(PROMPT_WORDS)):
        vocabulary.setdefault(word, len(vocabulary))
    backend = Tokenizer(models.WordLevel(vocabulary, unk_token="<unk>"))
    backend.pre_tokenizer = pre_tokenizers.WhitespaceSplit()
    if append_eos:
        backend.post_processor = processors.TemplateProcessing(
            single="$A </s>", special_tokens=[("</s>", vocabulary["</s>"])]
        )
    specials = {"eos_token": "</s>", "pad_token": "<pad>", "unk_token": "<unk>"}
    if bos:
        specials["bos_token"] = "<s>"
    return PreTrainedTokenizerFast(tokenizer_object=backend, **specials)  # type: ignore[no-untyped-call]


def character_tokenizer(characters: Iterable[str]) -> Any:
    """A character-level `PreTrainedTokenizerFast` (a BPE without merges) over `characters` and no
    unknown token, so that it silently drops every other character: a word made of none of them is
    read as no tokens at all (what `HfModel.check_readable` refuses)."""
    from tokenizers import Tokenizer, models, pre_tokenizers
    from transformers import PreTrainedTokenizerFast

    vocabulary = {token: index for index, token in enumerate(SPECIALS)}
    for character in sorted(set(characters) - set(" \t\n")):
        vocabulary.setdefault(character, len(vocabulary))
    backend = Tokenizer(models.BPE(vocab=vocabulary, merges=[]))
    backend.pre_tokenizer = pre_tokenizers.WhitespaceSplit()
    specials = {"bos_token": "<s>", "eos_token": "</s>", "pad_token": "<pad>"}
    return PreTrainedTokenizerFast(tokenizer_object=backend, **specials)  # type: ignore[no-untyped-call]


def byte_level_bpe(texts: Iterable[str], vocab_size: int = 400) -> Any:
    """GPT-2's kind of tokenizer, trained here: a byte-level BPE (tokenizers' `ByteLevelBPETokenizer`) of
    `vocab_size` learned from `texts`, in a `GPT2TokenizerFast` whose BOS, EOS and unknown token are
    `<|endoftext|>`, as GPT-2's. A small vocabulary splits most words into several sub-words."""
    import transformers
    from tokenizers import ByteLevelBPETokenizer

    # transformers 5 keeps GPT2TokenizerFast as a name of its (tokenizers-backed) GPT2Tokenizer
    fast_class = getattr(transformers, "GPT2TokenizerFast", transformers.GPT2Tokenizer)
    bpe = ByteLevelBPETokenizer()
    bpe.train_from_iterator(
        list(texts), vocab_size=vocab_size, min_frequency=1, special_tokens=["<|endoftext|>"], show_progress=False
    )
    end = "<|endoftext|>"
    return fast_class(tokenizer_object=bpe._tokenizer, bos_token=end, eos_token=end, unk_token=end)


def tiny_gpt2(
    words: Iterable[str],
    out: Path,
    *,
    seed: int = 0,
    bos: bool = True,
    tokenizer: Any = None,
    layers: int = 2,
    width: int = 32,
    heads: int = 2,
) -> Path:
    """A random GPT-2 (2 layers, 32 wide, unless told) with a word-level tokenizer over `words` (or
    `tokenizer`, e.g. `byte_level_bpe`'s), saved in `out`."""
    import torch
    from transformers import GPT2Config, GPT2LMHeadModel

    tokenizer = word_tokenizer(words, bos=bos) if tokenizer is None else tokenizer
    config = GPT2Config(
        vocab_size=len(tokenizer),
        n_positions=512,
        n_embd=width,
        n_layer=layers,
        n_head=heads,
        bos_token_id=tokenizer.bos_token_id if bos else tokenizer.eos_token_id,
        eos_token_id=tokenizer.eos_token_id,
        pad_token_id=tokenizer.pad_token_id,
    )
    torch.manual_seed(seed)
    model = GPT2LMHeadModel(config)
    model.save_pretrained(out)
    tokenizer.save_pretrained(out)
    return out


BPE_SPECIAL = "<|endoftext|>"
"""GPT-2's one special token: BOS, EOS and unknown alike."""


def bpe_tokenizer(sentences: Iterable[str], *, vocab_size: int = 600, bos: bool = True) -> Any:
    """A byte-level BPE trained here on `sentences` (tokenizers' `BpeTrainer`, GPT-2's pre-tokenizer without
    a prefix space), as a `GPT2TokenizerFast` whose BOS and EOS are `<|endoftext|>`, as GPT-2's are; `bos=False`
    leaves the BOS undefined (the adapter and lm-evaluation-harness then start from EOS). Like GPT-2's, it reads
    " word" and "word" as different tokens, and any text at all (every byte is in its alphabet)."""
    import json

    from tokenizers import Tokenizer, decoders, models, pre_tokenizers, trainers
    from transformers import GPT2TokenizerFast

    backend = Tokenizer(models.BPE())
    backend.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    backend.decoder = decoders.ByteLevel()
    trainer = trainers.BpeTrainer(
        vocab_size=vocab_size,
        special_tokens=[BPE_SPECIAL],
        initial_alphabet=pre_tokenizers.ByteLevel.alphabet(),
        show_progress=False,
    )
    backend.train_from_iterator(list(sentences), trainer)
    state = json.loads(backend.to_str())["model"]
    merges = [tuple(m) if isinstance(m, list) else tuple(m.split(" ")) for m in state["merges"]]
    specials: dict[str, Any] = {"bos_token": BPE_SPECIAL if bos else None}
    return GPT2TokenizerFast(vocab=state["vocab"], merges=merges, **specials)  # type: ignore[no-untyped-call]


def bpe_gpt2(
    sentences: Iterable[str],
    out: Path,
    *,
    seed: int = 0,
    bos: bool = True,
    layers: int = 2,
    width: int = 32,
    heads: int = 2,
    vocab_size: int = 600,
    positions: int = 128,
) -> Path:
    """A random GPT-2 (`layers` layers, `width` wide) with a byte-level BPE tokenizer trained on `sentences`
    (`bpe_tokenizer`), saved in `out`."""
    import torch
    from transformers import GPT2Config, GPT2LMHeadModel

    tokenizer = bpe_tokenizer(sentences, vocab_size=vocab_size, bos=bos)
    special = tokenizer.eos_token_id
    config = GPT2Config(
        vocab_size=len(tokenizer),
        n_positions=positions,
        n_embd=width,
        n_layer=layers,
        n_head=heads,
        bos_token_id=special,
        eos_token_id=special,
    )
    torch.manual_seed(seed)
    model = GPT2LMHeadModel(config)
    model.save_pretrained(out)
    tokenizer.save_pretrained(out)
    return out


def tiny_t5(words: Iterable[str], out: Path, *, seed: int = 0) -> Path:
    """A random T5 (2 encoder and 2 decoder layers, 32 dimensions) with a word-level tokenizer that
    appends `</s>` like T5's own, saved in `out`."""
    import torch
    from transformers import T5Config, T5ForConditionalGeneration

    tokenizer = word_tokenizer(words, append_eos=True)
    config = T5Config(
        vocab_size=len(tokenizer),
        d_model=32,
        d_kv=16,
        d_ff=64,
        num_layers=2,
        num_decoder_layers=2,
        num_heads=2,
        pad_token_id=tokenizer.pad_token_id,
        eos_token_id=tokenizer.eos_token_id,
    )
    config.decoder_start_token_id = tokenizer.pad_token_id  # T5's convention: the decoder starts from pad
    torch.manual_seed(seed)
    model = T5ForConditionalGeneration(config)
    model.save_pretrained(out)
    tokenizer.save_pretrained(out)
    return out


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description="Write a tiny random GPT-2 and T5 over the suites' words.")
    parser.add_argument("out", type=Path, help="folder to write gpt2/ and t5/ into")
    parser.add_argument(
        "--suite",
        action="append",
        dest="suites",
        metavar="ID",
        help=f"suite whose words make the vocabulary; repeatable (default: {', '.join(DEFAULT_SUITES)})",
    )
    args = parser.parse_args(argv)
    words = suite_words(args.suites or DEFAULT_SUITES)
    for path in (tiny_gpt2(words, args.out / "gpt2"), tiny_t5(words, args.out / "t5")):
        print(path)
    return 0


if __name__ == "__main__":
    sys.exit(main())
