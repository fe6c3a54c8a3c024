"""Pieces several suite families share: rule-based oracles, gold-answer oracles, and the reading
of user-supplied files with one-sentence errors that name the file and line.

An oracle proves that a suite's data and scorers agree: it must score 1.0 on every test split.
Where a suite has a rule (a SCAN interpreter, a grammar), the rule is the oracle; where its
answers are only known from published gold labels, the oracle reads them from the frozen
splits the runner hands it.
"""

from __future__ import annotations

from collections import defaultdict, deque
from collections.abc import Callable, Sequence
from pathlib import Path

from structbench.errors import UserError
from structbench.specs import Split


class RuleTransducer:
    """A transduction oracle made from a rule that maps one input to its output.

    An input the rule rejects (ValueError or IndexError) gets an empty output, which scores
    as wrong, instead of failing the whole run.
    """

    protocols = ("transduction",)

    def __init__(self, name: str, rule: Callable[[list[str]], list[str]]) -> None:
        self.name = name
        self._rule = rule

    def transduce(self, inputs: list[list[str]]) -> list[list[str]]:
        outputs = []
        for tokens in inputs:
            try:
                outputs.append(self._rule(tokens))
            except (ValueError, IndexError):
                outputs.append([])
        return outputs


NUMBER_LABELS = ["singular", "plural"]
"""Labels of the number-prediction suites (Linzen, Dupoux & Goldberg 2016): the number of the upcoming verb."""


class GoldPairScorer:
    """Log-probability 0 for every gold candidate of the given splits, -1 for any other sequence.

    The oracle of minimal-pair and forced-choice suites whose answers are only known from
    published gold labels (Gulordava's agreement set, the MSR completion questions)."""

    name = "gold-pairs"
    protocols = ("minimal-pair", "forced-choice")

    def __init__(self, *tested: Split) -> None:
        self.correct = {tuple(e.candidates[e.answer or 0]) for split in tested for e in split.examples if e.candidates}

    def logprob(self, sequences: list[list[str]]) -> list[float]:
        return [0.0 if tuple(s) in self.correct else -1.0 for s in sequences]


class GoldLabels:
    """Answers each input with its gold label in the given splits (the oracle of classification
    suites without a rule). An input that occurs more than once gets the label of its first
    occurrence in the last split that holds it; an unknown input gets the first label asked for."""

    name = "gold-labels"
    protocols = ("classification",)

    def __init__(self, *labelled: Split) -> None:
        self.labels = {tuple(e.input): e.label or "" for split in labelled for e in reversed(split.examples)}

    def classify(self, inputs: list[list[str]], labels: list[str]) -> list[str]:
        return [self.labels.get(tuple(tokens), labels[0]) for tokens in inputs]


class GoldTagger:
    """Returns each sentence's gold tags as cluster ids (the oracle of tag-induction suites).

    Tags are numbered in sorted order; a sentence that occurs several times gets the tags of
    its occurrences in turn, and an unknown sentence gets cluster 0 for every word."""

    name = "gold-tagger"
    protocols = ("tag-induction",)

    def __init__(self, tagged: Split) -> None:
        self.tag_ids = {tag: i for i, tag in enumerate(sorted({t for e in tagged.examples for t in e.tags or []}))}
        self.by_sentence: dict[tuple[str, ...], deque[list[str]]] = defaultdict(deque)
        for example in tagged.examples:
            self.by_sentence[tuple(example.input)].append(example.tags or [])

    def induce(self, sentences: list[list[str]], n_clusters: int) -> list[list[int]]:
        out = []
        for words in sentences:
            queue = self.by_sentence[tuple(words)]
            tags = queue.popleft() if queue else []
            queue.append(tags)  # sentences that repeat get their tags back in turn
            out.append([self.tag_ids.get(t, 0) for t in tags] if tags else [0] * len(words))
        return out


def read_user_file(path: Path) -> str:
    """The text of a file the user supplies (Linzen, MSR, WSJ), read as `Path.read_text` reads it;
    bytes that are not UTF-8 are refused with the line they are on instead of a traceback."""
    try:
        return path.read_text(encoding="utf-8")
    except UnicodeDecodeError:
        data = path.read_bytes()
        try:
            data.decode("utf-8")
        except UnicodeDecodeError as error:  # decoded whole, so that `start` counts from the file's beginning
            raise malformed(
                path,
                data.count(b"\n", 0, error.start) + 1,
                "UTF-8 text",
                f"the byte {data[error.start]:#04x}",
                "save the file as UTF-8",
            ) from None
        raise


def malformed(path: Path | str, line: int, expected: str, got: str, fix: str = "fix or remove that line") -> UserError:
    """The one-sentence error for a bad line of a user-supplied file: where, what belongs there, what is there."""
    return UserError(f"{path} line {line}: expected {expected}, got {got}; {fix}.")


def holds_nothing(path: Path | str, unit: str, contents: str) -> UserError:
    """The one-sentence error for a user-supplied file that yields no examples (empty, or a header only)."""
    return UserError(f"{path} holds no {unit}; it should contain {contents}.")


LOGIC_RELATIONS = ["=", "<", ">", "^", "|", "v", "#"]
"""The seven natural-logic relations of Bowman et al. (2015), in their symbols."""
LOGIC_SEPARATOR = "<sep>"
"""Between the two formulas of a logic input."""
LOGIC_VARIABLES = ("a", "b", "c", "d", "e", "f")
ALL_WORLDS = (1 << 64) - 1
"""The 64 truth assignments of the six variables, as a bit mask."""
VARIABLE_MASKS = {v: sum(1 << world for world in range(64) if world >> i & 1) for i, v in enumerate(LOGIC_VARIABLES)}
"""Truth table of each variable over the 64 assignments (bit w set when assignment w makes it true)."""


def relation(premise: int, hypothesis: int) -> str:
    """The natural-logic relation between two sets of worlds given as 64-bit masks (shared by
    `logic-inference-*` and `logic-bowman-*`, which must label pairs alike)."""
    if premise == hypothesis:
        return "="
    if premise & ~hypothesis & ALL_WORLDS == 0:
        return "<"
    if hypothesis & ~premise & ALL_WORLDS == 0:
        return ">"
    disjoint = premise & hypothesis == 0
    exhaustive = premise | hypothesis == ALL_WORLDS
    if disjoint:
        return "^" if exhaustive else "|"
    return "v" if exhaustive else "#"


class LogicSolver:
    """Classifies each `premise <sep> hypothesis` pair from the truth tables of its two formulas:
    the oracle of both logic suite families, which differ only in how a formula is bracketed."""

    name = "logic-oracle"
    protocols = ("classification",)

    def __init__(self, truth_table: Callable[[Sequence[str]], int]) -> None:
        self.truth_table = truth_table

    def classify(self, inputs: list[list[str]], labels: list[str]) -> list[str]:
        answers = []
        for tokens in inputs:
            cut = tokens.index(LOGIC_SEPARATOR)
            answers.append(relation(self.truth_table(tokens[:cut]), self.truth_table(tokens[cut + 1 :])))
        return answers
