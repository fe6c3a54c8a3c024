"""Reading the report's hand-written YAML lists (references, claims) into validated records.

Parsed by libyaml where PyYAML has it (`CSafeLoader`, the same safe subset, a tenth of the time:
every report reads both lists), else by PyYAML's pure-Python `SafeLoader`.
"""

from __future__ import annotations

from pathlib import Path
from typing import TypeVar

import yaml
from pydantic import BaseModel, ValidationError

from structbench.errors import UserError

M = TypeVar("M", bound=BaseModel)
SAFE_LOADER = getattr(yaml, "CSafeLoader", yaml.SafeLoader)


def load_entries(path: Path, model: type[M], what: str) -> list[M]:
    """Every entry of the YAML list in `path` as a `model`; an unreadable file or a malformed
    entry is one sentence naming the file, the entry's number and its problems."""
    try:
        raw = yaml.load(path.read_text(encoding="utf-8"), Loader=SAFE_LOADER)
    except (OSError, yaml.YAMLError) as error:
        raise UserError(f"cannot read the {what}s in {path} ({error}); restore the file.") from None
    if not isinstance(raw, list):
        raise UserError(f"{path} must hold a list of {what}s.")
    entries = []
    for number, entry in enumerate(raw, start=1):
        try:
            entries.append(model.model_validate(entry))
        except ValidationError as error:
            problems = "; ".join(f"{'.'.join(map(str, e['loc']))}: {e['msg']}" for e in error.errors())
            raise UserError(f"{what} {number} in {path} is malformed ({problems}).") from None
    return entries
