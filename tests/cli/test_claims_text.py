"""`structbench claims` prints each claim as sentences a reader can follow at the terminal's width: its
statement numbered, then its status, evidence, caveat and source, every line within the width."""

from __future__ import annotations

from pathlib import Path

import pytest

from structbench.analysis.claims import load_claims
from structbench.analysis.significance import RULE
from structbench.cli import main
from structbench.store import Store


@pytest.mark.parametrize("width", [60, 100])
def test_claims_are_numbered_sentences_wrapped_at_the_terminals_width(
    width: int, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    store = tmp_path / "results.sqlite"
    Store(store).close()
    monkeypatch.setenv("COLUMNS", str(width))
    assert main(["claims", "--store", str(store), "--no-reference"]) == 0
    out = capsys.readouterr().out
    assert max(len(line) for line in out.splitlines()) <= width
    flat = " ".join(out.split())
    claims = load_claims()
    for number, claim in enumerate(claims, 1):
        assert f"{number}. {' '.join(claim.statement.split())} status: not measured" in flat, claim.id
    caveated = next(claim for claim in claims if claim.caveat)
    assert f"caveat: {' '.join(caveated.caveat.split())}" in flat
    assert " ".join(RULE.split()) in flat


def test_a_wide_terminal_still_gets_lines_a_reader_can_follow(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    store = tmp_path / "results.sqlite"
    Store(store).close()
    monkeypatch.setenv("COLUMNS", "300")
    assert main(["claims", "--store", str(store), "--no-reference"]) == 0
    assert max(len(line) for line in capsys.readouterr().out.splitlines()) <= 110
