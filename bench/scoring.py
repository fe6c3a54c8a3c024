"""Minimal-pair scoring side by side: structbench's `hf` model, a bare batched loop and lm-evaluation-harness,
on one checkpoint and one thread: pairs per second, and whether they agree item by item. Two workloads:

- **BLiMP** (`blimp`): every sentence scored as lm-evaluation-harness 0.4's `blimp` task scores it, the request
  `("", " " + sentence)`: the summed natural-log probability of the sub-words of `" " + sentence` after the
  start token. Checkpoint: `--pretrained DIR` (`python bench/blimp_gpt2.py --out DIR` trains a small GPT-2 with
  a BPE tokenizer).
- **agreement** (`agreement-attractors@2.0.0`'s six test splits, 3,000 items): each verb form after its prefix,
  the request `(prefix, " " + verb)`, after the start token (lm-eval with `add_bos_token=True`, as it puts
  no start token before a non-empty context otherwise). Checkpoint: a 6-layer 256-wide GPT-2
  with random weights and a word-level tokenizer over the suite's words, made here (random weights: the
  timing is the point, not the verdicts).

- **structbench**: `structbench.protocols.ask` on `HfCausalLm(pretrained=DIR, threads=1, batch_size=B)`, the
  path of `structbench run --suite blimp --model hf` (tokenizing, the readability check, the sentences
  packed as prefix trees so that each distinct prefix is read once: `structbench.adapters.hf.prefixes`).
- **structbench, whole**: the same with `share_prefixes=False`: every sentence read whole, batched by length.
- **structbench, transformers' GELU**: the same with `fuse_gelu=False`: GPT-2's activation computed by
  transformers' own module (eight tensor operations) instead of torch's fused kernel of the same function.
- **bare loop**: the floor, written here in a few lines: each request tokenized once, sequences sorted by length
  and cut into batches of B, one forward pass, log-softmax and gather per batch; a context whose continuations
  are all one token long is read once for all of them (as lm-eval groups them); no checks.
- **lm-eval**: `lm_eval.models.huggingface.HFLM(pretrained=DIR, batch_size=B).loglikelihood` on the same requests,
  in a separate Python (`--lm-eval-python`, a virtual environment with lm-eval installed: it is not a dependency
  of structbench), which writes its log-probabilities and wall time to a JSON file this script reads.

Each tool scores every sentence `--repeats` times at each batch size, in rounds where every tool takes its turn
(lm-eval in a new process each round), after one untimed call of each, which imports transformers and the
model's classes, so that a change in the machine's speed reaches every tool alike; the best wall time is shown with
pairs per second and each tool's time over structbench's. Item by item: the largest absolute difference of a
sentence's log-probability from structbench's, the number of pairs whose verdict differs from structbench's under
the paper's strict rule (good > bad) and under lm-eval's argmax (a tie counts right), and the first ten pairs
whose strict verdict differs, with each tool's two log-probabilities.

    STRUCTBENCH_SOURCE_DIR=/path/to/data python bench/scoring.py [--workloads blimp,agreement] --pretrained DIR \\
        [--per-split 1000] [--batch-sizes 16,64] [--repeats 3] [--lm-eval-python PATH] [--smoke]

`--per-split` takes the first N items of each split (BLiMP's paradigms, agreement's test splits).
`--smoke` makes random 1-layer GPT-2s itself and scores 5 items per split once.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import subprocess
import sys
import tempfile
import textwrap
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from functools import partial
from pathlib import Path
from typing import Any

os.environ.setdefault("OMP_NUM_THREADS", "1")

import torch
from tabulate import tabulate

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from structbench import registry  # noqa: E402
from structbench.adapters.hf.causal import HfCausalLm  # noqa: E402
from structbench.data import freeze  # noqa: E402
from structbench.protocols import ask  # noqa: E402
from structbench.specs import Example  # noqa: E402
from tests.support.hf_models import bpe_gpt2, suite_words, tiny_gpt2  # noqa: E402

LM_EVAL_SCRIPT = textwrap.dedent(
    """
    import json, sys, time
    import torch
    torch.set_num_threads(1)
    from lm_eval.api.instance import Instance
    from lm_eval.models.huggingface import HFLM
    pretrained, requests_path, batch_size, out, add_bos = sys.argv[1:6]
    pairs = json.loads(open(requests_path).read())
    bos = {"add_bos_token": True} if add_bos == "bos" else {}
    lm = HFLM(pretrained=pretrained, batch_size=int(batch_size), device="cpu", **bos)
    requests = [
        Instance(request_type="loglikelihood", doc={}, arguments=(context, continuation), idx=0)
        for context, continuation in pairs
    ]
    lm.loglikelihood(requests[:16], disable_tqdm=True)  # untimed, as the other tools' first call
    started = time.perf_counter()
    answers = lm.loglikelihood(requests, disable_tqdm=True)
    seconds = time.perf_counter() - started
    version = __import__("lm_eval").__version__
    result = {"version": version, "seconds": seconds, "logprobs": [float(value) for value, _ in answers]}
    open(out, "w").write(json.dumps(result))
    """
)
AGREEMENT = "agreement-attractors@2.0.0"
AGREEMENT_SPLITS = ("attractors-0", "attractors-1", "attractors-2", "attractors-3", "attractors-4", "mixed")


@dataclass
class Workload:
    """One side-by-side comparison: the suite and its items, and each candidate as an lm-eval request."""

    title: str
    suite: str
    items: list[Example]
    requests: list[tuple[str, str]]
    """(context, continuation) per candidate, items in order, each item's candidates in order."""
    lm_eval_bos: bool = False
    """Whether lm-eval is asked to put the start token before a context (`add_bos_token`), as structbench
    does; an empty context gets it anyway."""


def first_items(suite_key: str, splits: Sequence[str], per_split: int) -> tuple[list[Example], int]:
    """The first `per_split` items of each of `splits`, and how many that is per split at most."""
    suite = registry.suite(suite_key)
    manifest = freeze.ensure_built(suite)
    taken = [freeze.load_split(suite, manifest, 0, split).examples[:per_split] for split in splits]
    return [e for examples in taken for e in examples], max(map(len, taken))


def blimp(per_split: int) -> Workload:
    """The first `per_split` pairs of each of BLiMP's 67 paradigms, each sentence after an empty context."""
    items, per = first_items("blimp", [split.name for split in registry.suite("blimp").spec.splits], per_split)
    requests = [("", " " + " ".join(candidate)) for example in items for candidate in example.candidates or []]
    title = f"BLiMP, {len(items):,} pairs ({per} per paradigm)"
    return Workload(title, "blimp", items, requests)


def agreement(per_split: int) -> Workload:
    """The first `per_split` items of each of the agreement suite's six test splits, each verb after its prefix."""
    items, per = first_items(AGREEMENT, AGREEMENT_SPLITS, per_split)
    requests = [
        (" ".join(example.input), " " + " ".join(candidate))
        for example in items
        for candidate in example.candidates or []
    ]
    title = f"agreement, {len(items):,} items ({per} per test split)"
    return Workload(title, AGREEMENT, items, requests, lm_eval_bos=True)


def word_gpt2(folder: Path, layers: int, width: int) -> Path:
    """A GPT-2 with random weights and a word-level tokenizer over the agreement suite's words."""
    return tiny_gpt2(suite_words([AGREEMENT]), folder, layers=layers, width=width, heads=4)


def structbench_scores(
    pretrained: Path,
    workload: Workload,
    batch_size: int,
    *,
    share: bool = True,
    fuse: bool = True,
    items: int | None = None,
) -> list[float]:
    """Every candidate's log-probability as `structbench run --model hf` computes it (with `--set
    share_prefixes=false` where not `share`, `--set fuse_gelu=false` where not `fuse`), for the first
    `items` items (all where None)."""
    model = HfCausalLm(
        pretrained=str(pretrained), threads=1, batch_size=batch_size, share_prefixes=share, fuse_gelu=fuse
    )
    try:
        answers = ask(model, registry.suite(workload.suite).spec, workload.items[:items])
    finally:
        model.close()
    return [float(value) for scores in answers for value in scores]


def bare_scores(pretrained: Path, requests: Sequence[tuple[str, str]], batch_size: int) -> list[float]:
    """The same log-probabilities from the plainest batched loop: the floor of any harness."""
    from transformers import AutoModelForCausalLM, AutoTokenizer

    tokenizer = AutoTokenizer.from_pretrained(pretrained)
    model = AutoModelForCausalLM.from_pretrained(pretrained).eval()
    start = tokenizer.bos_token_id if tokenizer.bos_token_id is not None else tokenizer.eos_token_id
    contexts = [[start, *tokenizer(context, add_special_tokens=False)["input_ids"]] for context, _ in requests]
    wholes = tokenizer([c + t for c, t in requests], add_special_tokens=False)["input_ids"]
    continuations = [whole[len(context) - 1 :] for whole, context in zip(wholes, contexts, strict=True)]
    # one row per context whose continuations are all one token (read at its last position), else per request
    single: dict[tuple[int, ...], list[int]] = {}
    for i, context in enumerate(contexts):
        single.setdefault(tuple(context), []).append(i)
    rows: list[tuple[list[int], list[int], int]] = []  # (ids, the requests it answers, first scored position)
    for context, asked in single.items():
        if all(len(continuations[i]) == 1 for i in asked):
            rows.append((list(context), asked, len(context)))
        else:
            rows += [([*context, *continuations[i]], [i], len(context)) for i in asked]
    order = sorted(range(len(rows)), key=lambda r: len(rows[r][0]))
    scores = [0.0] * len(requests)
    with torch.no_grad():
        for first in range(0, len(order), batch_size):
            batch = [rows[r] for r in order[first : first + batch_size]]
            width = max(len(ids) for ids, _, _ in batch)
            ids = torch.tensor([row + [start] * (width - len(row)) for row, _, _ in batch])
            logprobs = torch.log_softmax(model(input_ids=ids).logits.float(), dim=-1)
            for b, (row, asked, begin) in enumerate(batch):
                if len(asked) > 1 or begin == len(row):  # read at the context's last position
                    for i in asked:
                        scores[i] = float(logprobs[b, len(row) - 1, continuations[i][0]])
                else:
                    positions = torch.arange(begin - 1, len(row) - 1)
                    scores[asked[0]] = float(logprobs[b, positions, torch.tensor(row[begin:])].sum())
    return scores


def lm_eval_scores(python: str, pretrained: Path, requests_file: Path, batch_size: int, *, bos: bool) -> dict[str, Any]:
    """lm-eval's log-probabilities and wall time at `batch_size` for the requests in `requests_file` (a JSON
    list of (context, continuation)), from one call in its own Python."""
    out = requests_file.with_name("lm-eval.json")
    command = [python, "-c", LM_EVAL_SCRIPT, str(pretrained), str(requests_file)]
    command += [str(batch_size), str(out), "bos" if bos else "-"]
    done = subprocess.run(
        command, capture_output=True, text=True, check=False, env={**os.environ, "OMP_NUM_THREADS": "1"}
    )
    if done.returncode != 0:
        sys.exit(f"lm-eval ({python}) failed:\n{done.stderr[-3000:]}")
    result: dict[str, Any] = json.loads(out.read_text())
    return result


def verdicts(scores: Sequence[float]) -> tuple[list[bool], list[bool]]:
    """Per pair (first and second candidate, consecutive): first above second under the strict rule, and
    under lm-eval's argmax (a tie counts for the first)."""
    goods, bads = scores[0::2], scores[1::2]
    return [g > b for g, b in zip(goods, bads, strict=True)], [g >= b for g, b in zip(goods, bads, strict=True)]


def differing(items: Sequence[Example], scores: Sequence[float], reference: Sequence[float]) -> list[str]:
    """The pairs whose strict verdict differs from structbench's: id, and (first, second) of each."""
    strict, strict_ref = verdicts(scores)[0], verdicts(reference)[0]
    return [
        f"{item.id}: ({scores[2 * i]:.7f}, {scores[2 * i + 1]:.7f}) against structbench's "
        f"({reference[2 * i]:.7f}, {reference[2 * i + 1]:.7f})"
        for i, item in enumerate(items)
        if strict[i] != strict_ref[i]
    ]


def agreeing(label: str, scores: Sequence[float], reference: Sequence[float]) -> list[str]:
    strict, argmax = verdicts(scores)
    strict_ref, argmax_ref = verdicts(reference)
    largest = max(abs(a - b) for a, b in zip(scores, reference, strict=True))
    return [
        label,
        f"{largest:.2e}",
        str(sum(a != b for a, b in zip(strict, strict_ref, strict=True))),
        str(sum(a != b for a, b in zip(argmax, argmax_ref, strict=True))),
    ]


def compare(
    workload: Workload, pretrained: Path, batch_sizes: Sequence[int], repeats: int, lm_eval_python: str | None
) -> None:
    """Time each tool on `workload` (in rounds, best of `repeats`) and print the tables."""
    rows: list[tuple[str, int, float]] = []
    scored: dict[str, list[float]] = {}
    # untimed: the first call of a process imports transformers and the model's classes, for both tools
    structbench_scores(pretrained, workload, batch_sizes[0], items=8)
    bare_scores(pretrained, workload.requests[:16], batch_sizes[0])
    with tempfile.TemporaryDirectory(prefix="scoring-lm-eval-") as scratch:
        requests_file = Path(scratch) / "requests.json"
        requests_file.write_text(json.dumps(list(workload.requests)))
        for batch_size in batch_sizes:
            tools: dict[str, Callable[[], list[float]]] = {
                "structbench": partial(structbench_scores, pretrained, workload, batch_size),
                "structbench, whole": partial(structbench_scores, pretrained, workload, batch_size, share=False),
                "structbench, transformers' GELU": partial(
                    structbench_scores, pretrained, workload, batch_size, fuse=False
                ),
                "bare loop": partial(bare_scores, pretrained, workload.requests, batch_size),
            }
            best: dict[str, float] = {}
            # rounds, each tool once per round: a change in the machine's speed reaches every tool alike
            for _ in range(repeats):
                for tool, score in tools.items():
                    started = time.perf_counter()
                    scored[tool] = score()
                    best[tool] = min(best.get(tool, math.inf), time.perf_counter() - started)
                if lm_eval_python:  # its own process each round, timed inside it after an untimed call
                    result = lm_eval_scores(
                        lm_eval_python, pretrained, requests_file, batch_size, bos=workload.lm_eval_bos
                    )
                    tool = f"lm-eval {result['version']}"
                    best[tool] = min(best.get(tool, math.inf), float(result["seconds"]))
                    scored["lm-eval"] = result["logprobs"]
            rows += [(tool, batch_size, seconds) for tool, seconds in best.items()]
    ours = {batch: seconds for tool, batch, seconds in rows if tool == "structbench"}
    print(
        f"{workload.title}, {len(workload.requests):,} scored sequences; torch {torch.__version__}, one thread, "
        f"best of {repeats}; 1-minute load average {os.getloadavg()[0]:.1f}"
    )
    print()
    count = len(workload.items)
    table = [
        [tool, batch, f"{seconds:.2f}", f"{count / seconds:,.0f}", f"{seconds / ours[batch]:.2f}"]
        for tool, batch, seconds in rows
    ]
    print(tabulate(table, headers=["tool", "batch", "s", "pairs/s", "time / structbench's"], disable_numparse=True))
    print()
    checks = [agreeing(tool, values, scored["structbench"]) for tool, values in scored.items() if tool != "structbench"]
    headers = ["against structbench", "largest |Δ log p|", "strict verdicts differ", "argmax verdicts differ"]
    print(tabulate(checks, headers=headers, disable_numparse=True))
    for tool, values in scored.items():
        for line in differing(workload.items, values, scored["structbench"])[:10] if tool != "structbench" else []:
            print(f"{tool}, strict verdict differs: {line}")
    print()


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--workloads", default="blimp,agreement", help="comma-separated: blimp, agreement")
    parser.add_argument("--pretrained", type=Path, help="BLiMP's causal LM folder (save_pretrained) with its tokenizer")
    parser.add_argument("--per-split", "--per-paradigm", type=int, default=1000, help="items of each split (all)")
    parser.add_argument("--batch-sizes", default="16,64", help="comma-separated (default 16,64)")
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--lm-eval-python", help="a Python with lm-eval 0.4 installed (default: skip lm-eval)")
    parser.add_argument("--smoke", action="store_true", help="random 1-layer GPT-2s, 5 items per split, once")
    args = parser.parse_args()
    torch.set_num_threads(1)
    batch_sizes = [int(b) for b in args.batch_sizes.split(",")]
    if args.smoke:
        args.per_split, args.repeats, batch_sizes = 5, 1, batch_sizes[:1]
    workloads = [w.strip() for w in args.workloads.split(",")]
    if unknown := set(workloads) - {"blimp", "agreement"}:
        sys.exit(f"unknown workloads {', '.join(sorted(unknown))}; use blimp, agreement or both")
    if "blimp" in workloads and args.pretrained is None and not args.smoke:
        sys.exit("--pretrained DIR is needed for BLiMP (or --smoke, which makes a random GPT-2)")
    with tempfile.TemporaryDirectory(prefix="scoring-bench-") as scratch:
        folder = Path(scratch)
        for name in workloads:
            workload = blimp(args.per_split) if name == "blimp" else agreement(args.per_split)
            if name == "agreement":
                layers, width = (1, 32) if args.smoke else (6, 256)
                pretrained = word_gpt2(folder / "word-gpt2", layers, width)
            elif args.pretrained is not None:
                pretrained = args.pretrained
            else:
                sentences = [continuation for _, continuation in workload.requests[:400]]
                pretrained = bpe_gpt2(sentences, folder / "gpt2", layers=1, width=32, heads=2)
            compare(workload, pretrained, batch_sizes, args.repeats, args.lm_eval_python)
    return 0


if __name__ == "__main__":
    sys.exit(main())
