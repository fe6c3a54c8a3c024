"""The plots' values: each model has one style on the whole site, whichever other models a plot holds."""

from __future__ import annotations

from pathlib import Path

from structbench.reports.builders.from_store import build_site
from structbench.reports.builders.plots import PALETTE, Style, model_styles
from structbench.reports.render import write_report
from structbench.reports.views.pages import pages
from structbench.runs.runner import Runner
from structbench.specs import ModelSpec


def test_a_model_keeps_its_style_whichever_other_models_a_site_or_plot_holds() -> None:
    labels = [f"model-{n}" for n in range(30)]
    styles = model_styles(labels)
    assert len(set(styles.values())) == 30  # ten colours, each solid, dashed and dotted
    assert model_styles(reversed(labels)) == styles
    assert styles["model-2"] == Style(PALETTE[2]) and styles["model-12"] == Style(PALETTE[2], "dashed")


def test_a_model_has_one_colour_on_every_page_of_the_site(runner: Runner, tmp_path: Path) -> None:
    # solver ranks first on lookup-tables, copy first on the scan-filler curve: colours given out in rank
    # order per plot gave copy two colours
    runner.evaluate("lookup-tables", ModelSpec(name="tests.reports.support:Solver"), [0])
    for suite in ("lookup-tables", "scan-filler-0", "scan-filler-1"):
        for name in ("copy", "random"):
            runner.evaluate(suite, ModelSpec(name=name), [0])
    site = build_site(runner.store)
    drawn = pages(site)
    (lookup,) = [page for page in drawn.suites if page.board.spec.id == "lookup-tables"]
    (curve,) = site.curves
    seen: dict[str, set[Style]] = {}
    for model, style in [*(pair for view in lookup.plots for pair in view.plotted), *curve.plotted]:
        seen.setdefault(model, set()).add(style)
    assert {"copy", "random", "solver"} <= seen.keys()
    assert all(found == {site.styles[model]} for model, found in seen.items())
    index = write_report(runner.store, tmp_path / "site")
    for page in (index, index.parent / "suites" / "lookup-tables@1.0.0.html"):
        html = page.read_text()
        # copy's entry, alone or leading a line it shares with models of equal values (random at 0 too)
        line = f'<span class="line" style="background: {site.styles["copy"].colour}"></span>copy'
        assert f"{line}</li>" in html or f"{line}, " in html
