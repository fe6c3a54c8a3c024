"""The forms in which a run is asked for: seeds (`0,1,2`, `0-9`, a list) and settings (`key=value`).

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


def parse_seeds(seeds: str | Sequence[int]) -> list[int]:
    """Seeds from `0,1,2`, a range `0-9` (both ends included) or a mix of both, as `--seeds` and a grid
    file's `seeds: "0-4"` give them, or a list of integers, as a grid file's `seeds: [0, 1]` gives
    it: at least one and at most `MAX_SEEDS`, each once, from 0 to 2**63-1 (a seed the store and numpy
    take). The one check of seeds, so that `run` and a sweep refuse the same seeds in the same words."""
    if isinstance(seeds, str):
        return _checked_seeds(_seeds_in_text(seeds), f"--seeds {seeds!r}")
    return _checked_seeds(list(seeds), f"seeds {list(seeds)}")


def _seeds_in_text(text: str) -> list[int]:
    """The seeds a `--seeds` text lists, a range counted before it is made (`_too_many`)."""
    seeds: list[int] = []
    try:
        for part in (p.strip() for p in text.split(",") if p.strip()):
            first, dash, last = part.partition("-")
            low, high = (int(first), int(last)) if dash else (int(part), int(part))
            # counted before a range is made: len() of a range past sys.maxsize raises OverflowError
            if len(seeds) + max(0, high - low + 1) > MAX_SEEDS:
                raise _too_many(f"--seeds {text!r}")
            seeds += range(low, high + 1)
    except ValueError:
        raise UserError(
            f"--seeds {text!r} is not a comma-separated list of integers or ranges, e.g. --seeds 0,1,2 or --seeds 0-9."
        ) from None
    return seeds


def _too_many(given: str) -> UserError:
    return UserError(f"{given} asks for more than {MAX_SEEDS} seeds; run fewer at a time.")


def _checked_seeds(seeds: list[int], given: str) -> list[int]:
    """`seeds`, refused in one sentence that names them as `given` unless `parse_seeds` takes them."""
    if len(seeds) > MAX_SEEDS:
        raise _too_many(given)
    if not seeds or len(set(seeds)) != len(seeds):
        raise UserError(f"{given} must list at least one seed, each once.")
    if any(not 0 <= seed < 2**63 for seed in seeds):
        raise UserError(f"{given} must be integers from 0 to 2**63-1.")
    return seeds


def parse_settings(pairs: Sequence[str], *, text: Collection[str] = (), example: str = "") -> dict[str, Any]:
    """Model settings from `key=value` pairs; a value is read as JSON where it parses to a scalar,
    except for the keys in `text`, settings the model declares as strings
    (`structbench.runs.settings.text_settings`): `--set fallback=111` is then the string "111", not
    a number its constructor would refuse. `example` follows the refusal of a pair that is not
    `key=value`: one of the model's own settings (`structbench.runs.settings.setting_example`)."""
    settings: dict[str, Any] = {}
    for pair in pairs:
        key, sep, raw = pair.partition("=")
        if not sep or not key:
            raise UserError(f"--set {pair!r} is not key=value{'; ' + example if example else ''}.")
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
