"""BLiMP sentence scoring side by side: structbench's `hf` model, a bare batched loop and lm-evaluation-harness,
on one checkpoint and one thread: pairs per second, and whether the three agree item by item.

Every sentence is scored as lm-evaluation-harness 0.4's `blimp` task scores it: the request `("", " " +
sentence)`, i.e. the summed natural-log probability of the sub-words of `" " + sentence` after the start token.

- **structbench**: `structbench.protocols.ask` on `HfCausalLm(pretrained=DIR, threads=1, batch_size=B)`, the
  path of `structbench run --suite blimp --model hf` (tokenizing, the readability check, the sentences
  packed as prefix trees so that each distinct prefix is read once: `structbench.adapters.hf.prefixes`).
- **structbench, whole**: the same with `share_prefixes=False`: every sentence read whole, batched by length.
- **bare loop**: the floor, written here in a few lines: each sentence tokenized once, sequences sorted by length
  and cut into batches of B, one forward pass, log-softmax and gather per batch; no checks.
- **lm-eval**: `lm_eval.models.huggingface.HFLM(pretrained=DIR, batch_size=B).loglikelihood` on the same requests,
  in a separate Python (`--lm-eval-python`, a virtual environment with lm-eval installed: it is not a dependency
  of structbench), which writes its log-probabilities and wall time to a JSON file this script reads.

Each tool scores every sentence `--repeats` times at each batch size, the tools taking turns (after one
untimed call of each, which imports transformers and the model's classes), and the best wall time is shown with
pairs per second and each tool's time over structbench's. Item by item: the largest absolute difference of a
sentence's log-probability from structbench's, the number of pairs whose verdict differs from structbench's under
the paper's strict rule (good > bad) and under lm-eval's argmax (a tie counts right), and the first ten pairs
whose strict verdict differs, with each tool's two log-probabilities.

    STRUCTBENCH_SOURCE_DIR=/path/to/data python bench/scoring.py --pretrained DIR \\
        [--per-paradigm 1000] [--batch-sizes 16,64] [--repeats 3] [--lm-eval-python PATH] [--smoke]

A checkpoint to try: `python bench/blimp_gpt2.py --out DIR` trains a small GPT-2 with a BPE tokenizer.
`--smoke` makes a random 1-layer GPT-2 with a BPE tokenizer itself and scores 5 pairs per paradigm once.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import textwrap
import time
from collections.abc import Callable, Sequence
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
from tests.support.hf_models import bpe_gpt2  # noqa: E402

LM_EVAL_SCRIPT = textwrap.dedent(
    """
    import json, sys, time
    import torch
    torch.set_num_threads(1)
    from lm_eval.api.instance import Instance
    from lm_eval.models.huggingface import HFLM
    pretrained, sentences_path, batch_sizes, repeats, out = sys.argv[1:6]
    sentences = json.loads(open(sentences_path).read())
    result = {"version": __import__("lm_eval").__version__, "seconds": {}, "logprobs": None}
    for batch_size in map(int, batch_sizes.split(",")):
        lm = HFLM(pretrained=pretrained, batch_size=batch_size, device="cpu")
        requests = [
            Instance(request_type="loglikelihood", doc={}, arguments=("", " " + s), idx=0) for s in sentences
        ]
        best = None
        lm.loglikelihood(requests[:16], disable_tqdm=True)  # untimed, as the other tools' first call
        for _ in range(int(repeats)):
            started = time.perf_counter()
            answers = lm.loglikelihood(requests, disable_tqdm=True)
            seconds = time.perf_counter() - started
            best = seconds if best is None else min(best, seconds)
        result["seconds"][str(batch_size)] = best
        result["logprobs"] = [float(value) for value, _ in answers]
    open(out, "w").write(json.dumps(result))
    """
)


def blimp_pairs(per_paradigm: int) -> list[Example]:
    """The first `per_paradigm` pairs of each of BLiMP's 67 paradigms."""
    suite = registry.suite("blimp")
    manifest = freeze.ensure_built(suite)
    return [
        example
        for split in suite.spec.splits
        for example in freeze.load_split(suite, manifest, 0, split.name).examples[:per_paradigm]
    ]


def structbench_scores(pretrained: Path, pairs: list[Example], batch_size: int, *, share: bool = True) -> list[float]:
    """Every sentence's log-probability as `structbench run --suite blimp --model hf` computes it (with
    `--set share_prefixes=false` where not `share`)."""
    model = HfCausalLm(pretrained=str(pretrained), threads=1, batch_size=batch_size, share_prefixes=share)
    try:
        answers = ask(model, registry.suite("blimp").spec, pairs)
    finally:
        model.close()
    return [float(value) for scores in answers for value in scores]


def bare_scores(pretrained: Path, sentences: list[str], batch_size: int) -> list[float]:
    """The same log-probabilities from the plainest batched loop: the floor of any harness."""
    from transformers import AutoModelForCausalLM, AutoTokenizer

    tokenizer = AutoTokenizer.from_pretrained(pretrained)
    model = AutoModelForCausalLM.from_pretrained(pretrained).eval()
    start = tokenizer.bos_token_id if tokenizer.bos_token_id is not None else tokenizer.eos_token_id
    rows = [[start, *ids] for ids in tokenizer([" " + s for s in sentences], add_special_tokens=False)["input_ids"]]
    order = sorted(range(len(rows)), key=lambda i: len(rows[i]))
    scores = [0.0] * len(rows)
    with torch.no_grad():
        for first in range(0, len(order), batch_size):
            batch = order[first : first + batch_size]
            width = max(len(rows[i]) for i in batch)
            ids = torch.tensor([rows[i] + [start] * (width - len(rows[i])) for i in batch])
            lengths = torch.tensor([len(rows[i]) for i in batch])
            mask = (torch.arange(width)[None, :] < lengths[:, None]).long()
            logprobs = torch.log_softmax(model(input_ids=ids, attention_mask=mask).logits[:, :-1].float(), dim=-1)
            picked = logprobs.gather(-1, ids[:, 1:, None]).squeeze(-1) * mask[:, 1:]
            for i, value in zip(batch, picked.sum(dim=1).tolist(), strict=True):
                scores[i] = value
    return scores


def lm_eval_scores(
    python: str, pretrained: Path, sentences: list[str], batch_sizes: Sequence[int], repeats: int, folder: Path
) -> dict[str, Any]:
    """lm-eval's log-probabilities and best wall time per batch size, from its own Python."""
    (folder / "sentences.json").write_text(json.dumps(sentences))
    out = folder / "lm-eval.json"
    command = [python, "-c", LM_EVAL_SCRIPT, str(pretrained), str(folder / "sentences.json")]
    command += [",".join(map(str, batch_sizes)), str(repeats), str(out)]
    done = subprocess.run(
        command, capture_output=True, text=True, check=False, env={**os.environ, "OMP_NUM_THREADS": "1"}
    )
    if done.returncode != 0:
        sys.exit(f"lm-eval ({python}) failed:\n{done.stderr[-3000:]}")
    result: dict[str, Any] = json.loads(out.read_text())
    return result


def best_time(score: Callable[[], list[float]], repeats: int) -> tuple[float, list[float]]:
    """The fastest of `repeats` calls, and the scores of the last."""
    best, scores = float("inf"), []
    for _ in range(repeats):
        started = time.perf_counter()
        scores = score()
        best = min(best, time.perf_counter() - started)
    return best, scores


def verdicts(scores: Sequence[float]) -> tuple[list[bool], list[bool]]:
    """Per pair (good, bad consecutive): right under the strict rule, and under lm-eval's argmax."""
    goods, bads = scores[0::2], scores[1::2]
    return [g > b for g, b in zip(goods, bads, strict=True)], [g >= b for g, b in zip(goods, bads, strict=True)]


def differing(pairs: Sequence[Example], scores: Sequence[float], reference: Sequence[float]) -> list[str]:
    """The pairs whose strict verdict differs from structbench's: id, and (good, bad) of each."""
    strict, strict_ref = verdicts(scores)[0], verdicts(reference)[0]
    return [
        f"{pair.id}: ({scores[2 * i]:.7f}, {scores[2 * i + 1]:.7f}) against structbench's "
        f"({reference[2 * i]:.7f}, {reference[2 * i + 1]:.7f})"
        for i, pair in enumerate(pairs)
        if strict[i] != strict_ref[i]
    ]


def agreement(label: str, scores: Sequence[float], reference: Sequence[float]) -> list[str]:
    strict, argmax = verdicts(scores)
    strict_ref, argmax_ref = verdicts(reference)
    largest = max(abs(a - b) for a, b in zip(scores, reference, strict=True))
    return [
        label,
        f"{largest:.2e}",
        str(sum(a != b for a, b in zip(strict, strict_ref, strict=True))),
        str(sum(a != b for a, b in zip(argmax, argmax_ref, strict=True))),
    ]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--pretrained", type=Path, help="a causal LM folder (save_pretrained) with its tokenizer")
    parser.add_argument("--per-paradigm", type=int, default=1000, help="pairs of each paradigm (default all 1,000)")
    parser.add_argument("--batch-sizes", default="16,64", help="comma-separated (default 16,64)")
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--lm-eval-python", help="a Python with lm-eval 0.4 installed (default: skip lm-eval)")
    parser.add_argument("--smoke", action="store_true", help="a random 1-layer GPT-2, 5 pairs per paradigm, once")
    args = parser.parse_args()
    torch.set_num_threads(1)
    batch_sizes = [int(b) for b in args.batch_sizes.split(",")]
    if args.smoke:
        args.per_paradigm, args.repeats, batch_sizes = 5, 1, batch_sizes[:1]
    pairs = blimp_pairs(args.per_paradigm)
    sentences = [" ".join(candidate) for example in pairs for candidate in example.candidates or []]
    with tempfile.TemporaryDirectory(prefix="scoring-bench-") as scratch:
        folder = Path(scratch)
        pretrained = args.pretrained
        if pretrained is None:
            if not args.smoke:
                sys.exit("--pretrained DIR is needed (or --smoke, which makes a random GPT-2)")
            pretrained = bpe_gpt2(sentences[:400], folder / "gpt2", layers=1, width=32, heads=2)
        rows, scored = [], {}
        # untimed: the first call of a process imports transformers and the model's classes, for both tools
        structbench_scores(pretrained, pairs[:8], batch_sizes[0])
        bare_scores(pretrained, sentences[:16], batch_sizes[0])
        for batch_size in batch_sizes:
            for tool, score in (
                ("structbench", lambda b=batch_size: structbench_scores(pretrained, pairs, b)),
                ("structbench, whole", lambda b=batch_size: structbench_scores(pretrained, pairs, b, share=False)),
                ("bare loop", lambda b=batch_size: bare_scores(pretrained, sentences, b)),
            ):
                seconds, scored[tool] = best_time(score, args.repeats)
                rows.append([tool, batch_size, seconds])
        lm_eval = None
        if args.lm_eval_python:
            lm_eval = lm_eval_scores(args.lm_eval_python, pretrained, sentences, batch_sizes, args.repeats, folder)
            rows += [[f"lm-eval {lm_eval['version']}", int(b), s] for b, s in lm_eval["seconds"].items()]
            scored["lm-eval"] = lm_eval["logprobs"]
    ours = {batch: seconds for tool, batch, seconds in rows if tool == "structbench"}
    load = os.getloadavg()[0]
    print(
        f"BLiMP, {len(pairs):,} pairs ({args.per_paradigm} per paradigm), {len(sentences):,} sentences; "
        f"torch {torch.__version__}, one thread, best of {args.repeats}; 1-minute load average {load:.1f}"
    )
    print()
    table = [
        [tool, batch, f"{seconds:.2f}", f"{len(pairs) / seconds:,.0f}", f"{seconds / ours[batch]:.2f}"]
        for tool, batch, seconds in rows
    ]
    print(tabulate(table, headers=["tool", "batch", "s", "pairs/s", "time / structbench's"], disable_numparse=True))
    print()
    checks = [
        agreement(tool, values, scored["structbench"]) for tool, values in scored.items() if tool != "structbench"
    ]
    headers = ["against structbench", "largest |Δ log p|", "strict verdicts differ", "argmax verdicts differ"]
    print(tabulate(checks, headers=headers, disable_numparse=True))
    for tool, values in scored.items():
        for line in differing(pairs, values, scored["structbench"])[:10] if tool != "structbench" else []:
            print(f"{tool}, strict verdict differs: {line}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
