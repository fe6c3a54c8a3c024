"""Where a reference run comes from, as the site marks its row.

The reference runs ship with structbench (`structbench.store.bundle`) and are shown beside the
user's own under their label with `REFERENCE_SUFFIX` (`with_reference`): a user's run of the same
configuration is a row of its own. Each reference row says what made its numbers, read from the
runs' own columns (`structbench.reports.builders.reference_runs.reference_rows`): the structbench version (`harness_version`) and commit (`git_commit`, else the
environment's `git`), the budget the model trained under (its resolved configuration's `budget`,
else the budget its settings asked for; a model without one, a classical baseline, shows none) and
the CPU threads (the environment's `threads`). Where the runs of one row differ, every value is
listed, in the order the runs finished: `at 90adbc0, 3b0bae3`.

Reference rows are ranked like any other comparable model: they are measured runs of a known
configuration, not published numbers, and a user's model is compared with them.
"""

from __future__ import annotations

from dataclasses import dataclass

SHOWN_COMMITS = 3
"""How many commits a row's line names (the others are counted; its title names them all)."""


@dataclass(frozen=True)
class Provenance:
    """What made one reference row's runs."""

    label: str
    """The model's label without the reference mark (as the claims name it)."""
    versions: tuple[str, ...] = ()
    """The structbench versions, in the order the runs finished."""
    commits: tuple[str, ...] = ()
    """The commits (full hashes), in the order the runs finished."""
    budgets: tuple[str, ...] = ()
    epochs: tuple[int, ...] = ()
    """The recipes' caps on training epochs, where the configuration has one."""
    threads: tuple[int, ...] = ()

    @property
    def made(self) -> str:
        """What made the runs, e.g. `structbench 0.1.0 at d0f99fc, budget cpu-small, 1 thread`."""
        made = "structbench " + (", ".join(self.versions) or "(version not recorded)")
        if self.commits:
            shown = [commit[:7] for commit in self.commits[:SHOWN_COMMITS]]
            more = len(self.commits) - len(shown)
            made += " at " + ", ".join(shown) + (f" and {more} more" if more else "")
        parts = [made]
        if self.budgets:
            parts.append("budget " + ", ".join(self.budgets))
        if self.threads:
            parts.append(f"{', '.join(map(str, self.threads))} thread{'' if self.threads == (1,) else 's'}")
        return ", ".join(parts)

    @property
    def line(self) -> str:
        """The row's mark: `reference run, ` and what made it."""
        return f"reference run, {self.made}"

    @property
    def details(self) -> str:
        """Every commit in full, and the epoch caps: the line's title."""
        parts = ["a run shipped with structbench (its reference bundle), not one of this store's"]
        if self.commits:
            parts.append("commit" + ("s " if len(self.commits) > 1 else " ") + ", ".join(self.commits))
        if self.epochs:
            parts.append("at most " + ", ".join(map(str, self.epochs)) + " epochs")
        return "; ".join(parts)
