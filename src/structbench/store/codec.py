"""How values are encoded in the store's columns: predictions blocks, configuration hashes, environment JSON.

A split's predictions are one zlib-compressed JSON block of columns (`[[ids], [predictions],
[correct]]`), which takes about a tenth of the bytes of one row per example. A run's
`environment` JSON carries the model's optional reports ("compute", "statistics", "convergence"), read back
here without ever raising, since a report reads old and damaged rows too.
"""

from __future__ import annotations

import hashlib
import json
import zlib
from collections.abc import Mapping, Sequence
from typing import Any

from structbench.convergence import Convergence, checked_convergence
from structbench.protocols import checked_compute, checked_statistics
from structbench.scoring import SplitScores
from structbench.store.untrusted import Refused, inflate, parse_json

JSON = json.JSONEncoder(separators=(",", ":"), ensure_ascii=False)
"""The compact encoder of predictions blocks and of a prediction shown as JSON text."""

SplitResult = tuple[SplitScores, Sequence[str], Sequence[Any]]
"""What the runner stores per split: scores, example ids and predictions, in split order."""


def config_hash(configuration: Mapping[str, Any] | None) -> str | None:
    """SHA-256 of the canonical JSON of a model's resolved configuration; None without one."""
    if configuration is None:
        return None
    text = json.dumps(configuration, sort_keys=True, separators=(",", ":"), default=str)
    return hashlib.sha256(text.encode()).hexdigest()


def spec_model_name(model_spec: object) -> str | None:
    """The registered model `name` a run's stored model spec (JSON text) gives; None where the text is
    not a JSON object with a string `name` (never raises: readers meet old and damaged rows too)."""
    try:
        name = json.loads(model_spec).get("name") if isinstance(model_spec, str) else None
    except (ValueError, AttributeError, RecursionError):
        return None
    return name if isinstance(name, str) else None


def _environment_entry(environment_json: str, key: str) -> object:
    """`key` of a run's `environment` JSON; {} where it is absent or the text is not a JSON object
    (never raises: a report reads every row, old and damaged ones too)."""
    try:
        environment = json.loads(environment_json)
    except (TypeError, ValueError, RecursionError):
        return {}
    return environment.get(key, {}) if isinstance(environment, dict) else {}


def run_compute(environment_json: str) -> dict[str, int | str]:
    """The compute a run's model reported (`parameters`, `device`), read from its `environment` JSON;
    {} for a run without one (stored before compute was recorded, or by a model that reports none)."""
    return checked_compute(_environment_entry(environment_json, "compute"))[0]


def run_statistics(environment_json: str) -> dict[str, float]:
    """The statistics a run's model reported (e.g. `dev_perplexity`), read from its `environment`
    JSON; {} for a run without them."""
    return checked_statistics(_environment_entry(environment_json, "statistics"))[0]


def run_convergence(environment_json: str) -> Convergence | None:
    """Whether a run's training reached its recipe's criterion, read from its `environment` JSON;
    None for a run without a report (a model with no criterion, or one stored before they were kept)."""
    return checked_convergence(_environment_entry(environment_json, "convergence"))[0]


def with_entries(environment_json: str, entries: Mapping[str, Mapping[str, Any]]) -> str:
    """`environment_json` with `entries` merged in (e.g. "compute", "statistics"); a text that is
    not a JSON object is kept whole under "unparsed" rather than lost."""
    try:
        environment = json.loads(environment_json)
    except (TypeError, ValueError, RecursionError):
        environment = None
    if not isinstance(environment, dict):
        environment = {"unparsed": environment_json}
    environment.update({key: dict(value) for key, value in entries.items()})
    return json.dumps(environment, sort_keys=True)


LEVEL = 3
"""zlib's compression level of a predictions block: 2.3 times as fast as its default (6) on the reference
runs' predictions, for 20% more bytes (47 MB of JSON: 4.4 MB in 0.27 s against 3.7 MB in 0.61 s); writing
the predictions was a fifth of the harness's time per example of a fast model. Any level reads back alike."""


def pack_predictions(ids: Sequence[str], predictions: Sequence[Any], correct: Sequence[bool | None]) -> bytes:
    """One split's predictions as a compressed block (columns, not rows: ids and verdicts compress well)."""
    verdicts = [None if ok is None else int(ok) for ok in correct]
    return zlib.compress(JSON.encode([list(ids), list(predictions), verdicts]).encode(), LEVEL)


BLOCK_LIMIT = 256 << 20
"""The most bytes one split's predictions block may inflate to (a 10,000-example split of long outputs: a few MB)."""


class DamagedBlock(ValueError):
    """A predictions block that is not what `pack_predictions` writes (a damaged or hand-edited store)."""


def unpack_predictions(block: bytes) -> tuple[list[str], list[Any], list[bool | None]]:
    """(example ids, predictions, per-example correct) of a block written by `pack_predictions`;
    anything else (not zlib, not JSON, not three columns of one length) raises `DamagedBlock`. A store
    is input too: the block is inflated up to `BLOCK_LIMIT` bytes and its nesting bounded before it is
    parsed (`structbench.store.untrusted`)."""
    try:
        columns = parse_json(inflate(bytes(block), BLOCK_LIMIT, gzip=False))
    except Refused as error:
        raise DamagedBlock(f"not a compressed JSON block: {' '.join(str(error).split())[:100]}") from None
    except TypeError as error:  # not bytes at all
        raise DamagedBlock(f"not a compressed JSON block: {error}") from None
    if not (isinstance(columns, list) and len(columns) == 3 and all(isinstance(c, list) for c in columns)):
        raise DamagedBlock("not three columns of ids, predictions and verdicts")
    ids, predictions, verdicts = columns
    if not len(ids) == len(predictions) == len(verdicts):
        raise DamagedBlock(f"{len(ids)} ids, {len(predictions)} predictions and {len(verdicts)} verdicts")
    if not all(isinstance(example_id, str) for example_id in ids):
        raise DamagedBlock("an example id that is not text")
    if not all(ok is None or (isinstance(ok, int) and ok in (0, 1)) for ok in verdicts):
        raise DamagedBlock("a verdict that is not 1, 0 or null")
    return ids, predictions, [None if ok is None else bool(ok) for ok in verdicts]
