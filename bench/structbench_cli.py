"""The `structbench` command as a subprocess argument list, shared by the benches that time it.

A bench runs the command with this interpreter (`sys.executable`), so that it measures the
checkout and environment it was started from, not whatever `structbench` is first on PATH. The
function to call is read from the installed package's `structbench` console script (the
`[project.scripts]` entry of pyproject.toml), so a bench calls exactly what the command line
calls, wherever the CLI's code lives. A bench script imports this module as a sibling
(`python bench/X.py` puts bench/ first on `sys.path`).
"""

from __future__ import annotations

import sys
from importlib.metadata import entry_points


def structbench_command() -> list[str]:
    """`[python, -c, <call the console script's function>]`; append the command's arguments."""
    (script,) = entry_points(group="console_scripts", name="structbench")
    module, _, function = script.value.partition(":")
    call = f"import sys; from {module} import {function}; sys.exit({function}())"
    return [sys.executable, "-c", call]
