"""What the Hugging Face adapters (`structbench.adapters.hf.causal`, `structbench.adapters.hf.seq2seq`) share.

- Finding the checkpoint offline: `pretrained` is a local folder (as `save_pretrained` writes
  it) or a name already in the local Hugging Face cache, resolved to its snapshot folder with
  `local_files_only=True`; nothing is ever downloaded, and a checkpoint that is neither ends in
  one sentence. Models and tokenizers are then loaded from that folder with
  `local_files_only=True` and `weights_only=True` (safetensors where the folder has them, else
  torch's weights-only loader; never a full unpickle).
- Refusals before anything runs, each one sentence: a checkpoint that needs its own code
  (`auto_map` in config.json or tokenizer_config.json: `refuse_remote_code`, checked before
  transformers is asked, which would otherwise offer to run it), weights a weights-only load
  refuses (a `.bin` pickle naming Python callables), a tokenizer that cannot load (naming the
  files it reads, `expected_tokenizer_files`) or reads the suite's words as no tokens
  (`HfModel.check_readable`).
- Run identity: `checkpoint_fingerprint` hashes the folder's config, weight and tokenizer files,
  so retrained weights under the same path are a new run; `HfModel.label` is the leaderboard
  label, the folder's last path component plus the settings that change results.
- `transformers` is an optional extra, imported only when a model is built: `structbench models`
  lists the adapters without it, and building one without it says how to install it. PyTorch too is
  imported only where a model is built or answers (inside the functions here), never with the
  adapters' classes (docs/architecture.md, "Model classes load without PyTorch").
- Scoring: `sum_target_logprobs`, the one vectorised gather of log-softmax both adapters score with;
  `gelu.py:fuse_tanh_gelu`, GPT-2's activation in torch's fused kernel (the causal adapter's `fuse_gelu`).
"""

from __future__ import annotations

import hashlib
import importlib
import inspect
import json
import pickle
from collections.abc import Mapping, Sequence
from functools import lru_cache
from pathlib import Path
from types import ModuleType
from typing import TYPE_CHECKING, Any, ClassVar, Literal

from structbench.data.sources import sha256_file
from structbench.errors import UserError

if TYPE_CHECKING:
    import torch

Dtype = Literal["float32", "float16", "bfloat16", "auto"]
"""Weights' dtype: `auto` keeps the checkpoint's own; scores are computed in float32 whatever it is."""

FINGERPRINTED_SUFFIXES = frozenset({".json", ".safetensors", ".bin", ".model", ".txt", ".tiktoken"})
"""Files of a checkpoint folder that its numbers come from: config and generation config (.json),
weights (.safetensors, .bin), tokenizer files (tokenizer.json, vocab.json, merges.txt, spiece.model,
tokenizer.model, *.tiktoken, special-token maps). Top level only: `save_pretrained` writes nothing
deeper, and a trainer's `checkpoint-N/` subfolders are not what is loaded."""

INSTALL = "pip install 'structbench[hf]'"


def require_transformers() -> ModuleType:
    """The `transformers` module, or one sentence saying how to install it; its own progress bars (the
    `Loading weights` bar of every load) and its info and warning messages silenced, since structbench's
    progress (`structbench.progress`) already shows where a run is.

    Imported by name, as a `ModuleType` whose attributes are untyped: the adapters use it that way, and
    a plain `import transformers` had mypy analyse the whole package (every model's modules, half of
    `mypy`'s 49 CPU-seconds) to type values it never sees."""
    try:
        transformers = importlib.import_module("transformers")
    except ImportError:
        raise UserError(
            f"the Hugging Face models (hf, hf-seq2seq) need the transformers package; install it with {INSTALL}."
        ) from None
    logging: Any = transformers.utils.logging  # untyped
    logging.disable_progress_bar()  # huggingface_hub's bars too
    logging.set_verbosity_error()
    return transformers


def _not_found(pretrained: str) -> UserError:
    return UserError(
        f"Hugging Face model {pretrained!r} was not found: pretrained must be a local folder (as save_pretrained "
        "writes it) or a name already in the local Hugging Face cache, since structbench never downloads."
    )


def _looks_like_path(pretrained: str) -> bool:
    return pretrained.startswith(("/", ".", "~")) or "\\" in pretrained or pretrained.count("/") > 1


def resolve_checkpoint(pretrained: str) -> Path:
    """The local folder `pretrained` names: itself, or its snapshot in the local HF cache (offline)."""
    if not pretrained:
        raise UserError(
            "the hf models need a checkpoint: --set pretrained=PATH_OR_NAME (a local folder or a cached name)."
        )
    folder = Path(pretrained).expanduser()
    if folder.is_dir():
        return folder.resolve()
    if _looks_like_path(pretrained) or folder.exists():
        raise _not_found(pretrained)
    try:
        from huggingface_hub import snapshot_download
    except ImportError:
        raise UserError(
            f"looking up {pretrained!r} in the Hugging Face cache needs the huggingface_hub package; "
            f"install it with {INSTALL}."
        ) from None
    try:
        return Path(snapshot_download(pretrained, local_files_only=True)).resolve()
    except (OSError, ValueError):  # not cached (LocalEntryNotFoundError), or not a valid repository name
        raise _not_found(pretrained) from None


@lru_cache(maxsize=256)
def _file_digest(path: str, size: int, modified_ns: int) -> str:
    """SHA-256 of a file, remembered while its size and modification time stay the same (a grid of
    runs over one multi-GB checkpoint hashes it once per process)."""
    return sha256_file(Path(path))


def checkpoint_fingerprint(pretrained: str) -> str:
    """SHA-256 over `name:sha256` of every config, weight and tokenizer file of the resolved folder
    (`FINGERPRINTED_SUFFIXES`), in name order: changed weights are a new run, a moved folder is not."""
    folder = resolve_checkpoint(pretrained)
    if not (folder / "config.json").is_file():
        raise UserError(
            f"{pretrained!r} ({folder}) has no config.json; point pretrained at a folder written by save_pretrained."
        )
    lines = []
    for path in sorted(folder.iterdir()):
        if path.is_file() and path.suffix in FINGERPRINTED_SUFFIXES:
            stat = path.stat()
            lines.append(f"{path.name}:{_file_digest(str(path.resolve()), stat.st_size, stat.st_mtime_ns)}")
    return hashlib.sha256("\n".join(lines).encode()).hexdigest()


def checkpoint_name(pretrained: str) -> str:
    """The last path component of `pretrained` (`/data/models/gpt2-small/` -> `gpt2-small`,
    `openai-community/gpt2` -> `gpt2`): a label never shows a local path."""
    name = Path(pretrained.rstrip("/\\")).name
    if not name or name in {".", ".."}:
        name = Path(pretrained).expanduser().resolve().name
    return name or "hf"


def torch_dtype(name: Dtype) -> torch.dtype | str:
    """What `from_pretrained(dtype=...)` takes for a `dtype` setting."""
    import torch

    return "auto" if name == "auto" else getattr(torch, name)


def _first_line(error: BaseException) -> str:
    text = str(error).strip()
    return text.splitlines()[0].rstrip(".")[:300] if text else type(error).__name__


def refuse_remote_code(pretrained: str, folder: Path) -> None:
    """One sentence for a checkpoint that needs its own Python code (an `auto_map` in its config.json or
    tokenizer_config.json, which points transformers at modules in the folder or another repository):
    structbench never runs it, and transformers, not told so, would ask on a terminal whether to."""
    for name in ("config.json", "tokenizer_config.json"):
        try:
            settings = json.loads((folder / name).read_text(encoding="utf-8"))
        except (OSError, ValueError):
            continue  # absent or unreadable: the loaders say so in their own sentences
        auto_map = settings.get("auto_map") if isinstance(settings, dict) else None
        if auto_map:
            entries = (
                ", ".join(f"{key} -> {value}" for key, value in auto_map.items())
                if isinstance(auto_map, dict)
                else str(auto_map)
            )
            raise UserError(
                f"{pretrained!r} needs code from the checkpoint folder to run (auto_map in {name}: {entries[:300]}); "
                "structbench never runs a checkpoint's own code, so use a checkpoint of a model type transformers "
                "itself implements."
            )


def _refused_weights(pretrained: str, folder: Path, error: pickle.UnpicklingError) -> UserError:
    """The sentence for weights that torch's weights-only loader refused (a pickle naming Python callables)."""
    files = ", ".join(sorted(path.name for path in folder.glob("*.bin"))) or "its .bin weights"
    refused = next((line for line in str(error).splitlines() if "GLOBAL" in line or "global" in line), "")
    detail = f": {refused.strip().rstrip('.')[:200]}" if refused else ""
    return UserError(
        f"the weights of {pretrained!r} ({files}) hold Python objects that a weights-only load refuses to "
        f"build{detail}; structbench never unpickles code, so re-save them as safetensors "
        "(model.save_pretrained) from a copy you trust."
    )


def load_pretrained(
    loader: Any, pretrained: str, folder: Path, *, dtype: Dtype, device: torch.device, kind: str, hint: str
) -> Any:
    """`loader.from_pretrained(folder)` offline, weights-only, without the checkpoint's own code, in
    `dtype`, on `device`, in eval mode.

    A checkpoint of the wrong kind (a T5 given to `hf`) or a broken folder is one sentence naming
    it, `kind` (what was wanted) and `hint` (what to do instead); so are a checkpoint that needs its
    own code (`refuse_remote_code`) and weights the weights-only loader refuses."""
    refuse_remote_code(pretrained, folder)
    try:
        model = loader.from_pretrained(
            str(folder),
            local_files_only=True,
            weights_only=True,
            trust_remote_code=False,
            dtype=torch_dtype(dtype),
        )
    except pickle.UnpicklingError as error:
        raise _refused_weights(pretrained, folder, error) from None
    except (OSError, ValueError, KeyError) as error:
        raise UserError(f"cannot load {pretrained!r} as {kind} ({_first_line(error)}); {hint}.") from None
    return model.to(device).eval()


PYTHON_GELU = frozenset({"gelu_new", "gelu_fast"})
"""transformers' names of the activations `structbench.adapters.hf.gelu.fuse_tanh_gelu` replaces, as a config.json gives them."""


def names_python_gelu(pretrained: str) -> bool:
    """Whether the checkpoint's config.json names a `PYTHON_GELU` activation (at its top level or in a
    sub-config, as `activation_function`, `hidden_act` or any other key): a checkpoint `fuse_tanh_gelu`
    changes the rounding of. An unreadable config says False here; loading it says what is wrong."""
    try:
        config = json.loads((resolve_checkpoint(pretrained) / "config.json").read_text(encoding="utf-8"))
    except (OSError, ValueError, UserError):
        return False
    values = list(config.values()) if isinstance(config, dict) else []
    values += [v for sub in values if isinstance(sub, dict) for v in sub.values()]
    return any(isinstance(value, str) and value in PYTHON_GELU for value in values)


GENERIC_TOKENIZERS = frozenset({"PreTrainedTokenizerFast", "TokenizersBackend"})
"""Tokenizer classes that read tokenizer.json alone (what `save_pretrained` of a `tokenizers` tokenizer writes)."""
USUAL_TOKENIZER_FILES = (("tokenizer.json",), ("vocab.json", "merges.txt"), ("spiece.model",), ("tokenizer.model",))
"""The tokenizer files of most checkpoints (fast, byte-level BPE, sentencepiece), when the folder names no class."""


def expected_tokenizer_files(folder: Path) -> tuple[tuple[str, ...], ...]:
    """The sets of files a tokenizer for `folder` reads, any one set sufficing: tokenizer.json, or the
    vocabulary files of the tokenizer class its tokenizer_config.json names (else the class transformers
    maps its config.json's model_type to), or the usual ones when neither says."""
    transformers = require_transformers()
    name = ""
    for file, key in (("tokenizer_config.json", "tokenizer_class"), ("config.json", "model_type")):
        try:
            value = json.loads((folder / file).read_text(encoding="utf-8")).get(key)
        except (OSError, ValueError, AttributeError):
            continue
        if isinstance(value, str) and key == "tokenizer_class":
            name = value
            break
        if isinstance(value, str):
            mapping: Any = transformers.models.auto.tokenization_auto.TOKENIZER_MAPPING_NAMES
            mapped = mapping.get(value)
            name = mapped if isinstance(mapped, str) else ""
    if name.removesuffix("Fast") in GENERIC_TOKENIZERS or name in GENERIC_TOKENIZERS:
        return (("tokenizer.json",),)
    tokenizer_class = getattr(transformers, name.removesuffix("Fast"), None) if name else None
    files = getattr(tokenizer_class, "vocab_files_names", None)
    if not isinstance(files, dict):
        return USUAL_TOKENIZER_FILES
    own = tuple(str(file) for key, file in files.items() if key != "tokenizer_file")
    return (("tokenizer.json",), own) if own else (("tokenizer.json",),)


def _tokenizer_files_sentence(folder: Path) -> str:
    """What a tokenizer for `folder` reads and which of those files the folder lacks (of the set it has
    some of, else all), as one clause."""
    expected = expected_tokenizer_files(folder)
    wanted = ", or ".join(" and ".join(files) for files in expected)
    if any(all((folder / file).is_file() for file in files) for files in expected):
        return f"it reads {wanted}, which {folder} has but transformers could not read"
    closest = max(expected, key=lambda files: sum((folder / file).is_file() for file in files))
    partly = any((folder / file).is_file() for file in closest)  # then name only what that set lacks
    named = (closest,) if partly else expected
    missing = sorted({file for files in named for file in files if not (folder / file).is_file()})
    return f"it reads {wanted}, and {folder} lacks {', '.join(missing)}"


PROBE_TEXT = "the cat sat on the mat and the dog ran home"
"""Ordinary words that any real tokenizer turns into tokens (sub-words, or `<unk>` for a word-level
vocabulary without them), never into none."""
WORD_MARKERS = "\u2581\u0120 \t\n"
"""Sentencepiece's and byte-level BPE's word-start markers, and white space: no word on their own."""


def _is_empty(tokenizer: Any) -> bool:
    """Whether `tokenizer` is one that transformers builds for a folder without tokenizer files: it
    turns ordinary words into no tokens at all (GPT-2's), or its vocabulary holds nothing but special
    tokens and word-start markers (T5's, which reads every word as `<unk>`)."""
    if not list(tokenizer(PROBE_TEXT, add_special_tokens=False)["input_ids"]):
        return True
    special = set(tokenizer.all_special_ids)
    return not any(index not in special and token.strip(WORD_MARKERS) for token, index in tokenizer.get_vocab().items())


def load_tokenizer(pretrained: str, folder: Path) -> Any:
    """The checkpoint's tokenizer, offline, without the checkpoint's own code; a folder without one, or
    whose tokenizer is empty (`_is_empty`: every answer would be scored wrong, silently), is one
    sentence naming the files a tokenizer for it reads (`expected_tokenizer_files`)."""
    transformers = require_transformers()
    refuse_remote_code(pretrained, folder)
    try:
        tokenizer = transformers.AutoTokenizer.from_pretrained(
            str(folder), local_files_only=True, trust_remote_code=False
        )
    except (OSError, ValueError, KeyError) as error:
        raise UserError(
            f"cannot load the tokenizer of {pretrained!r} ({_first_line(error)}); {_tokenizer_files_sentence(folder)}, "
            "so save the tokenizer beside the model (tokenizer.save_pretrained)."
        ) from None
    if _is_empty(tokenizer):
        raise UserError(
            f"the tokenizer of {pretrained!r} ({folder}) has no vocabulary, so every sentence would be read as "
            f"nothing ({_tokenizer_files_sentence(folder)}); save the tokenizer into that folder too "
            "(tokenizer.save_pretrained), beside the model."
        )
    return tokenizer


def check_template(name: str, template: str) -> str:
    """A prompt template must contain `{input}`, where the example's words go."""
    if "{input}" not in template:
        raise UserError(f"the {name} setting {template!r} has no {{input}}; add it where the example's words go.")
    return template


def fill(template: str, tokens: Sequence[str]) -> str:
    """`template` with `{input}` replaced by the tokens joined by single spaces (no other braces are
    interpreted, so a template may contain `{` and `}` freely)."""
    return template.replace("{input}", " ".join(tokens))


def sum_target_logprobs(logits: torch.Tensor, targets: torch.Tensor, scored: torch.Tensor) -> torch.Tensor:
    """Per row, the summed natural-log probability of `targets` (B, T) under `logits` (B, T, V) at the
    positions where `scored` (B, T, bool) is true: one log-softmax (in float32 whatever the model's
    dtype) and one gather, summed in float64."""
    import torch

    logprobs = torch.log_softmax(logits.float(), dim=-1)
    picked = logprobs.gather(-1, targets.unsqueeze(-1)).squeeze(-1)
    return (picked.double() * scored).sum(dim=-1)


def padded(rows: Sequence[Sequence[int]], fill: int, device: torch.device) -> torch.Tensor:
    """`rows` as one (B, W) long tensor, each padded on the right with `fill` to the longest."""
    import torch

    width = max(len(row) for row in rows)
    return torch.tensor([[*row, *[fill] * (width - len(row))] for row in rows], dtype=torch.long, device=device)


def right_padded(rows: Sequence[Sequence[int]], pad: int, device: torch.device) -> tuple[torch.Tensor, torch.Tensor]:
    """(ids, attention mask) of `rows`, padded on the right to the longest."""
    return padded(rows, pad, device), padded([[1] * len(row) for row in rows], 0, device)


def left_padded(rows: Sequence[Sequence[int]], pad: int, device: torch.device) -> tuple[torch.Tensor, torch.Tensor]:
    """(ids, attention mask) of `rows`, padded on the left to the longest (for batched generation
    with a decoder-only model, whose new tokens must follow every prompt directly)."""
    import torch

    width = max(len(row) for row in rows)
    ids = torch.full((len(rows), width), pad, dtype=torch.long)
    mask = torch.zeros((len(rows), width), dtype=torch.long)
    for i, row in enumerate(rows):
        if row:
            ids[i, width - len(row) :] = torch.tensor(row, dtype=torch.long)
            mask[i, width - len(row) :] = 1
    return ids.to(device), mask.to(device)


def by_length(lengths: Sequence[int], batch_size: int) -> list[list[int]]:
    """Indices in batches of similar length (longest first), so that little of each batch is padding;
    callers put the answers back in the original order."""
    order = sorted(range(len(lengths)), key=lambda i: -lengths[i])
    return [order[i : i + batch_size] for i in range(0, len(order), batch_size)]


def first_line_words(text: str) -> list[str]:
    """A generated continuation up to its first newline, split on whitespace."""
    return text.split("\n", 1)[0].split()


class HfModel:
    """What both adapters share: run identity (`fingerprint`, `label`), compute and closing."""

    name: ClassVar[str]
    unlabelled: ClassVar[frozenset[str]] = frozenset({"pretrained", "device", "batch_size", "dtype"})
    """Settings left out of the label: `pretrained` is the label's name, the others do not change
    what is measured (beyond float rounding, for `dtype` and `batch_size`'s padding)."""

    model: Any
    """The loaded `transformers` model (set by the subclass's constructor)."""
    device: torch.device
    _threads_before: int | None = None

    pretrained: str
    tokenizer: Any
    eos_id: int | None

    def words(self, generated: list[int]) -> list[str]:
        """Generated sub-word ids as the words of a transduction answer: up to the first end-of-sequence
        token, decoded without special tokens, up to the first newline, split on whitespace."""
        if self.eos_id is not None and self.eos_id in generated:
            generated = generated[: generated.index(self.eos_id)]
        return first_line_words(self.tokenizer.decode(generated, skip_special_tokens=True))

    def check_readable(self, texts: Sequence[str], encoded: Sequence[Sequence[int]] | None = None) -> None:
        """One sentence (a `UserError`: the run is refused, nothing is stored) when the tokenizer reads one
        of the suite's texts as no tokens (or special ones only, `<unk>` aside), the first such text named: every word dropped
        (a vocabulary without their characters and without an unknown token), which would be scored as
        nothing, silently. Blank texts (an empty sentence) are left alone. `encoded`: each text's sub-words
        where the caller has them already (a text's own, or those it is scored as in its context)."""
        chosen = [i for i, text in enumerate(texts) if text.strip()]
        if not chosen:
            return
        special = set(self.tokenizer.all_special_ids) - {self.tokenizer.unk_token_id}  # `<unk>` stands for a word
        asked = [texts[i] for i in chosen]
        if encoded is None:
            encoded = self.tokenizer(asked, add_special_tokens=False)["input_ids"]
        else:
            encoded = [encoded[i] for i in chosen]
        for text, ids in zip(asked, encoded, strict=True):
            if all(int(index) in special for index in ids):
                shown = text if len(text) <= 80 else f"{text[:77]}..."
                raise UserError(
                    f"the tokenizer of {self.pretrained!r} reads the suite's {shown!r} as no tokens at all (its "
                    "vocabulary has none of those characters and no unknown token), so it would be scored as "
                    "nothing; use the tokenizer the checkpoint was trained with, or a checkpoint whose vocabulary "
                    "covers the suite."
                )

    def use_threads(self, threads: int) -> None:
        """Run torch's CPU operations on `threads` threads (the runner holds a run to them already; this
        is for a caller that drives the model itself); `close` restores the count from before."""
        import torch

        self._threads_before = torch.get_num_threads()
        torch.set_num_threads(threads)

    @classmethod
    def fingerprint(cls, pretrained: str = "", **_: object) -> str:
        """The checkpoint's files by content (`checkpoint_fingerprint`): new weights are a new run."""
        return checkpoint_fingerprint(pretrained)

    @classmethod
    def label(cls, **settings: object) -> str:
        """The leaderboard label: the checkpoint's last path component, then the settings that
        change results and differ from their defaults, as `name[key=value,...]` with JSON values
        (`gpt2[shots=3]`); never the local path, device, dtype or batch size."""
        name = checkpoint_name(str(settings.get("pretrained", "")))
        defaults = {
            key: parameter.default
            for key, parameter in inspect.signature(cls.__init__).parameters.items()
            if parameter.default is not inspect.Parameter.empty
        }
        shown = {
            key: value
            for key, value in cls.labelled_settings(settings).items()
            if key not in defaults or value != defaults[key]
        }
        if not shown:
            return name
        return f"{name}[{','.join(f'{key}={json.dumps(value)}' for key, value in sorted(shown.items()))}]"

    @classmethod
    def labelled_settings(cls, settings: Mapping[str, object]) -> dict[str, object]:
        """The settings that can change this model's results: all but `unlabelled`."""
        return {key: value for key, value in settings.items() if key not in cls.unlabelled}

    def compute(self) -> dict[str, int | str]:
        """Parameter count (all of the checkpoint's parameters) and the device they are on (e.g. `cuda:0`)."""
        parameters = list(self.model.parameters())
        device = str(parameters[0].device) if parameters else str(self.device)
        return {"parameters": int(sum(p.numel() for p in parameters)), "device": device}

    def close(self) -> None:
        """Let go of the weights and of cached GPU memory, give torch back its thread count (the runner
        closes each seed's model)."""
        import torch

        self.model = None
        if self._threads_before is not None:
            torch.set_num_threads(self._threads_before)
            self._threads_before = None
        if self.device.type == "cuda":
            torch.cuda.empty_cache()
