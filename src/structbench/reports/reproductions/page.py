"""The page's content from a store of reference runs: per section the rows beside the published
numbers (`structbench.reports.reproductions.published`), the cells' runs and commands
(`structbench.reports.reproductions.runs`), the claims checked on them, and the provenance of the
whole bundle (`reproductions_page`); values ready for the template, none of them formatted there.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import pandas as pd

from structbench import __version__
from structbench.analysis.claims import Claim, Verdict, check_all, claim_cells, load_claims
from structbench.analysis.references import Reference, load_references
from structbench.cells import RUN_CELL, current_runs
from structbench.reports.builders.boards import aggregate
from structbench.reports.reproductions.published import Row, Sources, other_published, rows_of
from structbench.reports.reproductions.runs import (
    Provenance,
    budget,
    commands,
    cpu_seconds,
    provenance,
    seed_list,
    seeds_converged,
    tally,
)
from structbench.reports.reproductions.sections import SECTIONS, Layout, section_of
from structbench.reports.views.format import seconds
from structbench.specs import SuiteSpec, natural_key
from structbench.store import StoreReader


@dataclass(frozen=True)
class CellRuns:
    """The runs of one (suite, model) cell and how to make them again."""

    suite: str
    model: str
    seeds: str
    budget: str
    converged: str
    cpu: str
    commits: str
    run: str
    """The `structbench run` command of the cell."""
    verify: str
    """The `structbench reference verify` command of the cell."""
    note_key: str
    """`suite/model` (no version): the key of the cell's prose in the template."""


@dataclass(frozen=True)
class Section:
    """One section of the page, ready for the template."""

    slug: str
    title: str
    provenance: Provenance
    rows: tuple[Row, ...]
    cells: tuple[CellRuns, ...]
    sources: tuple[tuple[int, str], ...]
    """(number, text) of each published source the rows cite, in order of first citation."""
    other_published: tuple[str, ...]
    """Published numbers on the section's suites with no measured row beside them (citing `sources`)."""
    shortfalls: tuple[tuple[str, str], ...]
    """(what reaching the criterion takes, as the model states it; the cells it is said of)."""
    verdicts: tuple[Verdict, ...]


@dataclass(frozen=True)
class Page:
    """The whole page, ready for the template."""

    grid: str
    command: str
    version: str
    provenance: Provenance
    sections: tuple[Section, ...]
    unmeasured: tuple[Verdict, ...]
    """Claims none of whose cells the store holds."""


def _claim_splits(claims: Sequence[Claim]) -> dict[str, set[tuple[str, str]]]:
    """suite -> the (split, metric) its claims read."""
    read: dict[str, set[tuple[str, str]]] = {}
    for claim in claims:
        for ref in (claim.greater, claim.lower, claim.not_below, claim.cell, *claim.than):
            if ref is not None:
                read.setdefault(ref.suite or claim.suite, set()).add((ref.split, ref.metric or claim.metric))
    return read


def cells_named(cells: Sequence[tuple[str, str]]) -> str:
    """(model, suite) pairs in a few words: `lstm on scan-filler-0@1.0.0, scan-filler-3@1.0.0; gru on ...`."""
    by_model: dict[str, list[str]] = {}
    for model, suite in cells:
        by_model.setdefault(model, []).append(suite)
    return "; ".join(f"{model} on {', '.join(suites)}" for model, suites in by_model.items())


def _claim_cell(claim: Claim) -> tuple[str, str]:
    """(suite, model) of the cell a claim is about: the one it compares with the others."""
    first = claim.greater or claim.lower or claim.not_below or claim.cell
    assert first is not None  # a claim has one form (Claim._one_form)
    return first.suite or claim.suite, first.model


Key = tuple[str, str, str, str]
"""A cell of runs: (suite, version, suite hash, model label)."""


def _under(checked: pd.DataFrame) -> dict[Key, str]:
    """(suite, version, hash, model) -> why its runs count as under-trained, as the claims read it."""
    flagged = checked[checked["under_trained"] != ""]
    return {
        (str(s), str(v), str(h), str(m)): str(why)
        for s, v, h, m, why in flagged[[*RUN_CELL, "under_trained"]].itertuples(index=False)
    }


@dataclass(frozen=True)
class _Inputs:
    """What every section reads: the store's current finished runs and their cells, the claims and
    the published numbers."""

    runs: pd.DataFrame
    checked: pd.DataFrame
    """The cells as the claims read them (`claim_cells`: test cells, training statistics, under-trained)."""
    under: Mapping[Key, str]
    """Why a cell's runs count as under-trained, where they do (`_under`)."""
    specs: Mapping[tuple[str, str, str], SuiteSpec]
    references: Sequence[Reference]
    claimed: Mapping[str, set[tuple[str, str]]]
    """suite -> the (split, metric) its claims read (`_claim_splits`)."""
    measured: frozenset[tuple[str, str]]
    """(suite, model label) of every cell of runs on the page."""
    homes: Mapping[int, str]
    """Index of a published row in `references` -> the first section with runs on its suite, which lists
    it if no row stands beside it."""


def _cell_of(frame: pd.DataFrame, key: Key) -> pd.DataFrame:
    """The rows of `frame` (runs or cells) of one cell of runs."""
    suite, version, suite_hash, model = key
    return frame[
        (frame.suite == suite) & (frame.version == version) & (frame.suite_hash == suite_hash) & (frame.model == model)
    ]


def _section(layout: Layout, keys: Sequence[Key], verdicts: Sequence[Verdict], given: _Inputs) -> Section:
    """The section `layout` of the cells of runs `keys` (in page order), with the claims `verdicts`."""
    sources = Sources()
    rows: list[Row] = []
    cells: list[CellRuns] = []
    shortfalls: dict[str, list[tuple[str, str]]] = {}
    for key in keys:
        suite, version, suite_hash, model = key
        selected = _cell_of(given.runs, key)
        ours = [r for r in given.references if r.suite in layout.published_suites(suite) and r.ours == model]
        spec = given.specs.get((suite, version, suite_hash))
        if spec is not None:  # a store always holds the spec of its runs' suites; an older one may not
            claimed = given.claimed.get(suite, set())
            rows += rows_of(spec, model, _cell_of(given.checked, key), ours, claimed, sources, dict(layout.elsewhere))
        first = selected.iloc[0]
        seeds = [int(seed) for seed in selected["seed"].tolist()]
        run, verify = commands(suite, version, str(first["model_spec"]), model, seeds)
        converged, shortfall = seeds_converged(selected, given.under.get(key))
        if shortfall:
            shortfalls.setdefault(shortfall, []).append((model, f"{suite}@{version}"))
        cells.append(
            CellRuns(
                suite=f"{suite}@{version}",
                model=model,
                seeds=seed_list(seeds),
                budget=budget(str(first["model_spec"])) or "none",
                converged=converged,
                cpu=seconds(cpu_seconds(selected)),
                commits=tally(None if c is None else str(c)[:12] for c in selected["git_commit"].tolist()),
                run=run,
                verify=verify,
                note_key=f"{suite}/{model}",
            )
        )
    others = [  # those with a row beside them elsewhere on the page are there
        other_published(r, sources, r.suite)
        for index, r in enumerate(given.references)
        if given.homes.get(index) == layout.slug
        and not any(r.ours == model and r.suite in layout.published_suites(suite) for suite, model in given.measured)
    ]
    mine = pd.concat([_cell_of(given.runs, key) for key in keys])
    return Section(
        slug=layout.slug,
        title=layout.title,
        provenance=provenance(mine),
        rows=tuple(rows),
        cells=tuple(cells),
        sources=sources.listed(),
        other_published=tuple(others),
        shortfalls=tuple((text, cells_named(of)) for text, of in shortfalls.items()),
        verdicts=tuple(verdicts),
    )


def reproductions_page(store: StoreReader, *, grid: str, command: str | None = None) -> Page:
    """The page's content from `store`'s current finished runs (the reference bundle's store)."""
    runs = current_runs(store.runs())
    runs = runs[runs.status == "done"].sort_values(["suite", "version", "suite_hash", "model", "seed"])
    results = aggregate(store, runs)
    checked = claim_cells(results[results.breakdown == ""], runs)
    claims = load_claims()
    verdicts = check_all(checked, claims)
    keys: list[Key] = sorted(
        {(str(s), str(v), str(h), str(m)) for s, v, h, m in runs[RUN_CELL].itertuples(index=False)},
        key=lambda k: (natural_key(k[0]), natural_key(k[1]), k[2], natural_key(k[3])),
    )
    placed = {
        layout.slug: [key for key in keys if section_of(key[0], key[3]).slug == layout.slug] for layout in SECTIONS
    }
    references = load_references()
    homes: dict[int, str] = {}
    for layout in SECTIONS:
        suites = {key[0] for key in placed[layout.slug]}
        for index, reference in enumerate(references):
            if any(reference.suite in layout.published_suites(suite) for suite in suites):
                homes.setdefault(index, layout.slug)
    given = _Inputs(
        runs=runs,
        checked=checked,
        under=_under(checked),
        specs=store.suite_specs(),
        references=references,
        claimed=_claim_splits(claims),
        measured=frozenset((key[0], key[3]) for key in keys),
        homes=homes,
    )
    sections = []
    for layout in SECTIONS:
        if mine := placed[layout.slug]:
            about = [v for v in verdicts if section_of(*_claim_cell(v.claim)).slug == layout.slug]
            sections.append(_section(layout, mine, about, given))
    shown = {section.slug for section in sections}
    return Page(
        grid=grid,
        command=command or f"structbench sweep {grid}",
        version=__version__,
        provenance=provenance(runs),
        sections=tuple(sections),
        unmeasured=tuple(v for v in verdicts if section_of(*_claim_cell(v.claim)).slug not in shown),
    )
