"""The reference bundle: finished runs as versioned text files, and read back into a store.

The runs behind the claims and the reference rows ship with structbench, so that a user compares a
model with the literature's reference models without training them again. A store is a binary file
that changes as a whole; the bundle is a folder that git diffs run by run:

- `bundle.json`: `{"format": 1}`, the layout's version (a newer one is refused in one sentence);
- `suites/ID@VERSION-HASH12.json`: the spec of each suite's data the runs were made on, so that a
  report shows them without building it;
- `runs/ID@VERSION/MODEL-HASH12.json`: one model configuration on one suite's data (`HASH12` starts
  its model hash): the run key's fields once, then per seed its row (status, times, commit,
  environment) and its scores, one score per line;
- `predictions/ID@VERSION/MODEL-HASH12/seedN.json.gz`: a run's predictions, `[[split, [ids],
  [predictions], [correct]], ...]`, gzip without a time stamp (the same run gives the same bytes);
  left out for a run whose compressed predictions exceed `PREDICTIONS_LIMIT`.

Every number is written as JSON writes floats, which reads back to the same double: a run read
from the bundle is the run that was stored, bit for bit. `read_into` puts a bundle into a store
(keys the store holds already are left as they are); `reference_store` keeps the installed
bundle read into a SQLite file of the home, made again only when the bundle's bytes change.
"""

from __future__ import annotations

import gzip
import hashlib
import json
import os
import re
import sqlite3
import tempfile
from collections.abc import Iterable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from structbench.errors import UserError
from structbench.paths import reference_bundle_dir, reference_cache_dir
from structbench.specs import SuiteSpec
from structbench.store.codec import pack_predictions, unpack_predictions
from structbench.store.database import Store, StoredRun
from structbench.store.schema import ROW_COLUMNS

FORMAT = 1
"""The bundle layout this code writes and reads."""
PREDICTIONS_LIMIT = 512 * 1024
"""A run's predictions are bundled when they take at most this many bytes compressed (the largest
of today's reference runs, question formation's, take 262 KB)."""
KEY_FIELDS = ("suite", "version", "suite_hash", "model", "model_spec", "model_hash", "config_hash", "comparable")
"""The fields every run of one bundle file shares: its cell."""
SEED_FIELDS = tuple(name for name in ROW_COLUMNS if name not in KEY_FIELDS and name != "owner")
"""The fields of each run of a cell's file."""


def _slug(text: str) -> str:
    return re.sub(r"[^A-Za-z0-9_.-]+", "-", text).strip("-") or "model"


@dataclass(frozen=True)
class BundleCell:
    """The paths of one cell's files in a bundle."""

    runs: Path
    predictions: Path


def cell_paths(folder: Path, row: dict[str, Any]) -> BundleCell:
    """Where the runs of `row`'s cell (a run's columns) live in the bundle at `folder`."""
    model = json.loads(row["model_spec"]).get("name", "model") if isinstance(row["model_spec"], str) else "model"
    stem = f"{_slug(str(model))}-{str(row['model_hash'])[:12]}"
    suite = f"{row['suite']}@{row['version']}"
    return BundleCell(folder / "runs" / suite / f"{stem}.json", folder / "predictions" / suite / stem)


def _cell_text(header: dict[str, Any], runs: list[dict[str, Any]]) -> str:
    """A cell's file: the key's fields, then each run with one score per line (what git diffs well)."""
    lines = ["{"]
    for name, value in header.items():
        lines.append(f"  {json.dumps(name)}: {json.dumps(value, sort_keys=True, ensure_ascii=False)},")
    lines.append('  "runs": [')
    for index, run in enumerate(runs):
        lines.append("    {")
        for name in SEED_FIELDS:
            lines.append(f"      {json.dumps(name)}: {json.dumps(run[name], sort_keys=True, ensure_ascii=False)},")
        lines.append('      "scores": [')
        scores = [f"        {json.dumps(list(score), ensure_ascii=False)}" for score in run["scores"]]
        lines.append(",\n".join(scores))
        lines.append("      ]")
        lines.append("    }" + ("," if index < len(runs) - 1 else ""))
    lines.append("  ]")
    lines.append("}")
    return "\n".join(line for line in lines if line) + "\n"


def _write_atomically(path: Path, data: bytes) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    partial = path.with_name(path.name + ".partial")
    partial.write_bytes(data)
    os.replace(partial, path)


def write_runs(store: Store, run_ids: Iterable[int], folder: Path) -> int:
    """Write the finished runs `run_ids` of `store` into the bundle at `folder` (created), each into its
    cell's file beside the runs that file holds already (a seed's earlier run is replaced). Returns
    how many runs were written."""
    folder.mkdir(parents=True, exist_ok=True)
    _check_format(folder, creating=True)
    by_cell: dict[Path, tuple[dict[str, Any], dict[int, dict[str, Any]]]] = {}
    suites = store.suite_specs()
    written = 0
    for run_id in run_ids:
        stored = store.stored_run(run_id)
        row = stored.row
        if row["status"] != "done":
            continue
        paths = cell_paths(folder, row)
        if paths.runs not in by_cell:
            header = {name: row[name] for name in KEY_FIELDS}
            header["model_spec"] = json.loads(row["model_spec"])
            header["comparable"] = bool(row["comparable"])
            earlier = _read_cell(paths.runs) if paths.runs.is_file() else None
            seeds = {int(run["seed"]): run for run in earlier["runs"]} if earlier else {}
            by_cell[paths.runs] = (header, seeds)
        header, seeds = by_cell[paths.runs]
        run = {name: row[name] for name in SEED_FIELDS}
        run["environment"] = json.loads(row["environment"])
        run["scores"] = [[split, metric, breakdown, level, value, n, bool(proportion)] for split, metric, breakdown,
                         level, value, n, proportion in stored.scores]  # fmt: skip
        seeds[int(row["seed"])] = run
        blocks = [[split, *unpack_predictions(block)] for split, _, block in stored.predictions]
        packed = gzip.compress(json.dumps(blocks, ensure_ascii=False, separators=(",", ":")).encode(), 9, mtime=0)
        target = paths.predictions / f"seed{row['seed']}.json.gz"
        if len(packed) <= PREDICTIONS_LIMIT:
            _write_atomically(target, packed)
        else:
            target.unlink(missing_ok=True)
        written += 1
    for path, (header, seeds) in by_cell.items():
        key = (header["suite"], header["version"], header["suite_hash"])
        if (spec := suites.get(key)) is not None:
            suite_file = folder / "suites" / f"{key[0]}@{key[1]}-{str(key[2])[:12]}.json"
            text = json.dumps({"suite_hash": key[2], "spec": spec.model_dump(mode="json")}, indent=1)
            _write_atomically(suite_file, (text + "\n").encode())
        _write_atomically(path, _cell_text(header, [seeds[seed] for seed in sorted(seeds)]).encode())
    return written


def _check_format(folder: Path, *, creating: bool = False) -> None:
    """Refuse a bundle of a layout this code does not read; write the marker of a new one."""
    marker = folder / "bundle.json"
    if not marker.is_file():
        if creating:
            _write_atomically(marker, (json.dumps({"format": FORMAT}) + "\n").encode())
            return
        raise UserError(f"{folder} is not a reference bundle (it has no bundle.json); pass the bundle's folder.")
    try:
        found = json.loads(marker.read_text(encoding="utf-8")).get("format")
    except (ValueError, AttributeError):
        found = None
    if found != FORMAT:
        raise UserError(
            f"the reference bundle {folder} has layout {found!r}, and this structbench reads layout {FORMAT}; "
            "upgrade structbench (pip install -U structbench), or pass --no-reference."
        )


def _read_cell(path: Path) -> dict[str, Any]:
    try:
        cell = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError) as error:
        raise UserError(f"the reference bundle's file {path} cannot be read ({error}); restore it from git.") from None
    if not isinstance(cell, dict) or not isinstance(cell.get("runs"), list):
        raise UserError(f"the reference bundle's file {path} is not a cell of runs; restore it from git.")
    return cell


def cell_files(folder: Path) -> list[Path]:
    """The run files of the bundle at `folder`, in path order."""
    return sorted((folder / "runs").glob("*/*.json"))


def read_runs(folder: Path) -> Iterator[StoredRun]:
    """Every run of the bundle at `folder`, as a store holds it (predictions where bundled)."""
    _check_format(folder)
    for path in cell_files(folder):
        cell = _read_cell(path)
        try:
            header = {name: cell[name] for name in KEY_FIELDS}
            header["model_spec"] = json.dumps(header["model_spec"], sort_keys=True)
            header["comparable"] = int(bool(header["comparable"]))
            for run in cell["runs"]:
                row = {**header, **{name: run[name] for name in SEED_FIELDS}, "owner": None}
                row["environment"] = json.dumps(run["environment"], sort_keys=True)
                scores = [(s[0], s[1], s[2], s[3], s[4], int(s[5]), int(bool(s[6]))) for s in run["scores"]]
                yield StoredRun(row, scores, _predictions(cell_paths(folder, row).predictions, row["seed"]))
        except (KeyError, IndexError, TypeError, ValueError) as error:
            raise UserError(
                f"the reference bundle's file {path} lacks what a run holds ({type(error).__name__}: {error}); "
                "restore it from git."
            ) from None


def _predictions(folder: Path, seed: int) -> list[tuple[str, int, bytes]]:
    path = folder / f"seed{seed}.json.gz"
    if not path.is_file():
        return []
    try:
        blocks = json.loads(gzip.decompress(path.read_bytes()))
        return [(str(split), len(ids), pack_predictions(ids, predictions, correct))
                for split, ids, predictions, correct in blocks]  # fmt: skip
    except (OSError, EOFError, ValueError, TypeError) as error:
        raise UserError(f"the reference bundle's file {path} is damaged ({error}); restore it from git.") from None


def read_suites(folder: Path) -> list[tuple[SuiteSpec, str]]:
    """(spec, suite hash) of every suite's data the bundle at `folder` has runs on."""
    out = []
    for path in sorted((folder / "suites").glob("*.json")):
        try:
            entry = json.loads(path.read_text(encoding="utf-8"))
            out.append((SuiteSpec.model_validate(entry["spec"]), str(entry["suite_hash"])))
        except (OSError, ValueError, KeyError, TypeError) as error:
            raise UserError(
                f"the reference bundle's file {path} cannot be read ({error}); restore it from git."
            ) from None
    return out


def read_into(folder: Path, store: Store, runs: Sequence[StoredRun] | None = None) -> int:
    """Put the bundle at `folder` into `store`: its suites' specs, and every run whose key the store
    does not hold. Returns how many runs were added."""
    for spec, suite_hash in read_suites(folder):
        store.record_suite(spec, suite_hash)
    return store.add_runs(list(read_runs(folder)) if runs is None else runs)


def digest(folder: Path) -> str:
    """SHA-256 over the bundle's file names and bytes: what names its copy read into SQLite."""
    hasher = hashlib.sha256()
    for path in sorted(p for p in folder.rglob("*") if p.is_file() and not p.name.endswith(".partial")):
        hasher.update(path.relative_to(folder).as_posix().encode() + b"\0")
        hasher.update(path.read_bytes())
    return hasher.hexdigest()


def has_runs(folder: Path) -> bool:
    """Whether `folder` is a bundle with at least one run."""
    return (folder / "bundle.json").is_file() and bool(cell_files(folder))


def reference_store(folder: Path | None = None) -> Path | None:
    """The SQLite copy of the reference bundle at `folder` (default: the installed one), made now if
    this content of the bundle has none yet; None where there is no bundle with runs."""
    folder = reference_bundle_dir() if folder is None else folder
    if not has_runs(folder):
        return None
    path = reference_cache_dir() / f"{digest(folder)[:16]}.sqlite"
    if path.is_file():
        return path
    path.parent.mkdir(parents=True, exist_ok=True)
    partial = path.with_name(f"{path.stem}.{os.getpid()}.partial")
    try:
        with Store(partial) as store:
            read_into(folder, store)
        with sqlite3.connect(partial) as db:  # one file: no WAL beside it once renamed
            db.execute("PRAGMA journal_mode=DELETE")
        os.replace(partial, path)
    finally:
        for leftover in (partial, partial.with_name(partial.name + "-wal"), partial.with_name(partial.name + "-shm")):
            leftover.unlink(missing_ok=True)
    return path


REFERENCE_SUFFIX = " (reference)"
"""What a reference run's label carries where it is shown beside the user's runs."""


def is_reference(label: str) -> bool:
    """Whether `label` is a reference run's, as `with_reference` shows it."""
    return label.endswith(REFERENCE_SUFFIX)


def plain_label(label: str) -> str:
    """A label without its reference mark: the model's label as the claims name it."""
    return label.removesuffix(REFERENCE_SUFFIX)


@contextmanager
def with_reference(user: Store | None, reference: Path, *, shown_as: Path | None = None) -> Iterator[Store]:
    """A temporary store holding the user's runs (`user`, copied; it is never written) and the reference
    runs of the SQLite copy `reference` (`reference_store`), the latter under their labels with
    `REFERENCE_SUFFIX` and a model hash of their own: a user's run of a reference configuration
    replaces nothing, and both are shown, apart. Its messages name the user's store (or `shown_as`,
    the `--store` given where there is none yet), not the temporary file."""
    with tempfile.TemporaryDirectory(prefix="structbench-reference-") as folder:
        path = Path(folder) / "with-reference.sqlite"
        if user is not None:
            user.copy_to(path)
        with Store(reference) as bundled:
            runs = [bundled.stored_run(run_id) for run_id in bundled.runs()["id"].tolist()]
            specs = bundled.suite_specs()
        with Store(path) as merged:
            for (_, _, suite_hash), spec in specs.items():
                merged.record_suite(spec, suite_hash)
            merged.add_runs(
                [
                    StoredRun(
                        {
                            **run.row,
                            "model": run.row["model"] + REFERENCE_SUFFIX,
                            "model_hash": f"reference:{run.row['model_hash']}",
                        },
                        run.scores,
                        run.predictions,
                    )
                    for run in runs
                ]
            )
            shown = user.path if user is not None else shown_as
            if shown is not None:
                merged.path = shown
            yield merged
