"""`structbench report`: the leaderboard site, a static folder built from the results store and
written into `--out DIR` (`write_report` = `build_site`, then `write_site`).

Three stages, each with one job: the build (`structbench.reports.builders`, entered by
`from_store.build_site`) reads the store into one `Site` value (`structbench.reports.builders.site`); the
views (`structbench.reports.views`) turn it into page contexts and plots; the writers
(`structbench.reports.writers`) write the files. This module runs the three. Layout of the folder:

- `index.html`: the overview. A models x suites matrix of each model's suite score
  (`structbench.analysis.suite_score`), suites grouped by family, with a colour scale; the
  generalisation-gap view (plot and table); the learning curves of suite series
  (`structbench.reports.builders.series`); ceilings and not-comparable models set apart; suites without
  results listed with the reason; the claims.
- `suites/ID@VERSION.html`: one page per suite version and data hash: its card
  (`structbench.reports.builders.cards`), the table ranked by the same suite score with compute and failed
  runs, per-condition plots (`structbench.reports.builders.conditions`, drawn by
  `structbench.reports.writers.plots`), published numbers and claims.
- `errors/SUITE.html`: what each model got wrong, filterable (`structbench.reports.writers.error_browser`),
  with each model's predictions in `errors/SUITE/MODEL.js` and the examples in `data/`.
- `results.csv`, `results.json` (every cell; schema in the README), `leaderboard.md`,
  `references.json`.

Writing is safe against other reports and against being killed: the site is built first (which
validates the store and the filters), then written into a hidden folder beside `--out`
(`.NAME.partial-PID-RANDOM`) and renamed into place, under an exclusive lock on `.NAME.lock`
beside `--out` (deleted by its holder when done, so that nothing but the site stays beside it), so
that reports into one folder at the same time take turns and each leaves a complete site. A report killed before its rename (SIGKILL, power cut) leaves its partial folder
behind; the next report into that folder deletes it, and any `.NAME.old-PID-RANDOM` folder, once the
process named in it is gone from this host.
"""

from __future__ import annotations

import errno
import fcntl
import json
import os
import re
import secrets
import shutil
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager, suppress
from pathlib import Path

from structbench import __version__
from structbench.errors import UserError
from structbench.reports.builders.from_store import build_site
from structbench.reports.builders.site import DEFAULT_TITLE, Site
from structbench.reports.views.pages import pages
from structbench.reports.writers.error_browser import write_error_data
from structbench.reports.writers.html import copy_static, write_pages
from structbench.reports.writers.markdown import leaderboard_markdown
from structbench.reports.writers.plots import Drawing, keep_drawn, reuse_drawn
from structbench.reports.writers.tables import write_tables
from structbench.store import StoreReader

SITE_MARKER = ".structbench-site"
"""Marks a folder as a site a report wrote, so that a report never deletes anything else's files."""
SITE_NAMES = {
    SITE_MARKER, "index.html", "leaderboard.md", "results.csv", "results.json", "references.json",
    "suites", "errors", "plots", "data", "static",
}  # fmt: skip
"""Everything a report writes at the top of its folder."""
SWAP_ATTEMPTS = 100
"""How often a report tries to rename its finished site into place while other reports do the same."""


def _is_site(folder: Path) -> bool:
    """Whether `folder` holds a site a report wrote: its marker, or (written before the marker was)
    an `index.html` and nothing but what a report writes."""
    names = {path.name for path in folder.iterdir()}
    return SITE_MARKER in names or ("index.html" in names and names <= SITE_NAMES)


def _replaceable(folder: Path) -> bool:
    """Whether a report may replace `folder`: it is empty, or a site a report wrote."""
    return not any(folder.iterdir()) or _is_site(folder)


def _check_out(out_dir: Path) -> None:
    """Refuse an `--out` that is a file or a folder of other files, before anything is built or written."""
    if out_dir.exists() and not out_dir.is_dir():
        raise UserError(f"--out {out_dir} is a file; give a folder for the site.")
    above = next((parent for parent in out_dir.parents if parent.exists()), None)
    if above is not None and not above.is_dir():
        raise UserError(f"--out {out_dir} lies under {above}, which is a file; give a folder for the site.")
    if out_dir.is_dir() and not _replaceable(out_dir):
        raise UserError(
            f"--out {out_dir} holds files that no structbench report wrote; give an empty or new folder "
            "(a report replaces the pages of the site it finds there)."
        )


def _beside(out_dir: Path, kind: str) -> Path:
    """A new folder name next to `out_dir`, hidden and unique to this report, naming the process that
    made it (`.NAME.KIND-PID-RANDOM`), so that a later report can tell whether it was left behind."""
    return out_dir.with_name(f".{out_dir.name}.{kind}-{os.getpid()}-{secrets.token_hex(6)}")


def _process_gone(pid: int) -> bool:
    """Whether no process `pid` exists on this host."""
    if pid == os.getpid():
        return False
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return True
    except OSError:  # PermissionError: it exists, under another user
        return False
    return False


def _clean_stale(out_dir: Path) -> list[Path]:
    """Delete the partial and set-aside folders beside `out_dir` that reports left when they were
    killed (`_beside`'s names, whose process is gone); the folders deleted. Called under the lock of
    `out_dir`, so that no live report on this host is writing one of them."""
    pattern = re.compile(rf"\.{re.escape(out_dir.name)}\.(?:partial|old)-(\d+)-[0-9a-f]{{12}}")
    removed = []
    for path in out_dir.parent.iterdir():
        found = pattern.fullmatch(path.name)
        if found and path.is_dir() and not path.is_symlink() and _process_gone(int(found.group(1))):
            shutil.rmtree(path, ignore_errors=True)
            removed.append(path)
    return removed


@contextmanager
def _locked(out_dir: Path) -> Iterator[None]:
    """Hold the exclusive lock of `out_dir` (`flock` on `.NAME.lock` beside it), waiting for any other
    report that holds it: reports into one folder write and swap in their sites one at a time. The
    holder deletes the lock file before it lets go, so that none is left beside the site; a report that
    waited on a file deleted meanwhile finds that the path names another file (or none) once it holds
    the lock, and locks again, so that two reports never hold two files of one name."""
    path = out_dir.with_name(f".{out_dir.name}.lock")
    while True:
        try:
            out_dir.parent.mkdir(parents=True, exist_ok=True)
            handle = path.open("a")
        except OSError as error:
            raise UserError(
                f"cannot write the site next to --out {out_dir} ({error.strerror or error}); a report writes "
                "the site beside --out and then moves it there, so give a folder whose parent you can write to."
            ) from None
        fcntl.flock(handle.fileno(), fcntl.LOCK_EX)
        try:
            current = os.stat(path)
        except FileNotFoundError:
            current = None
        if current is not None and current.st_ino == os.fstat(handle.fileno()).st_ino:
            break
        # its holder deleted it while this report waited: lock the file the path names now. Unlocked before it
        # is closed, as below: a process forked meanwhile by another thread (a report's worker) holds a copy of
        # the descriptor, and a lock is only let go by closing when every copy is closed
        fcntl.flock(handle.fileno(), fcntl.LOCK_UN)
        handle.close()
    with handle:
        try:
            yield
        finally:
            with suppress(OSError):
                path.unlink()
            fcntl.flock(handle.fileno(), fcntl.LOCK_UN)


def _partial(out_dir: Path) -> Path:
    """A new, empty folder next to `out_dir` that the site is written into before it is swapped in."""
    try:
        out_dir.parent.mkdir(parents=True, exist_ok=True)
        partial = _beside(out_dir, "partial")
        partial.mkdir()
    except OSError as error:
        raise UserError(
            f"cannot write the site next to --out {out_dir} ({error.strerror or error}); a report writes "
            "the site beside --out and then moves it there, so give a folder whose parent you can write to."
        ) from None
    return partial


def _swap_in(partial: Path, out_dir: Path) -> None:
    """Put the finished site `partial` at `out_dir` by renames, deleting the site that was there, so
    that `out_dir` never holds half a site. When another report swaps its own site in at the same
    moment, the rename fails and is tried again: the last report's complete site is the one kept."""
    for _ in range(SWAP_ATTEMPTS):
        aside = _beside(out_dir, "old")
        old: Path | None = aside
        try:
            os.rename(out_dir, aside)
        except FileNotFoundError:
            old = None  # no site there yet, or another report has just moved it aside
        except OSError as error:
            raise UserError(
                f"cannot replace --out {out_dir} ({error.strerror or error}); give a folder that is not "
                "a mount point and that you can rename."
            ) from None
        if old is not None and not _replaceable(old):  # files that appeared since `_check_out`: put back
            os.rename(old, out_dir)
            raise UserError(
                f"--out {out_dir} holds files that no structbench report wrote; give an empty or new folder."
            )
        try:
            os.rename(partial, out_dir)
        except OSError as error:
            if error.errno in (errno.EEXIST, errno.ENOTEMPTY):
                if old is not None:
                    shutil.rmtree(old, ignore_errors=True)
                continue  # another report's site went in after ours moved the old one aside: try again
            if old is not None:
                os.rename(old, out_dir)  # the earlier site back where it was
            raise UserError(
                f"cannot move the site into --out {out_dir} ({error.strerror or error}); the earlier site "
                "there is unchanged."
            ) from None
        if old is not None:
            shutil.rmtree(old, ignore_errors=True)
        return
    raise UserError(
        f"other reports kept replacing --out {out_dir} while this one finished; run it again, or give "
        "each report its own --out."
    )


def _write_failure(folder: Path, partial: Path, error: OSError) -> OSError | UserError:
    """One sentence for `error`, met while writing the site beside `folder` (into `partial`): a full
    disk, or a file of the site that could not be written, names the folder; an error on another file
    (one the report reads) is kept as it is, naming its file."""
    reason = error.strerror or str(error)
    if error.errno in (errno.ENOSPC, errno.EDQUOT):
        return UserError(
            f"the disk holding --out {folder} is full ({reason}); free some space, or pass --out a folder on another "
            "disk (the site there before is unchanged)."
        )
    if error.filename is not None and not Path(str(error.filename)).is_relative_to(partial):
        return error
    return UserError(
        f"cannot write the site into --out {folder} ({reason}); check the disk it is on, or pass another --out (the "
        "site there before is unchanged)."
    )


def write_site(site: Site, out_dir: Path, *, earlier: Path | None = None, drawing: Drawing | None = None) -> Path:
    """Write every file of `site` into the empty or new folder `out_dir` and return the path of
    `index.html`; the example scripts and the unchanged plots of the site in `earlier`, if any, are
    reused. `drawing` draws the plots (its workers may have started already), else a new `Drawing`; its workers,
    where they have started, also write the error browser's scripts."""
    for folder in ("suites", "plots"):
        (out_dir / folder).mkdir(parents=True, exist_ok=True)
    (out_dir / SITE_MARKER).write_text("written by structbench report; its pages are replaced on the next one\n")
    views = pages(site)
    drawing = drawing or Drawing()
    # drawn and written by the workers, if there are any, while this process writes the rest
    plotting = drawing.draw(reuse_drawn(views.plots, out_dir, earlier))
    scripts = write_error_data(site, views.errors, out_dir, earlier=earlier, worker=drawing.running())
    try:
        write_tables(site.results, out_dir)
        (out_dir / "leaderboard.md").write_text(
            leaderboard_markdown(list(site.boards), list(site.claims)), encoding="utf-8"
        )
        (out_dir / "references.json").write_text(
            json.dumps([r.model_dump() for r in site.references], indent=1, ensure_ascii=False), encoding="utf-8"
        )
        copy_static(out_dir)
        write_pages(views, out_dir, version=__version__)
    except BaseException:
        scripts.abandon()  # the folder is deleted next: no script may be written into it afterwards
        raise
    scripts.finish()
    keep_drawn(out_dir, plotting.wait())
    return out_dir / "index.html"


def write_report(
    store: StoreReader,
    out_dir: Path,
    *,
    suites: Sequence[str] | None = None,
    models: Sequence[str] | None = None,
    title: str = DEFAULT_TITLE,
    read: Callable[[], None] | None = None,
    drawing: Drawing | None = None,
) -> Path:
    """Write the site of `store` into `out_dir` (created; an earlier site there is replaced, its
    example scripts reused) and return the path of `index.html`. `suites` and `models` keep only the
    matching suite ids and model labels (shell patterns); `read` is called once the store is read
    (`report`'s progress: its first stage). `drawing` holds workers the caller started (`report` starts
    them before it opens the stores); a new `Drawing` otherwise. It is closed here either way.

    Nothing in `out_dir` changes until the new site is complete: the filters are checked and the
    site is built first, then written into a folder beside `out_dir` and renamed into place. A
    report that fails leaves the earlier site as it was; reports into one `out_dir` at the same
    time take turns (a lock beside it) and each leaves a complete site there (the last one's)."""
    out_dir = Path(out_dir)
    # renamed by its absolute path (`--out .` has no name to put a folder beside); a link is kept and
    # the folder it points to is replaced
    folder = out_dir.resolve() if out_dir.is_symlink() else Path(os.path.abspath(out_dir))
    drawing = drawing or Drawing()
    try:
        _check_out(folder)
        # the worker processes start now (if they have not): they ask the model classes,
        # check the claims (importing scipy.stats) and import matplotlib while this process builds the site
        worker = drawing.worker()
        site = build_site(store, suites=suites, models=models, title=title, worker=worker, then=drawing.warm)
        if read is not None:
            read()
        with _locked(folder):
            _check_out(folder)  # again: another report may have written there while this one built
            _clean_stale(folder)
            partial = _partial(folder)
            try:
                write_site(site, partial, earlier=folder if folder.is_dir() else None, drawing=drawing)
                _swap_in(partial, folder)
            except OSError as error:
                raise _write_failure(folder, partial, error) from None
            finally:
                shutil.rmtree(partial, ignore_errors=True)  # gone already once swapped in
    finally:
        drawing.close()  # after an error: the workers stop
    return (out_dir if out_dir.name not in ("", ".", "..") else folder) / "index.html"
