"""structbench: a benchmark harness for structural generalisation of sequence models.

The Python API (`structbench.api`): `evaluate`, `load_results`, `load_suite`. They are imported
on first use, so that `import structbench` stays cheap for the modules and plugins that only
need the version.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

__version__ = "0.1.0"
__all__ = ["__version__", "evaluate", "load_results", "load_suite"]

if TYPE_CHECKING:
    from structbench.api import evaluate, load_results, load_suite


def __getattr__(name: str) -> Any:
    if name in ("evaluate", "load_results", "load_suite"):
        from structbench import api

        return getattr(api, name)
    raise AttributeError(f"module 'structbench' has no attribute {name!r}")
