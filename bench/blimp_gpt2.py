"""BLiMP on a small GPT-2 trained here: `structbench run --suite blimp --model hf` end to end, its wall time and
what it measured per paradigm and phenomenon.

Part 1 makes the checkpoint: a byte-level BPE tokenizer (`--vocab` tokens, `tests/support/hf_models.py`'s
`bpe_tokenizer`, GPT-2's `<|endoftext|>` as BOS and EOS) and a GPT-2 (`--layers` layers, `--width` wide, 4
heads, 128 positions; defaults 1,000, 2 and 64) trained from scratch for `--seconds` on one CPU thread, on the
sentences of the UD English EWT dev and test files (`ud_english_ewt/en_ewt-ud-{dev,test}.conllu` under
STRUCTBENCH_SOURCE_DIR, their `# text =` lines: no BLiMP sentence), each read as BLiMP is scored,
`<|endoftext|>` + " " + sentence, then `<|endoftext|>`, cut at 64 tokens; AdamW at 1e-3, batches of 32 sentences
of similar length in a seeded order. It is saved with `save_pretrained`.

Part 2 runs, on one thread, in a fresh store:

    python -m structbench.cli run --suite blimp --model hf --set pretrained=DIR --set batch_size=64 --json

and prints its wall time (the suite already built), the suite score (`accuracy`, the strict rule, and
`accuracy_lm_eval`, lm-evaluation-harness's), the mean per phenomenon (each paradigm's with `--per-paradigm`),
and the best and worst paradigms.

    STRUCTBENCH_SOURCE_DIR=/path/to/data python bench/blimp_gpt2.py [--seconds 180] [--out DIR] [--per-paradigm] [--smoke]
"""

from __future__ import annotations

import argparse
import json
import math
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from statistics import mean
from typing import Any

os.environ.setdefault("OMP_NUM_THREADS", "1")
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import torch

from structbench import registry
from structbench.data import freeze
from structbench.suites.blimp import PARADIGMS
from tests.support.hf_models import bpe_tokenizer


def ud_sentences(source: Path) -> list[str]:
    """The `# text =` lines of the UD English EWT dev and test files."""
    sentences = []
    for name in ("en_ewt-ud-dev.conllu", "en_ewt-ud-test.conllu"):
        for line in (source / "ud_english_ewt" / name).read_text(encoding="utf-8").splitlines():
            if line.startswith("# text = "):
                sentences.append(" ".join(line.removeprefix("# text = ").split()))
    return sentences


def train(
    sentences: list[str], out: Path, *, seconds: float, vocab: int, layers: int, width: int, seed: int
) -> dict[str, Any]:
    """Train the tokenizer and the GPT-2 for `seconds` of steps; save both in `out`; the training's figures."""
    from transformers import GPT2Config, GPT2LMHeadModel

    torch.set_num_threads(1)
    tokenizer = bpe_tokenizer(sentences, vocab_size=vocab)
    special = tokenizer.eos_token_id
    rows = [
        [special, *ids, special]
        for ids in tokenizer([" " + s for s in sentences], add_special_tokens=False)["input_ids"]
    ]
    rows = [row[:64] for row in rows]
    config = GPT2Config(
        vocab_size=len(tokenizer),
        n_positions=128,
        n_embd=width,
        n_layer=layers,
        n_head=4,
        bos_token_id=special,
        eos_token_id=special,
    )
    torch.manual_seed(seed)
    model = GPT2LMHeadModel(config)
    optimiser = torch.optim.AdamW(model.parameters(), lr=1e-3)
    generator = torch.Generator().manual_seed(seed)
    model.train()
    steps, tokens, losses = 0, 0, []
    started = time.perf_counter()
    by_length = sorted(range(len(rows)), key=lambda i: len(rows[i]))
    batches = [by_length[start : start + 32] for start in range(0, len(rows), 32)]  # little padding in each
    while time.perf_counter() - started < seconds:
        for index in torch.randperm(len(batches), generator=generator).tolist():
            batch = [rows[i] for i in batches[index]]
            width_now = max(len(row) for row in batch)
            ids = torch.full((len(batch), width_now), special)
            labels = torch.full((len(batch), width_now), -100)
            mask = torch.zeros((len(batch), width_now), dtype=torch.long)
            for i, row in enumerate(batch):
                ids[i, : len(row)] = torch.tensor(row)
                labels[i, : len(row)] = torch.tensor(row)
                mask[i, : len(row)] = 1
            loss = model(input_ids=ids, attention_mask=mask, labels=labels).loss
            optimiser.zero_grad()
            loss.backward()
            optimiser.step()
            steps += 1
            tokens += int(mask.sum())
            losses.append(float(loss.detach()))
            if time.perf_counter() - started >= seconds:
                break
    model.eval()
    model.save_pretrained(out)
    tokenizer.save_pretrained(out)
    recent = losses[-50:]
    return {
        "parameters": sum(p.numel() for p in model.parameters()),
        "steps": steps,
        "tokens": tokens,
        "seconds": time.perf_counter() - started,
        "loss": mean(recent),
        "perplexity": math.exp(mean(recent)),
        "sentences": len(rows),
    }


def run_blimp(checkpoint: Path, store: Path, limit: int | None) -> tuple[float, dict[str, Any]]:
    """`structbench run --suite blimp --model hf` on the checkpoint: its wall time and its JSON record."""
    command = [
        sys.executable,
        "-m",
        "structbench.cli",
        "run",
        "--suite",
        "blimp",
        "--model",
        "hf",
        "--set",
        f"pretrained={checkpoint}",
        "--set",
        "batch_size=64",
        "--store",
        str(store),
        "--json",
        "--no-progress",
    ]
    if limit is not None:
        command += ["--limit", str(limit)]
    print("$ " + " ".join(command[1:]).replace(str(checkpoint), "CHECKPOINT").replace(str(store), "STORE"))
    started = time.perf_counter()
    done = subprocess.run(command, capture_output=True, text=True, check=False)
    wall = time.perf_counter() - started
    if done.returncode != 0:
        sys.exit(f"structbench run failed ({done.returncode}):\n{done.stderr[-3000:]}")
    return wall, json.loads(done.stdout)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--seconds", type=float, default=180.0, help="training time (default 180)")
    parser.add_argument("--vocab", type=int, default=1000)
    parser.add_argument("--layers", type=int, default=2)
    parser.add_argument("--width", type=int, default=64)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--out", type=Path, help="where to save the checkpoint (default: a temporary folder)")
    parser.add_argument("--per-paradigm", action="store_true", help="also print each paradigm's two accuracies")
    parser.add_argument("--smoke", action="store_true", help="2 s of a 1-layer model, 10 pairs per paradigm")
    args = parser.parse_args()
    if args.smoke:
        args.seconds, args.vocab, args.layers, args.width = 2.0, 400, 1, 32
    source = Path(os.environ["STRUCTBENCH_SOURCE_DIR"])
    freeze.ensure_built(registry.suite("blimp"))
    with tempfile.TemporaryDirectory() as scratch:
        out = args.out or Path(scratch) / "gpt2-ud-ewt"
        figures = train(
            ud_sentences(source),
            out,
            seconds=args.seconds,
            vocab=args.vocab,
            layers=args.layers,
            width=args.width,
            seed=args.seed,
        )
        print(
            f"checkpoint: GPT-2, {args.layers} layers x {args.width}, {figures['parameters']:,} parameters, BPE "
            f"{args.vocab}; trained {figures['seconds']:.0f} s on one thread: {figures['steps']} steps, "
            f"{figures['tokens']:,} tokens of {figures['sentences']:,} UD EWT sentences; last 50 steps' "
            f"training perplexity {figures['perplexity']:.1f}"
        )
        wall, record = run_blimp(out, Path(scratch) / "results.sqlite", 10 if args.smoke else None)
    scores = record["scores"]
    strict = {uid: scores[uid]["accuracy"]["mean"] for uid in scores}
    lm_eval = {uid: scores[uid]["accuracy_lm_eval"]["mean"] for uid in scores}
    print(f"wall time of the run: {wall:.1f} s ({len(scores)} paradigms)")
    print(f"{'':<28}{'accuracy':>12}{'accuracy_lm_eval':>20}")
    print(f"{'suite score (mean of 67)':<28}{100 * mean(strict.values()):>12.1f}{100 * mean(lm_eval.values()):>20.1f}")
    for phenomenon, uids in PARADIGMS.items():
        print(
            f"{'  ' + phenomenon:<28}{100 * mean(strict[u] for u in uids):>12.1f}"
            f"{100 * mean(lm_eval[u] for u in uids):>20.1f}"
        )
    if args.per_paradigm:
        for uids in PARADIGMS.values():
            for uid in uids:
                print(f"{'    ' + uid:<56}{100 * strict[uid]:>8.1f}{100 * lm_eval[uid]:>8.1f}")
    ranked = sorted(strict, key=lambda uid: strict[uid])
    print("worst paradigms: " + ", ".join(f"{uid} {100 * strict[uid]:.1f}" for uid in ranked[:3]))
    print("best paradigms: " + ", ".join(f"{uid} {100 * strict[uid]:.1f}" for uid in ranked[-3:][::-1]))
    ties = sum(lm_eval[uid] - strict[uid] for uid in strict) * (10 if args.smoke else 1000)
    print(f"tied pairs (accuracy_lm_eval - accuracy): {round(ties)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
