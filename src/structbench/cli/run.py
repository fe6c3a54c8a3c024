"""`structbench run`: evaluate models on suites over seeds, answering from the store what it holds."""

from __future__ import annotations

import argparse
import contextlib
from typing import TYPE_CHECKING

from structbench import registry
from structbench.cli.options import (
    Commands,
    add_json,
    add_no_progress,
    add_seeds,
    add_source_dir,
    add_store,
    number,
    patterns,
    store_to_write,
    whole,
)
from structbench.cli.progress import SuiteRuns, is_quiet, seed_ended
from structbench.errors import UserError
from structbench.runs.arguments import parse_seeds, parse_settings
from structbench.runs.request import ModelRequest
from structbench.runs.runner import Evaluation, Runner
from structbench.runs.settings import setting_example, text_settings
from structbench.specs import ModelSpec

if TYPE_CHECKING:
    from structbench.execution.supervised import InProcess, SupervisedWorker


def cmd_run(args: argparse.Namespace) -> int:
    suites, names = patterns(args.suite) or [], patterns(args.model) or []
    if not suites:
        raise UserError(f"--suite {' '.join(args.suite)!r} names no suite; give one, e.g. --suite lookup-tables "
                        "(`structbench suites` lists them).")  # fmt: skip
    if not names:
        raise UserError(f"--model {' '.join(args.model)!r} names no model; give one, e.g. --model copy "
                        "(`structbench models` lists them).")  # fmt: skip
    seeds = parse_seeds(args.seeds)
    if args.name is not None and len(names) > 1:
        raise UserError(
            f"--name {args.name!r} names one model, but --model gives {len(names)}; run them one at a time."
        )
    for suite in suites:  # every name of the grid is checked before anything runs
        registry.suite(suite)
    asked = []
    for name in names:  # ModelRequest.of refuses an unknown setting or a value its constructor rules out
        # a str setting takes `111` as "111"; a pair that is no key=value is shown one of the model's settings
        params = parse_settings(args.set, text=text_settings(name), example=setting_example(name))
        asked.append(ModelRequest.of(ModelSpec(name=name, params=params), name=args.name, limit=args.limit))
    records = []
    quiet = is_quiet(args)
    with store_to_write(args) as store, supervisor_of(args, "run", False if quiet else None) as supervisor:
        runner = Runner(store, source_dir=args.source_dir, progress=False if quiet else None, supervisor=supervisor)
        resolved = [registry.suite(suite) for suite in suites]
        labels = [(model.label, model.shown(model.label)) for model in asked]
        progress = SuiteRuns("run", resolved, [labels] * len(resolved), seeds, store, quiet=quiet, force=args.force)
        runner.log, runner.seed_ended = progress.job.write, seed_ended(progress.job)
        with progress.job:
            for suite, resolved_suite in zip(suites, resolved, strict=True):
                progress.build(resolved_suite, args.source_dir)
                for model in asked:
                    evaluation = runner.evaluation(suite, model, seeds, force=args.force)
                    records.append(evaluation.record)
                    if not args.json:
                        with progress.job.printing():
                            _print_record(evaluation)
                            print()
    if args.json:  # one record as an object (what scripts read), a grid as a list of them
        texts = [record.model_dump_json(indent=2) for record in records]
        print(texts[0] if len(texts) == 1 else "[\n" + ",\n".join(texts) + "\n]")
    return 0 if all(v != "failed" for record in records for v in record.status.values()) else 1


def supervisor_of(
    args: argparse.Namespace, command: str, progress: bool | None
) -> contextlib.AbstractContextManager[SupervisedWorker | InProcess]:
    """Where the command's models run: a supervised worker process (`--timeout`, `--max-memory`), or
    with `--in-process` this one (what a model starts still ends with its seed)."""
    from structbench.execution.supervised import InProcess, SupervisedWorker

    if args.in_process:
        return InProcess()

    return SupervisedWorker(
        command=command,
        timeout=args.timeout,
        max_memory_mb=args.max_memory,
        source_dir=args.source_dir,
        progress=progress,
    )


def add_supervision(parser: argparse.ArgumentParser) -> None:
    """`--timeout`, `--max-memory` and `--in-process`: how a command's models are supervised."""
    from structbench.execution.supervised import DEFAULT_TIMEOUT

    parser.add_argument(
        "--timeout",
        type=number(above=0, example="3600"),
        default=DEFAULT_TIMEOUT,
        metavar="SECONDS",
        help=f"fail a seed whose fit and prediction take longer, ending its process (default {DEFAULT_TIMEOUT:g})",
    )
    parser.add_argument(
        "--max-memory",
        type=number(above=0, example="8000"),
        metavar="MB",
        help="fail a seed whose process (with what it started) holds more memory (default: no limit; Linux)",
    )
    parser.add_argument(
        "--in-process",
        action="store_true",
        help="run the models in structbench's own process (no time-out or memory limit): e.g. to debug with pdb",
    )


def _print_record(evaluation: Evaluation) -> None:
    """One cell's table, then what it does not show: which seeds were run now and which read from the
    store, and each seed that failed or is n/a (the model does not speak the suite's protocol), with why."""
    from tabulate import tabulate

    record = evaluation.record
    rows = []
    for split, metrics in record.scores.items():
        for metric, stats in metrics.items():
            shown = "" if stats.ci_low is None else f"[{stats.ci_low:.4f}, {stats.ci_high:.4f}]"
            rows.append([split, metric, f"{stats.mean:.4f}", shown, stats.interval, stats.n_seeds])
    print(f"{record.suite}@{record.version} ({record.suite_hash[:12]}) x {record.model}")
    if rows:
        headers = ["split", "metric", "mean", "95% interval", "method", "seeds"]
        print(tabulate(rows, headers=headers, disable_numparse=True))
        for line in _group_lines(evaluation):
            print(line)
    if sources := evaluation.sources():
        print(sources)
    not_applicable = {seed: record.errors.get(seed, "") for seed, status in record.status.items() if status == "n/a"}
    if not_applicable and len(set(not_applicable.values())) == 1 and len(not_applicable) == len(record.status):
        print(f"n/a: {next(iter(not_applicable.values()))}")  # one reason for every seed: the model, not a seed
        return
    for seed, status in record.status.items():
        if status in ("failed", "n/a"):
            print(f"seed {seed} {status}: {record.errors.get(seed, '')}")


def _group_lines(evaluation: Evaluation) -> list[str]:
    """For a suite that groups its splits (`Suite.split_groups`, SyntaxGym's circuits): its score, the mean
    of the primary metric's means over the ranked splits the score averages, and the same mean per group;
    none where a split of it has no cell (a run with `--limit` has every split)."""
    from structbench.analysis.suite_score import score_splits

    record = evaluation.record
    suite = registry.suite(f"{record.suite}@{record.version}")
    if not suite.split_groups:
        return []
    metric = suite.spec.primary_metric

    def mean(splits: tuple[str, ...]) -> str:
        values = [record.scores[s][metric].mean for s in splits if metric in record.scores.get(s, {})]
        return f"{sum(values) / len(values):.4f}" if values and len(values) == len(splits) else "-"

    ranked = tuple(score_splits(suite.spec))
    lines = [f"score: {mean(ranked)} (mean {metric} over the {len(ranked)} ranked splits)"]
    lines += [f"  {group}: {mean(splits)} ({len(splits)} splits)" for group, splits in suite.split_groups.items()]
    return lines


def add_command(commands: Commands) -> None:
    """The `run` command."""
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
    add_seeds(run, "0", "comma-separated seeds (default 0)")
    run.add_argument(
        "--set",
        action="append",
        default=[],
        metavar="KEY=VALUE",
        help="model setting (a constructor keyword; values are read as JSON where they parse, as text for a "
        "setting declared `str`); repeatable",
    )
    run.add_argument(
        "--name",
        metavar="LABEL",
        help="the label the leaderboard shows (default: the model's own name, e.g. a command's hello name)",
    )
    run.add_argument(
        "--limit",
        type=whole(1, example="100"),
        metavar="N",
        help="ask only the first N examples of each test split: a quick partial run, stored apart and never ranked",
    )
    run.add_argument(
        "--force", action="store_true", help="run every seed again, replacing what the store holds for them"
    )
    add_store(run, writes=True)
    add_json(run, "print the result record as JSON (a list of records for several runs)")
    add_source_dir(run)
    add_no_progress(run)
    add_supervision(run)
    run.set_defaults(handler=cmd_run)
