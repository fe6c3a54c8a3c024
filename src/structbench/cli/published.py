"""`structbench import`: a paper's per-item results into the store as published runs, apart from the runs made here."""

from __future__ import annotations

import argparse
import json
from pathlib import Path

from structbench import registry
from structbench.cli.options import Commands, add_json, add_source_dir, add_store, patterns, store_to_write, whole
from structbench.errors import UserError

PUBLISHED_SETS = ("syntaxgym-hu2020",)
"""The published per-item results structbench knows the files of (pinned by URL and SHA-256)."""


def cmd_import(args: argparse.Namespace) -> int:
    """Read the files (or the named published set), check every row against the suite, store them in one go."""
    from structbench.analysis.published import Columns, Source, read_results, syntaxgym_runs

    suite = registry.suite(args.suite)
    if bool(args.published) == bool(args.file):
        raise UserError("import needs either --published NAME or --file PATH (with --paper), not both or neither.")
    if args.published:
        runs = syntaxgym_runs(suite, args.source_dir)
    else:
        if not args.paper:
            raise UserError(
                "--file needs --paper 'AUTHORS YEAR, TITLE', so that each imported run says where it came from."
            )
        columns = Columns.parse(patterns([args.columns]) or []) if args.columns else Columns()
        if args.seed_in_model:
            columns = Columns(**{**vars(columns), "seed_in_model": True})
        runs = read_results(
            args.file,
            suite,
            Source(paper=args.paper, file=args.file.name, url=args.url or "", commit=args.commit or ""),
            columns=columns,
            kind=args.format,
            model_name=args.model_name,
            item_offset=args.item_offset,
            source_dir=args.source_dir,
        )
    with store_to_write(args) as store:
        store.add_published(runs)
    summary: dict[str, list[int]] = {}
    for run in runs:
        summary.setdefault(run.model, []).append(run.seed)
    if args.json:
        print(json.dumps({label: sorted(seeds) for label, seeds in summary.items()}, indent=2))
        return 0
    items = sum(len(split) for run in runs for split in run.items.values())
    print(
        f"imported {len(runs)} published runs ({len(summary)} models, {items:,} item verdicts) of {suite.spec.key} "
        f"into {args.store}; compare with e.g. --models YOUR_LABEL,{next(iter(summary))}"
    )
    for label, seeds in summary.items():
        print(f"  {label}: {len(seeds)} seed{'s' if len(seeds) != 1 else ''}")
    return 0


def add_command(commands: Commands) -> None:
    """The `import` command."""
    imported = commands.add_parser(
        "import",
        help="a paper's per-item results as published runs (never mixed with runs made here), for paired compare",
    )
    imported.add_argument("--suite", required=True, metavar="ID[@VERSION]", help="the suite the results are of")
    imported.add_argument(
        "--published", choices=PUBLISHED_SETS, help="a published set structbench pins (files by URL and SHA-256)"
    )
    imported.add_argument("--file", type=Path, metavar="PATH", help="a per-item results file (CSV, TSV or JSON lines)")
    imported.add_argument("--format", choices=("csv", "tsv", "jsonl"), help="the files' format (default: by suffix)")
    imported.add_argument(
        "--columns",
        metavar="KEY=COLUMN,...",
        help="which column holds what: split, item, correct, score, model, seed (default split,item,correct,model,seed; "
        "COLUMN `-` for none)",
    )
    imported.add_argument("--seed-in-model", action="store_true", help="the model column reads NAME_SEED")
    imported.add_argument("--model-name", help="the published model's name (default: the model column)")
    imported.add_argument(
        "--item-offset",
        type=whole(-1_000_000, 1_000_000, "--item-offset 1"),
        default=0,
        help="added to a numeric item before it is matched to an example's item number (1: the file counts from 0)",
    )
    imported.add_argument("--paper", help="the paper the results are from (required with --file)")
    imported.add_argument("--url", help="where the file was published")
    imported.add_argument("--commit", help="the commit of the repository it was taken from")
    add_source_dir(imported)
    add_store(imported, writes=True)
    add_json(imported, "print the imported labels and seeds as JSON")
    imported.set_defaults(handler=cmd_import)
