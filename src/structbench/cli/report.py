"""`structbench report` and `quickstart`: the leaderboard site, and everything it takes in one command."""

from __future__ import annotations

import argparse
import multiprocessing
import sys
from collections.abc import Iterator
from concurrent.futures import ProcessPoolExecutor
from contextlib import contextmanager
from pathlib import Path

from structbench import registry
from structbench.cli.options import (
    Commands,
    add_no_progress,
    add_seeds,
    add_source_dir,
    add_store,
    patterns,
    store_to_write,
)
from structbench.cli.progress import SuiteRuns, report_job, seed_ended
from structbench.cli.reference import add_no_reference, reference_copy, results
from structbench.cli.suites import skipped_summary
from structbench.data import freeze
from structbench.errors import SourceUnavailable, UserError
from structbench.paths import default_site_dir
from structbench.protocols import recipe_hook
from structbench.runs.arguments import parse_seeds
from structbench.runs.normalise import normalise_store
from structbench.runs.request import ModelRequest
from structbench.runs.runner import Runner
from structbench.specs import ModelSpec
from structbench.store import Store
from structbench.store.bundle import with_reference

QUICKSTART_MODELS = ("oracle", "copy", "random", "majority")


def quickstart_suites() -> list[str]:
    """The suites a plain `quickstart` evaluates: every suite of its own, and the first member of each
    suite set (SCAN's 11 few-shot sizes, 4 fillers and 4 templates, logic's 4 depths, grounded's 4
    splits), so that every research family is on the overview for a fraction of the time and disk.
    The other members are built on first use: `quickstart --all`, or `quickstart ID ...`."""
    later = {member for members in registry.suite_sets().values() for member in members[1:]}
    return [name for name in registry.suite_names() if name not in later]


def _build(name: str, source_dir: Path | None) -> freeze.Manifest:
    """Build one suite, in quickstart's build-ahead process."""
    return freeze.ensure_built(registry.suite(name), source_dir)


@contextmanager
def _stopped_on_exit(builder: ProcessPoolExecutor) -> Iterator[None]:
    """Shut the build-ahead process down when the block ends, cancelling builds not yet started
    (after an error or Ctrl-C; on success every build has been waited for)."""
    try:
        yield
    finally:
        builder.shutdown(wait=False, cancel_futures=True)


def trained_in_quickstart(suite_name: str) -> tuple[str, ...]:
    """The registered models that `quickstart --neural` adds on `suite_name`, by name: those whose
    `in_quickstart` (`structbench.protocols.BuiltInRecipes`) says so."""
    models = []
    for name in registry.model_names():
        in_quickstart = recipe_hook(registry.model_factory(name), "in_quickstart")
        if in_quickstart is not None and in_quickstart(suite_name):
            models.append(name)
    return tuple(models)


def cmd_report(args: argparse.Namespace) -> int:
    from structbench.reports.writers.plots import Drawing

    # the report's worker forks first, before the progress display starts a thread and before any store is
    # opened, and imports scipy.stats while this process reads the stores: the claims it checks next test
    # with it (the reference runs' claims always do), and the import is most of that check (0.7 s)
    drawing = Drawing()
    worker = drawing.worker()
    try:
        from structbench.reports.worker import preload, submit

        submit(worker, preload, "scipy.stats")
        with report_job(quiet=args.no_progress) as job:
            if Path(args.store).is_file():
                with Store(args.store) as own:
                    normalise_store(own, log=job.write)  # one row per run key
            reference = reference_copy(args.no_reference)
            from structbench.reports.render import write_report

            with results(args.store, reference=reference) as store:
                index = write_report(
                    store,
                    args.out,
                    suites=patterns(args.suites),
                    models=patterns(args.models),
                    title=args.title,
                    read=lambda: job.finish("read"),
                    drawing=drawing,
                )
            job.finish("written")
    finally:
        drawing.close()
    print(index)
    return 0


def cmd_quickstart(args: argparse.Namespace) -> int:
    from structbench.analysis.suite_score import stored_score
    from structbench.reports.render import write_report

    seeds = parse_seeds(args.seeds)
    if args.suites and args.all:
        raise UserError("quickstart takes suite ids or --all, not both; drop one of them.")
    names = args.suites or (registry.suite_names() if args.all else quickstart_suites())
    unavailable: list[str] = []  # whose source files could not be had: the summary names the fix
    failed: list[str] = []  # any other reason, printed as it came
    # one process builds the suites, in order, while this one evaluates those built: generating data
    # is about half of the work, and it runs on the second core. Forked before the store is opened,
    # any model runs or the progress display starts its thread, so it inherits none of them; what it
    # has not started is dropped if quickstart stops.
    builder = ProcessPoolExecutor(1, mp_context=multiprocessing.get_context("fork"))
    built = {name: builder.submit(_build, name, args.source_dir) for name in names}
    with store_to_write(args, announce=False) as store, _stopped_on_exit(builder):
        runner = Runner(store, source_dir=args.source_dir, progress=False if args.no_progress else None)
        suites = [registry.suite(name) for name in names]
        models = [QUICKSTART_MODELS + (trained_in_quickstart(name) if args.neural else ()) for name in names]
        labels = [[(model, ModelRequest.of(ModelSpec(name=model)).label) for model in row] for row in models]
        progress = SuiteRuns(
            "quickstart", suites, labels, seeds, store, quiet=args.no_progress, after=["write the report"]
        )
        say = progress.job.write
        runner.log, runner.seed_ended = say, seed_ended(progress.job)
        with progress.job:
            for name, suite, suite_models in zip(names, suites, models, strict=True):
                try:
                    manifest = progress.build(suite, args.source_dir, made=built[name].result)
                except SourceUnavailable as error:
                    say(f"suite {suite.spec.key} skipped: {error.short}")
                    progress.skip_suite(suite, "source files unavailable")
                    unavailable.append(suite.spec.id)
                    continue
                except UserError as error:
                    say(f"suite {suite.spec.key} skipped: {error}")
                    progress.skip_suite(suite, "not built: the reason is above")
                    failed.append(suite.spec.id)
                    continue
                say(f"suite {suite.spec.key} {manifest.suite_hash[:12]}")
                for model in suite_models:
                    record = runner.evaluate(name, ModelSpec(name=model), seeds)
                    score = stored_score(store, suite.spec, record.suite_hash, record.model)
                    shown = f"suite score ({suite.spec.primary_metric}) {score.mean:.3f}" if score else "n/a"
                    say(f"  {model:<18} {shown}")
            reference = reference_copy(args.no_reference)
            if reference is None:
                index = write_report(store, args.out)
            else:  # the reference runs beside the ones just made
                with with_reference(store.path, reference) as merged:
                    index = write_report(merged, args.out)
            progress.job.finish("written")
    print(f"leaderboard written to {index.resolve()}", flush=True)  # before the summary, which ends the output
    rest = 0 if args.suites or args.all else len(registry.suite_names()) - len(names)
    if rest:
        print(
            f"{rest} more suites, the other members of each suite set, are built on first use: "
            "`structbench quickstart --all` evaluates them too.",
            file=sys.stderr,
        )
    print(skipped_summary("evaluated", len(names), unavailable, failed, args.source_dir), file=sys.stderr)
    return 0


def _add_out(parser: argparse.ArgumentParser) -> None:
    """`--out DIR`: where `report` and `quickstart` write the site, by default the same folder in the home
    (`paths.default_site_dir`): nothing is written into the folder the command is started from."""
    parser.add_argument(
        "--out",
        type=Path,
        default=default_site_dir(),
        metavar="DIR",
        help=f"folder of the leaderboard site (default {default_site_dir()}, for report and quickstart alike)",
    )


def add_report(commands: Commands) -> None:
    """The `report` command."""
    report = commands.add_parser("report", help="render the leaderboard site from the store")
    add_store(report)
    _add_out(report)
    report.add_argument(
        "--suites", nargs="+", metavar="ID", help="only these suite ids (comma lists and shell patterns: 'scan-*')"
    )
    report.add_argument(
        "--models", nargs="+", metavar="LABEL", help="only these model labels (comma lists and shell patterns)"
    )
    report.add_argument("--title", default="structbench leaderboard", help="the site's title")
    add_no_reference(report)
    add_no_progress(report)
    report.set_defaults(handler=cmd_report)


def add_quickstart(commands: Commands) -> None:
    """The `quickstart` command."""
    quick = commands.add_parser("quickstart", help="build the suites, evaluate the fast baselines, render the report")
    quick.add_argument(
        "suites", nargs="*", metavar="SUITE", help="only these suites (default: one of each suite set, see --all)"
    )
    quick.add_argument(
        "--all",
        action="store_true",
        help="every registered suite, not only the first member of each suite set (SCAN few-shot, logic, ...)",
    )
    add_store(quick, writes=True)
    _add_out(quick)
    add_seeds(quick, "0,1,2,3,4", "seeds every baseline runs on, e.g. 0,1,2 or 0-9 (default 0,1,2,3,4)")
    add_source_dir(quick)
    quick.add_argument(
        "--neural", action="store_true", help="also train neural baselines (cpu-small) on lookup-tables-mt and miniscan"
    )
    add_no_reference(quick)
    add_no_progress(quick)
    quick.set_defaults(handler=cmd_quickstart)
