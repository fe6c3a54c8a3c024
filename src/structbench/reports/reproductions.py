"""`docs/reproductions.md`: the reference runs beside the papers' numbers, generated from a store.

The page is made from the reference bundle's runs (`structbench.store.bundle.reference_store`, a
normal store), never typed by hand: per paper, one table of the measured cells (mean and 95%
interval over seeds, from the report's own cell function `structbench.reports.boards.cell_table`)
beside the published numbers of `structbench/analysis/references.yaml`, one table of the runs
behind them (seeds, budget, how many seeds reached their recipe's convergence criterion, CPU time,
commit), the claims checked on those runs (`structbench.analysis.claims`), and the commands that
make each cell again. Every table names the grid, the commits and structbench versions, the torch
thread counts and SIMD levels its runs were made with.

`SECTIONS` says which paper each (suite, model) cell belongs to; a cell no section names lands in
the last one, so that no reference run is left off the page. The prose (why a number differs from
the paper's) is the template's (`templates/reproductions.md.j2`), keyed by section and by cell and
shown only where that cell has runs: the template holds no measured number. Rows, sources and
claims are in a fixed order, so the same store gives the same bytes.
"""

from __future__ import annotations

import datetime
import fnmatch
import json
import math
import os
import re
import shlex
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import jinja2
import pandas as pd

from structbench import __version__
from structbench.analysis.claims import TRAINING, Claim, Verdict, check_all, claim_cells, load_claims
from structbench.analysis.references import Reference, load_references
from structbench.cells import RUN_CELL, current_runs
from structbench.convergence import under_trained
from structbench.reports.boards import aggregate
from structbench.reports.views.format import percent, seconds
from structbench.specs import SuiteSpec, natural_key
from structbench.store import Store, run_convergence

TEMPLATE = "reproductions.md.j2"


@dataclass(frozen=True)
class Layout:
    """One section of the page: a paper (or family of papers) and the cells it reports."""

    slug: str
    """The key of the section's prose in the template."""
    title: str
    cells: tuple[tuple[str, str], ...]
    """(suite id, model label) shell patterns of the cells the section shows."""
    published_on: tuple[tuple[str, str], ...] = ()
    """(suite id pattern, suite id): the published numbers of the second suite stand beside the cells
    of the first too (Tran's part-of-speech numbers are on the WSJ, our suites on UD English)."""
    elsewhere: tuple[tuple[str, str], ...] = ()
    """(suite id, label): what the published column says beside that suite's numbers in another suite's
    rows, so that a number measured on another corpus says so where it is read, not only in its source."""

    def holds(self, suite: str, model: str) -> bool:
        return any(fnmatch.fnmatchcase(suite, s) and fnmatch.fnmatchcase(model, m) for s, m in self.cells)

    def published_suites(self, suite: str) -> list[str]:
        return [suite, *(other for pattern, other in self.published_on if fnmatch.fnmatchcase(suite, pattern))]


SECTIONS = (
    Layout(
        "korrel-scan",
        "Korrel 2018: SCAN experiments 5 and 6, and learned guidance on scan-length",
        (
            ("scan-filler-*", "*"),
            ("scan-fewshot-*", "*"),
            ("scan-template-*", "*"),
            ("scan-length", "attentive-guidance*"),
            ("scan-length", "seq2seq-lstm*"),
            ("scan-*", "seq2attn*"),
        ),
    ),
    Layout(
        "seq2seq",
        "Lake & Baroni 2018 and McCoy et al. 2020: a GRU with attention on SCAN and question formation",
        (("scan-*", "*"), ("question-formation*", "*")),
    ),
    Layout("lookup", "Hupkes et al. 2018 and Korrel 2018: lookup tables", (("lookup-tables*", "*"),)),
    Layout("miniscan", "Thrush 2020: MiniSCAN", (("miniscan*", "*"),)),
    Layout(
        "agreement",
        "Linzen et al. 2016, Gulordava et al. 2018 and Tran 2018 ch. 5: subject-verb agreement",
        (("agreement-*", "*"),),
    ),
    Layout("logic", "Tran 2018 ch. 5: logical relations (Bowman et al.'s data)", (("logic-*", "*"),)),
    Layout(
        "completion",
        "Tran 2018 ch. 4: sentence completion",
        (("sentence-completion*", "*"), ("msr-sentence-completion*", "*")),
    ),
    Layout(
        "pos",
        "Tran 2018 ch. 6: part-of-speech induction",
        (("pos-*", "*"),),
        published_on=(("pos-*", "pos-wsj"),),
        elsewhere=(("pos-wsj", "WSJ, another corpus"),),
    ),
    Layout(
        "monner", "Monner 2011: Distracted Sequence Recall and grounded language", (("dsr*", "*"), ("grounded-*", "*"))
    ),
    Layout("other", "Other reference runs", (("*", "*"),)),
)
"""The page's sections in order; a cell belongs to the first that holds it."""


def section_of(suite: str, model: str, layouts: Sequence[Layout] = SECTIONS) -> Layout:
    """The first section that holds the cell (the last section holds every cell)."""
    return next(layout for layout in layouts if layout.holds(suite, model))


@dataclass(frozen=True)
class Row:
    """One measured (suite, model, split, metric) beside its published numbers, as text."""

    suite: str
    model: str
    split: str
    metric: str
    mean: str
    interval: str
    per_seed: str
    published: str


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
class Provenance:
    """Where and how a group of runs was made, as the page states it."""

    commits: str
    versions: str
    threads: str
    simd: str
    budgets: str
    seeds: str
    cpu: str
    finished: str
    runs: int


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


# numbers and text


def _number(value: float) -> str:
    """A training statistic as it is: `66,420`, `3.36`."""
    return f"{value:,.0f}" if abs(value) >= 1000 else f"{value:.3g}"


def _shown(value: float, split: str) -> str:
    """A test split's score in percent, a training statistic as it is."""
    return _number(value) if split == TRAINING else percent(value)


def _printed(value: float) -> str:
    """A published fraction in percent with the digits its source printed (0.0831 -> `8.31`)."""
    return format(round(100 * value, 6), "g")


def _seed_list(seeds: Sequence[int]) -> str:
    """Seeds as `--seeds` reads them: `0,1,2`, or ranges of four or more (`0-9`)."""
    parts: list[str] = []
    ordered = sorted(seeds)
    start = 0
    while start < len(ordered):
        end = start
        while end + 1 < len(ordered) and ordered[end + 1] == ordered[end] + 1:
            end += 1
        if end - start >= 3:
            parts.append(f"{ordered[start]}-{ordered[end]}")
        else:
            parts += [str(seed) for seed in ordered[start : end + 1]]
        start = end + 1
    return ",".join(parts)


def _tally(values: Iterable[object], missing: str = "not recorded", unit: str = "run") -> str:
    """Distinct values with their counts where they differ: `1`, or `1 (12 runs), 2 (3 runs)`."""
    counts = Counter("" if value is None else str(value) for value in values)
    named = sorted(counts.items(), key=lambda item: natural_key(item[0]))
    if len(named) <= 1:
        return (named[0][0] if named else "") or missing
    return ", ".join(f"{value or missing} ({n} {unit}{'s' if n > 1 else ''})" for value, n in named)


def _setting(key: str, value: Any) -> str:
    """`--set key=value` as `parse_settings` reads it back to `value`."""
    if isinstance(value, str):
        try:
            json.loads(value)
        except ValueError:
            text = value
        else:
            text = json.dumps(value)  # a string that would read as a number or a boolean
    else:
        text = json.dumps(value)
    return f"--set {shlex.quote(f'{key}={text}')}"


# runs


def _json_object(text: str) -> dict[str, Any]:
    """A stored JSON object (a run's environment or model record); {} for anything else."""
    try:
        found = json.loads(text)
    except (TypeError, ValueError):
        return {}
    return found if isinstance(found, dict) else {}


def _budget(model_spec: str) -> str | None:
    configuration = _json_object(model_spec).get("configuration")
    budget = configuration.get("budget") if isinstance(configuration, dict) else None
    return None if budget is None else str(budget)


def _cpu(runs: pd.DataFrame) -> float:
    """Training and prediction seconds, summed over `runs`."""
    return float((runs["fit_seconds"].fillna(0) + runs["predict_seconds"].fillna(0)).sum())


def _provenance(runs: pd.DataFrame) -> Provenance:
    environments = [_json_object(text) for text in runs["environment"].tolist()]
    simd = [
        None
        if env.get("simd_torch") is None and env.get("simd_numpy") is None
        else f"torch {env.get('simd_torch') or 'not recorded'}, numpy {env.get('simd_numpy') or 'not recorded'}"
        for env in environments
    ]
    days = sorted(
        datetime.datetime.fromtimestamp(stamp, datetime.UTC).date().isoformat()
        for stamp in runs["finished_at"].dropna().tolist()
    )
    finished = "not recorded" if not days else days[0] if days[0] == days[-1] else f"{days[0]} to {days[-1]}"
    return Provenance(
        commits=_tally(None if commit is None else str(commit)[:12] for commit in runs["git_commit"].tolist()),
        versions=_tally(runs["harness_version"].tolist()),
        threads=_tally(env.get("threads") for env in environments),
        simd=_tally(simd),
        budgets=_tally((_budget(spec) for spec in runs["model_spec"].tolist()), missing="none (not a trained network)"),
        seeds=_tally((_seed_list(cell["seed"].tolist()) for _, cell in runs.groupby(RUN_CELL)), unit="cell"),
        cpu=seconds(_cpu(runs)),
        finished=finished,
        runs=len(runs),
    )


def _converged(runs: pd.DataFrame, why: str | None) -> tuple[str, str | None]:
    """(how many of the cell's seeds reached their recipe's criterion, with the rule and the values of
    those that did not; what reaching it takes, as the model states it, or None). `why` is the cell's
    under-trained reason as the claims read it (`claim_cells`), which ends with the latter."""
    records = [found for text in runs["environment"].tolist() if (found := run_convergence(text)) is not None]
    if not records:
        return "no criterion reported", None
    reached = sum(record.reached for record in records)
    missed = under_trained(records)  # `under-trained: 2 of 3 seeds (dev_accuracy 0.39, 0.49 < 0.95)`
    rules = "; ".join(sorted({record.criterion.shown() for record in records}))
    detail = f"({rules})" if missed is None else missed.partition(" seeds ")[2]
    counted = f"{reached} of {len(records)} {detail}"
    rest = None if why is None or missed is None else why.removeprefix(missed).removeprefix("; ")
    return counted, (rest or None)


def _commands(suite: str, version: str, model_spec: str, label: str, seeds: Sequence[int]) -> tuple[str, str]:
    """(`structbench run` of the cell, with the stored settings as `--set`; `structbench reference verify`)."""
    spec = _json_object(model_spec)
    name = str(spec.get("name", label))
    given = spec.get("params")
    params: dict[str, Any] = given if isinstance(given, dict) else {}
    settings = "".join(f" {_setting(key, params[key])}" for key in sorted(params))
    key = shlex.quote(f"{suite}@{version}")
    run = f"structbench run --suite {key} --model {shlex.quote(name)} --seeds {_seed_list(seeds)}{settings}"
    return run, f"structbench reference verify --suite {key} --model {shlex.quote(label)}"


# published numbers


class _Sources:
    """The published sources a section's rows cite, numbered in order of first citation."""

    def __init__(self) -> None:
        self.numbers: dict[str, int] = {}

    def cite(self, reference: Reference, measured_on: str) -> int:
        citation, _, last = reference.citation.rpartition(", ")
        # "Korrel 2018, ..., §6.3.3" and "§6.3.3, the text on ...": the section once
        citation = citation if citation and reference.where.startswith(last) else reference.citation
        text = f"{citation}, {reference.where}"
        if reference.runs is not None:
            text += f"; {reference.runs} runs"
        if reference.spread:
            text += f"; spread: {reference.spread}"
        if reference.suite != measured_on:
            text += f"; measured on `{reference.suite}`, not on the suite of our row"
        if reference.note:
            text += f". {reference.note}"
        return self.numbers.setdefault(text, len(self.numbers) + 1)

    def listed(self) -> tuple[tuple[int, str], ...]:
        return tuple((number, text) for text, number in self.numbers.items())


def _published(
    references: Sequence[Reference],
    metric: str,
    split: str,
    sources: _Sources,
    suite: str,
    elsewhere: Mapping[str, str] | None = None,
) -> str:
    """The published values of (metric, split) of `references`, each with its spread and source number,
    and, for a number measured on another suite than `suite`, what it was measured on (`elsewhere`)."""
    shown = []
    for reference in references:
        value = reference.value(metric, split)
        if value is None:
            continue
        spread = reference.spreads.get(metric, {}).get(split)
        text = _printed(value) + ("" if spread is None else f" ± {_printed(spread)}")
        if metric in reference.undefined_metrics:
            text += " (not defined there: not comparable)"
        if reference.suite != suite:
            text += f" ({(elsewhere or {}).get(reference.suite, f'on {reference.suite}')})"
        shown.append(f"{text} [{sources.cite(reference, suite)}]")
    return "; ".join(shown)


# the page


def _claim_splits(claims: Sequence[Claim]) -> dict[str, set[tuple[str, str]]]:
    """suite -> the (split, metric) its claims read."""
    read: dict[str, set[tuple[str, str]]] = {}
    for claim in claims:
        for ref in (claim.greater, claim.lower, claim.not_below, claim.cell, *claim.than):
            if ref is not None:
                read.setdefault(ref.suite or claim.suite, set()).add((ref.split, ref.metric or claim.metric))
    return read


def _wanted(spec: SuiteSpec, references: Sequence[Reference], claimed: set[tuple[str, str]]) -> list[tuple[str, str]]:
    """The (split, metric) rows of a cell, in split order, the primary metric first: the primary metric
    on the ranked generalisation splits, and whatever its published numbers and its suite's claims read;
    a suite with neither generalisation splits nor claims or numbers on a test split shows every test split."""
    tests = [split.name for split in spec.splits if split.role == "test"]
    wanted = {(split, metric) for reference in references for metric, by in reference.values.items() for split in by}
    wanted |= {(split, metric) for split, metric in claimed if split in tests or split == TRAINING}
    ranked = [s.name for s in spec.splits if s.role == "test" and s.test_role == "generalisation" and s.ranked]
    if not ranked and not any(split in tests for split, _ in wanted):
        ranked = tests
    wanted |= {(split, spec.primary_metric) for split in ranked}
    order = {name: index for index, name in enumerate([*tests, TRAINING])}
    return sorted(wanted, key=lambda p: (order.get(p[0], len(order)), p[0], p[1] != spec.primary_metric, p[1]))


def _rows_of(
    spec: SuiteSpec,
    model: str,
    cells: pd.DataFrame,
    references: Sequence[Reference],
    claimed: set[tuple[str, str]],
    sources: _Sources,
    elsewhere: Mapping[str, str] | None = None,
) -> list[Row]:
    """The rows of one (suite, model) cell: `cells` are its cells as the claims read them; `elsewhere`
    labels the published numbers of other suites (`Layout.elsewhere`)."""
    measured = {(str(r["split"]), str(r["metric"])): r for r in cells.to_dict("records")}
    rows = []
    for split, metric in _wanted(spec, references, claimed):
        published = _published(references, metric, split, sources, spec.id, elsewhere)
        cell = measured.get((split, metric))
        if cell is None:
            if published:  # a published number without a measured one: shown, not dropped
                rows.append(Row(spec.key, model, split, metric, "not measured", "", "", published))
            continue  # a claim's statistic this model does not report
        low, high = float(cell["ci_low"]), float(cell["ci_high"])
        bracket = "" if math.isnan(low) else f"[{_shown(low, split)}, {_shown(high, split)}], "
        interval = bracket + str(cell["interval"])
        bounds = cell.get("censored")
        values = [_shown(float(v), split) for v in cell["per_seed"]]
        values += [f">{_shown(float(b), split)}" for b in (bounds if isinstance(bounds, list) else [])]
        mean = _shown(float(cell["mean"]), split)
        rows.append(Row(spec.key, model, split, metric, mean, interval, ", ".join(values), published))
    return rows


def _other_published(reference: Reference, sources: _Sources, measured_on: str) -> str:
    """A published row with no reference run beside it, in one line citing its source."""
    values = "; ".join(
        f"{metric} {', '.join(f'{split} {_printed(value)}' for split, value in by.items())}"
        for metric, by in reference.values.items()
    )
    apart = "" if reference.comparable else " (not a comparable model)"
    return f"{reference.model}{apart} on `{reference.suite}`: {values} [{sources.cite(reference, measured_on)}]"


def _cells_named(cells: Sequence[tuple[str, str]]) -> str:
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
    sources = _Sources()
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
            rows += _rows_of(spec, model, _cell_of(given.checked, key), ours, claimed, sources, dict(layout.elsewhere))
        first = selected.iloc[0]
        seeds = [int(seed) for seed in selected["seed"].tolist()]
        run, verify = _commands(suite, version, str(first["model_spec"]), model, seeds)
        converged, shortfall = _converged(selected, given.under.get(key))
        if shortfall:
            shortfalls.setdefault(shortfall, []).append((model, f"{suite}@{version}"))
        cells.append(
            CellRuns(
                suite=f"{suite}@{version}",
                model=model,
                seeds=_seed_list(seeds),
                budget=_budget(str(first["model_spec"])) or "none",
                converged=converged,
                cpu=seconds(_cpu(selected)),
                commits=_tally(None if c is None else str(c)[:12] for c in selected["git_commit"].tolist()),
                run=run,
                verify=verify,
                note_key=f"{suite}/{model}",
            )
        )
    others = [  # those with a row beside them elsewhere on the page are there
        _other_published(r, sources, r.suite)
        for index, r in enumerate(given.references)
        if given.homes.get(index) == layout.slug
        and not any(r.ours == model and r.suite in layout.published_suites(suite) for suite, model in given.measured)
    ]
    mine = pd.concat([_cell_of(given.runs, key) for key in keys])
    return Section(
        slug=layout.slug,
        title=layout.title,
        provenance=_provenance(mine),
        rows=tuple(rows),
        cells=tuple(cells),
        sources=sources.listed(),
        other_published=tuple(others),
        shortfalls=tuple((text, _cells_named(of)) for text, of in shortfalls.items()),
        verdicts=tuple(verdicts),
    )


def reproductions_page(store: Store, *, grid: str, command: str | None = None) -> Page:
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
        provenance=_provenance(runs),
        sections=tuple(sections),
        unmeasured=tuple(v for v in verdicts if section_of(*_claim_cell(v.claim)).slug not in shown),
    )


ENTITY = re.compile(r"&(?=#?[A-Za-z0-9]+;)")
"""An `&` that would begin an HTML entity."""
TAG = re.compile(r"<(?=[A-Za-z/!?])")
"""A `<` that would begin an HTML tag (`< 0.99` begins none)."""


def _text(text: str) -> str:
    """`text` safe in Markdown, in a table cell too: no HTML tag or entity starts in it and pipes are
    escaped; quotes, a lone `&` and `< 0.99` stay as they are, so that the page reads as well in a text
    editor as on GitHub."""
    return TAG.sub("&lt;", ENTITY.sub("&amp;", text)).replace("|", "\\|")


def _code(text: str) -> str:
    """`text` as a code span in a Markdown table cell: a fence longer than any run of backticks in it,
    and pipes escaped (GitHub splits table cells on them even inside code spans)."""
    fence = "`" * (1 + max((len(run) for run in re.findall(r"`+", text)), default=0))
    padded = f" {text} " if text.startswith("`") or text.endswith("`") else text
    return f"{fence}{padded}{fence}".replace("|", "\\|")


def environment() -> jinja2.Environment:
    """The page's template environment: Markdown, so no HTML autoescape; table cells go through the
    `text` filter (HTML and pipes escaped) or the `code` filter (a code span, pipes escaped)."""
    env = jinja2.Environment(
        loader=jinja2.PackageLoader("structbench.reports", "templates"),
        autoescape=False,
        undefined=jinja2.StrictUndefined,
        trim_blocks=True,
        lstrip_blocks=True,
        keep_trailing_newline=True,
    )
    env.filters["text"] = _text
    env.filters["code"] = _code
    env.globals["cells_named"] = _cells_named
    return env


def reproductions_markdown(store: Store, *, grid: str, command: str | None = None) -> str:
    """The page's Markdown from `store` (the reference bundle's runs), made by `grid`'s sweep,
    `command` (default `structbench sweep GRID`)."""
    page = reproductions_page(store, grid=grid, command=command)
    return environment().get_template(TEMPLATE).render(page=page)


def write_reproductions(store: Store, out: Path, *, grid: str, command: str | None = None) -> None:
    """Write the page to `out` (replaced whole, never half written)."""
    text = reproductions_markdown(store, grid=grid, command=command)
    out.parent.mkdir(parents=True, exist_ok=True)
    partial = out.with_name(out.name + ".partial")
    partial.write_text(text, encoding="utf-8")
    os.replace(partial, out)
