"""Who is best at what: per research family, its question and the models ranked on its headline suites.

The matrix of every model on every suite answers "how did model M do on suite S"; a reader who
opens the site asks first "which models are best at this kind of generalisation". Each family
(`structbench.specs.Family`) states its question in one sentence (`QUESTIONS`) and names the suites
that answer it (`HEADLINES`: the ones its papers headline, scan-length and scan-addprim-jump for
SCAN's systematicity). A model that has a suite score on every headline suite present in the site
is ranked, best first, by its mean over them, each suite's cell shown with its 95% interval; the
trivial baselines (`FLOORS`) are not ranked but give the family's floor, drawn as a line between
the models above it and those at or below it. A model with a score on some of the family's suites
but not on every headline one is listed apart with what it misses, so that one run on one suite is
never ranked against models measured on all. Ceilings, models that see test-time information and
partial runs are in the full matrix only.

A family none of whose headline suites has a board here (a plugin family, or a store without them)
takes its generalisation boards as headline, or every board where it has none. Of one suite's
several boards (versions, data hashes) the newest version's with the most scored models is used.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from structbench.reports.builders.overview import Summary
from structbench.reports.builders.suite_board import SuiteBoard
from structbench.specs import SeedStats, family_rank, natural_key

QUESTIONS: dict[str, str] = {
    "systematicity": "Which models generalise to longer SCAN commands, and to a primitive seen alone in training?",
    "agreement": "Which models make a verb agree with its subject across intervening nouns of the other number?",
    "lookup": "Which models apply compositions of lookup tables that training held out?",
    "completion": "Which language models choose the word that completes a sentence?",
    "pos-induction": "Which models induce part-of-speech classes from untagged text?",
    "memory": "Which models recall, in order, the targets hidden among distractors (delayed sequential recall)?",
    "syntax": "Which language models find a grammatical sentence more probable than its ungrammatical twin?",
    "semantic-parsing": "Which models parse new combinations of known words and structures into logical forms?",
}
"""Each family's question, in one sentence, as its ranking's heading says it."""
HEADLINES: dict[str, tuple[str, ...]] = {
    "systematicity": ("scan-length", "scan-addprim-jump"),
    "agreement": ("agreement-attractors",),
    "lookup": ("lookup-tables",),
    "completion": ("sentence-completion",),
    "pos-induction": ("pos-ud-ewt-upos",),
    "memory": ("dsr",),
    "syntax": ("blimp", "syntaxgym"),
    "semantic-parsing": ("cogs", "slog"),
}
"""Each family's headline suites (ids): the ones its papers report first, which a ranked model must
all have a score on."""


def question(family: str) -> str:
    """The family's question; a plugin family's is asked in its name."""
    return QUESTIONS.get(family, f"Which models are best on the {family} suites?")


@dataclass(frozen=True)
class Entry:
    """One model's place in a family's ranking."""

    model: str
    cells: tuple[SeedStats, ...]
    """Its suite score on each headline board, in the ranking's board order."""
    under_trained: bool = False
    """Whether its runs missed their training criterion on a headline suite (ranked, tagged)."""

    @property
    def score(self) -> float:
        """The unweighted mean of its headline suite scores: what orders the ranking."""
        return sum(cell.mean for cell in self.cells) / len(self.cells)


@dataclass(frozen=True)
class Partial:
    """A model with a score on some of a family's suites but not on every headline one."""

    model: str
    has: tuple[str, ...]
    """The family's suites (keys) it has a score on."""
    misses: tuple[str, ...]
    """The headline suites (keys) it has none on."""


@dataclass(frozen=True)
class Ranking:
    """One family's answer: its question, headline boards, ranked models, floor and partial models."""

    family: str
    question: str
    boards: tuple[SuiteBoard, ...]
    """The headline boards, in the order `HEADLINES` names them."""
    higher_is_better: bool
    entries: tuple[Entry, ...]
    """The models with a score on every headline board, best first (equal scores by name)."""
    floor: Entry | None
    """The best of the trivial baselines with a score on every headline board, where one was run."""
    floor_model: str = ""
    partial: tuple[Partial, ...] = ()

    def _beats(self, entry: Entry) -> bool:
        if self.floor is None:
            return True
        return entry.score > self.floor.score if self.higher_is_better else entry.score < self.floor.score

    @property
    def above(self) -> tuple[Entry, ...]:
        """The ranked models better than the floor (all of them where no floor was run)."""
        return tuple(entry for entry in self.entries if self._beats(entry))

    @property
    def below(self) -> tuple[Entry, ...]:
        """The ranked models at or below the floor: under its line."""
        return tuple(entry for entry in self.entries if not self._beats(entry))

    @property
    def anchor(self) -> str:
        return f"best-{self.family}"


def _newest(boards: Iterable[SuiteBoard]) -> SuiteBoard:
    """Of one suite's boards, the newest version's, with the most scored models among its data hashes."""
    return max(boards, key=lambda b: (natural_key(b.spec.version), len(b.scores), b.suite_hash))


def headline_boards(family: str, boards: list[SuiteBoard]) -> list[SuiteBoard]:
    """The family's headline boards among `boards` (all of one family): `HEADLINES` where any is here,
    else its generalisation boards, else all; one board per suite."""
    by_suite: dict[str, list[SuiteBoard]] = {}
    for board in boards:
        by_suite.setdefault(board.spec.id, []).append(board)
    named = [suite for suite in HEADLINES.get(family, ()) if suite in by_suite]
    if not named:
        general = [suite for suite, found in by_suite.items() if any(b.generalises for b in found)]
        named = general or list(by_suite)
    chosen = [_newest(by_suite[suite]) for suite in named]
    direction = chosen[0].spec.higher_is_better
    return [board for board in chosen if board.spec.higher_is_better == direction]


def _ranked_here(board: SuiteBoard, model: str) -> bool:
    return model in board.scores and not board.set_apart(model)


def ranking(family: str, boards: list[SuiteBoard]) -> Ranking:
    """The family's ranking over `boards`, every board of the family in the site."""
    headline = headline_boards(family, boards)
    models = sorted({model for board in boards for model in board.scores if not board.set_apart(model)})
    floors = {model for board in boards for model in board.floors}
    higher = headline[0].spec.higher_is_better
    entries: list[Entry] = []
    floor_entries: list[tuple[str, Entry]] = []
    partial: list[Partial] = []
    for model in models:
        if all(_ranked_here(board, model) for board in headline):
            entry = Entry(
                model,
                tuple(board.scores[model] for board in headline),
                any(model in board.under_trained for board in headline),
            )
            if model in floors:
                floor_entries.append((model, entry))
            else:
                entries.append(entry)
        elif model not in floors:
            has = sorted({board.spec.key for board in boards if _ranked_here(board, model)}, key=natural_key)
            misses = [board.spec.key for board in headline if not _ranked_here(board, model)]
            partial.append(Partial(model, tuple(has), tuple(misses)))
    sign = -1.0 if higher else 1.0
    entries.sort(key=lambda entry: (sign * entry.score, entry.model))
    floor_entries.sort(key=lambda pair: (sign * pair[1].score, pair[0]))
    floor_model, floor = floor_entries[0] if floor_entries else ("", None)
    return Ranking(
        family, question(family), tuple(headline), higher, tuple(entries), floor, floor_model, tuple(partial)
    )


def rankings(summaries: Iterable[Summary]) -> list[Ranking]:
    """One ranking per family with a board, in family order (`FAMILY_ORDER`, any other after)."""
    by_family: dict[str, list[SuiteBoard]] = {}
    for summary in summaries:
        by_family.setdefault(summary.board.spec.family, []).append(summary.board)
    return [ranking(family, by_family[family]) for family in sorted(by_family, key=family_rank)]
