"""Question formation (McCoy, Frank & Linzen 2018; 2020): does a model front the main auxiliary?

Reproduces the English question-formation task of McCoy et al. in both of its languages:
a declarative sentence followed by a task token, `decl` (copy it) or `quest` (turn it into
a yes/no question by moving the main-clause auxiliary to the front). Training data is
ambiguous between the hierarchical rule (move the main auxiliary) and the linear one (move
the first auxiliary): question-task sentences whose subject carries a relative clause are
left out of training, and the `gen` split consists of exactly those.

The sources: the supplementary material of McCoy, Frank & Linzen 2018 (CogSci, "Revisiting the
poverty of the stimulus"; its sections "Details of the Grammar", "Details of the Architecture" and
"Details of the Linear Classifiers", Figures 5-8), which describes the two languages, how training
sets were made and the architecture with one attention mechanism (location-based); and the
repository of McCoy, Frank & Linzen 2020 (TACL, "Does syntax need to grow on trees?"),
github.com/tommccoy1/rnn-hierarchical-biases at f34a87c, which publishes the agreement language's
grammar, dev, test and gen files and the results file the reference numbers come from.

- `question-formation`: the agreement language (auxiliaries do/does/don't/doesn't; grammar
  `question.gr` of the repository). dev, test and gen are the published files; train is sampled
  from the grammar, no sentence equal to a published one, as the 2018 supplement makes a training
  set: 120,000 sentences are generated, each given the `decl` or `quest` task with equal
  probability, and the question-task sentences with a relative clause on the subject are dropped,
  which leaves 100,696 (the authors' published train files have 100,000 lines) and the published
  files' 60/40 decl/quest ratio. McCoy's published sentences do not follow the rule weights of
  `question.gr` (in question.test, 45% of declaratives have a bare subject, 24% a PP and 31% an RC,
  against a third each under the weights; bare intransitive sentences are nearly absent because
  short sentences ran out under deduplication), so train draws each sentence's structure (subject
  modifier x object kind, 20 cells) with the shares measured on the published dev file and fills it
  from the grammar: train then has the distribution of the published dev set, and test is never read
  to make it. Version 1.0.0 (still loadable) sampled until 120,000 items remained after the drop,
  19% more than the supplement's procedure leaves, and measured the shares on dev and test together.
- `question-formation-noagr`: the no-agreement language of the 2018 supplement (auxiliaries
  can/will/could/would; grammar `question_noagr.gr`, a transcription of the supplement's Figure 5,
  so it has no download address). Every split is sampled with the grammar's own weights: gen
  (10,000) first, keeping only the questions McCoy's evaluation scores (`scored_by_mccoy`: exactly
  two auxiliaries, different words), as every item of the published agreement gen file is; then one
  pool of 134,000 sentences, each given a task, shuffled: its first 120,000 are train's generated
  sentences and the rest give dev (1,000) and test (10,000, the published files' sizes), each after
  the same drop of RC-subject questions (train keeps 96,257), so that the three share one
  distribution even where deduplication uses up the short sentences. Version 2.0.0 (still loadable)
  drew 120,000 train items after the drop; 1.0.0 also kept every RC-subject question in gen, 24.7%
  of them with the same main and first auxiliary and 16.6% with three auxiliaries, where a linear
  rule scores.

No sentence repeats within or across the splits we generate (the published agreement test
file holds one declarative twice, `your walruses do applaud the yaks`, once with each task;
it is loaded as published).

How the suites were checked, and where they deviate from the paper, are declared in their spec
(`CHECKED` and `DEVIATIONS` below: the spec's `how_checked` and `deviations`); the suite card shows both.

Scorers: first-word accuracy (`first_word_accuracy`, primary: McCoy et al.'s headline, the
share of gen questions that front the main auxiliary; ranked on gen only, because on test the
linear and the hierarchical rule front the same auxiliary), full-sentence accuracy
(`sequence_accuracy`; 2.6% on gen for McCoy's GRU with location attention, whose first word
is right 85.9% of the time), and, over question-task items, where the first output word comes from: the main auxiliary
(`first_word_main_aux`), the first auxiliary of the sentence when that is another one (the
linear rule on gen; `first_word_first_aux`), any other auxiliary (`first_word_other_aux`)
or not an auxiliary (`first_word_not_aux`); the four shares sum to 1 (a split without
question-task items has none of them). Breakdowns of first-word accuracy by task and by what
modifies the subject (`subject`: none, pp, orc = object relative clause, src_trans /
src_intrans = subject relative clause with a transitive / intransitive verb), the
relative-clause types of McCoy's results files.

Test roles: `test` is in-distribution (the training distribution: no question on a subject
with a relative clause); `gen` is the generalisation split (only such questions, which
training never asks). The two share no sentence.
"""

from __future__ import annotations

import bisect
import itertools
import random
from collections import defaultdict, deque
from collections.abc import Callable, Mapping, Sequence
from typing import Any, ClassVar

from structbench.data.sources import SourceFile
from structbench.scoring import PerExample
from structbench.specs import Example, Split, SuiteSpec, dev_split, scored_split, train_split
from structbench.suite import SourceFiles, Suite
from structbench.suites.common import GENERATED_LICENCE, PUBLISHED_FIX, RuleTransducer, malformed

CHECKED = """How it was checked (tests/suites/test_question_formation.py): the question transformation used by
the oracle reproduces all 21,000 published dev/test/gen pairs; McCoy's scoring condition
keeps all 10,000 published gen items, and on noagr@2.0.0 gen the linear rule scores 0 and the
hierarchical one 1.0 on first-word accuracy; every generated sentence parses
under our reading of the grammar; train never overlaps the published sets; gen holds only
question-task sentences with a relative clause on the subject and train none."""
"""How the suites of this module were checked against their paper (`SuiteSpec.how_checked`)."""
DEVIATIONS = """Deviations: train holds 120,000 items after the question-task sentences with a relative
clause on the subject were dropped, where the supplement of McCoy, Frank & Linzen 2018 generates
120,000 sentences and then drops those ("120,000 sentences were generated from this grammar as the
training set [...] If a sentence was assigned the question formation task and contained a relative
clause on the subject, it was not included in the training set"), which leaves about 96,000-101,000,
as the authors' published train files' 100,000 lines: train here is 19-25% larger. In the agreement
language, train's sentence-structure shares are measured on the published dev and test files
together, so building train reads the test set. Train sentences are sampled by us, so they are not
McCoy's training sentences. question-formation 2.0.0 and question-formation-noagr 3.0.0 follow the
supplement."""
"""Where the first versions of the suites depart from their paper (`SuiteSpec.deviations`)."""
DEVIATIONS_V2 = """Deviations: train sentences are sampled by us, so they are not McCoy's training
sentences. They are made as the supplement of McCoy, Frank & Linzen 2018 makes a training set (120,000
generated, each given a task, the question-task sentences with a relative clause on the subject
dropped), which keeps 100,696 in the agreement language and 96,257 in the no-agreement one; the
authors' published train files have 100,000 lines. In the agreement language, train's
sentence-structure shares are measured on the published dev file alone (McCoy's sentences do not
follow the grammar's weights; test stays unread). In the no-agreement language, of which nothing is
published, dev and test (1,000 and 10,000 items, the sizes of the published agreement files; the
supplement states none) come from the same generated pool as train, after the same drop."""
"""Where question-formation 2.0.0 and question-formation-noagr 3.0.0 depart from the paper (`SuiteSpec.deviations`)."""

MCCOY_COMMIT = "f34a87c4fe804cb288d0527daa9c251def0ae24e"
MCCOY_URL = f"https://raw.githubusercontent.com/tommccoy1/rnn-hierarchical-biases/{MCCOY_COMMIT}"
CITATION = (
    "McCoy, Frank & Linzen 2018, Revisiting the poverty of the stimulus: hierarchical generalization without a "
    "hierarchical bias in recurrent neural networks (CogSci; its supplementary material); McCoy, Frank & Linzen "
    "2020, Does syntax need to grow on trees? (TACL; its repository rnn-hierarchical-biases)"
)

AUXILIARIES = frozenset({"do", "does", "don't", "doesn't", "can", "will", "could", "would"})
PREPOSITIONS = frozenset({"above", "around", "behind", "below", "by", "near", "upon", "with"})
RELATIVISERS = frozenset({"that", "who"})
INTRANSITIVE = frozenset({"change", "eat", "giggle", "move", "read", "sleep", "smile", "swim", "wait"})
TRANSITIVE = frozenset(
    {"accept", "admire", "amuse", "applaud", "comfort", "confuse", "entertain", "high_five", "remember"}
)
RELATIVE_CLAUSES = frozenset({"orc", "src_trans", "src_intrans"})
SIZES = {"train": 120_000, "dev": 1_000, "test": 10_000, "gen": 10_000}
"""Split sizes: train's is the number of items in versions 1.0.0 (and noagr 2.0.0), after the drop."""
GENERATED = 120_000
"""Sentences generated for train before the RC-subject questions are dropped (the 2018 supplement)."""
HELD_OUT_GENERATED = 14_000
"""Sentences of the no-agreement pool beyond train's, from which dev and test are kept (enough for both
after the drop: 11,310 remain of 14,000)."""
KEPT = {"question-formation": 100_696, "question-formation-noagr": 96_257}
"""Train's size from question-formation 2.0.0 and noagr 3.0.0: what the drop keeps of the 120,000 generated."""
GENERATOR_SEED = 20180801
MAX_TRIES = 1_000_000


def _is_weight(text: str) -> bool:
    """Whether `text` is a finite, non-negative rule weight."""
    try:
        return 0 <= float(text) < float("inf")
    except ValueError:
        return False


def parse_grammar(text: str) -> dict[str, tuple[list[tuple[str, ...]], list[float]]]:
    """`weight<TAB>LHS<TAB>RHS` lines -> LHS -> (right-hand sides, cumulative weights)."""
    rules: dict[str, tuple[list[tuple[str, ...]], list[float]]] = {}
    for number, line in enumerate(text.splitlines(), start=1):
        if not line.strip():
            continue
        columns = [c.strip() for c in line.split("\t") if c.strip()]
        if len(columns) != 3 or not _is_weight(columns[0]):
            expected = "`weight<TAB>left-hand side<TAB>right-hand side`"
            raise malformed("the grammar", number, expected, repr(line[:80]), PUBLISHED_FIX)
        weight, lhs, rhs = float(columns[0]), columns[1], tuple(columns[2].split())
        sides, cumulative = rules.setdefault(lhs, ([], []))
        sides.append(rhs)
        cumulative.append((cumulative[-1] if cumulative else 0.0) + weight)
    return rules


Compiled = dict[str, tuple[tuple[tuple[str, ...], ...], list[float], float]]
"""A grammar ready to sample: symbol -> (its right-hand sides reversed, cumulative weights, their total)."""


def compile_rules(rules: dict[str, tuple[list[tuple[str, ...]], list[float]]]) -> Compiled:
    """`rules` as `sample` reads them: each side reversed once here, not once per expansion."""
    return {
        lhs: (tuple(side[::-1] for side in sides), cumulative, cumulative[-1])
        for lhs, (sides, cumulative) in rules.items()
    }


def sample(rules: Compiled, rng: random.Random) -> list[str]:
    """One sentence from ROOT, symbols expanded left to right with the rules' weights (one draw of `rng`
    per expansion: the draws, and so every generated split, are those of a plain recursive expansion)."""
    out: list[str] = []
    stack = ["ROOT"]
    pop, push, emit, draw, find = stack.pop, stack.extend, out.append, rng.random, rules.get
    while stack:
        symbol = pop()
        rule = find(symbol)
        if rule is None:
            emit(symbol)
            continue
        reversed_sides, cumulative, total = rule
        push(reversed_sides[bisect.bisect_right(cumulative, draw() * total)])
    return out


def analyse(words: Sequence[str]) -> tuple[str, int]:
    """(what modifies the subject, index of the main auxiliary) of a declarative sentence."""
    if len(words) > 2 and words[2] in PREPOSITIONS:
        subject, end = "pp", 5
    elif len(words) > 2 and words[2] in RELATIVISERS:
        if words[3] not in AUXILIARIES:
            subject, end = "orc", 7
        elif words[4] in INTRANSITIVE:
            subject, end = "src_intrans", 5
        else:
            subject, end = "src_trans", 7
    else:
        subject, end = "none", 2
    if end >= len(words) or words[end] not in AUXILIARIES:
        raise ValueError(f"no main auxiliary where expected in {' '.join(words)!r}")
    return subject, end


def structure(words: Sequence[str]) -> tuple[str, str]:
    """(subject modifier, object kind) of a declarative: object intrans, plain, pp or rc."""
    subject, main = analyse(words)
    rest = words[main + 1 :]
    if len(rest) == 1:
        return subject, "intrans"
    if len(rest) == 3:
        return subject, "plain"
    return subject, "pp" if rest[3] in PREPOSITIONS else "rc"


def structure_shares(examples: Sequence[Example]) -> dict[tuple[str, str], float]:
    """Shares of sentence structures before question-task sentences with RC subjects were dropped.

    Half of all RC-subject sentences were given the question task and dropped, so each
    declarative RC-subject item stands for two sampled sentences.
    """
    counts: dict[tuple[str, str], float] = {}
    for example in examples:
        cell = structure(example.input[:-2])
        counts[cell] = counts.get(cell, 0.0) + (2.0 if cell[0] in RELATIVE_CLAUSES else 1.0)
    total = sum(counts.values())
    return {cell: count / total for cell, count in sorted(counts.items())}


def transform(tokens: Sequence[str]) -> list[str]:
    """The target of an input `sentence . decl|quest`: the sentence, or its question."""
    *words, _, task = tokens
    if task == "decl":
        return [*words, "."]
    _, main = analyse(words)
    return [words[main], *words[:main], *words[main + 1 :], "?"]


def make_example(example_id: str, words: Sequence[str], task: str, target: Sequence[str] | None = None) -> Example:
    subject, main = analyse(words)
    tokens = [*words, ".", task]
    return Example(
        id=example_id,
        input=tokens,
        target=list(target) if target is not None else transform(tokens),
        meta={
            "task": task,
            "subject": subject,
            "main_aux": words[main],
            "first_aux": next(w for w in words if w in AUXILIARIES),
        },
    )


def parse_published(text: str, prefix: str) -> list[Example]:
    """`source<TAB>target` lines of McCoy's data files."""
    examples = []
    for number, line in enumerate(text.splitlines()):
        if not line.strip():
            continue
        columns = line.split("\t")
        if len(columns) != 2 or len(columns[0].split()) < 2:
            expected = "`words . task<TAB>target`"
            raise malformed(prefix, number + 1, expected, repr(line[:80]), PUBLISHED_FIX)
        source, target = columns
        *words, _, task = source.split()
        try:
            examples.append(make_example(f"{prefix}-{number:05d}", words, task, target.split()))
        except ValueError as error:  # a sentence the grammar cannot have made
            raise malformed(
                prefix, number + 1, "a sentence of the published grammar", str(error), PUBLISHED_FIX
            ) from None
    return examples


class Sampler:
    """Unique sentences from a grammar, tasks assigned as McCoy et al. did.

    With `shares`, sentence structures (subject modifier x object kind) are drawn with those
    shares and filled from the grammar: sentences are sampled from the grammar and queued by
    structure until the drawn one is available.
    """

    def __init__(
        self,
        grammar: str,
        seed: int,
        exclude: set[tuple[str, ...]],
        shares: dict[tuple[str, str], float] | None = None,
    ) -> None:
        self.rules = compile_rules(parse_grammar(grammar))
        self.rng = random.Random(seed)
        self.seen = set(exclude)
        self.cells = list(shares or {})
        self.cumulative = list(itertools.accumulate((shares or {}).values()))
        self.queues: dict[tuple[str, str], deque[list[str]]] = defaultdict(deque)

    def _unique(self) -> list[str]:
        for _ in range(MAX_TRIES):
            words = sample(self.rules, self.rng)[:-1]  # drop the grammar's final "."
            key = tuple(words)
            if key not in self.seen:
                self.seen.add(key)
                return words
        raise RuntimeError(f"no new sentence in {MAX_TRIES} samples: the grammar's sentences are used up")

    def fresh(self) -> list[str]:
        if not self.cells:
            return self._unique()
        cell = self.cells[bisect.bisect_right(self.cumulative, self.rng.random() * self.cumulative[-1])]
        for _ in range(MAX_TRIES):
            if self.queues[cell]:
                return self.queues[cell].popleft()
            words = self._unique()
            self.queues[structure(words)].append(words)
        raise RuntimeError(f"no sentence of structure {cell} in {MAX_TRIES} samples")

    def generated(self, size: int) -> list[tuple[list[str], str]]:
        """`size` sentences, each given the `decl` or `quest` task with equal probability, none dropped:
        what the 2018 supplement generates before leaving out the RC-subject questions (`kept`)."""
        items: list[tuple[list[str], str]] = []
        for _ in range(size):
            words = self.fresh()
            items.append((words, "quest" if self.rng.random() < 0.5 else "decl"))
        return items

    def items(
        self, size: int, *, generalisation: bool = False, scored: Callable[[Sequence[str]], bool] | None = None
    ) -> list[tuple[list[str], str]]:
        """`size` (sentence, task) pairs: the training distribution (sampled until `size` remain after
        the RC-subject questions are dropped: versions 1.0.0 and noagr 2.0.0), or RC-subject questions
        (only those `scored` accepts, where given)."""
        items: list[tuple[list[str], str]] = []
        while len(items) < size:
            words = self.fresh()
            subject, _ = analyse(words)
            if generalisation:
                if subject in RELATIVE_CLAUSES and (scored is None or scored(words)):
                    items.append((words, "quest"))
                continue
            task = "quest" if self.rng.random() < 0.5 else "decl"
            if task == "quest" and subject in RELATIVE_CLAUSES:
                continue
            items.append((words, task))
        return items


def kept(items: Sequence[tuple[list[str], str]]) -> list[tuple[list[str], str]]:
    """The items a training set keeps: all but the question-task sentences with a relative clause on
    the subject, which "[were] not included in the training set" (the 2018 supplement)."""
    return [(words, task) for words, task in items if task == "decl" or analyse(words)[0] not in RELATIVE_CLAUSES]


def scored_by_mccoy(words: Sequence[str]) -> bool:
    """Whether McCoy et al.'s evaluation scores a gen sentence: `two_agreeing_auxes` in
    sent_evals.py of rnn-hierarchical-biases (applied by test_question.py to every gen item)
    keeps exactly two auxiliaries that are different words of one number (do/don't plural,
    every other auxiliary singular), so that the linear and the hierarchical rule part."""
    auxiliaries = [word for word in words if word in AUXILIARIES]
    plural = [word in ("do", "don't") for word in auxiliaries]
    return len(auxiliaries) == 2 and auxiliaries[0] != auxiliaries[1] and plural[0] == plural[1]


def numbered(prefix: str, items: Sequence[tuple[list[str], str]]) -> list[Example]:
    return [make_example(f"{prefix}-{i:06d}", words, task) for i, (words, task) in enumerate(items)]


FIRST_WORD_KINDS = ("main_aux", "first_aux", "other_aux", "not_aux")


def first_word_kind(example: Example, prediction: Sequence[str]) -> str:
    """Where the first output word of a question-task item comes from (see FIRST_WORD_KINDS)."""
    first = prediction[0] if prediction else ""
    if first == example.meta["main_aux"]:
        return "main_aux"
    if first == example.meta["first_aux"]:
        return "first_aux"
    return "other_aux" if first in AUXILIARIES else "not_aux"


def first_word_shares(examples: Sequence[Example], predictions: Sequence[Sequence[str]]) -> dict[str, PerExample]:
    """`first_word_KIND` per example: 1 where a question-task item's first word is of that kind,
    None for copy-task items; no metrics at all for a split without question-task items."""
    kinds = [
        first_word_kind(e, p) if e.meta.get("task") == "quest" else None
        for e, p in zip(examples, predictions, strict=True)
    ]
    if all(kind is None for kind in kinds):
        return {}
    return {f"first_word_{kind}": [None if k is None else float(k == kind) for k in kinds] for kind in FIRST_WORD_KINDS}


class QuestionFormationBase(Suite):
    """Scoring and oracle shared by both languages."""

    breakdown_keys: ClassVar[tuple[str, ...]] = ("task", "subject")

    def extra_metrics(
        self, split: str, examples: Sequence[Example], predictions: Sequence[Any]
    ) -> Mapping[str, PerExample]:
        first_word = [
            float(bool(p) and p[0] == (e.target or [""])[0]) for e, p in zip(examples, predictions, strict=True)
        ]
        return {"first_word_accuracy": first_word, **first_word_shares(examples, predictions)}

    def oracle(self, splits: Mapping[str, Split]) -> RuleTransducer:
        return RuleTransducer("question-formation-oracle", transform)


QUESTION_FORMATION = SuiteSpec(
    id="question-formation",
    version="1.0.0",
    family="systematicity",
    protocol="transduction",
    description="Turn declaratives into yes/no questions (agreement language, do-support); "
    "gen asks for questions on sentences whose subject carries a relative clause.",
    citation=CITATION,
    how_checked=CHECKED,
    deviations=DEVIATIONS,
    primary_metric="first_word_accuracy",
    higher_is_better=True,
    recipe="question-formation",
    splits=[
        train_split(SIZES["train"], "no questions on RC subjects"),
        dev_split(SIZES["dev"], "train distribution (model selection)"),
        scored_split("test", SIZES["test"], "in-distribution", "train distribution", ranked=False),
        scored_split("gen", SIZES["gen"], "generalisation", "questions whose subject has an RC"),
    ],
)
"""The agreement language; the no-agreement language (`question-formation-noagr`) is a variant of it."""


AGREEMENT_FILES = {
    "question_formation/question.gr": (
        "cfgs/question.gr",
        "e591d9687a02a554021fe4470f3ddd84ecca19bf509cc4aed770c27df671463b",
    ),
    "question_formation/question.dev": (
        "data/question.dev",
        "bfa06ca46316917089e97c3c3f653fa3d1e786c9a0fa51b52d491bb0f471fdcb",
    ),
    "question_formation/question.test": (
        "data/question.test",
        "498cd58830b732b6f5f40ad32f67a8f0d84dd73ad59c5035ec7c78bde75f280e",
    ),
    "question_formation/question.gen": (
        "data/question.gen",
        "037ae76f30c2df9779f02ff7245b6e798a79a264d456f9511839aafebc02e817",
    ),
}


class QuestionFormationV1(QuestionFormationBase):
    """Agreement language, version 1.0.0 (superseded): published dev/test/gen, train sampled from the
    published grammar until 120,000 items remain after the drop, with structure shares of dev and test."""

    spec = QUESTION_FORMATION
    sources = tuple(
        SourceFile(path=path, url=f"{MCCOY_URL}/{upstream}", sha256=sha)
        for path, (upstream, sha) in AGREEMENT_FILES.items()
    )
    # github.com/tommccoy1/rnn-hierarchical-biases at f34a87c has no licence file and its README states
    # no terms (it asks to cite the paper)
    licence = (
        "none stated by the authors (the rnn-hierarchical-biases repository has no licence); "
        "train is generated by structbench from the published grammar"
    )

    def generate(self, draw: int, files: SourceFiles) -> dict[str, list[Example]]:
        published = {
            name: parse_published(files.read_text(f"question_formation/question.{name}"), name)
            for name in ("dev", "test", "gen")
        }
        taken = {tuple(e.input[:-2]) for examples in published.values() for e in examples}
        shares = structure_shares(published["dev"] + published["test"])
        sampler = Sampler(files.read_text("question_formation/question.gr"), GENERATOR_SEED + draw, taken, shares)
        return {"train": numbered("train", sampler.items(SIZES["train"])), **published}


class QuestionFormation(QuestionFormationV1):
    """Agreement language: published dev/test/gen; train made from the published grammar as the 2018
    supplement makes it (120,000 generated, RC-subject questions dropped), with the structure shares of
    the published dev file."""

    spec = QUESTION_FORMATION.variant(
        version="2.0.0",
        deviations=DEVIATIONS_V2,
        splits=[
            train_split(KEPT["question-formation"], "120,000 generated, the questions on RC subjects dropped"),
            *QUESTION_FORMATION.splits[1:],
        ],
        changelog=[
            "2.0.0: train is made as the 2018 supplement makes it: 120,000 sentences generated, then the "
            "question-task ones with a relative clause on the subject dropped, 100,696 kept (1.0.0 sampled until "
            "120,000 remained after the drop, 19% more); its sentence-structure shares are measured on the "
            "published dev file alone (1.0.0 read dev and test). dev, test and gen are unchanged."
        ],
    )
    superseded = (QuestionFormationV1,)

    def generate(self, draw: int, files: SourceFiles) -> dict[str, list[Example]]:
        published = {
            name: parse_published(files.read_text(f"question_formation/question.{name}"), name)
            for name in ("dev", "test", "gen")
        }
        taken = {tuple(e.input[:-2]) for examples in published.values() for e in examples}
        shares = structure_shares(published["dev"])  # test stays unread
        sampler = Sampler(files.read_text("question_formation/question.gr"), GENERATOR_SEED + draw, taken, shares)
        return {"train": numbered("train", kept(sampler.generated(GENERATED))), **published}


class QuestionFormationNoAgreementV1(QuestionFormationBase):
    """No-agreement language, version 1.0.0 (superseded): gen holds every RC-subject question
    sampled, including ones McCoy's evaluation does not score (see version 2.0.0)."""

    spec = QUESTION_FORMATION.variant(
        id="question-formation-noagr",
        description="Turn declaratives into yes/no questions (no-agreement language, can/will/could/would); "
        "gen asks for questions on sentences whose subject carries a relative clause.",
    )
    sources = (
        SourceFile(
            path="question_formation/question_noagr.gr",
            url="",
            origin="Figure 5 of the supplementary material of McCoy, Frank & Linzen (2018, CogSci), transcribed",
            sha256="e05595a68738fa3c925f9e675afd6887b6ef69fe203d427fb0e570e6f1239910",
        ),
    )
    licence = (
        f"{GENERATED_LICENCE}, from a grammar transcribed from the supplementary material of "
        "McCoy, Frank & Linzen (2018, CogSci)"
    )
    gen_as_mccoy_scores: ClassVar[bool] = False
    """Whether gen keeps only the RC-subject questions McCoy's evaluation scores (`scored_by_mccoy`)."""

    def generate(self, draw: int, files: SourceFiles) -> dict[str, list[Example]]:
        sampler = Sampler(files.read_text("question_formation/question_noagr.gr"), GENERATOR_SEED + draw, set())
        scored = scored_by_mccoy if self.gen_as_mccoy_scores else None
        gen = sampler.items(SIZES["gen"], generalisation=True, scored=scored)
        # one pool, shuffled, so that train, dev and test share one distribution even where
        # deduplication uses up the short sentences
        pool = sampler.items(SIZES["train"] + SIZES["dev"] + SIZES["test"])
        sampler.rng.shuffle(pool)
        cut_dev, cut_test = SIZES["train"], SIZES["train"] + SIZES["dev"]
        return {
            "train": numbered("train", pool[:cut_dev]),
            "dev": numbered("dev", pool[cut_dev:cut_test]),
            "test": numbered("test", pool[cut_test:]),
            "gen": numbered("gen", gen),
        }


class QuestionFormationNoAgreementV2(QuestionFormationNoAgreementV1):
    """No-agreement language, version 2.0.0 (superseded): every split sampled from the supplement's
    grammar, train until 120,000 items remain after the drop; gen holds only the questions McCoy et
    al.'s evaluation scores (`scored_by_mccoy`)."""

    spec = QuestionFormationNoAgreementV1.spec.variant(
        version="2.0.0",
        changelog=[
            "2.0.0: gen keeps only sentences with exactly two auxiliaries that differ, the items McCoy's "
            "test_question.py scores; in 1.0.0, 24.7% had the same main and first auxiliary and 16.6% three "
            "auxiliaries, so the linear rule scored 0.247 on gen first-word accuracy instead of 0. Every split "
            "changes, since the sampler draws gen first."
        ],
    )
    gen_as_mccoy_scores = True
    superseded: ClassVar[tuple[type[Suite], ...]] = (QuestionFormationNoAgreementV1,)


class QuestionFormationNoAgreement(QuestionFormationNoAgreementV2):
    """No-agreement language: every split sampled from the supplement's grammar, train as the 2018
    supplement makes it (120,000 generated, RC-subject questions dropped), dev and test from the same
    pool after the same drop; gen holds only the questions McCoy et al.'s evaluation scores."""

    spec = QuestionFormationNoAgreementV2.spec.variant(
        version="3.0.0",
        deviations=DEVIATIONS_V2,
        splits=[
            train_split(KEPT["question-formation-noagr"], "120,000 generated, the questions on RC subjects dropped"),
            *QuestionFormationNoAgreementV2.spec.splits[1:],
        ],
        changelog=[
            *QuestionFormationNoAgreementV2.spec.changelog,
            "3.0.0: train is made as the 2018 supplement makes it: 120,000 sentences generated, then the "
            "question-task ones with a relative clause on the subject dropped, 96,257 kept (2.0.0 drew 120,000 "
            "after the drop, 25% more); dev and test come from the same shuffled pool after the same drop. gen "
            "is drawn as in 2.0.0; every split changes.",
        ],
    )
    superseded = (QuestionFormationNoAgreementV1, QuestionFormationNoAgreementV2)

    def generate(self, draw: int, files: SourceFiles) -> dict[str, list[Example]]:
        sampler = Sampler(files.read_text("question_formation/question_noagr.gr"), GENERATOR_SEED + draw, set())
        gen = sampler.items(SIZES["gen"], generalisation=True, scored=scored_by_mccoy)
        # one pool, shuffled, so that train, dev and test share one distribution even where
        # deduplication uses up the short sentences; each part drops the RC-subject questions
        pool = sampler.generated(GENERATED + HELD_OUT_GENERATED)
        sampler.rng.shuffle(pool)
        held_out = kept(pool[GENERATED:])
        cut_test = SIZES["dev"] + SIZES["test"]
        if len(held_out) < cut_test:
            raise RuntimeError(f"the pool keeps {len(held_out)} held-out items, fewer than dev and test's {cut_test}")
        return {
            "train": numbered("train", kept(pool[:GENERATED])),
            "dev": numbered("dev", held_out[: SIZES["dev"]]),
            "test": numbered("test", held_out[SIZES["dev"] : cut_test]),
            "gen": numbered("gen", gen),
        }
