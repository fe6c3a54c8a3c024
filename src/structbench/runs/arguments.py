"""The text forms in which a run is asked for: seeds (`0,1,2`, `0-9`) and settings (`key=value`).

`structbench run --seeds/--set` and a sweep grid's `seeds`/`set` read them with these same
functions, so that a run asked for either way is keyed alike (a grid's "1e-3" is the number
0.001, as `--set lr=1e-3` makes it). They belong to the engine, not to the command line: the
sweep, below the command line, needs them too.
"""

from __future__ import annotations

import json
from collections.abc import Collection, Sequence
from typing import Any

from structbench.errors import UserError

MAX_SEEDS = 10_000
"""The most seeds one --seeds may name: a range typo (0-10000000) is refused, not expanded."""


def parse_seeds(text: str) -> list[int]:
    """Seeds from `0,1,2`, a range `0-9` (both ends included) or a mix of both."""
    seeds: list[int] = []
    try:
        for part in (p.strip() for p in text.split(",") if p.strip()):
            first, dash, last = part.partition("-")
            low, high = (int(first), int(last)) if dash else (int(part), int(part))
            # counted before a range is made: len() of a range past sys.maxsize raises OverflowError
            if len(seeds) + max(0, high - low + 1) > MAX_SEEDS:
                raise UserError(f"--seeds {text!r} asks for more than {MAX_SEEDS} seeds; run fewer at a time.")
            seeds += range(low, high + 1)
    except ValueError:
        raise UserError(
            f"--seeds {text!r} is not a comma-separated list of integers or ranges, e.g. --seeds 0,1,2 or --seeds 0-9."
        ) from None
    if not seeds or len(set(seeds)) != len(seeds):
        raise UserError(f"--seeds {text!r} must list at least one seed, each once.")
    if any(not 0 <= seed < 2**63 for seed in seeds):
        raise UserError(f"--seeds {text!r} must be integers from 0 to 2**63-1.")
    return seeds


def parse_settings(pairs: Sequence[str], *, text: Collection[str] = ()) -> dict[str, Any]:
    """Model settings from `key=value` pairs; a value is read as JSON where it parses to a scalar,
    except for the keys in `text`, settings the model declares as strings
    (`structbench.runs.settings.text_settings`): `--set fallback=111` is then the string "111", not
    a number its constructor would refuse."""
    settings: dict[str, Any] = {}
    for pair in pairs:
        key, sep, raw = pair.partition("=")
        if not sep or not key:
            raise UserError(f"--set {pair!r} is not key=value, e.g. --set hidden_size=256.")
        if key in text:
            settings[key] = raw
            continue
        try:
            value = json.loads(raw)
        except json.JSONDecodeError:
            value = raw
        if isinstance(value, list | dict):
            value = raw
        settings[key] = value
    return settings
