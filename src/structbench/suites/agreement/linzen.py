"""Number prediction on Linzen et al.'s Wikipedia agreement corpus (user-supplied; Tran 2018 §5.5).

Linzen, Dupoux & Goldberg (2016) extracted ~1.4M present-tense subject-verb dependencies from
English Wikipedia (`agr_50_mostcommon_10K.tsv`, github.com/TalLinzen/rnn_agreement). The file
is not redistributable here, so this suite reads the user's copy: put it at
`linzen/agr_50_mostcommon_10K.tsv` under `--source-dir` or `STRUCTBENCH_SOURCE_DIR`. Its hash
is not pinned and no manifest is released; the first build writes a local manifest, and later
reads are verified against that.

Each row becomes a classification item: the words of `orig_sentence` before the verb
(`verb_index` is 1-based) labelled `singular` (verb_pos VBZ) or `plural` (VBP). Version 2.0.0
first drops the rows whose sentence has more than 50 words, as Linzen et al.'s code does:
`RNNModel.load_examples` (rnnagr/rnn_model.py, lines 77-79 at commit 0001b91 of
github.com/TalLinzen/rnn_agreement) splits the `sentence` column on whitespace and skips the
row `if len(tokens) > self.maxlen`, with `maxlen=50` (line 25), before any train/test split; so
the limit is on the whole sentence, not the prefix, and a sentence of exactly 50 words is kept.
(Their corpus subset was already cut at 50 tokens per sentence, rnnagr/sentence_subset.py line
28, so their own file probably has no longer row; the limit makes any copy match.) `sentence`
replaces rare words by their part of speech but keeps one item per token, so it has as many
words as `orig_sentence` (rnnagr/collect_agreement.py, `represent_sentence`). Version 1.0.0
keeps every row and stays loadable as `agreement-linzen-number@1.0.0`. Then, as Tran did:
10% train, 1% dev, 89% test, by a seeded permutation of the kept rows; the test items
are also split by attractors as in Tran's and Linzen's analyses: `attractors-k` holds the
test items with k intervening nouns all of which differ in number from the subject
(`n_intervening == n_diff_intervening == k`, k = 0..4). `meta` keeps n_intervening,
n_diff_intervening, distance and has_rel. A malformed row (wrong field count, a verb_pos other
than VBZ/VBP, a verb_index outside the sentence, ...) or a file without rows is refused in one
sentence naming the file and line.

Primary metric `accuracy` (higher is better; Linzen et al. report its complement, the error
rate, overall and per attractor count), broken down by `n_diff_intervening`.

Test roles: `test` is in-distribution (a random 89% of the same corpus whose 10% is train);
`attractors-0` is in-distribution too (no intervening noun at all, the common case), and
`attractors-1` to `attractors-4` are generalisation splits (every intervening noun an
attractor: a rare condition in the corpus, on which Linzen et al. measure whether the number
was learned from the subject rather than from the nearest noun).
Only `test` is ranked: the attractor splits are subsets of it, so ranking them as well would
count their items twice; they are reported per condition.

How the suites were checked, and where they deviate from the paper, are declared in their spec
(`CHECKED` and `DEVIATIONS` below: the spec's `how_checked` and `deviations`); the suite card shows both.
"""

from __future__ import annotations

import csv
import io
from collections.abc import Mapping
from pathlib import Path
from typing import ClassVar

import numpy as np

from structbench.data.sources import SourceFile
from structbench.errors import UserError
from structbench.specs import Example, Split, SuiteSpec, dev_split, scored_split, train_split
from structbench.suite import SourceFiles, Suite
from structbench.suites.common import (
    NUMBER_LABELS,
    GoldLabels,
    holds_nothing,
    malformed,
    read_user_file,
    user_supplied_licence,
)

CHECKED = """How it was checked (tests/suites/agreement/test_linzen.py): on a fixture written in the file's layout, labels
follow verb_pos, prefixes stop before the verb, the split proportions and attractor bins hold,
and each attractor split is exactly its subset of `test`; version 2.0.0 drops a 51-word row and
keeps a 50-word one, both of which 1.0.0 keeps; malformed variants of the file are refused with
their line. The oracle answers with the gold labels of the frozen `test` split (a prefix that
occurs there with both numbers gets the label of its first occurrence)."""
"""How the suites of this module were checked against their paper (`SuiteSpec.how_checked`)."""
DEVIATIONS = """Deviation: Linzen's own
number-prediction code reads the `sentence` column, in which rare words are replaced by their
part of speech; we read `orig_sentence` (the 50-word limit counts `sentence`, as theirs does)."""
"""Where the suites of this module depart from their paper, and why (`SuiteSpec.deviations`)."""

SOURCE = SourceFile(
    path="linzen/agr_50_mostcommon_10K.tsv",
    url="",
    sha256="",
    origin="github.com/TalLinzen/rnn_agreement (download agr_50_mostcommon_10K.tsv yourself)",
)
SPLIT_SEED = 20161201
MAX_WORDS = 50
"""Linzen et al. keep a dependency only if its sentence has at most this many words (version 2.0.0)."""
BINS = range(5)
LABELS = NUMBER_LABELS
COLUMNS = ("orig_sentence", "verb_pos", "verb_index", "n_intervening", "n_diff_intervening", "distance", "has_rel")
"""The columns the loader reads; version 2.0.0 also counts the words of `sentence`, as Linzen's code does."""
CONTENTS = "Linzen et al.'s agr_50_mostcommon_10K.tsv: a header line naming its columns, then one dependency per line"


def parse_linzen(text: str, path: Path | str = SOURCE.path, max_words: int | None = None) -> list[Example]:
    """One example per row of `text`, the content of `path` (named in errors); with `max_words`,
    rows whose `sentence` has more words are dropped after they are checked.

    A malformed row, a header without a needed column, or a file without rows raises UserError
    naming `path` and the line, so that a damaged copy never ends in a traceback or in empty splits."""
    if not text.strip():
        raise holds_nothing(path, "header or rows", CONTENTS)
    reader = csv.DictReader(io.StringIO(text, newline=""), delimiter="\t")  # a stray \r ends a line, as csv expects
    header = reader.fieldnames or []
    needed = (*COLUMNS, "sentence") if max_words is not None else COLUMNS
    if missing := [column for column in needed if column not in header]:
        raise UserError(
            f"{path} line 1: the header lacks the column(s) {', '.join(missing)}; the first line must name the "
            "tab-separated columns of agr_50_mostcommon_10K.tsv."
        )
    examples = []
    n_rows = 0
    try:
        for number, row in enumerate(reader):
            n_rows += 1
            line = reader.line_num
            if None in row or None in row.values():
                n_fields = len(header) + len(row.get(None) or []) - sum(v is None for v in row.values())
                raise malformed(path, line, f"{len(header)} tab-separated fields as in the header", str(n_fields))
            if row["verb_pos"] not in ("VBZ", "VBP"):
                raise malformed(path, line, "verb_pos VBZ or VBP", repr(row["verb_pos"]))
            verb_index, n_intervening, n_diff_intervening, distance = (
                whole_number(row[column], path, line, column)
                for column in ("verb_index", "n_intervening", "n_diff_intervening", "distance")
            )
            words = row["orig_sentence"].split()
            if not 1 < verb_index <= len(words):  # the verb follows at least its subject
                expected = f"a verb_index between 2 and the sentence's length ({len(words)} words)"
                raise malformed(path, line, expected, str(verb_index))
            if row["has_rel"] not in ("True", "False"):
                raise malformed(path, line, "has_rel True or False", repr(row["has_rel"]))
            if max_words is not None and len(row["sentence"].split()) > max_words:
                continue
            examples.append(
                Example(
                    id=f"row-{number:07d}",
                    input=words[: verb_index - 1],
                    label=LABELS[row["verb_pos"] == "VBP"],
                    meta={
                        "n_intervening": n_intervening,
                        "n_diff_intervening": n_diff_intervening,
                        "distance": distance,
                        "has_rel": row["has_rel"] == "True",
                    },
                )
            )
    except csv.Error as error:
        raise malformed(path, reader.reader.line_num, "a tab-separated row", f"unreadable text ({error})") from None
    if not n_rows:
        raise holds_nothing(path, "rows below its header", CONTENTS)
    if not examples:
        raise holds_nothing(path, f"row of at most {max_words} words", CONTENTS)
    return examples


def whole_number(text: str, path: Path | str, line: int, column: str) -> int:
    """`text` as an int, or UserError naming the line and column of `path`."""
    try:
        return int(text)
    except ValueError:
        raise malformed(path, line, f"a whole number in column {column}", repr(text)) from None


class AgreementLinzenNumberV1(Suite):
    """Linzen et al.'s number-prediction task on the user's copy of their corpus, version 1.0.0
    (superseded): every row is kept, however long its sentence (see version 2.0.0)."""

    spec = SuiteSpec(
        id="agreement-linzen-number",
        version="1.0.0",
        family="agreement",
        protocol="classification",
        description="Predict the number of a verb from the Wikipedia sentence prefix before it (Linzen et al. "
        "2016; user-supplied corpus), by number of attractors.",
        citation="Linzen, Dupoux & Goldberg 2016, Assessing the ability of LSTMs to learn syntax-sensitive "
        "dependencies; Tran 2018 (thesis, §5.5)",
        how_checked=CHECKED,
        deviations=DEVIATIONS,
        primary_metric="accuracy",
        higher_is_better=True,
        splits=[
            train_split(None, "10% of the rows"),
            dev_split(None, "1% of the rows"),
            scored_split("test", None, "in-distribution", "89% of the rows"),
            *(
                scored_split(
                    f"attractors-{k}",
                    None,
                    "in-distribution" if k == 0 else "generalisation",
                    f"the test items with {k} intervening nouns, all attractors (a subset of test)"
                    if k
                    else "the test items without intervening nouns (a subset of test)",
                    ranked=False,
                )
                for k in BINS
            ),
        ],
        labels=LABELS,
    )
    sources = (SOURCE,)
    licence = user_supplied_licence("Linzen et al.'s Wikipedia agreement corpus")
    breakdown_keys = ("n_diff_intervening",)
    max_words: ClassVar[int | None] = None
    """Rows whose `sentence` has more words are dropped before splitting; None keeps every row."""

    def generate(self, draw: int, files: SourceFiles) -> dict[str, list[Example]]:
        path = files.path(SOURCE.path)
        examples = parse_linzen(read_user_file(path), path, self.max_words)
        order = np.random.default_rng(SPLIT_SEED + draw).permutation(len(examples))
        n_train, n_dev = round(0.10 * len(examples)), round(0.01 * len(examples))
        train = [examples[i] for i in sorted(order[:n_train])]
        dev = [examples[i] for i in sorted(order[n_train : n_train + n_dev])]
        test = [examples[i] for i in sorted(order[n_train + n_dev :])]
        splits = {"train": train, "dev": dev, "test": test}
        for k in BINS:
            splits[f"attractors-{k}"] = [
                e for e in test if e.meta["n_intervening"] == e.meta["n_diff_intervening"] == k
            ]
        return splits

    def oracle(self, splits: Mapping[str, Split]) -> GoldLabels:
        return GoldLabels(splits["test"])


class AgreementLinzenNumber(AgreementLinzenNumberV1):
    """Linzen et al.'s number-prediction task on the sentences of at most 50 words, as their code keeps."""

    spec = AgreementLinzenNumberV1.spec.variant(
        version="2.0.0",
        changelog=[
            f"2.0.0: rows whose `sentence` has more than {MAX_WORDS} words are dropped before splitting, as "
            "Linzen et al.'s RNNModel.load_examples does (maxlen=50); 1.0.0 kept every row, so its splits hold "
            "longer sentences than the paper's models saw. Every split changes where the file has such rows."
        ],
    )
    max_words = MAX_WORDS
    superseded = (AgreementLinzenNumberV1,)
