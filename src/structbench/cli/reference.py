"""`structbench reference ...`: the reference bundle, verified bit for bit, written from a store, and
its reproductions page (`reference tables`); and how `report`, `claims` and `quickstart` read it beside the user's store."""

from __future__ import annotations

import argparse
import fnmatch
import json
import random
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from structbench.cli.options import (
    Commands,
    add_seeds,
    add_source_dir,
    add_store,
    existing_store,
    number,
    patterns,
    whole,
)
from structbench.errors import UserError
from structbench.paths import reference_bundle_dir
from structbench.runs.arguments import parse_seeds
from structbench.store import Store, StoreReader
from structbench.store.bundle import has_runs, locked, reference_cache, with_reference, write_runs
from structbench.store.bundle_reader import read_bundle

SHOWN_NOTES = 10
"""How many of a bundle's left-out entries a command lists one by one (the rest are counted)."""


def add_no_reference(parser: argparse.ArgumentParser) -> None:
    """`--no-reference`: leave the bundled reference runs out."""
    parser.add_argument(
        "--no-reference",
        action="store_true",
        help="leave out the reference runs bundled with structbench (shown by default beside yours)",
    )


def tell(notes: list[str], what: str) -> None:
    """Print on stderr what a command should know of a bundle it read: `notes` (`what` says of which
    bundle), each left-out entry in one sentence, the first `SHOWN_NOTES` of them."""
    if not notes:
        return
    print(
        f"structbench: {len(notes)} entr{'ies' if len(notes) != 1 else 'y'} of {what} left out or made again:",
        file=sys.stderr,
    )
    for note in notes[:SHOWN_NOTES]:
        print(f"  {note}", file=sys.stderr)
    if len(notes) > SHOWN_NOTES:
        print(f"  and {len(notes) - SHOWN_NOTES} more.", file=sys.stderr)


def reference_copy(no_reference: bool) -> Path | None:
    """The SQLite copy of the installed (or `STRUCTBENCH_REFERENCE`) bundle that a reading command
    shows beside the user's runs, its left-out entries told on stderr; None with `no_reference` or
    without a bundle."""
    if no_reference:
        return None
    cache = reference_cache()
    if cache is None:
        return None
    tell(cache.notes, f"the reference bundle {cache.bundle}")
    return cache.path


@contextmanager
def results(store_path: Path, *, reference: Path | None) -> Iterator[StoreReader]:
    """The store a reading command reads: the user's, with the reference runs of the copy `reference`
    (`reference_copy`) beside its runs (`structbench.store.bundle.with_reference`). Without one (no
    bundle, or `--no-reference`), the user's store must exist; with one, a missing store is no runs of
    the user's."""
    if reference is None:
        with Store(existing_store(store_path)) as store:
            yield store
        return
    if Path(store_path).is_file():
        with with_reference(Path(store_path), reference) as merged:
            yield merged
    else:
        with with_reference(None, reference, shown_as=Path(store_path)) as merged:
            yield merged


def _bundle(args: argparse.Namespace) -> Path:
    folder: Path = args.bundle or reference_bundle_dir()
    if not has_runs(folder):
        raise UserError(f"{folder} holds no reference runs; pass --bundle the folder a `sweep --reference` wrote.")
    return folder


def _matches(names: list[str], wanted: list[str] | None) -> bool:
    """Whether one of `names` is one of `wanted` or matches it as a shell pattern (a label's
    `[settings]` read as such, not as a pattern's character class)."""
    return wanted is None or any(name == w or fnmatch.fnmatchcase(name, w) for name in names for w in wanted)


def cmd_verify(args: argparse.Namespace) -> int:
    from tabulate import tabulate

    from structbench.execution.verify import Verdict, refusal, verify

    folder = _bundle(args)
    with locked(folder, shared=True):
        contents = read_bundle(folder)
    tell(contents.left_out, f"the bundle {folder}")
    suites, models = patterns(args.suite), patterns(args.model)
    seeds = set(parse_seeds(args.seeds)) if args.seeds else None
    runs = [
        run
        for run in contents.runs
        if _matches([run.row["suite"], f"{run.row['suite']}@{run.row['version']}"], suites)
        and _matches([run.row["model"], json.loads(run.row["model_spec"])["name"]], models)
        and (seeds is None or int(run.row["seed"]) in seeds)
    ]
    if not runs:
        raise UserError(
            f"no bundled run in {folder} matches --suite, --model and --seeds; the file names under "
            f"{folder / 'runs'} are the bundled suites and models."
        )
    if args.sample is not None:
        runs = random.Random(args.sample_seed).sample(runs, min(args.sample, len(runs)))
    allowed = set(patterns(args.allow_model_code) or [])
    print(f"verifying {len(runs)} bundled run{'s' * (len(runs) != 1)} of {folder}:", file=sys.stderr)
    for run in runs:  # what will run, before anything does
        spec = json.loads(run.row["model_spec"])
        reason = refusal(run, allowed)
        settings = json.dumps(spec.get("params") or {}, sort_keys=True)[:200]
        what = (
            f"refused: {reason}"
            if reason
            else f"runs model {spec['name']!r}" + (f" with {settings}" if settings != "{}" else "")
        )
        print(f"  {Verdict(run, 'identical', '').where}: {what}", file=sys.stderr)

    def ended(verdict: Verdict) -> None:
        print(f"  {verdict.where}: {verdict.status}", file=sys.stderr)

    verdicts = verify(
        runs,
        allowed=allowed,
        source_dir=args.source_dir,
        timeout=args.timeout,
        log=lambda line: print(line, file=sys.stderr),
        ended=ended,
    )
    rows = [[v.where, v.status, v.detail] for v in verdicts]
    print(tabulate(rows, headers=["run", "verdict", "first difference"], maxcolwidths=[None, None, 80]))
    statuses = ("identical", "differs", "failed", "refused")
    counts = {status: sum(v.status == status for v in verdicts) for status in statuses}
    shown = ", ".join(f"{n} {status}" for status, n in counts.items() if n)
    print(f"{len(verdicts)} run{'s' * (len(verdicts) != 1)}: {shown}")
    return 0 if counts["identical"] == len(verdicts) else 1


def cmd_export(args: argparse.Namespace) -> int:
    from structbench.sweep.grid import load_grid
    from structbench.sweep.plan import finished_run_ids, plan

    folder: Path = args.bundle or reference_bundle_dir()
    with Store(existing_store(args.store)) as store:  # the grid is read before the bundle is locked
        ids = finished_run_ids(plan(load_grid(args.grid), store, source_dir=args.source_dir), store)
        written = write_runs(store, ids, folder)
    print(f"{written} runs of {args.grid} written to {folder}")
    return 0


def cmd_tables(args: argparse.Namespace) -> int:
    from structbench.reports.reproductions.markdown import write_reproductions

    folder = _bundle(args)
    cache = reference_cache(folder)
    if cache is None:  # `_bundle` found runs: only a bundle emptied meanwhile
        raise UserError(f"{folder} holds no reference runs; pass --bundle the folder a `sweep --reference` wrote.")
    tell(cache.notes, f"the reference bundle {folder}")
    with Store(cache.path) as store:
        write_reproductions(store, args.out, grid=args.grid)
    print(f"{args.out} written from the reference bundle {folder}")
    return 0


def add_command(commands: Commands) -> None:
    """The `reference` command and its subcommands."""
    reference = commands.add_parser("reference", help="the bundled reference runs: verify them, write them")
    actions = reference.add_subparsers(dest="action", required=True)
    verify = actions.add_parser("verify", help="make bundled runs again here and compare them bit for bit")
    verify.add_argument("--suite", action="append", metavar="ID", help="only runs on these suites (patterns)")
    verify.add_argument("--model", action="append", metavar="LABEL", help="only runs of these labels (patterns)")
    add_seeds(verify, None, "only these seeds, e.g. 0,1,2 (default: every bundled seed)")
    verify.add_argument(
        "--sample",
        type=whole(1),
        metavar="N",
        help="N runs drawn at random from those selected (shown before they run)",
    )
    verify.add_argument("--sample-seed", type=whole(0), default=0, metavar="K", help="the draw of --sample (default 0)")
    verify.add_argument("--bundle", type=Path, metavar="DIR", help="another bundle than the installed one")
    verify.add_argument(
        "--timeout", type=number(above=0), metavar="SECONDS", help="fail a run that takes longer (default: none)"
    )
    verify.add_argument(
        "--allow-model-code",
        action="append",
        metavar="MODULE:CLASS",
        help="also make again the runs of this model of your own, running its code (a bundle's runs of models that "
        "are not registered in an installed package are refused otherwise; a `command` model's never run)",
    )
    add_source_dir(verify)
    verify.set_defaults(handler=cmd_verify)
    tables = actions.add_parser("tables", help="write docs/reproductions.md from the bundle: measured beside published")
    tables.add_argument(
        "--out", type=Path, default=Path("docs/reproductions.md"), metavar="FILE", help="default docs/reproductions.md"
    )
    tables.add_argument(
        "--grid",
        default="docs/reference-grid.yaml",
        metavar="GRID.yaml",
        help="the grid the page names as the bundle's (default docs/reference-grid.yaml)",
    )
    tables.add_argument("--bundle", type=Path, metavar="DIR", help="another bundle than the installed one")
    tables.set_defaults(handler=cmd_tables)
    export = actions.add_parser("export", help="write a grid's finished runs of a store into the bundle")
    export.add_argument("grid", type=Path, metavar="GRID.yaml", help="the grid whose runs to write")
    add_store(export)
    export.add_argument("--bundle", type=Path, metavar="DIR", help="the bundle to write (default: the installed one)")
    add_source_dir(export)
    export.set_defaults(handler=cmd_export)
