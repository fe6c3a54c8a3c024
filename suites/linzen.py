"""Number prediction on Linzen et al.'s Wikipedia agreement corpus (user-supplied; Tran 2018 §5.5).

Linzen, Dupoux & Goldberg (2016) extracted ~1.4M present-tense subject-verb dependencies from
English Wikipedia (`agr_50_mostcommon_10K.tsv`, github.com/TalLinzen/rnn_agreement). The file
is not redistributable here, so this suite reads the user's copy: put it at
`linzen/agr_50_mostcommon_10K.tsv` under `--source-dir` or `STRUCTBENCH_SOURCE_DIR`. Its hash
is not pinned and no manifest is released; the first build writes a local manifest, and later
reads are verified against that.

Each row becomes a classification item: the words of `orig_sentence` before the verb
(`verb_index` is 1-based) labelled `singular` (verb_pos VBZ) or `plural` (VBP). Split as
Tran did: 10% train, 1% dev, 89% test, by a seeded permutation of the rows; the test items
are also split by attractors as in Tran's and Linzen's analyses: `attractors-k` holds the
test items with k intervening nouns all of which differ in number from the subject
(`n_intervening == n_diff_intervening == k`, k = 0..4). `meta` keeps n_intervening,
n_diff_intervening, distance and has_rel.

Primary metric `accuracy` (higher is better; Linzen et al. report its complement, the error
rate, overall and per attractor count), broken down by `n_diff_intervening`.

Test roles: `test` is in-distribution (a random 89% of the same corpus whose 10% is train);
`attractors-0` is in-distribution too (no intervening noun at all, the common case), and
`attractors-1` to `attractors-4` are generalisation splits (every intervening noun an
attractor: a rare condition in the corpus, on which Linzen et al. measure whether the number
was learned from the subject rather than from the nearest noun).
Only `test` is ranked: the attractor splits are subsets of it, so ranking them as well would
count their items twice; they are reported per condition.

How it was checked (tests/test_linzen.py): on a fixture written in the file's layout, labels
follow verb_pos, prefixes stop before the verb, the split proportions and attractor bins hold,
and each attractor split is exactly its subset of `test`. The oracle answers with the gold
labels of the frozen `test` split (a prefix that occurs there with both numbers gets the
label of its first occurrence). Deviation: Linzen's own number-prediction code reads the
`sentence` column, in which rare words are replaced by their part of speech; we read
`orig_sentence`.
"""

from __future__ import annotations

import csv
import io
from collections.abc import Mapping

import numpy as np

from structbench.sources import SourceFile
from structbench.specs import Example, Split, SuiteSpec, dev_split, scored_split, train_split
from structbench.suite import SourceFiles, Suite
from structbench.suites.common import NUMBER_LABELS, GoldLabels

SOURCE = SourceFile(
    path="linzen/agr_50_mostcommon_10K.tsv",
    url="",
    sha256="",
    origin="github.com/TalLinzen/rnn_agreement (download agr_50_mostcommon_10K.tsv yourself)",
)
SPLIT_SEED = 20161201
BINS = range(5)
LABELS = NUMBER_LABELS


def parse_linzen(text: str) -> list[Example]:
    examples = []
    for number, row in enumerate(csv.DictReader(io.StringIO(text), delimiter="\t")):
        words = row["orig_sentence"].split()
        verb_index = int(row["verb_index"]) - 1
        if row["verb_pos"] not in ("VBZ", "VBP") or not 0 < verb_index < len(words):
            raise ValueError(
                f"row {number + 2}: verb_pos {row['verb_pos']!r} or verb_index {row['verb_index']} is invalid"
            )
        examples.append(
            Example(
                id=f"row-{number:07d}",
                input=words[:verb_index],
                label=LABELS[row["verb_pos"] == "VBP"],
                meta={
                    "n_intervening": int(row["n_intervening"]),
                    "n_diff_intervening": int(row["n_diff_intervening"]),
                    "distance": int(row["distance"]),
                    "has_rel": row["has_rel"] == "True",
                },
            )
        )
    return examples


class AgreementLinzenNumber(Suite):
    """Linzen et al.'s number-prediction task on the user's copy of their corpus."""

    spec = SuiteSpec(
        id="agreement-linzen-number",
        version="1.0.0",
        family="agreement",
        protocol="classification",
        description="Predict the number of a verb from the Wikipedia sentence prefix before it (Linzen et al. "
        "2016; user-supplied corpus), by number of attractors.",
        citation="Linzen, Dupoux & Goldberg 2016, Assessing the ability of LSTMs to learn syntax-sensitive "
        "dependencies; Tran 2018 (thesis, §5.5)",
        primary_metric="accuracy",
        higher_is_better=True,
        task="default",
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
    breakdown_keys = ("n_diff_intervening",)

    def generate(self, draw: int, files: SourceFiles) -> dict[str, list[Example]]:
        examples = parse_linzen(files.read_text(SOURCE.path))
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
