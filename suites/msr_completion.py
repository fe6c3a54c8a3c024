"""The MSR Sentence Completion Challenge on the user's copy of its files (Zweig & Burges 2011; Tran 2018 §4.6).

1,040 sentences from Sherlock Holmes novels, each with one word removed and five candidates
(the right word and four impostors chosen to be plausible to an n-gram model). The files are
not redistributable, so this suite reads the user's copies under `--source-dir` or
`STRUCTBENCH_SOURCE_DIR`: `msr_sentence_completion/Holmes.machine_format.questions.txt`
(lines `1a) ... [word] ...`, five per question), `.answers.txt` (the right line of each
question) and a training corpus `msr_sentence_completion/train.txt`, one sentence per line
(e.g. the challenge's 19th-century novels, sentence-split by the user). Nothing is pinned or
released: the first build writes a local manifest.

Text is lower-cased and split into word and punctuation tokens for both questions and
training text. Protocol forced-choice: the candidate whose whole sentence is most probable
wins; ties count wrong. Primary metric `accuracy` (higher is better; the share of questions
answered right, the challenge's measure and Tran's).

Test role: `test` is in-distribution: the questions are held-out sentences of the kind of
text the training corpus holds (19th-century fiction), and the challenge measures language
modelling of that text, not extrapolation beyond it.

How it was checked (tests/test_msr_completion.py): on fixture files written in the
challenge's layout, the right candidate of every item is the one named in the answers file,
a question without five candidates or without an answer is refused, and the oracle (the
right candidates read from the frozen test split) scores 1.0. Deviations: the tokenisation
above is ours (the challenge fixes none), and so is the training corpus, which the user
chooses.
"""

from __future__ import annotations

import re
from collections import defaultdict
from collections.abc import Mapping

from structbench.sources import SourceFile
from structbench.specs import Example, Split, SuiteSpec, scored_split, train_split
from structbench.suite import SourceFiles, Suite
from structbench.suites.common import GoldPairScorer

ORIGIN = "the MSR Sentence Completion Challenge (Zweig & Burges 2011); obtain the files yourself"
QUESTIONS = SourceFile(
    path="msr_sentence_completion/Holmes.machine_format.questions.txt", url="", sha256="", origin=ORIGIN
)
ANSWERS = SourceFile(path="msr_sentence_completion/Holmes.machine_format.answers.txt", url="", sha256="", origin=ORIGIN)
TRAIN = SourceFile(path="msr_sentence_completion/train.txt", url="", sha256="", origin="your own training corpus")
LINE = re.compile(r"^\s*(\d+)([a-e])\)\s*(.*)$")
TOKEN = re.compile(r"\w+(?:'\w+)?|[^\w\s]")


def tokens(text: str) -> list[str]:
    return TOKEN.findall(text.lower())


def parse_questions(questions: str, answers: str) -> list[Example]:
    options: dict[str, dict[str, str]] = defaultdict(dict)
    for number, line in enumerate(questions.splitlines(), start=1):
        if not line.strip():
            continue
        match = LINE.match(line)
        if match is None:
            raise ValueError(f"questions line {number} is not `<n><a-e>) sentence`")
        options[match.group(1)][match.group(2)] = match.group(3)
    right: dict[str, str] = {}
    for line in answers.splitlines():
        match = LINE.match(line)
        if match:
            right[match.group(1)] = match.group(2)
    examples = []
    for question, candidates in options.items():
        if sorted(candidates) != list("abcde") or question not in right:
            raise ValueError(f"question {question} needs five candidates a-e and an answer")
        letters = sorted(candidates)
        sentences = [tokens(candidates[letter].replace("[", "").replace("]", "")) for letter in letters]
        blank = re.sub(r"\[[^\]]*\]", " _ ", candidates["a"])
        examples.append(
            Example(
                id=f"q{int(question):04d}",
                input=tokens(blank),
                candidates=sentences,
                answer=letters.index(right[question]),
            )
        )
    return examples


class MsrSentenceCompletion(Suite):
    """The 1,040 Holmes questions, with the user's training corpus."""

    spec = SuiteSpec(
        id="msr-sentence-completion",
        version="1.0.0",
        family="completion",
        protocol="forced-choice",
        description="The MSR Sentence Completion Challenge: pick the missing word of a Holmes sentence among five "
        "(user-supplied files).",
        citation="Zweig & Burges 2011, The Microsoft Research Sentence Completion Challenge; Tran 2018 (thesis, §4.6)",
        primary_metric="accuracy",
        higher_is_better=True,
        task="default",
        splits=[
            train_split(None, "the user's training sentences"),
            scored_split("test", None, "in-distribution", "the challenge's 1,040 questions"),
        ],
    )
    sources = (QUESTIONS, ANSWERS, TRAIN)

    def generate(self, draw: int, files: SourceFiles) -> dict[str, list[Example]]:
        train = [
            Example(id=f"train-{i:07d}", input=tokens(line))
            for i, line in enumerate(files.read_text(TRAIN.path).splitlines())
            if line.strip()
        ]
        test = parse_questions(files.read_text(QUESTIONS.path), files.read_text(ANSWERS.path))
        return {"train": train, "test": test}

    def oracle(self, splits: Mapping[str, Split]) -> GoldPairScorer:
        return GoldPairScorer(splits["test"])
