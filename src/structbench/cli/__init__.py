"""The `structbench` command line: suites, models, build, run, sweep, report, quickstart.

Scripts rely on these commands and on the JSON they print (docs/architecture.md, "Command line").
Errors a user can cause end in one sentence on stderr and exit status 2; a data
verification failure exits with status 1.

One module per command family: `suites` (suites, models, build), `run`, `analysis` (runs, compare,
samples, check, claims), `sweep`, `report` (report, quickstart); `options` defines the options
they share once, and `main` builds the parser and dispatches. `main` is the console entry point.
"""

from structbench.progress import fit_unsized_terminal

fit_unsized_terminal()  # before anything imports tqdm, which reads its settings once

from structbench.cli.main import main  # noqa: E402

__all__ = ["main"]
