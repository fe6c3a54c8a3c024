"""`structbench runs`, `compare`, `samples`, `check` and `claims`: questions asked of stored results."""

from __future__ import annotations

import argparse
import fnmatch
import json
import os
import shutil
import sys
import textwrap
from collections import Counter
from pathlib import Path
from typing import TYPE_CHECKING

from structbench import registry
from structbench.cli.options import (
    Commands,
    add_json,
    add_no_progress,
    add_seeds,
    add_source_dir,
    add_store,
    existing_store,
    number,
    patterns,
    store_to_write,
)
from structbench.cli.reference import add_no_reference, reference_copy
from structbench.errors import UserError
from structbench.runs.arguments import parse_seeds, parse_settings
from structbench.runs.request import ModelRequest
from structbench.runs.runner import Runner
from structbench.runs.settings import text_settings
from structbench.specs import ModelSpec
from structbench.store import StoreReader
from structbench.store.published import is_published
from structbench.suite import Suite

if TYPE_CHECKING:
    from structbench.analysis.claims import Verdict
    from structbench.analysis.compare import Comparison


def cmd_runs(args: argparse.Namespace) -> int:
    """`runs`: the labels a store holds, each with its suite version, configuration and seeds, so that
    a user can find the label `compare` and `samples` take and the `run` arguments that made it."""
    from tabulate import tabulate

    from structbench.analysis.labels import stored_models

    if args.suite:
        registry.suite(args.suite)  # an unknown suite is a did-you-mean, not an empty table
    with StoreReader(existing_store(args.store)) as store:
        found = stored_models(store, args.suite, args.model)
        suite_id = registry.suite(args.suite).spec.id if args.suite else None
        published = [
            row
            for row in store.published_labels(suite_id)
            if not args.model or any(fnmatch.fnmatchcase(row[2], p) for p in patterns([args.model]) or [])
        ]
    if args.json:
        print(json.dumps([model.as_json() for model in found], indent=2))
        return 0
    if not found:
        asked = " ".join(
            f"--{option} {value}" for option, value in (("suite", args.suite), ("model", args.model)) if value
        )
        print(f"no stored runs{' match ' + asked if asked else ''} in {args.store}.")
        if published:  # imported per-item results, never runs made here: listed apart
            print_published_labels(published)
        return 0
    rows = [
        [
            model.label,
            model.key,
            model.arguments + ("" if model.configuration is None else " (+ recipe)"),
            " ".join(f"{seed}:{status}" for seed, status in sorted(model.status.items())),
        ]
        for model in found
    ]
    print(tabulate(rows, headers=["label", "suite", "configuration (as `run` takes it)", "seed:status"]))
    if published:  # imported per-item results, never runs made here: listed apart, after them
        print_published_labels(published)
    return 0


def print_published_labels(published: list[tuple[str, str, str, int]]) -> None:
    """The published runs a store holds (`structbench import`), one line per model."""
    print("published runs (imported per-item results, not run here; `compare` pairs with them by item):")
    for suite, version, label, seeds in published:
        print(f"  {label} on {suite}@{version}: {seeds} seed{'s' if seeds != 1 else ''}")


def cmd_compare(args: argparse.Namespace) -> int:
    from tabulate import tabulate

    from structbench.analysis.compare import compare

    models = patterns([args.models]) or []
    if len(models) != 2:
        raise UserError(f"--models {args.models!r} must name two models, e.g. --models ngram,unigram.")
    suite = registry.suite(args.suite)
    if args.statistic:
        return compare_statistic_command(args, suite, models[0], models[1])
    with StoreReader(existing_store(args.store)) as store:
        if any(is_published(model) for model in models):
            from structbench.analysis.published_compare import compare_published

            results = compare_published(store, suite, models[0], models[1], [args.split] if args.split else None)
        else:
            results = compare(store, suite, models[0], models[1], [args.split] if args.split else None)
    if args.json:
        print(json.dumps([{**vars(r), "verdict": r.verdict} for r in results], indent=2))
        return 0
    first = results[0]
    if first.seeds_b is None:
        print(
            f"{first.suite}: {first.model_a} (A) - {first.model_b} (B) on {first.metric}, seeds "
            f"{','.join(map(str, first.seeds))}; paired bootstrap over seeds and examples ({first.resamples} resamples)"
        )
    else:
        print(
            f"{first.suite}: {first.model_a} (A, seeds {','.join(map(str, first.seeds))}) - {first.model_b} "
            f"(B, seeds {','.join(map(str, first.seeds_b))}) on {first.metric}, paired by item; test: "
            + "; ".join(sorted({r.test for r in results}))
            + f"; 95% intervals: paired bootstrap over items ({first.resamples} resamples)"
        )
        rows = [
            [r.split, r.n_examples, f"{r.mean_a:.4f}", f"{r.mean_b:.4f}", f"{r.difference:+.4f}",
             f"[{r.ci_low:+.4f}, {r.ci_high:+.4f}]",
             "" if r.discordant is None else f"{r.discordant[0]}/{r.discordant[1]}", f"{r.p_value:.4f}", r.verdict]
            for r in results
        ]  # fmt: skip
        headers = ["split", "items", "A", "B", "A - B", "95% interval", "A only/B only", "p", "verdict"]
        print(tabulate(rows, headers=headers, disable_numparse=True))
        print_reported(suite, results)
        return 0
    rows = [
        [r.split, r.n_examples, f"{r.mean_a:.4f}", f"{r.mean_b:.4f}", f"{r.difference:+.4f}",
         f"[{r.ci_low:+.4f}, {r.ci_high:+.4f}]", f"{r.p_value:.4f}", r.verdict]
        for r in results
    ]  # fmt: skip
    headers = ["split", "examples", "A", "B", "A - B", "95% interval", "p", "verdict"]
    print(tabulate(rows, headers=headers, disable_numparse=True))
    print_reported(suite, results)
    return 0


def print_reported(suite: Suite, results: list[Comparison]) -> None:
    """The suite's published numbers beside a comparison, each marked published: not paired, never ranked."""
    from structbench.analysis.published_compare import POOLED, reported_rows

    splits = [r.split for r in results if r.split != POOLED]
    reported = reported_rows(suite, splits)
    if not reported:
        return
    over = splits[0] if len(splits) == 1 else f"mean over the {len(splits)} splits compared"
    print(f"published numbers on {suite.spec.primary_metric} ({over}; reported, not paired, never ranked):")
    for reference, mean in reported:
        print(f"  published  {reference.model}: {100 * mean:.1f}  ({reference.citation}, {reference.where})")


def compare_statistic_command(args: argparse.Namespace, suite: Suite, model_a: str, model_b: str) -> int:
    """`compare --statistic NAME`: a two-sample test of a statistic of training between two models
    (Welch's t-test; the logrank test when some seeds stopped before reaching it)."""
    from structbench.analysis.statistics import compare_statistic

    with StoreReader(existing_store(args.store)) as store:
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
    with StoreReader(existing_store(args.store)) as store:
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

    if args.write:
        suites, names = patterns(args.suite), patterns(args.model)
        if not suites or not names:
            raise UserError("check --write needs the cells to record: --suite A[,B] --model X[,Y] [--seeds ...].")
        if args.name is not None and len(names) > 1:
            raise UserError(f"--name {args.name!r} names one model, but --model gives {len(names)}.")
        seeds = parse_seeds(args.seeds)
        specs = [ModelSpec(name=name, params=parse_settings(args.set, text=text_settings(name))) for name in names]
        asked = [ModelRequest.of(spec, name=args.name) for spec in specs]  # every name checked before anything runs
        metrics = None if args.all_metrics else {registry.suite(suite).spec.primary_metric for suite in suites}
        entries = []
        with store_to_write(args) as store:
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
        golden.write(args.golden, entries, args.tolerance or 0.0, golden.environment(with_torch=True))
        print(f"wrote {sum(len(e.cells) for e in entries)} cells of {len(entries)} runs to {args.golden}")
        return 0
    expected = golden.read(args.golden)
    with store_to_write(args) as store:
        runner = Runner(store, source_dir=args.source_dir, progress=False if args.no_progress else None)
        verdicts = golden.check(runner, expected, args.tolerance)
    shown = golden.shown
    rows = [
        [v.suite, v.model, v.split, v.what, shown(v.golden), shown(v.now), "MOVED" if v.moved else "ok", v.reason]
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
        print(f"structbench check: {v.suite} x {v.model}, {v.cell}: {v.why}", file=sys.stderr)
    if moved and (made := expected.environment):
        here = golden.environment(with_torch=made.get("simd_torch") is not None)  # torch's SIMD, where the file has it
        if sentence := golden.machine(made, here):
            print(sentence, file=sys.stderr)
    print(f"{len(verdicts)} cells checked against {args.golden}: {len(moved)} moved.", file=sys.stderr)
    return 1 if moved else 0


WIDEST = 110
"""The widest a line of `claims` gets on a wide terminal: a sentence longer than that is hard to read."""


def terminal_width() -> int:
    """The terminal's width (`COLUMNS`, else the terminal's, else 80), at least 40 and at most `WIDEST`."""
    return min(max(shutil.get_terminal_size((80, 24)).columns, 40), WIDEST)


def wrapped(text: str, width: int, label: str = "", indent: int = 4) -> str:
    """`text` wrapped at `width`, after `label` on its first line, each other line indented by `indent`."""
    return textwrap.fill(
        " ".join(text.split()), width=width, initial_indent=" " * indent + label, subsequent_indent=" " * (indent + 2),
        break_on_hyphens=False,
    )  # fmt: skip


def claim_text(number: int, verdict: Verdict, yours: Verdict | None, width: int) -> str:
    """One claim as `structbench claims` prints it: its statement as a numbered sentence, then its
    status, evidence and caveat (and where the user's runs measure it, their status and evidence),
    its source and its id, each wrapped at `width`."""
    claim = verdict.claim
    lines = [
        textwrap.fill(f"{number}. {claim.statement}", width=width, subsequent_indent="   ", break_on_hyphens=False)
    ]
    mine = "" if yours is None else " (reference runs)"
    lines.append(wrapped(verdict.status, width, f"status{mine}: ", indent=3))
    lines.append(wrapped(verdict.evidence, width, "evidence: ", indent=3))
    if yours is not None:
        lines.append(wrapped(yours.status, width, "status (your runs): ", indent=3))
        lines.append(wrapped(yours.evidence, width, "evidence (your runs): ", indent=3))
    if claim.caveat:
        lines.append(wrapped(claim.caveat, width, "caveat: ", indent=3))
    lines.append(wrapped(f"{claim.source} [{claim.id}]", width, "source: ", indent=3))
    return "\n".join(lines)


def cmd_claims(args: argparse.Namespace) -> int:
    from structbench.analysis.claims import check_all, claim_cells
    from structbench.analysis.significance import RULE
    from structbench.reports.builders.boards import aggregate

    def checked(store: StoreReader) -> list[Verdict]:
        return check_all(claim_cells(aggregate(store), store.runs()))

    reference = reference_copy(args.no_reference)
    own: list[Verdict] | None = None
    if reference is None or Path(args.store).is_file():
        with StoreReader(existing_store(args.store)) as store:
            own = checked(store)
    if reference is None:
        verdicts, yours = own or [], None
    else:
        with StoreReader(reference) as bundled:
            verdicts = checked(bundled)
        yours = {v.claim.id: v for v in own or [] if v.status != "not measured"}
    if args.json:
        entries = []
        for v in verdicts:
            entry = {"id": v.claim.id, **v.model_dump(exclude={"claim"}), "caveat": v.claim.caveat}
            if yours is not None:
                entry["runs"] = "reference"
                if v.claim.id in yours:
                    entry["yours"] = yours[v.claim.id].model_dump(exclude={"claim"})
            entries.append(entry)
        print(json.dumps(entries, indent=2))
        return 0
    width = terminal_width()
    whose = f"your runs in {args.store}" if yours is None else "the reference runs shipped with structbench"
    print(wrapped(f"Claims: status, evidence (%) and caveat of each, on {whose}.", width, indent=0))
    for index, verdict in enumerate(verdicts, 1):
        print()
        print(claim_text(index, verdict, None if yours is None else yours.get(verdict.claim.id), width))
    print("\n" + wrapped(RULE, width, indent=0))
    counts = Counter(v.status for v in verdicts)
    print("\n" + f"{len(verdicts)} claims" + (" on the reference runs" if yours is not None else "") + ": "
          + ", ".join(f"{n} {s}" for s, n in counts.most_common()))  # fmt: skip
    if yours is not None and counts["not measured"]:
        print(
            "A claim not measured on the reference runs needs cells the bundle does not hold: licensed data you "
            "provide, a GPU budget, or runs not made yet; docs/reference-grid.yaml lists them and why."
        )
    return 0


def add_runs(commands: Commands) -> None:
    """The `runs` command."""
    listed = commands.add_parser(
        "runs", help="the model labels the store holds: suite version, configuration, seeds and their status"
    )
    listed.add_argument("--suite", metavar="ID[@VERSION]", help="only runs on this suite (default: every suite)")
    listed.add_argument("--model", metavar="LABEL", help="only this label or model name; shell patterns too ('ngram*')")
    add_store(listed)
    add_json(listed, "print one object per label and configuration: label, suite, version, model, seeds, status")
    listed.set_defaults(handler=cmd_runs)


def add_compare(commands: Commands) -> None:
    """The `compare` command."""
    compare = commands.add_parser("compare", help="paired comparison of two models on a suite: difference, interval, p")
    compare.add_argument(
        "--suite", required=True, metavar="ID[@VERSION]", help="the suite both models ran on (`structbench runs`)"
    )
    compare.add_argument("--models", required=True, metavar="A,B", help="two model labels, as the report shows them")
    compare.add_argument("--split", help="one test split (default: each ranked split)")
    compare.add_argument(
        "--statistic",
        metavar="NAME",
        help="compare a statistic of training instead (e.g. trials_to_criterion): Welch's t-test over seeds, "
        "or the logrank test when some seeds never reached it",
    )
    add_store(compare)
    add_json(compare, "print the comparisons as JSON")
    compare.set_defaults(handler=cmd_compare)


def add_samples(commands: Commands) -> None:
    """The `samples` command."""
    sampled = commands.add_parser(
        "samples", help="a model's stored predictions beside their examples, one JSON line each (for debugging)"
    )
    sampled.add_argument(
        "--suite", required=True, metavar="ID[@VERSION]", help="the suite the model ran on (`structbench runs`)"
    )
    sampled.add_argument("--model", required=True, metavar="LABEL", help="the model label, as the report shows it")
    add_seeds(sampled, None, "comma-separated seeds (default: every finished seed)")
    sampled.add_argument("--split", help="one test split (default: every test split)")
    sampled.add_argument("--wrong", action="store_true", help="only the examples the model got wrong")
    add_store(sampled)
    sampled.set_defaults(handler=cmd_samples)


def add_check(commands: Commands) -> None:
    """The `check` command."""
    checker = commands.add_parser(
        "check",
        help="a model author's regression check: re-read or re-run the cells of a golden file; exit 1 when one moved",
    )
    checker.add_argument("golden", type=Path, metavar="GOLDEN.json", help="the golden file to check or --write")
    checker.add_argument(
        "--tolerance",
        type=number(at_least=0, example="0.005"),
        help="largest absolute change of a mean that passes (default: the file's, else 0)",
    )
    checker.add_argument(
        "--write", action="store_true", help="evaluate --suite x --model over --seeds and write their cells to the file"
    )
    checker.add_argument("--suite", action="append", metavar="ID[@VERSION]", help="with --write: suites (comma lists)")
    checker.add_argument("--model", action="append", metavar="NAME", help="with --write: models, as `run` takes them")
    add_seeds(checker, "0", "with --write: comma-separated seeds (default 0)")
    checker.add_argument("--set", action="append", default=[], metavar="KEY=VALUE", help="with --write: model setting")
    checker.add_argument("--name", metavar="LABEL", help="with --write: the model's label")
    checker.add_argument(
        "--all-metrics", action="store_true", help="with --write: every metric, not only each suite's primary one"
    )
    add_store(checker, writes=True)
    add_source_dir(checker)
    add_no_progress(checker)
    checker.set_defaults(handler=cmd_check)


def add_claims(commands: Commands) -> None:
    """The `claims` command."""
    claims = commands.add_parser(
        "claims", help="the papers' findings checked on the store: reproduced, contradicted or inconclusive"
    )
    add_store(claims)
    add_json(claims, "print the verdicts as JSON")
    add_no_reference(claims)
    claims.set_defaults(handler=cmd_claims)
