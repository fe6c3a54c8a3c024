"""Exceptions with a meaning to the harness.

`UserError` carries one sentence for the person at the terminal: the CLI prints it without
a traceback. `NotApplicable` marks a (suite, model) pair that cannot be evaluated by design
and is recorded as `n/a` rather than as a failure. `renamed` is the warning a public name renamed
in this minor version gives where its old name is still used, for one more minor version.
"""

import warnings

RENAMED_NAMES_GO_IN = "0.3.0"
"""The release that drops the old names of what 0.2.0 renamed (`renamed` warns of it until then)."""


def renamed(old: str, new: str, *, stacklevel: int = 3) -> None:
    """Warn (DeprecationWarning) that `old` is now `new` and goes in `RENAMED_NAMES_GO_IN`; `stacklevel`
    counts from this function's caller's caller, whose line is the one that used the old name."""
    warnings.warn(
        f"{old} is renamed {new}; the old name goes in structbench {RENAMED_NAMES_GO_IN}.",
        DeprecationWarning,
        stacklevel=stacklevel,
    )


class UserError(Exception):
    """A problem the user can fix; the message names the thing and the fix."""


class SourceUnavailable(UserError):
    """A source file a suite needs is neither where the harness looks nor obtainable: it has no
    download address (the user supplies it), its download failed (offline), or what came down
    is not the pinned file.

    `short` is the reason alone, without the fix, for a list of skipped suites that names the fix
    once (`structbench build`, `quickstart`)."""

    def __init__(self, message: str, *, short: str | None = None) -> None:
        super().__init__(message)
        self.short = short or message


class NotApplicable(Exception):
    """The model cannot be evaluated on this suite (e.g. an unsupported protocol)."""


class DataIntegrityError(UserError):
    """Frozen data on disk does not match its manifest."""
