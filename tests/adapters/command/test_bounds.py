"""The command adapter reads a bounded amount of what a model writes: a stdout line longer than
`MAX_LINE_BYTES`, or more than `MAX_STDOUT_BYTES` of stdout in a run, fails the run, and of stderr
only the last lines, each cut short, are kept."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from structbench.adapters import command as adapter
from structbench.adapters.command import CommandModel, CommandModelError

HELLO = 'print(\'{"type": "hello", "protocols": ["transduction"]}\', flush=True)'


def script(tmp_path: Path, body: str) -> str:
    path = tmp_path / "model.py"
    path.write_text(f"import sys, time\n{body}\n")
    return f"{sys.executable} {path}"


def test_a_stdout_line_over_the_limit_fails_the_run_and_ends_the_command(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(adapter, "MAX_LINE_BYTES", 1000)
    body = "sys.stdout.write('x' * 5000); sys.stdout.flush(); time.sleep(60)"
    with pytest.raises(CommandModelError, match="it wrote a line of more than 1000 bytes to stdout without a newline"):
        CommandModel(script(tmp_path, body), timeout=20)


def test_more_stdout_than_a_run_may_write_fails_the_run_and_stops_the_reading(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(adapter, "MAX_STDOUT_BYTES", 30)  # less than the hello itself
    with pytest.raises(CommandModelError, match="it wrote more than 30 bytes to stdout in this run"):
        CommandModel(script(tmp_path, HELLO + "\ntime.sleep(60)"), timeout=20)


def test_a_stdout_line_within_the_limit_is_read(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(adapter, "MAX_LINE_BYTES", 1000)
    body = 'sys.stdout.write(\'{"type": "hello", "protocols": [], "name": "\' + \'n\' * 900 + \'"}\\n\'); sys.stdout.flush()'
    model = CommandModel(script(tmp_path, body + "\nsys.stdin.read()"), timeout=20)
    try:
        assert model.name == "n" * 900
    finally:
        model.close()


def test_stderr_keeps_a_bounded_tail_of_cut_lines(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(adapter, "STDERR_LINE_BYTES", 100)
    body = (
        "sys.stderr.write('e' * 1_000_000); sys.stderr.write('\\n')\n"
        "for i in range(50): sys.stderr.write(f'line {i}\\n')\n"
        "sys.stderr.write('y' * 250_000)\n"
        "sys.exit(3)"
    )
    with pytest.raises(CommandModelError) as raised:
        CommandModel(script(tmp_path, body), timeout=20)
    message = str(raised.value)
    tail = message.split("--- stderr tail ---\n", 1)[1].splitlines()
    assert len(tail) == adapter.STDERR_LINES
    assert tail[-2] == "line 49" and "line 30" not in tail
    assert tail[-1] == "y" * 100 + " [... 249900 more bytes of this line dropped]"
    assert len(message) < 2000
