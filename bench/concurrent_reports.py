"""Reports into one `--out` at once, and a report killed mid-write: the long version of
tests/reports/test_render.py. Prints one table: per trial kind, the reports made, tracebacks,
failed exits, dangling links and folders left beside the site (the goal is 0 everywhere).

1. Two `structbench report` processes started together into one `--out`, one of the whole store
   and one of `--models oracle` (so that the two sites differ page by page), `--repetitions` times
   into the same folder. The lock beside `--out` makes them take turns; each must exit 0.
2. A report killed with SIGKILL at a random moment (uniform over a report's wall time, measured
   first), then one more report into the same folder: the killed one's `.NAME.partial-PID-*`
   folder must be gone after it, and the site complete.

After every repetition: the link checker reads every `href` and `src` of every HTML page of the
site that names a file of the site (links checked) and counts those naming a file that is not
there (dangling), and the folders beside the site whose name starts with `.NAME.` other than its
lock file (leftovers). Both counts are summed over the repetitions, each taken after its
repetition: a folder left behind and never deleted counts again after every later one.

The store is small: `structbench run --suite lookup-tables --model oracle,copy --seeds 0,1`, made
in a throw-away folder unless `--store` names one.

    STRUCTBENCH_SOURCE_DIR=/path/to/data python bench/concurrent_reports.py [--repetitions 15] [--store S]
        [--smoke]

`--smoke` runs one repetition of each trial (the same code path; tests/bench runs it).
"""

from __future__ import annotations

import argparse
import random
import signal
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from html.parser import HTMLParser
from pathlib import Path
from subprocess import DEVNULL, PIPE

from tabulate import tabulate

REPOSITORY = Path(__file__).resolve().parents[1]
CLI = [sys.executable, "-m", "structbench.cli"]


class _Links(HTMLParser):
    """Every `href` and `src` of a page."""

    def __init__(self) -> None:
        super().__init__()
        self.targets: list[str] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.targets += [value for name, value in attrs if name in ("href", "src") and value]


def dangling_links(site: Path) -> tuple[int, list[str]]:
    """How many `href`/`src` of the pages of `site` name a file of the site, and those of them that
    name a file that is not there."""
    checked, dangling = 0, []
    for page in sorted(site.rglob("*.html")):
        parser = _Links()
        parser.feed(page.read_text(encoding="utf-8"))
        for target in parser.targets:
            path = target.split("#")[0].split("?")[0]
            if not path or path.startswith(("http://", "https://", "mailto:", "data:", "javascript:")):
                continue
            checked += 1
            if not (page.parent / path).is_file():
                dangling.append(f"{page.relative_to(site)} -> {target}")
    return checked, dangling


def leftovers(site: Path) -> list[str]:
    """What reports left beside `site`: hidden `.NAME.*` entries other than the lock file."""
    lock = f".{site.name}.lock"
    return sorted(p.name for p in site.parent.iterdir() if p.name.startswith(f".{site.name}.") and p.name != lock)


@dataclass
class Tally:
    """What one kind of trial found, summed over its repetitions."""

    repetitions: int = 0
    reports: int = 0
    tracebacks: int = 0
    failed: int = 0
    links: int = 0
    dangling: int = 0
    leftovers: int = 0
    seconds: float = 0.0

    def check(self, site: Path) -> None:
        checked, dangling = dangling_links(site)
        self.links += checked
        self.dangling += len(dangling)
        self.leftovers += len(leftovers(site))

    def ended(self, process: subprocess.Popen[str], *, killed: bool = False) -> None:
        _, err = process.communicate()
        self.reports += 1
        self.tracebacks += "Traceback" in err
        self.failed += 0 if killed else process.returncode != 0
        if process.returncode != 0 and not killed:
            print(err.strip()[-400:], file=sys.stderr)


def report(store: Path, site: Path, *extra: str) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [*CLI, "report", "--store", str(store), "--out", str(site), *extra],
        cwd=REPOSITORY,
        stdout=DEVNULL,
        stderr=PIPE,
        text=True,
    )


def small_store(folder: Path) -> Path:
    store = folder / "results.sqlite"
    command = [*CLI, "run", "--suite", "lookup-tables", "--model", "oracle,copy", "--seeds", "0,1"]
    subprocess.run([*command, "--store", str(store)], cwd=REPOSITORY, stdout=DEVNULL, check=True)
    return store


def two_at_once(store: Path, site: Path, repetitions: int) -> Tally:
    tally = Tally()
    started = time.monotonic()
    for _ in range(repetitions):
        pair = [report(store, site), report(store, site, "--models", "oracle")]
        for process in pair:
            tally.ended(process)
        tally.repetitions += 1
        tally.check(site)
    tally.seconds = time.monotonic() - started
    return tally


def killed_then_one_more(store: Path, site: Path, repetitions: int, chooser: random.Random) -> Tally:
    tally = Tally()
    timing = time.monotonic()
    report(store, site).communicate()
    wall = time.monotonic() - timing
    started = time.monotonic()
    for _ in range(repetitions):
        victim = report(store, site)
        time.sleep(chooser.uniform(0.0, wall))
        victim.send_signal(signal.SIGKILL)
        tally.ended(victim, killed=True)  # reaped: its pid is gone, as the next report checks
        tally.ended(report(store, site))
        tally.repetitions += 1
        tally.check(site)
    tally.seconds = time.monotonic() - started
    return tally


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--repetitions", type=int, default=15)
    parser.add_argument("--store", type=Path, help="a store to report (default: a small one made here)")
    parser.add_argument("--seed", type=int, default=17, help="seed of the kill moments")
    parser.add_argument("--smoke", action="store_true", help="one repetition of each trial")
    args = parser.parse_args()
    repetitions = 1 if args.smoke else args.repetitions
    with tempfile.TemporaryDirectory(prefix="concurrent-reports-") as temporary:
        folder = Path(temporary)
        store = args.store.resolve() if args.store else small_store(folder)
        rows = []
        for label, tally in (
            ("two reports at once into one --out", two_at_once(store, folder / "site", repetitions)),
            (
                "a report killed with SIGKILL, then one more",
                killed_then_one_more(store, folder / "killed", repetitions, random.Random(args.seed)),
            ),
        ):
            rows.append(
                [label, tally.repetitions, tally.reports, tally.tracebacks, tally.failed, f"{tally.links:,}",
                 tally.dangling, tally.leftovers, f"{tally.seconds:.0f}"]
            )  # fmt: skip
    headers = ["trial", "repetitions", "reports", "tracebacks", "failed", "links checked", "dangling", "leftovers", "s"]
    print(tabulate(rows, headers=headers, disable_numparse=True))


if __name__ == "__main__":
    main()
