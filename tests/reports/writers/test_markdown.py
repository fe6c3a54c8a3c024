"""`leaderboard.md`: every string from a user or a store escaped for HTML and for table pipes."""

from __future__ import annotations

from structbench import registry
from structbench.reports.builders.suite_board import SuiteBoard
from structbench.reports.writers.markdown import leaderboard_markdown
from structbench.specs import SplitSpec


def test_markdown_escapes_suite_ids_and_split_names() -> None:
    spec = registry.suite("lookup-tables").spec
    hostile_split = SplitSpec(name="<b>|x", role="test", size=1, test_role="generalisation")
    hostile = spec.variant(id="<i>suite", splits=[*spec.splits_with_role("train"), hostile_split])
    board = SuiteBoard(spec=hostile, suite_hash="a" * 64, splits=["<b>|x"], ranked=["<b>|x"])
    markdown = leaderboard_markdown([board], [])
    assert "<b>" not in markdown and "<i>" not in markdown
    assert "## &lt;i&gt;suite@1.0.0 (sequence_accuracy" in markdown and "&lt;b&gt;\\|x" in markdown
