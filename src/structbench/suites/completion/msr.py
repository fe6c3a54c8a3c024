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

Neural language models train with their recipes for the `sentence-completion` task (the spec's
`task`): `lstm-lm` and `rmn` in Tran 2018 §4.6's one setting, with the same vocabulary, so that a
question whose answer and a distractor are both outside it ties, and counts wrong, for both alike.

Test role: `test` is in-distribution: the questions are held-out sentences of the kind of
text the training corpus holds (19th-century fiction), and the challenge measures language
modelling of that text, not extrapolation beyond it.

How the suites were checked, and where they deviate from the paper, are declared in their spec
(`CHECKED` and `DEVIATIONS` below: the spec's `how_checked` and `deviations`); the suite card shows both.
"""

from __future__ import annotations

import re
from collections import defaultdict
from collections.abc import Mapping
from pathlib import Path

from structbench.data.sources import SourceFile
from structbench.specs import Example, Split, SuiteSpec, scored_split, train_split
from structbench.suite import SourceFiles, Suite
from structbench.suites.common import GoldPairScorer, holds_nothing, malformed, read_user_file, user_supplied_licence

CHECKED = """How it was checked (tests/suites/completion/test_msr.py): on fixture files written in the
challenge's layout, the right candidate of every item is the one named in the answers file,
and the oracle (the right candidates read from the frozen test split) scores 1.0. Damaged
files are refused in one sentence naming the file and line (a line not in the layout, a
question without five candidates or without an answer, an answer to a question that is not
asked, a file without questions, answers or training sentences), never with a traceback."""
"""How the suites of this module were checked against their paper (`SuiteSpec.how_checked`)."""
DEVIATIONS = """Deviations: the tokenisation
above is ours (the challenge fixes none), and so is the training corpus, which the user
chooses."""
"""Where the suites of this module depart from their paper, and why (`SuiteSpec.deviations`)."""

ORIGIN = "the MSR Sentence Completion Challenge (Zweig & Burges 2011); obtain the files yourself"
QUESTIONS = SourceFile(
    path="msr_sentence_completion/Holmes.machine_format.questions.txt", url="", sha256="", origin=ORIGIN
)
ANSWERS = SourceFile(path="msr_sentence_completion/Holmes.machine_format.answers.txt", url="", sha256="", origin=ORIGIN)
TRAIN = SourceFile(path="msr_sentence_completion/train.txt", url="", sha256="", origin="your own training corpus")
LINE = re.compile(r"^\s*(\d+)([a-e])\)\s*(.*)$")
QUESTION_LINE = "`<number><a-e>) sentence with the [candidate] word`"
"""What a line of either file looks like, as errors describe it."""
BRACKETS = re.compile(r"\[[^\]]*\]")
"""The candidate word of a question line, e.g. `[lonely]`."""
TOKEN = re.compile(r"\w+(?:'\w+)?|[^\w\s]")


def tokens(text: str) -> list[str]:
    return TOKEN.findall(text.lower())


def parse_questions(
    questions: str, answers: str, questions_path: Path | str = QUESTIONS.path, answers_path: Path | str = ANSWERS.path
) -> list[Example]:
    """One forced-choice item per question of `questions` (five lines `1a)` to `1e)`), its answer
    the letter of that question's line in `answers`; the paths name the files in errors.

    A malformed line, a question without five candidates or without an answer, an answer to a
    question the questions file lacks, or an empty file raises UserError naming the file and line."""
    options: dict[int, dict[str, str]] = defaultdict(dict)
    first_line: dict[int, int] = {}
    for number, line in enumerate(questions.splitlines(), start=1):
        if not line.strip():
            continue
        match = LINE.match(line)
        if match is None or not BRACKETS.search(match.group(3)):
            raise malformed(questions_path, number, QUESTION_LINE, repr(line))
        question, letter = int(match.group(1)), match.group(2)
        if letter in options[question]:
            raise malformed(questions_path, number, f"one line {question}{letter})", "a second one")
        first_line.setdefault(question, number)
        options[question][letter] = match.group(3)
    if not options:
        raise holds_nothing(questions_path, "questions", f"five lines {QUESTION_LINE} per question, a) to e)")
    right: dict[int, str] = {}
    for number, line in enumerate(answers.splitlines(), start=1):
        if not line.strip():
            continue
        match = LINE.match(line)
        if match is None:
            raise malformed(answers_path, number, QUESTION_LINE, repr(line))
        question = int(match.group(1))
        if question not in options:
            raise malformed(answers_path, number, f"the number of a question in {questions_path}", str(question))
        if question in right:
            raise malformed(answers_path, number, f"one answer to question {question}", "a second one")
        right[question] = match.group(2)
    if not right:
        raise holds_nothing(answers_path, "answers", f"the right line {QUESTION_LINE} of each question")
    examples = []
    for question, candidates in options.items():
        if sorted(candidates) != list("abcde"):
            raise malformed(
                questions_path,
                first_line[question],
                f"question {question} to have the five candidates a) to e)",
                ", ".join(f"{letter})" for letter in sorted(candidates)),
                "add the missing lines or remove the question",
            )
        if question not in right:
            raise malformed(
                questions_path,
                first_line[question],
                f"question {question} to have an answer in {answers_path}",
                "none",
                "add its line to the answers file",
            )
        letters = sorted(candidates)
        sentences = [tokens(candidates[letter].replace("[", "").replace("]", "")) for letter in letters]
        blank = BRACKETS.sub(" _ ", candidates["a"])
        examples.append(
            Example(
                id=f"q{question:04d}",
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
        how_checked=CHECKED,
        deviations=DEVIATIONS,
        primary_metric="accuracy",
        higher_is_better=True,
        recipe="sentence-completion",
        splits=[
            train_split(None, "the user's training sentences"),
            scored_split("test", None, "in-distribution", "the challenge's 1,040 questions"),
        ],
    )
    sources = (QUESTIONS, ANSWERS, TRAIN)
    licence = user_supplied_licence("the MSR Sentence Completion Challenge files (and your own training corpus)")

    def generate(self, draw: int, files: SourceFiles) -> dict[str, list[Example]]:
        train_path = files.path(TRAIN.path)
        train = [
            Example(id=f"train-{i:07d}", input=tokens(line))
            for i, line in enumerate(read_user_file(train_path).splitlines())
            if line.strip()
        ]
        if not train:
            raise holds_nothing(train_path, "sentences", "your training corpus, one sentence per line")
        questions, answers = files.path(QUESTIONS.path), files.path(ANSWERS.path)
        test = parse_questions(read_user_file(questions), read_user_file(answers), questions, answers)
        return {"train": train, "test": test}

    def oracle(self, splits: Mapping[str, Split]) -> GoldPairScorer:
        return GoldPairScorer(splits["test"])
