"""Exceptions with a meaning to the harness.

`UserError` carries one sentence for the person at the terminal: the CLI prints it without
a traceback. `NotApplicable` marks a (suite, model) pair that cannot be evaluated by design
and is recorded as `n/a` rather than as a failure.
"""


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
