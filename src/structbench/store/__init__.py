"""The results database: runs, scores and per-example predictions in SQLite (schema version 2).

Two faces of one file: a `StoreReader` reads it (reports, analyses, the commands that only read
results take one), a `Store` is a reader that also writes (claims, finishes and records runs; what
`run`, `sweep` and `reference` hold). One module per job: `reader` (`StoreReader`), `database`
(`Store`, the writes and the concurrency rules they keep), `connection` (opening a file, migrating
it, transactions), `schema` (the tables and the run key), `codec` (how predictions blocks,
configuration hashes and environment JSON are encoded), `ownership` (the claim a process holds on
a run), `migration` (the v1 layout and its migration in place), `failures` (SQLite's errors as one
sentence), `bundle` (the reference runs shipped with structbench). The names other modules use are
importable from here.
"""

from structbench.store.codec import SplitResult, config_hash, run_compute, run_convergence, run_statistics
from structbench.store.database import Store
from structbench.store.ownership import ClaimLost, RunClaim
from structbench.store.reader import StoreReader
from structbench.store.schema import RUN_FIELDS, SCHEMA_VERSION

__all__ = [
    "RUN_FIELDS",
    "SCHEMA_VERSION",
    "ClaimLost",
    "RunClaim",
    "SplitResult",
    "Store",
    "StoreReader",
    "config_hash",
    "run_compute",
    "run_convergence",
    "run_statistics",
]
