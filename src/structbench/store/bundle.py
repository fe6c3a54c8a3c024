"""The reference bundle: finished runs as versioned text files, and read back into a store.

The runs behind the claims and the reference rows ship with structbench, so that a user compares a
model with the literature's reference models without training them again. A store is a binary file
that changes as a whole; the bundle is a folder that git diffs run by run, laid out as
`structbench.store.bundle_layout` says: a `bundle.json` marker, each suite's spec, one run file per
model configuration on one suite's data (the run key's fields once, then per seed its row and its
scores, one score per line), and each run's predictions (gzip without a time stamp, so the same run
gives the same bytes; left out for a run whose compressed predictions exceed `PREDICTIONS_LIMIT`).

Every number is written as JSON writes floats, which reads back to the same double: a run read
from the bundle is the run that was stored, bit for bit.

A bundle is untrusted input (it travels between users): it is read only through
`structbench.store.bundle_reader`, which checks every file and field and leaves out, naming it,
what fails. Writing is atomic and serialised: `write_runs` holds an exclusive lock on the bundle's
folder (`fcntl.flock`) while it reads, merges and writes a run file, and writes each file under a
name of its own (`tempfile`) before renaming it into place, so that two exports or sweeps into
one bundle at the same time lose no run; readers hold a shared lock.

`read_into` puts a bundle into a store (keys the store holds already are left as they are);
`reference_store` keeps the installed bundle read into a SQLite file of the home, made again when
the bundle's bytes change, when it is damaged, or when it was made by a reader with other checks.
"""

from __future__ import annotations

import fcntl
import gzip
import hashlib
import json
import os
import sqlite3
import tempfile
from collections.abc import Iterable, Iterator
from contextlib import contextmanager, suppress
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from structbench.errors import UserError
from structbench.paths import reference_bundle_dir, reference_cache_dir
from structbench.specs import SuiteSpec
from structbench.store.bundle_layout import FORMAT, cell_paths, layout_files, run_files, suite_path
from structbench.store.bundle_reader import (
    MARKER_LIMIT,
    PREDICTIONS_FILE_LIMIT,
    RUN_FILE_LIMIT,
    SUITE_FILE_LIMIT,
    BundleContents,
    RunEntry,
    check_format,
    read_bundle,
    read_cell,
)
from structbench.store.bundle_reader import read_suites as _read_suites
from structbench.store.codec import unpack_predictions
from structbench.store.database import Store, StoredRun
from structbench.store.failures import sqlite_error_in
from structbench.store.reader import StoreReader
from structbench.store.schema import ROW_COLUMNS, SCHEMA_VERSION, schema_columns
from structbench.store.untrusted import Refused, read_file

PREDICTIONS_LIMIT = 512 * 1024
"""A run's predictions are bundled when they take at most this many bytes compressed (the largest
of today's reference runs, question formation's, take 262 KB)."""
KEY_FIELDS = ("suite", "version", "suite_hash", "model", "model_spec", "model_hash", "config_hash", "comparable")
"""The fields every run of one bundle file shares: its cell."""
SEED_FIELDS = tuple(name for name in ROW_COLUMNS if name not in KEY_FIELDS and name != "owner")
"""The fields of each run of a cell's file."""
READER = 2
"""The version of the reader's checks, part of the name of a bundle's SQLite copy: a copy made by a
reader that took what this one refuses (1: before `bundle_reader`) is made again."""


@contextmanager
def locked(folder: Path, *, shared: bool = False) -> Iterator[None]:
    """Hold the lock of the bundle at `folder` (an existing folder) for the block: exclusive for a
    writer, `shared` for a reader. The lock is on the folder itself, so a bundle holds no lock file."""
    try:
        descriptor = os.open(folder, os.O_RDONLY | getattr(os, "O_DIRECTORY", 0) | getattr(os, "O_CLOEXEC", 0))
    except OSError as error:
        raise UserError(
            f"cannot open the reference bundle's folder {folder} ({error.strerror or error}); pass a folder you may read."
        ) from None
    try:
        fcntl.flock(descriptor, fcntl.LOCK_SH if shared else fcntl.LOCK_EX)
        yield
    finally:
        os.close(descriptor)  # closing releases the lock


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
    """Write `data` to `path` through a file of its own beside it, renamed into place: a reader sees the
    old file or the new one, and two writers never share a temporary file."""
    path.parent.mkdir(parents=True, exist_ok=True)
    descriptor, partial = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".partial")
    try:
        with os.fdopen(descriptor, "wb") as file:
            file.write(data)
        os.chmod(partial, 0o644)
        os.replace(partial, path)
    except BaseException:
        with suppress(OSError):
            os.unlink(partial)
        raise


def _earlier_runs(folder: Path, path: Path) -> dict[int, dict[str, Any]]:
    """seed -> run (the fields `_cell_text` writes) of the run file `path` of the bundle at `folder`, or
    nothing where there is none; a file that fails the reader's checks is refused, never overwritten."""
    if not os.path.lexists(path):
        return {}
    try:
        _, runs = read_cell(folder, path)
    except (Refused, ValueError) as error:  # pydantic's ValidationError is a ValueError
        raise UserError(
            f"cannot add runs to {path} of the reference bundle: it fails its checks ({' '.join(str(error).split())[:200]}); "
            "restore it from git, or remove it, and write again."
        ) from None
    return {run.seed: _entry(run) for run in runs}


def _entry(run: RunEntry) -> dict[str, Any]:
    entry = run.model_dump(exclude={"scores"})
    entry["scores"] = [[s.split, s.metric, s.breakdown, s.level, s.value, s.n, s.proportion] for s in run.scores]
    return entry


def write_runs(store: Store, run_ids: Iterable[int], folder: Path) -> int:
    """Write the finished runs `run_ids` of `store` into the bundle at `folder` (created), each into its
    cell's file beside the runs that file holds already (a seed's earlier run is replaced), under the
    bundle's exclusive lock (`locked`). Returns how many runs were written."""
    try:
        folder.mkdir(parents=True, exist_ok=True)
    except OSError as error:
        raise UserError(
            f"cannot make the reference bundle's folder {folder} ({error.strerror or error}); pass --bundle a folder "
            "you may write to."
        ) from None
    with locked(folder):
        if os.path.lexists(folder / "bundle.json"):
            check_format(folder)
        else:
            _write_atomically(folder / "bundle.json", (json.dumps({"format": FORMAT}) + "\n").encode())
        by_cell: dict[Path, tuple[dict[str, Any], dict[int, dict[str, Any]]]] = {}
        suites = store.suite_specs()
        written = 0
        for run_id in run_ids:
            stored = store.stored_run(run_id)
            row = stored.row
            if row["status"] != "done":
                continue
            spec = json.loads(row["model_spec"])
            paths = cell_paths(folder, row["suite"], row["version"], str(spec.get("name", "model")), row["model_hash"])
            if paths.runs not in by_cell:
                header = {name: row[name] for name in KEY_FIELDS}
                header["model_spec"] = spec
                header["comparable"] = bool(row["comparable"])
                by_cell[paths.runs] = (header, _earlier_runs(folder, paths.runs))
            header, seeds = by_cell[paths.runs]
            run = {name: row[name] for name in SEED_FIELDS}
            run["environment"] = json.loads(row["environment"])
            run["scores"] = [[split, metric, breakdown, level, value, n, bool(proportion)] for split, metric,
                             breakdown, level, value, n, proportion in stored.scores]  # fmt: skip
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
                text = json.dumps({"suite_hash": key[2], "spec": spec.model_dump(mode="json")}, indent=1)
                _write_atomically(suite_path(folder, *key), (text + "\n").encode())
            _write_atomically(path, _cell_text(header, [seeds[seed] for seed in sorted(seeds)]).encode())
    return written


def cell_files(folder: Path) -> list[Path]:
    """The run files of the bundle at `folder`, in path order."""
    return run_files(folder)


def read_runs(folder: Path) -> list[StoredRun]:
    """Every run of the bundle at `folder` that passes the reader's checks, as a store holds it
    (predictions where bundled); `read_bundle` also says what was left out."""
    with locked(folder, shared=True):
        return read_bundle(folder).runs


def read_suites(folder: Path) -> list[tuple[SuiteSpec, str]]:
    """(spec, suite hash) of every suite's data the bundle at `folder` has runs on (those that pass
    the reader's checks)."""
    check_format(folder)
    return _read_suites(folder, [])


def read_into(folder: Path, store: Store, contents: BundleContents | None = None) -> int:
    """Put the bundle at `folder` (or its `contents`, read already by `read_bundle`) into `store`: its
    suites' specs, and every run whose key the store does not hold. Returns how many runs were added."""
    if contents is None:
        with locked(folder, shared=True):
            contents = read_bundle(folder)
    for spec, suite_hash in contents.suites:
        store.record_suite(spec, suite_hash)
    return store.add_runs(contents.runs)


LIMITS = {
    "bundle.json": MARKER_LIMIT,
    "suites": SUITE_FILE_LIMIT,
    "runs": RUN_FILE_LIMIT,
    "predictions": PREDICTIONS_FILE_LIMIT,
}
"""The most bytes each kind of the layout's files may hold, by its name or first folder."""


def digest(folder: Path) -> str:
    """SHA-256 over the reader's version and the names and bytes of the files the layout names in the
    bundle (`layout_files`): what names its copy read into SQLite. A file the reader would refuse
    counts by its name and why."""
    hasher = hashlib.sha256(f"structbench bundle reader {READER}\0".encode())
    for path in layout_files(folder):
        relative = path.relative_to(folder)
        if not os.path.lexists(path):
            continue
        hasher.update(relative.as_posix().encode() + b"\0")
        try:
            data = read_file(path, LIMITS[relative.parts[0]], root=folder)
            hasher.update(hashlib.sha256(data).digest())
        except Refused as error:
            hasher.update(f"refused: {error}".encode())
    return hasher.hexdigest()


def has_runs(folder: Path) -> bool:
    """Whether `folder` is a bundle with at least one run file."""
    return os.path.lexists(folder / "bundle.json") and bool(cell_files(folder))


@dataclass(frozen=True)
class ReferenceCache:
    """The SQLite copy of a reference bundle (`reference_cache`), and what to tell whoever reads it."""

    path: Path
    bundle: Path
    notes: list[str] = field(default_factory=list)
    """One sentence per entry of the bundle left out of the copy, and one where a damaged copy was made again."""


def _sound(path: Path) -> bool:
    """Whether the SQLite copy `path` opens and passes SQLite's quick check at this schema's version."""
    try:
        db = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
        try:
            version = db.execute("PRAGMA user_version").fetchone()[0]
            return bool(version == SCHEMA_VERSION and db.execute("PRAGMA quick_check").fetchone()[0] == "ok")
        finally:
            db.close()
    except (sqlite3.Error, OSError):
        return False


def _remove(path: Path) -> None:
    for leftover in (path, path.with_name(path.name + "-wal"), path.with_name(path.name + "-shm")):
        with suppress(FileNotFoundError):
            leftover.unlink()


def cache_failure(folder: Path, error: BaseException) -> UserError:
    """One sentence for `error`, met while writing the reference runs' copy into the home's `folder`."""
    reason = _reason(error)
    error = sqlite_error_in(error) or error  # a store's sentence about its partial copy: the SQLite error it tells
    name = str(getattr(error, "sqlite_errorname", "") or "")
    if getattr(error, "errno", None) in (28, 122) or name == "SQLITE_FULL" or "full" in reason.lower():
        return UserError(
            f"the disk holding structbench's home ({folder}) is full ({reason}), so the reference runs cannot be "
            "copied there; free some space, set STRUCTBENCH_HOME to a folder on another disk, or pass --no-reference."
        )
    if (
        getattr(error, "errno", None) in (13, 30, 1)
        or name.startswith("SQLITE_READONLY")
        or not os.access(folder if folder.exists() else folder.parent, os.W_OK)
    ):
        return UserError(
            f"structbench's home ({folder}) cannot be written here ({reason}), so the reference runs cannot be "
            "copied there; set STRUCTBENCH_HOME to a folder you can write to, or pass --no-reference."
        )
    return UserError(
        f"the reference runs could not be copied into structbench's home ({folder}: {reason}); check the disk it "
        "is on, set STRUCTBENCH_HOME to another folder, or pass --no-reference."
    )


def reference_cache(folder: Path | None = None) -> ReferenceCache | None:
    """The SQLite copy of the reference bundle at `folder` (default: the installed one), made now where
    this content of the bundle (by this reader) has none yet or where it is damaged; None where there
    is no bundle with runs."""
    folder = reference_bundle_dir() if folder is None else folder
    if not has_runs(folder):
        return None
    home = reference_cache_dir()
    with locked(folder, shared=True):
        path = home / f"{digest(folder)[:16]}.sqlite"
        notes = path.with_name(path.stem + ".left-out.json")
        remade = []
        if path.is_file():
            kept = _notes(notes)
            if kept is not None and _sound(path):
                return ReferenceCache(path, folder, kept)
            remade.append(f"the reference runs' copy {path} was damaged, and is made again from the bundle {folder}.")
        contents = read_bundle(folder)
        try:
            home.mkdir(parents=True, exist_ok=True)
            _remove(path)
            descriptor, name = tempfile.mkstemp(dir=home, prefix=f".{path.stem}.", suffix=".partial")
            os.close(descriptor)
            partial = Path(name)
            try:
                partial.unlink()
                with Store(partial) as store:
                    read_into(folder, store, contents)
                with sqlite3.connect(partial) as db:  # one file: no WAL beside it once renamed
                    db.execute("PRAGMA journal_mode=DELETE")
                _write_atomically(notes, json.dumps(contents.left_out, indent=1).encode())
                os.replace(partial, path)
            finally:
                _remove(partial)
        except (OSError, sqlite3.Error, UserError) as error:
            raise cache_failure(home, error) from None
    return ReferenceCache(path, folder, [*remade, *contents.left_out])


def _notes(path: Path) -> list[str] | None:
    """The sentences the copy's notes file `path` holds; None where it is missing or not what the reader wrote."""
    try:
        found = json.loads(read_file(path, RUN_FILE_LIMIT))
    except (Refused, ValueError):
        return None
    return [str(line) for line in found] if isinstance(found, list) else None


def reference_store(folder: Path | None = None) -> Path | None:
    """The path of the SQLite copy of the reference bundle at `folder` (`reference_cache`)."""
    cache = reference_cache(folder)
    return None if cache is None else cache.path


REFERENCE_SUFFIX = " (reference)"
"""What a reference run's label carries where it is shown beside the user's runs."""


def is_reference(label: str) -> bool:
    """Whether `label` is a reference run's, as `with_reference` shows it."""
    return label.endswith(REFERENCE_SUFFIX)


def plain_label(label: str) -> str:
    """A label without its reference mark: the model's label as the claims name it."""
    return label.removesuffix(REFERENCE_SUFFIX)


def _reason(error: BaseException) -> str:
    cause = sqlite_error_in(error) or error
    return getattr(cause, "strerror", None) or " ".join(str(cause).split())[:160]


REFERENCE_ID_OFFSET = 1 << 40
"""What a reference run's id gains where it is read beside the user's runs (`with_reference`): more than
any id a store hands out, so that the two never meet and the reference runs come after the user's."""


def _sql_text(text: str) -> str:
    """`text` as an SQL string literal."""
    return "'" + text.replace("'", "''") + "'"


class _WithReference(StoreReader):
    """A reader of the store `path` that reads the reference runs of the SQLite copy `reference` beside its
    own, as if the store held them: temporary views of this connection stand in front of the store's runs,
    suites, scores and predictions tables and add the attached copy's rows, under their labels with
    `REFERENCE_SUFFIX`, a model hash of their own and ids past `REFERENCE_ID_OFFSET`. Neither file is
    written, and neither is copied. What it reads is one snapshot, as a copy would be: a read transaction
    stays open until it is closed, so that runs another process finishes meanwhile appear in no table."""

    def __init__(self, path: Path, reference: Path) -> None:
        super().__init__(path)  # a failure to open it names `path`
        try:
            self._db.execute("ATTACH DATABASE ? AS reference", (str(reference),))
            for statement in _reference_views():
                self._db.execute(statement)
            self._db.execute("BEGIN")
            self._db.execute("SELECT count(*) FROM runs").fetchone()  # the snapshot begins at the first read
        except sqlite3.Error as error:
            self._db.close()
            raise _damaged_reference(reference, error) from None


def _reference_views() -> list[str]:
    """The statements that make `_WithReference`'s views."""
    columns = schema_columns()
    shifted = {
        "id": f"id + {REFERENCE_ID_OFFSET}",
        "run_id": f"run_id + {REFERENCE_ID_OFFSET}",
        "model": f"model || {_sql_text(REFERENCE_SUFFIX)}",
        "model_hash": "'reference:' || model_hash",
        "owner": "NULL",
    }
    statements = []
    for table in ("runs", "scores", "predictions"):
        names = columns[table]
        # a predictions block's rowid is its place in its run's split order
        row_id = ("rowid AS rowid, ", "rowid, ") if table == "predictions" else ("", "")
        own = ", ".join(names)
        theirs = ", ".join(f"{shifted[name]} AS {name}" if name in shifted else name for name in names)
        statements.append(
            f"CREATE TEMP VIEW {table} AS SELECT {row_id[0]}{own} FROM main.{table} "
            f"UNION ALL SELECT {row_id[1]}{theirs} FROM reference.{table}"
        )
    statements.append(  # a spec the user's store holds wins, as `Store.record_suite` keeps the first
        "CREATE TEMP VIEW suites AS SELECT suite, version, suite_hash, spec FROM main.suites UNION ALL "
        "SELECT suite, version, suite_hash, spec FROM reference.suites AS r WHERE NOT EXISTS (SELECT 1 FROM "
        "main.suites AS m WHERE m.suite = r.suite AND m.version = r.version AND m.suite_hash = r.suite_hash)"
    )
    return statements


@contextmanager
def with_reference(user: Path | None, reference: Path, *, shown_as: Path | None = None) -> Iterator[StoreReader]:
    """A reader of the user's store file `user` (only read) and the reference runs of the SQLite copy
    `reference` (`reference_store`), the latter under their labels with `REFERENCE_SUFFIX` and a model
    hash of their own: a user's run of a reference configuration replaces nothing, and both are shown,
    apart. Its messages name the user's store (or `shown_as`, the `--store` given where there is none
    yet: an empty store in a temporary folder stands in); a failure names the file at fault: the copy of
    the reference runs, the user's store, or the temporary folder."""
    try:
        with StoreReader(reference) as bundled:  # checked here, so that a fault in it is not blamed on the user's
            bundled.scores()
            bundled.suite_specs()
    except (sqlite3.Error, UserError) as error:
        raise _damaged_reference(reference, error) from None
    if user is not None:
        with _WithReference(user, reference) as merged:
            yield merged
        return
    with tempfile.TemporaryDirectory(prefix="structbench-reference-") as folder:
        path = Path(folder) / "empty.sqlite"
        try:
            Store(path).close()
        except (OSError, sqlite3.Error, UserError) as error:
            raise _temporary_failure(folder, error) from None
        with _WithReference(path, reference) as merged:
            if shown_as is not None:
                merged.path = shown_as
            yield merged


def _damaged_reference(reference: Path, error: BaseException) -> UserError:
    return UserError(
        f"the copy of the reference runs {reference} cannot be read ({_reason(error)}); delete it, and the next "
        "command makes it again from the bundle."
    )


def _temporary_failure(folder: str, error: BaseException) -> UserError:
    return UserError(
        f"cannot write the temporary store that shows the reference runs beside yours in {folder} ({_reason(error)}); "
        "free some space there (or set TMPDIR to a folder on another disk), or pass --no-reference."
    )
