"""What identifies the code a user's model runs, so that editing it makes a new run, not a cache hit.

A run is keyed by the model's name, its `--set` values and its facts (`structbench.runs.key.
RunKey.of`). Registered models are versioned with their package (and neural baselines also by
their resolved recipe), but a `module:Class` model or an external command is the user's own
code, edited between runs: without its fingerprint in the key, an edited classifier was
answered from the store with the scores of its previous version. The fingerprint is the
SHA-256 of the files the model runs from:

- `module:Class`: the source file of the class's module (not the modules that one imports:
  a model spread over several files puts what changes its numbers in `configuration()`);
- a command: every word of the command line that names a file, the executable found on PATH
  included, each by its path and contents (`python my_model.py` hashes the interpreter and the
  script; a word that names no file, e.g. `--fast`, is part of the command and so already of
  the run's settings).
"""

from __future__ import annotations

import hashlib
import inspect
import shlex
import shutil
from pathlib import Path
from typing import Any

from structbench.data.sources import sha256_file
from structbench.errors import UserError


def source_fingerprint(factory: Any) -> str | None:
    """SHA-256 of the source file of `factory`'s module; None where it has none (a built-in)."""
    try:
        source = inspect.getsourcefile(factory)
    except TypeError:
        return None
    if source is None or not Path(source).is_file():
        return None
    return sha256_file(Path(source))


def command_fingerprint(command: str) -> str:
    """SHA-256 over `path:sha256` of every file the command line names (see the module docstring)."""
    try:
        words = shlex.split(command)
    except ValueError as error:
        raise UserError(
            f"the model command {command!r} cannot be split into words ({error}); check its quotes."
        ) from None
    lines = []
    for word in words:
        found = shutil.which(word) if "/" not in word else None
        path = Path(found) if found else Path(word).expanduser()
        if path.is_file():
            lines.append(f"{path.resolve()}:{sha256_file(path)}")
    return hashlib.sha256("\n".join(lines).encode()).hexdigest()
