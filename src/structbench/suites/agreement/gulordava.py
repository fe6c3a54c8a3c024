"""Long-distance subject-verb agreement: the English test set of Gulordava et al. (2018).

Reproduces the "colorless green" agreement evaluation (github.com/facebookresearch/
colorlessgreenRNNs, commit dbffbf0, `data/agreement/English/generated.tab`): 41 original
sentences from the English UD treebank, each with a prefix ending before a verb that agrees
with a distant subject, and 9 nonce variants per sentence in which every content word is
replaced by a random word of the same part of speech and morphology, so that semantics and
collocations cannot help. Each of the 410 items is a minimal pair: the prefix followed by the
correct verb form against the prefix followed by the wrong one. A language model passes an
item when it gives the correct form a strictly higher log-probability as a continuation of the
prefix (ties count wrong): Gulordava's comparison of p(verb | prefix). Version 1.0.0 compared
the two whole sequences, prefix included: the same decision for a model that scores a sequence
left to right, but not for one that adds an end token (ours do), whose p(`</s>` | ... verb)
entered each side.

Protocol minimal-pair, zero-shot: the train split is empty (Gulordava's models were trained on
80M tokens of Wikipedia; a user's language model brings its own training). Primary metric
`accuracy` (higher is better; the share of items right, as Gulordava et al. report it for
original and nonce sentences), broken down by `type` (original / generated),
`n_attr` (number of attractors: 0, 1 or 2) and `pattern`.

Test role: `test` is a generalisation split: its constructions were chosen for long-distance
agreement across intervening material, and its nonce sentences are outside any natural
training text by design, so it asks whether agreement was learned as syntax rather than as
word co-occurrence.

How the suites were checked, and where they deviate from the paper, are declared in their spec
(`CHECKED` and `DEVIATIONS` below: the spec's `how_checked` and `deviations`); the suite card shows both.
"""

from __future__ import annotations

import csv
import io
from collections.abc import Mapping
from typing import ClassVar

from structbench.data.sources import SourceFile
from structbench.errors import UserError
from structbench.specs import Example, Split, SuiteSpec, scored_split, train_split
from structbench.suite import SourceFiles, Suite
from structbench.suites.common import PUBLISHED_FIX, GoldPairScorer

CHECKED = """How it was checked (tests/suites/agreement/test_gulordava.py): 820 rows pair up into 410 items of one correct
and one wrong form with the same prefix (41 original, 369 generated; 330 / 70 / 10 items with
0 / 1 / 2 attractors); the oracle (the gold forms read from the frozen test split) scores 1.0."""
"""How the suites of this module were checked against their paper (`SuiteSpec.how_checked`)."""
DEVIATIONS_V1 = """Deviation: none in the data; the whole sequence is scored rather than the verb alone,
which gives the same decision only for a language model that scores no end token (see version 2.0.0)."""
"""Where version 1.0.0 departs from the paper."""
DEVIATIONS = """Deviation: none; the verb forms are scored as continuations of the prefix, p(verb | prefix),
as Gulordava et al. score them."""
"""Where the suites of this module depart from their paper, and why (`SuiteSpec.deviations`)."""

COMMIT = "dbffbf0f2ef86c50bac204d7a2292862e1c6036f"
SOURCE = SourceFile(
    path="agreement_gulordava/generated.tab",
    url=f"https://raw.githubusercontent.com/facebookresearch/colorlessgreenRNNs/{COMMIT}/data/agreement/English/generated.tab",
    sha256="da6dd6390965f1292af8ffde649a8f18d39d67eec3c7d7a8dfc8559d35e8081b",
)
CITATION = (
    "Gulordava, Bojanowski, Grave, Linzen & Baroni 2018, Colorless green recurrent networks dream hierarchically; "
    "Linzen, Dupoux & Goldberg 2016, Assessing the ability of LSTMs to learn syntax-sensitive dependencies"
)


COLUMNS = ("pattern", "constr_id", "sent_id", "type", "class", "prefix", "form", "n_attr")
"""The columns of generated.tab the suite reads."""


def parse_gulordava(text: str, *, continuations: bool = True) -> list[Example]:
    """Pair the `correct` and `wrong` rows of each (pattern, construction, sentence, type) item: the two
    forms as continuations of the prefix, or (version 1.0.0) as whole sequences with the prefix."""
    reader = csv.DictReader(io.StringIO(text, newline=""), delimiter="\t")
    missing = [c for c in COLUMNS if c not in (reader.fieldnames or [])]
    if missing:
        raise UserError(f"{SOURCE.path} lacks the column(s) {', '.join(missing)}; {PUBLISHED_FIX}.")
    rows = list(reader)
    items: dict[tuple[str, str, str, str], dict[str, dict[str, str]]] = {}
    for row in rows:
        key = (row["pattern"], row["constr_id"], row["sent_id"], row["type"])
        items.setdefault(key, {})[row["class"]] = row
    examples = []
    for (pattern, construction, sentence, kind), pair in items.items():
        complete = set(pair) == {"correct", "wrong"} and all(
            isinstance(row.get(column), str) for row in pair.values() for column in ("prefix", "form", "n_attr")
        )  # a short row leaves None in the columns it lacks
        if (
            not complete
            or pair["correct"]["prefix"] != pair["wrong"]["prefix"]
            or not pair["correct"]["n_attr"].isdigit()
        ):
            raise UserError(
                f"{SOURCE.path}: item {pattern}/{construction}/{sentence}/{kind} is not one correct and one wrong "
                f"form of one prefix with a whole number of attractors; {PUBLISHED_FIX}."
            )
        prefix = pair["correct"]["prefix"].split()
        kept = [] if continuations else prefix
        examples.append(
            Example(
                id=f"{pattern}-{construction}-{sentence}-{kind}",
                input=prefix,
                candidates=[[*kept, pair[form]["form"]] for form in ("correct", "wrong")],
                answer=0,
                meta={"type": kind, "n_attr": int(pair["correct"]["n_attr"]), "pattern": pattern},
            )
        )
    return examples


class AgreementGulordavaV1(Suite):
    """Gulordava et al.'s English agreement test set, original and nonce sentences, as whole sequences
    (version 1.0.0, superseded)."""

    spec = SuiteSpec(
        id="agreement-gulordava",
        version="1.0.0",
        family="agreement",
        protocol="minimal-pair",
        description="Long-distance subject-verb agreement in original and nonce ('colorless green') English "
        "sentences: the correct verb form must be more probable than the wrong one.",
        citation=CITATION,
        how_checked=CHECKED,
        deviations=DEVIATIONS_V1,
        primary_metric="accuracy",
        higher_is_better=True,
        splits=[
            train_split(0, "empty: models bring their own training"),
            scored_split("test", 410, "generalisation", "41 original and 369 nonce items"),
        ],
    )
    sources = (SOURCE,)
    # github.com/facebookresearch/colorlessgreenRNNs, LICENSE at dbffbf0: "Attribution-NonCommercial 4.0
    # International"; its README: "licensed under CC-BY-NC license"
    licence = "CC BY-NC 4.0 (Attribution-NonCommercial, the licence of the colorlessgreenRNNs repository)"
    breakdown_keys: ClassVar[tuple[str, ...]] = ("type", "n_attr", "pattern")

    def generate(self, draw: int, files: SourceFiles) -> dict[str, list[Example]]:
        text = files.read_text(SOURCE.path)
        return {"train": [], "test": parse_gulordava(text, continuations=self.spec.continuations)}

    def oracle(self, splits: Mapping[str, Split]) -> GoldPairScorer:
        return GoldPairScorer(splits["test"])


class AgreementGulordava(AgreementGulordavaV1):
    """Gulordava et al.'s English agreement test set: the verb forms as continuations of each prefix."""

    spec = AgreementGulordavaV1.spec.variant(
        version="2.0.0",
        continuations=True,
        deviations=DEVIATIONS,
        description="Long-distance subject-verb agreement in original and nonce ('colorless green') English "
        "sentences: after the prefix, the correct verb form must be more probable than the wrong one.",
        changelog=[
            "2.0.0: the verb forms are continuations of the prefix, compared by p(verb | prefix) with no end "
            "token; 1.0.0 compared prefix + form as whole sequences, so a language model that appends `</s>` "
            "added p(</s> | ... verb) to each side. The items are the same 410."
        ],
    )
    superseded = (AgreementGulordavaV1,)
