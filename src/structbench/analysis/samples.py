"""`structbench samples`: a model's stored predictions beside the examples they answer, one JSON line each.

The store keeps each run's predictions by example id; the examples themselves live in the suite's
frozen splits. A researcher debugging a model wants both side by side, the way
lm-evaluation-harness logs samples: every line holds the suite, model, seed and split, the
example's id, input and gold answer (`target`, `label`, `candidates` and `answer`, or `tags`, as
the protocol has it), the prediction as stored, whether it was right on the primary metric
(`null` where the metric has no per-example verdict) and the example's meta (its conditions).
Runs are those of the label's newest configuration on the suite's newest data, as `compare` reads
them; the suite must be built here with that data, since the store does not hold inputs.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from typing import Any

from structbench.analysis.compare import current_runs
from structbench.analysis.labels import store_option, stored_models
from structbench.data import freeze
from structbench.errors import UserError
from structbench.store import StoreReader
from structbench.suite import Suite

GOLD_FIELDS = ("target", "label", "candidates", "answer", "tags")


def samples(
    store: StoreReader,
    suite: Suite,
    label: str,
    *,
    seeds: Sequence[int] | None = None,
    split: str | None = None,
    wrong_only: bool = False,
) -> Iterator[dict[str, Any]]:
    """Every stored prediction of `label` on `suite` (optionally of some seeds, one split, only the wrong ones)."""
    spec = suite.spec
    tests = [s.name for s in spec.splits_with_role("test")]
    if split is not None and split not in tests:
        raise UserError(f"{spec.key} has no test split {split!r}; its test splits are {', '.join(tests)}.")
    runs = current_runs(store, suite, label)
    if not runs:  # stored, but no seed finished: say so, rather than print nothing and exit 0
        statuses = {seed: status for m in stored_models(store, spec.key, label) for seed, status in m.status.items()}
        shown = ", ".join(f"seed {seed} {status}" for seed, status in sorted(statuses.items()))
        raise UserError(
            f"{label} has no finished run on {spec.key} to show ({shown}); "
            f"`structbench runs --suite {spec.key} --model '{label}'{store_option(store.path)}` lists its runs."
        )
    missing = sorted(set(seeds or []) - set(runs))
    if missing:
        held = ", ".join(map(str, sorted(runs))) or "none"
        raise UserError(f"{label} has no finished run on {spec.key} for seed {missing[0]} (finished seeds: {held}).")
    for seed in sorted(seeds or runs):
        run_id, suite_hash, draw = runs[seed]
        manifest = freeze.built_manifest(suite, suite_hash)
        if manifest is None:
            raise UserError(
                f"the runs of {label} are on {spec.key} data {suite_hash[:12]}, which is not built here; "
                f"run `structbench build {spec.id}` (its inputs are not in the store)."
            )
        stored = store.stored_predictions(run_id)
        for name in [split] if split else tests:
            if name not in stored:
                continue
            ids, predictions, verdicts = stored[name]
            examples = {e.id: e for e in freeze.load_split(suite, manifest, draw, name).examples}
            for example_id, prediction, correct in zip(ids, predictions, verdicts, strict=True):
                if wrong_only and correct is not False:
                    continue
                example = examples.get(example_id)
                line: dict[str, Any] = {
                    "suite": spec.key, "model": label, "seed": seed, "split": name, "id": example_id,
                    "input": None if example is None else example.input,
                }  # fmt: skip
                if example is not None:
                    line.update(
                        {key: getattr(example, key) for key in GOLD_FIELDS if getattr(example, key) is not None}
                    )
                line.update(
                    {"prediction": prediction, "correct": correct, "meta": None if example is None else example.meta}
                )
                yield line
