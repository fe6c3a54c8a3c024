"""The results database: runs, scores and per-example predictions in SQLite (schema version 2).

One module per job: `database` (`Store`, the connection and its transactions), `schema` (the
tables and the run key), `codec` (how predictions blocks, configuration hashes and environment
JSON are encoded), `ownership` (the claim a process holds on a run), `migration` (the v1 layout
and its migration in place). The names other modules use are importable from here.
"""

from structbench.store.codec import SplitResult, config_hash, run_compute, run_convergence, run_statistics
from structbench.store.database import Store
from structbench.store.ownership import ClaimLost, RunClaim
from structbench.store.schema import RUN_FIELDS, SCHEMA_VERSION

__all__ = [
    "RUN_FIELDS",
    "SCHEMA_VERSION",
    "ClaimLost",
    "RunClaim",
    "SplitResult",
    "Store",
    "config_hash",
    "run_compute",
    "run_convergence",
    "run_statistics",
]
