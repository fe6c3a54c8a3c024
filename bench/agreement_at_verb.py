"""Agreement at the verb: what scoring p(verb | prefix) instead of whole sentences changes, and what it costs.

Part 1, per model: accuracy per test split of `agreement-attractors@1.0.0` as released (whole
sentences, `logprob`), of the same 1.0.0 items scored at the verb (`loglikelihood` of each verb
form after the prefix), and of `agreement-attractors@2.0.0` (its own items, at the verb, the model
trained on its own train split); and the share of 1.0.0 items whose decision (correct form more
probable) changes between the two scorings. Models: `ngram` (order 4), `lstm-lm` (its cpu-small
recipe, `--lm-epochs` epochs at most) and `hf` on a random GPT-2 (6 layers, 256 wide, a word-level
tokenizer over the suites' words; random weights, so its decisions are no model's knowledge, only
the scoring's effect).

Part 2, side by side in one run: minimal pairs per second of that GPT-2 on one thread, over the six
test splits (3,000 pairs), asked as 1.0.0 asks (two whole sentences per pair) and as 2.0.0 asks
(the prefix once, both verb forms read off its last position).

    STRUCTBENCH_SOURCE_DIR=/path/to/data python bench/agreement_at_verb.py [--lm-epochs 5] [--repeats 3] [--smoke]
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

os.environ.setdefault("OMP_NUM_THREADS", "1")

import torch

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from structbench import registry  # noqa: E402
from structbench.adapters.hf.causal import HfCausalLm  # noqa: E402
from structbench.baselines.classical.ngram import KneserNey  # noqa: E402
from structbench.baselines.neural.lm.model import LstmLanguageModel  # noqa: E402
from structbench.data import freeze  # noqa: E402
from structbench.specs import Example, Split  # noqa: E402
from structbench.suites.agreement.attractors import TEST_SPLITS  # noqa: E402
from tests.support.hf_models import suite_words, tiny_gpt2  # noqa: E402

OLD, NEW = "agreement-attractors@1.0.0", "agreement-attractors@2.0.0"


def splits(key: str) -> dict[str, Split]:
    suite = registry.suite(key)
    manifest = freeze.ensure_built(suite)
    return {s.name: freeze.load_split(suite, manifest, 0, s.name) for s in suite.spec.splits}


def whole(model: Any, examples: list[Example]) -> list[bool]:
    scores = model.logprob([c for e in examples for c in e.candidates or []])
    return [scores[2 * i] > scores[2 * i + 1] for i in range(len(examples))]


def at_verb(model: Any, examples: list[Example], continued: bool) -> list[bool]:
    """Decisions by p(verb | prefix): 2.0.0 items as they are, 1.0.0 items cut at the verb."""
    requests = [
        (e.input, c if continued else c[len(e.input) : len(e.input) + 1]) for e in examples for c in e.candidates or []
    ]
    scores = model.loglikelihood(requests)
    return [scores[2 * i] > scores[2 * i + 1] for i in range(len(examples))]


def gpt2(folder: Path, words: list[str], layers: int = 6, width: int = 256) -> HfCausalLm:
    tiny_gpt2(words, folder, layers=layers, width=width, heads=4)
    return HfCausalLm(pretrained=str(folder), threads=1, batch_size=64)


def compare(name: str, old_model: Any, new_model: Any, old: dict[str, Split], new: dict[str, Split]) -> None:
    print(f"\n{name}: accuracy per split (%), and 1.0.0 items whose decision changes when scored at the verb")
    print(f"{'split':<14}{'1.0.0 whole':>12}{'1.0.0 at verb':>15}{'2.0.0':>8}{'changed':>9}")
    changed_total = items_total = 0
    for split in TEST_SPLITS:
        items = old[split].examples
        before, after = whole(old_model, items), at_verb(old_model, items, continued=False)
        now = at_verb(new_model, new[split].examples, continued=True)
        changed = sum(b != a for b, a in zip(before, after, strict=True))
        changed_total, items_total = changed_total + changed, items_total + len(items)
        row = (100 * sum(before) / len(items), 100 * sum(after) / len(items), 100 * sum(now) / len(now))
        print(f"{split:<14}{row[0]:>12.1f}{row[1]:>15.1f}{row[2]:>8.1f}{100 * changed / len(items):>8.1f}%")
    print(f"{'all':<14}{'':>35}{100 * changed_total / items_total:>8.1f}%")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--lm-epochs", type=int, default=5)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument(
        "--smoke", action="store_true", help="ngram and a 2 x 64 GPT-2 on 50 pairs per split, timed once"
    )
    args = parser.parse_args()
    if args.smoke:
        args.repeats = 1
    torch.set_num_threads(1)
    old, new = splits(OLD), splits(NEW)
    if args.smoke:
        old = {k: v.model_copy(update={"examples": v.examples[:50]}) if k in TEST_SPLITS else v for k, v in old.items()}
        new = {k: v.model_copy(update={"examples": v.examples[:50]}) if k in TEST_SPLITS else v for k, v in new.items()}

    def fitted(model: Any, data: dict[str, Split]) -> Any:
        model.fit(data["train"], data["dev"], seed=0)
        return model

    compare("ngram (order 4)", fitted(KneserNey(), old), fitted(KneserNey(), new), old, new)
    if not args.smoke:
        lm_old = fitted(LstmLanguageModel(epochs=args.lm_epochs), old)
        lm_new = fitted(LstmLanguageModel(epochs=args.lm_epochs), new)
        compare(f"lstm-lm (cpu-small, at most {args.lm_epochs} epochs)", lm_old, lm_new, old, new)
    with tempfile.TemporaryDirectory() as folder:
        layers, width = (2, 64) if args.smoke else (6, 256)
        words = [*suite_words(["agreement-attractors@1.0.0", "agreement-attractors"])]
        model = gpt2(Path(folder), words, layers, width)
        compare(f"hf (random GPT-2, {layers} x {width})", model, model, old, new)
        old_items = [e for s in TEST_SPLITS for e in old[s].examples]
        new_items = [e for s in TEST_SPLITS for e in new[s].examples]
        times: dict[str, list[float]] = {"1.0.0 (whole sentences)": [], "2.0.0 (prefix once, at the verb)": []}
        for _ in range(args.repeats):
            for label, ask in (
                ("1.0.0 (whole sentences)", lambda: whole(model, old_items)),
                ("2.0.0 (prefix once, at the verb)", lambda: at_verb(model, new_items, continued=True)),
            ):
                started = time.perf_counter()
                ask()
                times[label].append(time.perf_counter() - started)
        print(f"\nhf pairs per second, one thread, best of {args.repeats}, {len(old_items)} pairs each:")
        rates = {label: len(old_items) / min(seconds) for label, seconds in times.items()}
        for label, rate in rates.items():
            print(f"  {label:<34}{rate:>9.1f}")
        first, second = rates.values()
        print(f"  ratio 2.0.0 / 1.0.0: {second / first:.2f}x")


if __name__ == "__main__":
    main()
