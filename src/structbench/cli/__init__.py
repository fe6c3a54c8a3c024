"""The `structbench` command line: suites, models, build, run, sweep, report, quickstart.

Scripts rely on these commands and on the JSON they print (docs/architecture.md, "Command line").
Errors a user can cause end in one sentence on stderr and exit status 2; a data
verification failure exits with status 1.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from structbench import __version__, registry
from structbench.data import freeze
from structbench.errors import SourceUnavailable, UserError
from structbench.runs.runner import Asked, Runner, default_store_path
from structbench.runs.settings import check_settings
from structbench.specs import ModelSpec
from structbench.store import Store
from structbench.suite import Suite

QUICKSTART_MODELS = ("oracle", "copy", "random", "majority")


def existing_store(path: Path) -> Path:
    """`path`, which commands that only read results need to exist (opening it would create it)."""
    if not Path(path).is_file():
        raise UserError(f"no results store at {path}; run `structbench run` first or pass --store.")
    return path


MAX_SEEDS = 10_000
"""The most seeds one --seeds may name: a range typo (0-10000000) is refused, not expanded."""


def parse_seeds(text: str) -> list[int]:
    """Seeds from `0,1,2`, a range `0-9` (both ends included) or a mix of both."""
    seeds: list[int] = []
    try:
        for part in (p.strip() for p in text.split(",") if p.strip()):
            first, dash, last = part.partition("-")
            span = range(int(first), int(last) + 1) if dash else range(int(part), int(part) + 1)
            if len(span) > MAX_SEEDS or len(seeds) + len(span) > MAX_SEEDS:
                raise UserError(f"--seeds {text!r} asks for more than {MAX_SEEDS} seeds; run fewer at a time.")
            seeds += span
    except ValueError:
        raise UserError(
            f"--seeds {text!r} is not a comma-separated list of integers or ranges, e.g. --seeds 0,1,2 or --seeds 0-9."
        ) from None
    if not seeds or len(set(seeds)) != len(seeds):
        raise UserError(f"--seeds {text!r} must list at least one seed, each once.")
    if any(not 0 <= seed < 2**63 for seed in seeds):
        raise UserError(f"--seeds {text!r} must be integers from 0 to 2**63-1.")
    return seeds


def parse_settings(pairs: Sequence[str]) -> dict[str, Any]:
    settings: dict[str, Any] = {}
    for pair in pairs:
        key, sep, raw = pair.partition("=")
        if not sep or not key:
            raise UserError(f"--set {pair!r} is not key=value, e.g. --set hidden_size=256.")
        try:
            value = json.loads(raw)
        except json.JSONDecodeError:
            value = raw
        if isinstance(value, list | dict):
            value = raw
        settings[key] = value
    return settings


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
        "task": spec.task,
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
        rows.append(
            {"name": name, "protocols": list(getattr(factory, "protocols", ())), "summary": doc[0] if doc else ""}
        )
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
    for name in names:
        suite = registry.suite(name)
        if args.verify:
            if not (freeze.suite_dir(suite) / "manifest.json").is_file():
                print(f"not built {suite.spec.key} (nothing to verify)")
                continue
            problems = freeze.verify(suite)
            for problem in problems:
                print(f"MISMATCH {problem}", file=sys.stderr)
            failed |= bool(problems)
            if not problems:
                print(f"ok {suite.spec.key}")
        else:
            try:
                manifest = freeze.build(suite, args.source_dir)
            except SourceUnavailable as error:
                if args.suites:  # asked for by name: its files are needed
                    raise
                print(f"skipped {suite.spec.key}: {error}", file=sys.stderr)
                skipped.append(suite.spec.id)
                continue
            print(f"built {suite.spec.key} {manifest.suite_hash[:12]} -> {freeze.suite_dir(suite)}")
    if skipped:
        print(
            f"built {len(names) - len(skipped)} of {len(names)} suites; skipped {len(skipped)}, whose source files "
            f"could not be found or downloaded (reasons above): {', '.join(skipped)}.",
            file=sys.stderr,
        )
    return 1 if failed else 0


def cmd_run(args: argparse.Namespace) -> int:
    suites, names = _patterns(args.suite) or [], _patterns(args.model) or []
    params = parse_settings(args.set)
    seeds = parse_seeds(args.seeds)
    if args.name is not None and len(names) > 1:
        raise UserError(
            f"--name {args.name!r} names one model, but --model gives {len(names)}; run them one at a time."
        )
    for suite in suites:  # every name of the grid is checked before anything runs
        registry.suite(suite)
    asked = []
    for name in names:
        spec = ModelSpec(name=name, params=params)
        check_settings(spec)
        asked.append(Asked.of(spec, name=args.name, limit=args.limit))
    records = []
    with Store(args.store) as store:
        runner = Runner(store, source_dir=args.source_dir, progress=False if args.no_progress else None)
        for suite in suites:
            for model in asked:
                record = runner.evaluate(suite, model, seeds, force=args.force)
                records.append(record)
                if not args.json:
                    _print_record(record)
                    print()
    if args.json:  # one record as an object (what scripts read), a grid as a list of them
        texts = [record.model_dump_json(indent=2) for record in records]
        print(texts[0] if len(texts) == 1 else "[\n" + ",\n".join(texts) + "\n]")
    return 0 if all(v != "failed" for record in records for v in record.status.values()) else 1


def _print_record(record: Any) -> None:
    from tabulate import tabulate

    rows = []
    for split, metrics in record.scores.items():
        for metric, stats in metrics.items():
            shown = "" if stats.ci_low is None else f"[{stats.ci_low:.4f}, {stats.ci_high:.4f}]"
            rows.append([split, metric, f"{stats.mean:.4f}", shown, stats.interval, stats.n_seeds])
    print(f"{record.suite}@{record.version} ({record.suite_hash[:12]}) x {record.model}")
    headers = ["split", "metric", "mean", "95% interval", "method", "seeds"]
    print(tabulate(rows, headers=headers, disable_numparse=True))
    for seed, error in record.errors.items():
        print(f"seed {seed} failed: {error}")


def cmd_compare(args: argparse.Namespace) -> int:
    from tabulate import tabulate

    from structbench.analysis.compare import compare

    models = [m.strip() for m in args.models.split(",") if m.strip()]
    if len(models) != 2:
        raise UserError(f"--models {args.models!r} must name two models, e.g. --models ngram,unigram.")
    suite = registry.suite(args.suite)
    if args.statistic:
        return compare_statistic_command(args, suite, models[0], models[1])
    with Store(existing_store(args.store)) as store:
        results = compare(store, suite, models[0], models[1], [args.split] if args.split else None)
    if args.json:
        print(json.dumps([{**vars(r), "verdict": r.verdict} for r in results], indent=2))
        return 0
    first = results[0]
    print(
        f"{first.suite}: {first.model_a} (A) - {first.model_b} (B) on {first.metric}, seeds "
        f"{','.join(map(str, first.seeds))}; paired bootstrap over seeds and examples ({first.resamples} resamples)"
    )
    rows = [
        [r.split, r.n_examples, f"{r.mean_a:.4f}", f"{r.mean_b:.4f}", f"{r.difference:+.4f}",
         f"[{r.ci_low:+.4f}, {r.ci_high:+.4f}]", f"{r.p_value:.4f}", r.verdict]
        for r in results
    ]  # fmt: skip
    headers = ["split", "examples", "A", "B", "A - B", "95% interval", "p", "verdict"]
    print(tabulate(rows, headers=headers, disable_numparse=True))
    return 0


def compare_statistic_command(args: argparse.Namespace, suite: Suite, model_a: str, model_b: str) -> int:
    """`compare --statistic NAME`: a two-sample test of a statistic of training between two models
    (Welch's t-test; the logrank test when some seeds stopped before reaching it)."""
    from structbench.analysis.statistics import compare_statistic

    with Store(existing_store(args.store)) as store:
        comparison = compare_statistic(store, suite, model_a, model_b, args.statistic)
    if args.json:
        print(json.dumps(comparison.as_json(), indent=2))
        return 0
    direction = {None: "", True: " (higher is better)", False: " (lower is better)"}[comparison.higher_is_better]
    print(
        f"{comparison.suite}: {comparison.model_a} (A) - {comparison.model_b} (B) on {comparison.statistic}{direction}"
    )
    for label, side in ((comparison.model_a, comparison.a), (comparison.model_b, comparison.b)):
        listed = {seed: f"{value:g}" for seed, value in side.values.items()}
        listed |= {seed: f">{bound:g}" for seed, bound in side.censored.items()}
        missing = f"; seeds without it: {', '.join(map(str, side.without))}" if side.without else ""
        print(f"  {label}: {', '.join(f'{seed}: {listed[seed]}' for seed in sorted(listed))}{missing}")
    result = comparison.result
    interval = "" if result.test == "logrank" else f" [{result.ci_low:+.6g}, {result.ci_high:+.6g}]"
    means = "restricted means (censored seeds at their bound)" if result.test == "logrank" else "means"
    print(
        f"{means}: A {comparison.a.mean:.6g}, B {comparison.b.mean:.6g}, A - B {result.difference:+.6g}{interval}; "
        f"{result.shown()}: {comparison.verdict}"
    )
    return 0


def cmd_samples(args: argparse.Namespace) -> int:
    from structbench.analysis.samples import samples

    seeds = parse_seeds(args.seeds) if args.seeds else None
    with Store(existing_store(args.store)) as store:
        lines = samples(
            store, registry.suite(args.suite), args.model, seeds=seeds, split=args.split, wrong_only=args.wrong
        )
        try:
            for line in lines:
                print(json.dumps(line, ensure_ascii=False))
            sys.stdout.flush()
        except BrokenPipeError:  # `| head`: the reader has what it wanted; no traceback at exit either
            os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
    return 0


def cmd_check(args: argparse.Namespace) -> int:
    from tabulate import tabulate

    from structbench.analysis import golden

    if args.tolerance is not None and args.tolerance < 0:
        raise UserError(f"--tolerance {args.tolerance} must be 0 or more, e.g. --tolerance 0.005.")
    if args.write:
        suites, names = _patterns(args.suite), _patterns(args.model)
        if not suites or not names:
            raise UserError("check --write needs the cells to record: --suite A[,B] --model X[,Y] [--seeds ...].")
        if args.name is not None and len(names) > 1:
            raise UserError(f"--name {args.name!r} names one model, but --model gives {len(names)}.")
        params, seeds = parse_settings(args.set), parse_seeds(args.seeds)
        specs = [ModelSpec(name=name, params=params) for name in names]
        asked = [Asked.of(spec, name=args.name) for spec in specs]  # every name checked before anything runs
        metrics = None if args.all_metrics else {registry.suite(suite).spec.primary_metric for suite in suites}
        entries = []
        with Store(args.store) as store:
            runner = Runner(store, source_dir=args.source_dir, progress=False if args.no_progress else None)
            for suite in suites:
                for spec, model in zip(specs, asked, strict=True):
                    record = runner.evaluate(suite, model, seeds)
                    if any(status != "done" for status in record.status.values()):
                        raise UserError(
                            f"{suite} x {record.model}: seeds {record.status} did not all finish; a golden file "
                            "records finished runs only, so fix the model and write it again."
                        )
                    entries.append(golden.entry(record, spec, args.name, None if metrics is None else sorted(metrics)))
        golden.write(args.golden, entries, args.tolerance or 0.0)
        print(f"wrote {sum(len(e.cells) for e in entries)} cells of {len(entries)} runs to {args.golden}")
        return 0
    expected = golden.read(args.golden)
    with Store(args.store) as store:
        runner = Runner(store, source_dir=args.source_dir, progress=False if args.no_progress else None)
        verdicts = golden.check(runner, expected, args.tolerance)
    tolerance = expected.tolerance if args.tolerance is None else args.tolerance

    def shown(value: float | None) -> str:
        return "undefined" if value is None else f"{value:.6f}"

    rows = [
        [v.suite, v.model, v.split, v.metric, shown(v.golden), shown(v.now), "MOVED" if v.moved else "ok", v.reason]
        for v in verdicts
    ]
    print(
        tabulate(
            rows,
            headers=["suite", "model", "split", "metric", "golden", "now", "verdict", "why"],
            disable_numparse=True,
        )
    )
    moved = [v for v in verdicts if v.moved]
    for v in moved:
        why = v.reason or f"moved from {shown(v.golden)} to {shown(v.now)} (tolerance {tolerance:g})"
        print(f"structbench check: {v.suite} x {v.model}, {v.split} {v.metric}: {why}", file=sys.stderr)
    print(f"{len(verdicts)} cells checked against {args.golden}: {len(moved)} moved.", file=sys.stderr)
    return 1 if moved else 0


def cmd_claims(args: argparse.Namespace) -> int:
    from tabulate import tabulate

    from structbench.analysis.claims import check_all, claim_cells
    from structbench.reports.boards import aggregate

    with Store(existing_store(args.store)) as store:
        verdicts = check_all(claim_cells(aggregate(store), store.runs()))
    if args.json:
        print(json.dumps([{"id": v.claim.id, **v.model_dump(exclude={"claim"})} for v in verdicts], indent=2))
        return 0
    rows = [[v.claim.id, v.status, v.evidence] for v in verdicts]
    print(tabulate(rows, headers=["claim", "status", "evidence (%)"], maxcolwidths=[None, None, 90]))
    return 0


def _patterns(values: Sequence[str] | None) -> list[str] | None:
    """Comma lists and repeated options as one list of patterns; None when none was given."""
    if not values:
        return None
    return [part.strip() for value in values for part in value.split(",") if part.strip()]


def cmd_report(args: argparse.Namespace) -> int:
    from structbench.reports.render import write_report

    with Store(existing_store(args.store)) as store:
        index = write_report(
            store, args.out, suites=_patterns(args.suites), models=_patterns(args.models), title=args.title
        )
    print(index)
    return 0


def cmd_quickstart(args: argparse.Namespace) -> int:
    from structbench.baselines.neural.settings import quickstart_models
    from structbench.reports.render import write_report

    seeds = parse_seeds(args.seeds)
    with Store(args.store) as store:
        runner = Runner(store, source_dir=args.source_dir)
        for name in args.suites or registry.suite_names():
            suite = registry.suite(name)
            try:
                manifest = freeze.ensure_built(suite, args.source_dir)
            except UserError as error:
                print(f"suite {suite.spec.key} skipped: {error}", file=sys.stderr)
                continue
            print(f"suite {suite.spec.key} {manifest.suite_hash[:12]}", file=sys.stderr)
            models = QUICKSTART_MODELS + (quickstart_models(name) if args.neural else ())
            for model in models:
                record = runner.evaluate(name, ModelSpec(name=model), seeds)
                primary = suite.spec.primary_metric
                means = [m[primary].mean for m in record.scores.values() if primary in m]
                shown = f"mean {primary} over test splits {sum(means) / len(means):.3f}" if means else "n/a"
                print(f"  {model:<18} {shown}", file=sys.stderr)
        index = write_report(store, args.out)
    print(f"leaderboard written to {index}")
    return 0


def cmd_sweep(args: argparse.Namespace) -> int:
    """`sweep GRID.yaml`: the grid's runs on a process pool or Ray, stored by this process alone."""
    from structbench.sweep import run_sweep, summary_line
    from structbench.sweep.executors import Executor, LocalExecutor, RayExecutor

    if args.timeout is not None and args.timeout <= 0:
        raise UserError(f"--timeout {args.timeout:g} must be a positive number of seconds, e.g. --timeout 3600.")
    if args.workers is not None and args.workers < 1:
        raise UserError(f"--workers {args.workers} must be at least 1, e.g. --workers 4.")
    if args.address and args.executor != "ray":
        raise UserError(f"--address {args.address} names a Ray cluster; add --executor ray.")

    def executor() -> Executor:
        if args.executor == "ray":
            return RayExecutor(args.workers, timeout=args.timeout, address=args.address)
        return LocalExecutor(args.workers or os.cpu_count() or 1, timeout=args.timeout)

    with Store(args.store) as store:
        summary = run_sweep(
            args.grid,
            store,
            executor,
            source_dir=args.source_dir,
            progress=not args.no_progress,
            dry_run=args.dry_run,
            records=args.json,
        )
    if args.json:
        print(summary.model_dump_json(indent=2, by_alias=True))
    if not args.dry_run:
        print(summary_line(summary), file=sys.stderr)
    return 2 if summary.refused else 1 if summary.failed else 0


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="structbench", description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--version", action="version", version=f"structbench {__version__}")
    commands = parser.add_subparsers(dest="command", required=True)

    suites = commands.add_parser("suites", help="list suites: id, version, family, protocol, split sizes, hash")
    suites.add_argument("--json", action="store_true")
    suites.set_defaults(handler=cmd_suites)

    models = commands.add_parser("models", help="list registered models and their protocols")
    models.add_argument("--json", action="store_true")
    models.set_defaults(handler=cmd_models)

    source_help = "folder laid out like the published reference data (overrides STRUCTBENCH_SOURCE_DIR)"
    build = commands.add_parser("build", help="build or verify frozen suite data")
    build.add_argument("suites", nargs="*", metavar="SUITE")
    build.add_argument(
        "--verify", action="store_true", help="recompute hashes of built data; non-zero exit on mismatch"
    )
    build.add_argument("--source-dir", type=Path, help=source_help)
    build.set_defaults(handler=cmd_build)

    store_help = f"results database (default {default_store_path()})"
    run = commands.add_parser("run", help="evaluate a model on a suite over seeds")
    run.add_argument(
        "--suite",
        required=True,
        action="append",
        metavar="ID[@VERSION]",
        help="suite to evaluate on (`structbench suites` lists them); repeat it or give a comma list for several",
    )
    run.add_argument(
        "--model",
        required=True,
        action="append",
        metavar="NAME",
        help="registered model (`structbench models`), module:Class, or command; repeat it or give a comma list: "
        "every model runs on every suite",
    )
    run.add_argument("--seeds", default="0", help="comma-separated seeds (default 0)")
    run.add_argument(
        "--set",
        action="append",
        default=[],
        metavar="KEY=VALUE",
        help="model setting (a constructor keyword; values are read as JSON where they parse); repeatable",
    )
    run.add_argument(
        "--name",
        metavar="LABEL",
        help="the label the leaderboard shows (default: the model's own name, e.g. a command's hello name)",
    )
    run.add_argument(
        "--limit",
        type=int,
        metavar="N",
        help="ask only the first N examples of each test split: a quick partial run, stored apart and never ranked",
    )
    run.add_argument(
        "--force", action="store_true", help="run every seed again, replacing what the store holds for them"
    )
    run.add_argument("--store", type=Path, default=default_store_path(), help=store_help)
    run.add_argument(
        "--json", action="store_true", help="print the result record as JSON (a list of records for several runs)"
    )
    run.add_argument("--source-dir", type=Path, help=source_help)
    run.add_argument("--no-progress", action="store_true", help="no progress bar")
    run.set_defaults(handler=cmd_run)

    compare = commands.add_parser("compare", help="paired comparison of two models on a suite: difference, interval, p")
    compare.add_argument("--suite", required=True, metavar="ID[@VERSION]")
    compare.add_argument("--models", required=True, metavar="A,B", help="two model labels, as the report shows them")
    compare.add_argument("--split", help="one test split (default: each ranked split)")
    compare.add_argument(
        "--statistic",
        metavar="NAME",
        help="compare a statistic of training instead (e.g. trials_to_criterion): Welch's t-test over seeds, "
        "or the logrank test when some seeds never reached it",
    )
    compare.add_argument("--store", type=Path, default=default_store_path(), help=store_help)
    compare.add_argument("--json", action="store_true", help="print the comparisons as JSON")
    compare.set_defaults(handler=cmd_compare)

    sampled = commands.add_parser(
        "samples", help="a model's stored predictions beside their examples, one JSON line each (for debugging)"
    )
    sampled.add_argument("--suite", required=True, metavar="ID[@VERSION]")
    sampled.add_argument("--model", required=True, metavar="LABEL", help="the model label, as the report shows it")
    sampled.add_argument("--seeds", help="comma-separated seeds (default: every finished seed)")
    sampled.add_argument("--split", help="one test split (default: every test split)")
    sampled.add_argument("--wrong", action="store_true", help="only the examples the model got wrong")
    sampled.add_argument("--store", type=Path, default=default_store_path(), help=store_help)
    sampled.set_defaults(handler=cmd_samples)

    checker = commands.add_parser(
        "check",
        help="a model author's regression check: re-read or re-run the cells of a golden file; exit 1 when one moved",
    )
    checker.add_argument("golden", type=Path, metavar="GOLDEN.json", help="the golden file to check or --write")
    checker.add_argument(
        "--tolerance", type=float, help="largest absolute change of a mean that passes (default: the file's, else 0)"
    )
    checker.add_argument(
        "--write", action="store_true", help="evaluate --suite x --model over --seeds and write their cells to the file"
    )
    checker.add_argument("--suite", action="append", metavar="ID[@VERSION]", help="with --write: suites (comma lists)")
    checker.add_argument("--model", action="append", metavar="NAME", help="with --write: models, as `run` takes them")
    checker.add_argument("--seeds", default="0", help="with --write: comma-separated seeds (default 0)")
    checker.add_argument("--set", action="append", default=[], metavar="KEY=VALUE", help="with --write: model setting")
    checker.add_argument("--name", metavar="LABEL", help="with --write: the model's label")
    checker.add_argument(
        "--all-metrics", action="store_true", help="with --write: every metric, not only each suite's primary one"
    )
    checker.add_argument("--store", type=Path, default=default_store_path(), help=store_help)
    checker.add_argument("--source-dir", type=Path, help=source_help)
    checker.add_argument("--no-progress", action="store_true", help="no progress bar")
    checker.set_defaults(handler=cmd_check)

    sweep = commands.add_parser(
        "sweep", help="run a grid of suites x models x settings x seeds on a process pool or Ray; resumable"
    )
    sweep.add_argument("grid", type=Path, metavar="GRID.yaml", help="the grid: suites, models (--set grids), seeds")
    sweep.add_argument(
        "--executor", choices=("local", "ray"), default="local", help="local process pool (default) or Ray"
    )
    sweep.add_argument(
        "--workers",
        type=int,
        metavar="N",
        help="runs at once (default: the CPUs of this machine, or of the Ray cluster)",
    )
    sweep.add_argument("--address", metavar="ADDR", help="with --executor ray: the cluster (default: a local Ray)")
    sweep.add_argument(
        "--timeout",
        type=float,
        metavar="SECONDS",
        help="fail a run that takes longer, killing its worker (default: none)",
    )
    sweep.add_argument("--store", type=Path, default=default_store_path(), help=store_help)
    sweep.add_argument("--source-dir", type=Path, help=source_help)
    sweep.add_argument("--json", action="store_true", help="print a summary: counts, problems, one record per cell")
    sweep.add_argument("--dry-run", action="store_true", help="print the runs it would make, longest first, and stop")
    sweep.add_argument("--no-progress", action="store_true", help="no progress bar")
    sweep.set_defaults(handler=cmd_sweep)

    claims = commands.add_parser("claims", help="the papers' findings checked on the store: reproduced or not")
    claims.add_argument("--store", type=Path, default=default_store_path(), help=store_help)
    claims.add_argument("--json", action="store_true", help="print the verdicts as JSON")
    claims.set_defaults(handler=cmd_claims)

    report = commands.add_parser("report", help="render the leaderboard site from the store")
    report.add_argument("--store", type=Path, default=default_store_path(), help=store_help)
    report.add_argument("--out", type=Path, required=True, metavar="DIR", help="folder of the static site")
    report.add_argument(
        "--suites", nargs="+", metavar="ID", help="only these suite ids (comma lists and shell patterns: 'scan-*')"
    )
    report.add_argument(
        "--models", nargs="+", metavar="LABEL", help="only these model labels (comma lists and shell patterns)"
    )
    report.add_argument("--title", default="structbench leaderboard", help="the site's title")
    report.set_defaults(handler=cmd_report)

    quick = commands.add_parser("quickstart", help="build every suite, evaluate the fast baselines, render the report")
    quick.add_argument("suites", nargs="*", metavar="SUITE", help="only these suites (default: all)")
    quick.add_argument("--store", type=Path, default=default_store_path(), help=store_help)
    quick.add_argument("--out", type=Path, default=Path("structbench-report"), metavar="DIR")
    quick.add_argument("--seeds", default="0,1,2,3,4")
    quick.add_argument("--source-dir", type=Path, help=source_help)
    quick.add_argument(
        "--neural", action="store_true", help="also train neural baselines (cpu-small) on lookup-tables-mt and miniscan"
    )
    quick.set_defaults(handler=cmd_quickstart)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    if os.getcwd() not in sys.path:  # `--model my_model:MyModel` from the model's folder, as `python -m` would
        sys.path.append(os.getcwd())
    try:
        return int(args.handler(args))
    except UserError as error:
        print(f"structbench: error: {error}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print("structbench: interrupted; finished runs are stored and the rest will be redone.", file=sys.stderr)
        return 130


if __name__ == "__main__":
    sys.exit(main())
