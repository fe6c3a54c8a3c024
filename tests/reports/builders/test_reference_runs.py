"""The reference runs shipped with structbench are shown apart from the user's runs, each row marked
with what made it, and the claims are decided on them and on the user's runs apart."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pandas as pd
import pytest

from structbench import __version__
from structbench.reports.builders.from_store import build_site
from structbench.reports.builders.reference_runs import reference_rows
from structbench.reports.builders.site import Site
from structbench.reports.render import write_report
from structbench.runs.runner import Runner
from structbench.specs import ModelSpec
from structbench.store import Store
from structbench.store.bundle import reference_store, with_reference, write_runs
from tests.reports.support import row_of, suite_page

COMMITS = ("90adbc0" + "1" * 33, "3b0bae3" + "2" * 33)
"""The commits the reference copy's two seeds were made at, in the order they finished."""


CLAIM = "ngram-attractors"
"""A claim on ngram alone: its reference run measures it."""


@pytest.fixture
def reference(tmp_path: Path) -> Path:
    """The SQLite copy of a bundle of ngram on agreement-attractors (seed 0) and copy on lookup-tables
    (seeds 0 and 1, made at two commits on one thread)."""
    with Store(tmp_path / "made.sqlite") as made:
        maker = Runner(made, progress=False)
        maker.log = lambda message: None
        maker.evaluate("agreement-attractors", ModelSpec(name="ngram"), [0])
        maker.evaluate("lookup-tables", ModelSpec(name="copy"), [0, 1])
        for run_id, environment in made._db.execute("SELECT id, environment FROM runs").fetchall():
            made._db.execute(
                "UPDATE runs SET environment = ? WHERE id = ?",
                (json.dumps(json.loads(environment) | {"threads": 1}), run_id),
            )
        for seed, commit in enumerate(COMMITS):
            made._db.execute(
                "UPDATE runs SET git_commit = ?, finished_at = ? WHERE model = 'copy' AND seed = ?",
                (commit, 1_000_000 + seed, seed),
            )
        made._db.commit()
        assert write_runs(made, made.runs()["id"].tolist(), tmp_path / "bundle") == 3
    found = reference_store(tmp_path / "bundle")
    assert found is not None
    return found


def merged_site(user: Store | None, reference: Path) -> Site:
    with with_reference(None if user is None else user.path, reference) as merged:
        return build_site(merged)


def claim(site: Site, claim_id: str = CLAIM) -> tuple[str, str, list[str]]:
    """(reference runs' status, user's status, whose verdicts the site shows) of one claim."""
    (check,) = [check for check in site.claims if check.claim.id == claim_id]
    assert check.reference is not None
    return check.reference.status, check.own.status, [whose for whose, _ in check.shown]


def test_a_reference_row_is_marked_with_what_made_it_and_a_user_run_of_its_configuration_is_a_row_of_its_own(
    runner: Runner, reference: Path, tmp_path: Path
) -> None:
    runner.evaluate("lookup-tables", ModelSpec(name="copy"), [0])
    with with_reference(runner.store.path, reference) as merged:
        index = write_report(merged, tmp_path / "site")
    page = suite_page(index)
    made = f"structbench {__version__} at 90adbc0, 3b0bae3, 1 thread"  # copy has no training budget
    shipped, own = row_of(page, "copy (reference)"), row_of(page, "copy")
    # one short badge whose title says what made the runs, every commit in full; the line itself once, in the footnote
    assert 'class="tag reference" href="#reference-runs"' in shipped and made in shipped and COMMITS[1] in shipped
    assert made not in re.sub(r'title="[^"]*"', "", shipped)
    assert "reference" not in own
    assert page.count('<aside id="reference-runs"') == 1 and page.count(f"copy (reference): {made}</li>") == 0
    footnote = page[page.index('<aside id="reference-runs"') :]
    assert f"copy: {made}</li>" in footnote and "the ones that made the runs" in footnote
    overview = index.read_text()
    assert '<th scope="row" data-value="copy (reference)">copy<a class="tag reference"' in overview
    assert overview.count('<aside id="reference-runs"') == 1
    assert '<th scope="row" data-value="copy">copy<span class="status' in overview
    browser = (index.parent / "errors" / "lookup-tables@1.0.0.html").read_text()
    yours, shipped_group = browser.index('<optgroup label="your runs">'), browser.index('<optgroup label="reference')
    assert yours < browser.index(">copy</option>") < shipped_group < browser.index(">copy (reference)</option>")
    assert f"copy (reference) ({made})" in (index.parent / "leaderboard.md").read_text()


def test_a_claim_measured_only_by_reference_runs_is_decided_from_them(
    runner: Runner, reference: Path, tmp_path: Path
) -> None:
    runner.evaluate("lookup-tables", ModelSpec(name="copy"), [0])
    site = merged_site(runner.store, reference)
    assert claim(site) == ("reproduced", "not measured", ["reference runs"])
    (check,) = [check for check in site.claims if check.claim.id == CLAIM]
    assert check.reference is not None and check.reference.evidence.startswith("ngram on agreement-attractors/")
    assert claim(site, "seq2seq-scan-jump") == ("not measured", "not measured", ["reference runs"])


def test_where_the_users_runs_measure_a_claim_their_verdict_is_shown_beside_the_reference_runs(
    runner: Runner, reference: Path, tmp_path: Path
) -> None:
    runner.evaluate("agreement-attractors", ModelSpec(name="ngram"), [0])
    with with_reference(runner.store.path, reference) as merged:
        index = write_report(merged, tmp_path / "site")
        site = build_site(merged)
    assert claim(site) == ("reproduced", "reproduced", ["reference runs", "your runs"])
    html = index.read_text()
    row = html[html.index("An n-gram model&#39;s agreement accuracy") :]
    row = row[: row.index("</tr>")]
    assert row.index('<span class="whose">reference runs</span>reproduced') < row.index(
        '<span class="whose">your runs</span>reproduced'
    )


def test_without_reference_runs_each_claim_has_one_verdict_on_every_run(runner: Runner) -> None:
    runner.evaluate("agreement-attractors", ModelSpec(name="ngram"), [0])
    site = build_site(runner.store)
    assert all(check.reference is None and [w for w, _ in check.shown] == [""] for check in site.claims)
    (check,) = [check for check in site.claims if check.claim.id == CLAIM]
    assert check.own.status == "reproduced" and not site.reference_runs


def test_the_reference_runs_alone_are_a_site_with_their_rows_ranked(reference: Path) -> None:
    site = merged_site(None, reference)
    (board,) = [board for board in site.boards if board.spec.id == "agreement-attractors"]
    assert [model for model, _ in board.ranked_rows] == ["ngram (reference)"]
    assert board.reference_runs["ngram (reference)"].label == "ngram"
    assert any(row.model == "ngram (reference)" and row.win_rate is None for row in site.rows)


def runs(*rows: dict[str, object]) -> pd.DataFrame:
    base = {"suite": "s", "version": "1.0.0", "suite_hash": "h", "status": "done", "harness_version": "0.1.0"}
    return pd.DataFrame([base | row for row in rows])


def test_a_rows_budget_comes_from_its_configuration_and_runs_that_differ_show_every_value() -> None:
    spec = {"name": "lstm", "params": {}, "configuration": {"budget": "cpu-small", "epochs": 20}}
    by_model, by_cell = reference_rows(
        runs(
            {"model": "lstm (reference)", "seed": 1, "finished_at": 2.0, "git_commit": None,
             "environment": json.dumps({"git": "3b0bae3" + "0" * 33, "threads": 2}), "model_spec": json.dumps(spec)},
            {"model": "lstm (reference)", "seed": 0, "finished_at": 1.0, "git_commit": "90adbc0" + "0" * 33,
             "environment": json.dumps({"threads": 1}), "model_spec": json.dumps(spec)},
            {"model": "hmm (reference)", "seed": 0, "finished_at": 1.0, "git_commit": "90adbc0" + "0" * 33,
             "environment": "{}", "model_spec": json.dumps({"name": "hmm", "params": {"budget": "gpu"}})},
            {"model": "lstm", "seed": 0, "finished_at": 1.0, "git_commit": None, "environment": "{}",
             "model_spec": json.dumps(spec)},
        )
    )  # fmt: skip
    assert set(by_model) == {"lstm (reference)", "hmm (reference)"}
    lstm = by_cell[("s", "1.0.0", "h", "lstm (reference)")]
    assert lstm.line == "reference run, structbench 0.1.0 at 90adbc0, 3b0bae3, budget cpu-small, 1, 2 threads"
    assert lstm.label == "lstm" and "at most 20 epochs" in lstm.details
    assert by_model["hmm (reference)"].made == "structbench 0.1.0 at 90adbc0, budget gpu"  # asked for, no threads
