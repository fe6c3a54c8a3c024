"""`structbench sweep GRID.yaml`: a grid of runs on a process pool or Ray, stored by this process alone."""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path

from structbench.cli.options import (
    Commands,
    add_json,
    add_no_progress,
    add_source_dir,
    add_store,
    number,
    store_to_write,
    whole,
)
from structbench.cli.reference import tell
from structbench.errors import UserError
from structbench.paths import reference_bundle_dir
from structbench.store.bundle import has_runs, locked, read_into, write_runs
from structbench.store.bundle_reader import read_bundle


def cmd_sweep(args: argparse.Namespace) -> int:
    """`sweep GRID.yaml`: the grid's runs on a process pool or Ray, stored by this process alone."""
    from structbench.execution.executors import Executor, LocalExecutor, RayExecutor
    from structbench.sweep.driver import run_sweep, summary_line
    from structbench.sweep.grid import load_grid
    from structbench.sweep.plan import finished_run_ids, plan

    if args.address and args.executor != "ray":
        raise UserError(f"--address {args.address} names a Ray cluster; add --executor ray.")

    def executor() -> Executor:
        if args.executor == "ray":
            return RayExecutor(args.workers, timeout=args.timeout, address=args.address)
        return LocalExecutor(args.workers or os.cpu_count() or 1, timeout=args.timeout)

    load_grid(args.grid)  # a grid it refuses makes no store (and announces none)
    with store_to_write(args) as store:
        bundle = None if args.reference is None else Path(args.reference) if args.reference else reference_bundle_dir()
        if bundle is not None and has_runs(bundle):  # the runs bundled already are not made again
            with locked(bundle, shared=True):
                contents = read_bundle(bundle)
            tell(contents.left_out, f"the reference bundle {bundle}")
            added = read_into(bundle, store, contents)
            print(f"{added} runs read from the reference bundle {bundle}", file=sys.stderr)
        try:
            summary = run_sweep(
                args.grid,
                store,
                executor,
                source_dir=args.source_dir,
                progress=not (args.no_progress or args.json),  # --json: stderr holds only what went wrong
                dry_run=args.dry_run,
                records=args.json,
            )
        finally:  # an interrupted sweep keeps what it finished in the bundle too
            if bundle is not None and not args.dry_run:
                ids = finished_run_ids(plan(load_grid(args.grid), store, source_dir=args.source_dir), store)
                written = write_runs(store, ids, bundle)
                print(f"{written} runs of the grid written to the reference bundle {bundle}", file=sys.stderr)
    if args.json:
        print(summary.model_dump_json(indent=2, by_alias=True))
    if not args.dry_run:
        print(summary_line(summary), file=sys.stderr)
    return 2 if summary.refused else 1 if summary.failed else 0


def add_command(commands: Commands) -> None:
    """The `sweep` command."""
    sweep = commands.add_parser(
        "sweep", help="run a grid of suites x models x settings x seeds on a process pool or Ray; resumable"
    )
    sweep.add_argument("grid", type=Path, metavar="GRID.yaml", help="the grid: suites, models (--set grids), seeds")
    sweep.add_argument(
        "--executor", choices=("local", "ray"), default="local", help="local process pool (default) or Ray"
    )
    sweep.add_argument(
        "--workers",
        type=whole(1, example="4"),
        metavar="N",
        help="runs at once (default: the CPUs of this machine, or of the Ray cluster)",
    )
    sweep.add_argument("--address", metavar="ADDR", help="with --executor ray: the cluster (default: a local Ray)")
    sweep.add_argument(
        "--timeout",
        type=number(above=0, example="3600"),
        metavar="SECONDS",
        help="fail a run that takes longer, killing its worker (default: none)",
    )
    add_store(sweep, writes=True)
    sweep.add_argument(
        "--reference",
        nargs="?",
        const="",
        metavar="DIR",
        help="grow a reference bundle (default: the installed one): its runs are not made again, and the grid's "
        "finished runs are written into it",
    )
    add_source_dir(sweep)
    add_json(sweep, "print a summary: counts, problems, one record per cell")
    sweep.add_argument("--dry-run", action="store_true", help="print the runs it would make, longest first, and stop")
    add_no_progress(sweep)
    sweep.set_defaults(handler=cmd_sweep)
