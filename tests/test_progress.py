"""The overall progress of a command (`structbench.progress`): the estimate from stored timings, the
plain lines of a log, the bar of a terminal, and silence."""

from __future__ import annotations

import io
import os
from pathlib import Path

import pytest

from structbench.progress import Job, Step, Timings, clock, fit_unsized_terminal, grid_steps, mode_of, run_bar
from structbench.store import Store

ROWS = [
    ("lookup-tables", "copy", 0, "done", 2.0),
    ("lookup-tables", "copy", 1, "done", 4.0),
    ("scan-simple", "copy", 0, "done", 12.0),
    ("scan-simple", "lstm", 0, "failed", 30.0),
    ("scan-simple", "oracle", 0, "n/a", 0.1),
]


class Terminal(io.StringIO):
    """A stream that says it is a terminal (of no size: it has no file descriptor)."""

    def isatty(self) -> bool:
        return True


def test_the_estimate_is_the_same_model_on_the_same_suite_then_the_model_then_unknown() -> None:
    timings = Timings.of(ROWS)
    assert timings.estimate("lookup-tables", "copy", 5) == 3.0  # mean of 2 and 4 on this suite
    assert timings.estimate("agreement-attractors", "copy", 0) == 6.0  # mean of copy on every suite
    assert timings.estimate("scan-simple", "lstm", 1) is None  # a failed run is no timing
    assert timings.estimate("scan-simple", "majority", 0) is None


def test_a_step_the_store_holds_takes_no_time_unless_forced() -> None:
    timings = Timings.of(ROWS)
    assert timings.estimate("lookup-tables", "copy", 0) == 0.0
    assert timings.estimate("scan-simple", "oracle", 0) == 0.0  # n/a is an answer too
    assert timings.estimate("scan-simple", "lstm", 0) is None  # a failed run is run again
    assert timings.estimate("lookup-tables", "copy", 0, force=True) == 3.0


def test_the_store_times_a_run_from_its_claim_to_its_finish(tmp_path: Path) -> None:
    with Store(tmp_path / "results.sqlite") as store:
        store._db.execute(
            "INSERT INTO runs (suite, version, suite_hash, model, model_spec, model_hash, comparable, seed, draw, "
            "status, started_at, finished_at, harness_version, environment) "
            "VALUES ('s', '1', 'h', 'copy', '{}', 'm', 1, 3, 0, 'done', 100.0, 107.5, 'v', '{}')"
        )
        assert store.run_timings() == [("s", "copy", 3, "done", 7.5)]


def test_grid_steps_name_each_suite_model_and_seed_with_its_position() -> None:
    steps = grid_steps(
        ["lookup-tables", "scan-simple"], [[("copy", "copy"), ("oracle", "oracle")]] * 2, [0, 1], Timings()
    )
    assert [len(suite) for suite in steps] == [4, 4]
    assert steps[1][2].text == "suite 2 of 2 scan-simple, model 2 of 2 oracle, seed 0"
    assert steps[0][0].estimate is None


def test_plain_lines_name_each_finished_step_its_position_and_the_time_left() -> None:
    stream = io.StringIO()
    steps = [Step("suite a, model 1 of 2 copy, seed 0", 60.0), Step("suite a, model 2 of 2 lstm, seed 0", 120.0)]
    with Job("run", steps, mode="lines", stream=stream) as job:
        job.finish("done")
        job.finish("failed")
    lines = stream.getvalue().splitlines()
    assert lines[0] == "run: 2 steps; ETA 3:00"
    assert lines[1] == "[1/2] suite a, model 1 of 2 copy, seed 0: started, about 1:00"  # a long step
    assert lines[2].startswith("[1/2] suite a, model 1 of 2 copy, seed 0: done in ")
    assert lines[2].endswith("ETA 2:00")
    assert lines[3] == "[2/2] suite a, model 2 of 2 lstm, seed 0: started, about 2:00"
    assert lines[4].startswith("[2/2] suite a, model 2 of 2 lstm, seed 0: failed in ")
    assert lines[5].startswith("run: 2 of 2 steps in ")
    assert "\r" not in stream.getvalue()


def test_steps_never_timed_are_counted_apart_in_the_estimate() -> None:
    stream = io.StringIO()
    job = Job("quickstart", [Step("build"), Step("copy", 30.0), Step("oracle")], mode="lines", stream=stream)
    assert job.eta() == "ETA >= 0:30, 2 steps not timed before"
    assert job.eta(short=True) == "ETA >=0:30"
    assert stream.getvalue().splitlines()[-1] == "[1/3] build: started"  # of unknown time: announced
    job.skip(2, "source files unavailable")
    assert job.eta() == ""  # nothing left with an estimate: no number at all
    assert "[2/3] skipped 2: build .. copy (source files unavailable)" in stream.getvalue()


def test_a_step_never_timed_learns_from_the_steps_like_it_in_this_job() -> None:
    """A fresh store: the first seed of a model tells how long its other seeds take; one answered from the
    store tells nothing."""
    steps = grid_steps(["lookup-tables"], [[("lstm", "lstm")]], [0, 1, 2], Timings())[0]
    job = Job("run", steps, mode="quiet")
    assert job.eta() == ""
    job.finish("done (from the store)", timed=False)
    assert job.eta() == ""
    job.finish("done")
    assert job.eta().startswith("ETA ") and "not timed" not in job.eta()
    other = Job("run", [Step("build"), *steps], mode="quiet")
    other.finish("built")  # a build is like no run
    assert other.eta() == ""


def test_parallel_workers_share_the_time_left() -> None:
    job = Job("sweep", [Step("a", 100.0), Step("b", 100.0)], mode="quiet", parallel=2)
    assert job.eta() == "ETA 1:40"
    job.finish("done", index=1)
    assert [job.steps[index].text for index in job.pending] == ["a"]


def test_a_quiet_job_shows_no_progress_but_prints_messages() -> None:
    stream = io.StringIO()
    with Job("run", [Step("a", 1.0)], mode="quiet", stream=stream) as job:
        job.write("a failure worth reading")
        job.finish("done")
    assert stream.getvalue() == "a failure worth reading\n"


def test_a_terminal_gets_one_bar_that_names_the_step_under_way() -> None:
    stream = Terminal()
    assert mode_of(stream) == "bar" and mode_of(io.StringIO()) == "lines" and mode_of(stream, quiet=True) == "quiet"
    steps = [Step("suite 1 of 2 lookup-tables, model 1 of 5 copy, seed 0", 5.0), Step("suite 2 of 2 scan-simple", 5.0)]
    with Job("quickstart", steps, mode="bar", stream=stream) as job:
        job.write("a message above the bar")
        job.finish("done")
    drawn = stream.getvalue()
    assert "0/2 " in drawn and "] suite 1/2 lookup-tables, model 1/5 copy, seed 0" in drawn
    assert "1/2 " in drawn and "ETA 0:05] suite 2/2 scan-simple" in drawn
    assert "a message above the bar\n" in drawn
    assert "\r" in drawn  # redrawn in place


def test_an_unsized_terminal_gets_80_columns_for_every_bar(monkeypatch: pytest.MonkeyPatch) -> None:
    """A pseudo-terminal nobody sized (`script`, `docker exec -t`) reports 0 columns, and tqdm then draws nothing."""
    monkeypatch.delenv("TQDM_NCOLS", raising=False)
    monkeypatch.delenv("TQDM_NROWS", raising=False)
    main, other = os.openpty()  # a fresh pseudo-terminal has size 0 x 0
    with os.fdopen(other, "w") as terminal:
        assert os.get_terminal_size(terminal.fileno()).columns == 0
        fit_unsized_terminal(terminal)
    os.close(main)
    assert (os.environ["TQDM_NCOLS"], os.environ["TQDM_NROWS"]) == ("80", "24")
    monkeypatch.delenv("TQDM_NCOLS")
    fit_unsized_terminal(io.StringIO())  # not a terminal: nothing to fit
    assert "TQDM_NCOLS" not in os.environ


def test_clock_and_run_bar() -> None:
    assert [clock(7), clock(750), clock(3723)] == ["0:07", "12:30", "1:02:03"]
    assert run_bar("lookup-tables@1.0.0", "lstm", 2) == "lookup-tables lstm seed 2"
