"""Wall time to each task family's convergence criterion on one thread, beside the old cpu-small budget.

For every family (a reference model on a suite that a claim or reference row uses) and seed, in
one run and one process per fit (fresh home, so no checkpoint is reused):

- `criterion`: the recipe's `cpu-small` budget as shipped, which stops once the recipe's criterion
  holds: whether it was reached, the training seconds and epochs to it (`convergence()`);
- `old budget`: the same recipe with the schedule the cpu-small budget had before criteria existed
  (`OLD`: no criterion, its old epochs and stopping), on today's code; the seconds it trained, and
  whether and when its own evaluations met today's criterion (judged after the fact).

Medians over the seeds that reached it; the fit is `model.fit` on one torch thread (data built
before, not timed). Dev splits only: no test split is read.

`--set KEY=VALUE` tries another schedule in place of cpu-small's (batch size, learning rate, width:
a budget chosen on dev, as the project's are) and `--threads N` fits on N torch threads (a count
other than 1 is part of a run's key); with `--set`, the old budget is not fitted.

    STRUCTBENCH_SOURCE_DIR=/path/to/data python bench/time_to_criterion.py [--families scan,lookup-ag] [--seeds 0,1,2]
        [--set batch_size=64 --set lr=0.004] [--threads 2]
    python bench/time_to_criterion.py --smoke     # miniscan's plain LSTM, one seed, in seconds
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from typing import Any

FIT = r"""
import json, os, sys, time
import torch
torch.set_num_threads(int(os.environ["OMP_NUM_THREADS"]))
from structbench import registry
from structbench.baselines.neural.fit import Evaluation, judged
from structbench.convergence import Criterion
from structbench.data import freeze
suite_id, model, params, seed, rule = sys.argv[1], sys.argv[2], json.loads(sys.argv[3]), int(sys.argv[4]), sys.argv[5]
suite = registry.suite(suite_id)
manifest = freeze.ensure_built(suite)
role = {s.role: s.name for s in suite.spec.splits}
train = freeze.load_split(suite, manifest, 0, role["train"])
dev = freeze.load_split(suite, manifest, 0, role["dev"]) if "dev" in role else None
built = registry.model_factory(model)(**params)
built.log = lambda message: None
started = time.perf_counter()
built.fit(train, dev, seed=seed)
seconds = time.perf_counter() - started
evaluations = [
    Evaluation(e["epoch"], {k: v for k, v in e.items() if k not in ("epoch", "seconds", "updates")}, e["seconds"], e.get("updates"))
    for e in built.history.get("evaluations", [])
]
after = judged(Criterion.model_validate_json(rule), evaluations) if evaluations else None
print(json.dumps({"seconds": seconds, "convergence": after.model_dump(mode="json") if after else None}))
"""


@dataclass(frozen=True)
class Family:
    name: str
    suite: str
    model: str
    old: dict[str, Any] | None
    """Overrides that give the cpu-small schedule from before criteria (no criterion, its old epochs);
    None where that schedule already stopped at today's criterion (SCAN's `stop_at` 0.99)."""
    params: dict[str, Any] = field(default_factory=dict)
    """The model's own settings beyond the recipe (a variant a claim names)."""


FAMILIES = [
    Family("scan", "scan-simple", "seq2seq-gru-attn", {"criterion": {"statistic": "dev_accuracy", "at_least": 0.99}}),
    Family(
        "scan-seq2attn",
        "scan-filler-0",
        "seq2attn",
        {"criterion": {"statistic": "dev_accuracy", "at_least": 0.99}, "epochs": 10},
    ),
    Family("lookup-ag", "lookup-tables-mt", "attentive-guidance", {"criterion": None, "patience": 10}),
    Family("lookup-seq2attn", "lookup-tables-mt", "seq2attn", {"criterion": None, "patience": 10}),
    Family("lookup-baseline", "lookup-tables-mt", "seq2seq-gru-attn", {"criterion": None, "patience": 10}),
    Family("question-formation", "question-formation", "seq2seq-gru-attn", {"criterion": None, "epochs": 2}),
    Family("miniscan-lla", "miniscan", "lla-lstm", {"criterion": None, "epochs": 150}),
    Family("miniscan-lstm", "miniscan", "lstm-thrush", {"criterion": None, "epochs": 150}),
    Family("logic-lstm", "logic-bowman-le6", "lstm-logic", {"criterion": None, "epochs": 3}),
    Family("logic-fan", "logic-bowman-le6", "fan-logic", {"criterion": None, "epochs": 3}),
    Family("logic-bow-mean", "logic-bowman-le12", "bow-logic", {"criterion": None, "epochs": 5}, {"pooling": "mean"}),
    Family("number-lstm", "agreement-attractors-number", "lstm-number", {"criterion": None, "epochs": 5}),
    Family("number-fan", "agreement-attractors-number", "fan-number", {"criterion": None, "epochs": 5}),
    Family("lm-lstm", "agreement-attractors", "lstm-lm", {"criterion": None, "epochs": 6}),
    Family("lm-fan", "agreement-attractors", "fan-lm", {"criterion": None, "epochs": 6}),
    Family(
        "nhmm",
        "pos-ud-ewt-xpos",
        "nhmm",
        {"criterion": None, "epochs": 1},
        {"emission": "linear", "transition": "matrix"},
    ),
    Family("dsr", "dsr", "lstm-g", {"criterion": None}),
    Family("grounded", "grounded-weak", "lstm-g", {"criterion": None}),
]
SMOKE = Family("miniscan-lstm", "miniscan", "lstm-thrush", {"criterion": None, "epochs": 20}, {"epochs": 20})


def rule_of(family: Family) -> str:
    """The family's criterion as its recipe states it (JSON)."""
    from structbench.baselines.neural.settings import load_recipe, task_of

    recipe = load_recipe(family.model.partition("[")[0], task_of(family.suite))[1]
    criterion = recipe.criterion
    if criterion is None:  # LSTM-g keeps Monner's criterion in its own settings
        budget = recipe.budgets["cpu-small"]
        return json.dumps({"statistic": "dev_strict_accuracy", "at_least": budget.get("criterion", 0.95)})
    return criterion.model_dump_json()


def fit(family: Family, params: dict[str, Any], seed: int, home: str, threads: int = 1) -> dict[str, Any]:
    """One fit in a fresh process (so that no state carries from one to the next)."""
    environment = {**os.environ, "STRUCTBENCH_HOME": home, "OMP_NUM_THREADS": str(threads)}
    arguments = [family.suite, family.model, json.dumps(params), str(seed), rule_of(family)]
    done = subprocess.run(
        [sys.executable, "-c", FIT, *arguments], env=environment, capture_output=True, text=True, check=False
    )
    if done.returncode:
        raise SystemExit(f"{family.name} seed {seed} failed:\n{done.stderr[-2000:]}")
    result: dict[str, Any] = json.loads(done.stdout.strip().splitlines()[-1])
    return result


def shown(results: list[dict[str, Any]]) -> str:
    """`reached n/N, median T s (E epochs)` over the seeds."""
    reached = [r["convergence"] for r in results if r["convergence"] and r["convergence"]["reached"]]
    if not reached:
        best = [v for r in results if r["convergence"] and (v := r["convergence"]["value"]) is not None]
        return f"0/{len(results)} " + (f"(best {', '.join(f'{b:.3g}' for b in best)})" if best else "(not measured)")
    seconds = statistics.median(r["seconds"] for r in reached)  # training seconds to the evaluation that met it
    epochs = statistics.median(r["epochs"] for r in reached)
    return f"{len(reached)}/{len(results)}, {seconds:.0f} s ({epochs:g} epochs)"


def setting(text: str) -> tuple[str, Any]:
    """`KEY=VALUE` of `--set`: the value read as JSON where it is JSON, else kept as a string."""
    key, sep, value = text.partition("=")
    if not sep or not key:
        raise SystemExit(f"--set {text!r}: write KEY=VALUE, for example --set batch_size=64")
    try:
        return key, json.loads(value)
    except json.JSONDecodeError:
        return key, value


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--families", default=",".join(f.name for f in FAMILIES), help="comma-separated names")
    parser.add_argument("--seeds", default="0,1,2", help="comma-separated seeds")
    parser.add_argument("--smoke", action="store_true", help="one small family, one seed")
    parser.add_argument("--threads", type=int, default=1, help="torch threads per fit (default 1)")
    parser.add_argument(
        "--set",
        action="append",
        default=[],
        metavar="KEY=VALUE",
        help="a recipe setting to try instead of cpu-small's (VALUE in JSON, else a string); repeatable; "
        "skips the old budget's fits",
    )
    args = parser.parse_args()
    overrides = dict(setting(text) for text in args.set)
    chosen = [SMOKE] if args.smoke else [f for f in FAMILIES if f.name in args.families.split(",")]
    seeds = [0] if args.smoke else [int(s) for s in args.seeds.split(",")]
    if overrides or args.threads != 1:
        print(f"cpu-small with {json.dumps(overrides)}, {args.threads} torch thread(s) per fit", flush=True)
    print(f"{'family':<20}{'suite x model':<48}{'criterion':<36}{'cpu-small: reached, median to it':<36}"
          f"{'old budget: fit s':<20}{'old budget: reached, median to it'}", flush=True)  # fmt: skip
    with tempfile.TemporaryDirectory() as home:
        for family in chosen:
            started = time.perf_counter()
            new = [fit(family, {**family.params, **overrides}, seed, home, args.threads) for seed in seeds]
            rule = json.loads(rule_of(family))
            stated = next(f"{k} {v:g}" for k, v in rule.items() if k in ("at_least", "at_most", "plateau"))
            if overrides:
                before = f"{'-':<20}not run (--set)"
            elif family.old is None:
                before = f"{'-':<20}the same schedule"
            else:
                old = [fit(family, {**family.params, **family.old}, seed, home, args.threads) for seed in seeds]
                before = f"{statistics.median(r['seconds'] for r in old):<20.0f}{shown(old)}"
            print(
                f"{family.name:<20}{family.suite + ' x ' + family.model:<48}{rule['statistic'] + ' ' + stated:<36}"
                f"{shown(new):<36}{before}",
                flush=True,
            )
            print(f"  ({time.perf_counter() - started:.0f} s for this family)", file=sys.stderr, flush=True)


if __name__ == "__main__":
    main()
