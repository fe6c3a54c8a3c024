"""Scoring a stored run again from its stored predictions, without the model.

A changed or added metric, or a doubt about a stored number, needs only the store and the
frozen data: the predictions of every test split are read back from the run's blocks, the
split is loaded from the suite's frozen data (checked against its manifest) and scored by the
suite's own scorer, exactly as the runner scored it.
"""

from __future__ import annotations

from collections.abc import Collection

from structbench.data import freeze
from structbench.errors import UserError
from structbench.scoring import SplitScores
from structbench.store import StoreReader
from structbench.suite import Suite


def rescore(
    store: StoreReader, run_id: int, suite: Suite, splits: Collection[str] | None = None
) -> dict[str, SplitScores]:
    """split -> scores recomputed from run `run_id`'s stored predictions on `suite`'s frozen data: of
    every split the run stored, or of those among `splits`.

    Refuses (one sentence each) a run of another suite or version, data that differs from the
    data the run was evaluated on, and stored example ids that are not the split's."""
    run = store.run_record(run_id)
    spec = suite.spec
    if (run["suite"], run["version"]) != (spec.id, spec.version):
        raise UserError(f"run {run_id} evaluated {run['suite']}@{run['version']}, not {spec.key}; pass that suite.")
    manifest = freeze.expected_manifest(suite)
    if manifest is None:
        raise UserError(f"{spec.key} is not built; run `structbench build {spec.id}` first.")
    if manifest.suite_hash != run["suite_hash"]:
        raise UserError(
            f"run {run_id} was evaluated on other {spec.key} data ({run['suite_hash'][:12]}) than is built "
            f"here ({manifest.suite_hash[:12]}); its predictions cannot be scored against this data."
        )
    out: dict[str, SplitScores] = {}
    for name, (ids, predictions, _) in store.stored_predictions(run_id, splits).items():
        split = freeze.load_split(suite, manifest, int(run["draw"]), name)
        if [example.id for example in split.examples] != ids:
            raise UserError(f"run {run_id} stored other examples for split {name} than {spec.key} holds.")
        out[name] = suite.score(split, predictions)
    return out
