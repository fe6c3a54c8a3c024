"""`structbench suites`, `models` and `build`: what is registered, and building or verifying frozen suite data."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

from structbench import registry
from structbench.cli.options import Commands, add_json, add_no_progress, add_source_dir
from structbench.cli.progress import build_job
from structbench.data import freeze
from structbench.data.sources import searched, where_to_put
from structbench.errors import SourceUnavailable
from structbench.protocols import hook


def _suite_row(name: str) -> dict[str, Any]:
    suite = registry.suite(name)
    spec = suite.spec
    manifest = freeze.expected_manifest(suite)
    return {
        "id": spec.id,
        "version": spec.version,
        "family": spec.family,
        "protocol": spec.protocol,
        "n_draws": spec.n_draws,
        "primary_metric": spec.primary_metric,
        "higher_is_better": spec.higher_is_better,
        "task": spec.recipe,  # the stored name (`specs.STORED_NAMES`), which scripts read
        "splits": {
            s.name: {"role": s.role, "size": s.size, "test_role": s.test_role, "ranked": s.ranked} for s in spec.splits
        },
        "suite_hash": manifest.suite_hash if manifest else None,
        "released": suite.released_manifest() is not None,
        "built": freeze.is_built(suite),
        "citation": spec.citation,
    }


def _split_cell(name: str, split: dict[str, Any]) -> str:
    """`test=4182:gen`: a split's name, size per draw and, for test splits, its role."""
    size = split["size"] if split["size"] is not None else "?"
    role = {"generalisation": ":gen", "in-distribution": ":in", None: ""}[split["test_role"]]
    return f"{name}={size}{role}{'' if split['ranked'] else '*'}"


def cmd_suites(args: argparse.Namespace) -> int:
    rows = [_suite_row(name) for name in registry.suite_names()]
    if args.json:
        print(json.dumps(rows, indent=2))
        return 0
    from tabulate import tabulate

    table = [
        [
            f"{r['id']}@{r['version']}",
            r["family"],
            r["protocol"],
            r["primary_metric"] + ("" if r["higher_is_better"] else " (lower better)"),
            r["n_draws"],
            (r["suite_hash"] or "-")[:12],
            " ".join(_split_cell(name, s) for name, s in r["splits"].items()),
        ]
        for r in rows
    ]
    # the splits last: a suite with many splits (lookup-tables-mt-longer has 21) would otherwise pad every row
    print(
        tabulate(table, headers=["suite", "family", "protocol", "primary metric", "draws", "hash", "splits (per draw)"])
    )
    print("\nTest splits: gen = generalisation, in = in-distribution; * = shown but not ranked.")
    return 0


def cmd_models(args: argparse.Namespace) -> int:
    rows = []
    for name in registry.model_names():
        factory = registry.model_factory(name)
        doc = (factory.__doc__ or "").strip().splitlines()
        rows.append({"name": name, "protocols": list(hook(factory, "protocols", ())), "summary": doc[0] if doc else ""})
    if args.json:
        print(json.dumps(rows, indent=2))
        return 0
    from tabulate import tabulate

    print(
        tabulate(
            [[r["name"], ", ".join(r["protocols"]), r["summary"]] for r in rows], headers=["model", "protocols", ""]
        )
    )
    return 0


def cmd_build(args: argparse.Namespace) -> int:
    names = args.suites or registry.suite_names()
    failed = False
    skipped = []
    suites = [registry.suite(name) for name in names]
    with build_job(suites, verify=args.verify, quiet=args.no_progress) as job:
        for suite in suites:
            if args.verify:
                if not (freeze.suite_dir(suite) / "manifest.json").is_file():
                    job.write(f"not built {suite.spec.key} (nothing to verify)", file=sys.stdout)
                    job.finish("not built")
                    continue
                problems = freeze.verify(suite)
                for problem in problems:
                    job.write(f"MISMATCH {problem}")
                failed |= bool(problems)
                if not problems:
                    job.write(f"ok {suite.spec.key}", file=sys.stdout)
                job.finish("mismatch" if problems else "ok")
            else:
                try:
                    manifest = freeze.build(suite, args.source_dir)
                except SourceUnavailable as error:
                    if args.suites:  # asked for by name: its files are needed
                        raise
                    job.write(f"skipped {suite.spec.key}: {error.short}")
                    job.finish("skipped")
                    skipped.append(suite.spec.id)
                    continue
                job.write(
                    f"built {suite.spec.key} {manifest.suite_hash[:12]} -> {freeze.suite_dir(suite)}", file=sys.stdout
                )
                job.finish("built")
    if skipped:
        print(skipped_summary("built", len(names), skipped, source_dir=args.source_dir), file=sys.stderr)
    return 1 if failed else 0


def skipped_summary(
    done: str, total: int, skipped: list[str], failed: list[str] | None = None, source_dir: Path | None = None
) -> str:
    """One line for the end of `build` and `quickstart`: how many of `total` suites were `done`
    (built, evaluated), which were skipped because their source files could not be had, with the
    fix (`sources.where_to_put`: to set STRUCTBENCH_SOURCE_DIR where it is unset, else what it, or
    `--source-dir`, is set to), and which `failed` for another reason (printed above)."""
    failed = failed or []
    line = f"{done} {total - len(skipped) - len(failed)} of {total} suites"
    if skipped:
        line += (
            f"; skipped {len(skipped)}, whose source files are not in {searched(source_dir)} and could not be "
            f"downloaded (reasons above): {', '.join(skipped)}"
        )
    if failed:
        line += f"; skipped {len(failed)} for other reasons (above): {', '.join(failed)}"
    if skipped:
        fix = where_to_put(source_dir, "them")
        line += f". {fix[0].upper()}{fix[1:]}; or run online to download those that have a download address"
    return line + "."


def add_commands(commands: Commands) -> None:
    """The `suites`, `models` and `build` commands."""
    suites = commands.add_parser("suites", help="list suites: id, version, family, protocol, split sizes, hash")
    add_json(suites, "print every suite as JSON: its spec, splits, hash and whether it is built here")
    suites.set_defaults(handler=cmd_suites)

    models = commands.add_parser("models", help="list registered models and their protocols")
    add_json(models, "print every model as JSON: name, protocols, summary")
    models.set_defaults(handler=cmd_models)

    build = commands.add_parser("build", help="build or verify frozen suite data")
    build.add_argument(
        "suites", nargs="*", metavar="SUITE", help="suites to build (default: every suite whose files are at hand)"
    )
    build.add_argument(
        "--verify", action="store_true", help="recompute hashes of built data; non-zero exit on mismatch"
    )
    add_source_dir(build)
    add_no_progress(build)
    build.set_defaults(handler=cmd_build)
