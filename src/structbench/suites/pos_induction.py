"""Unsupervised part-of-speech induction on UD English-EWT (Christodoulopoulos et al. 2010; Tran 2018 ch. 6).

A model sees only the words of every sentence (digits mapped to 0, case kept, as Tran
preprocessed WSJ) and returns one cluster id per token, with K clusters; it is scored on all
tokens of the same sentences, which is the standard protocol of the task (train = test, no
tuning on gold tags). Tran evaluates on the full WSJ, which is licensed; the UD English Web
Treebank (commit 15d613d) is the freely available stand-in: its dev and test files together,
4,078 sentences and 50,241 tokens (multiword-token lines and empty nodes skipped).

- `pos-ud-ewt-xpos`: Penn Treebank tags (the XPOS column), 49 distinct in these files, K = 49.
- `pos-ud-ewt-upos`: the 17 universal tags, K = 17.
- `pos-wsj`: the user's Penn Treebank WSJ (`penn_wsj/wsj.conll`, `word<TAB>tag` lines or
  CoNLL-U, under `STRUCTBENCH_SOURCE_DIR`; not pinned), K = 45, Tran's own setting. Version
  2.0.0 reads `#<TAB>#` lines as the pound-sign token, which 1.0.0 dropped as comments.
- `pos-synthetic`: 3,000 sentences (19,853 tokens) sampled from a small grammar over 11 Penn
  tags whose lexicon is ambiguous on purpose (12 of 34 words carry two or three tags: `that`
  DT/IN, `can` MD/NN, `light` JJ/NN/VB, `runs` NNS/VBZ, ...), K = 11: a clean, licence-free
  check that an inducer uses context, since a word-type clustering cannot score 1.0 on it.

The `train` split holds the sentences without tags (what a model may fit on); `test` holds
the same sentences with their gold tags, which only the scorer reads. Test role: `test` is
in-distribution, since it is the training sentences themselves (the task's protocol: tags are
induced for the text the model was fitted on).

Scorers (structbench.scoring.induction_metrics, all tokens): V-measure (primary; higher is
better: Tran §6.8 calls it the most informative and consistent metric, after Christodoulopoulos
et al. 2010, as it does not depend on the number of clusters, where many-to-one "is easily gamed
by introducing a large number of clusters" (§6.8); his ablations are discussed in it, §6.11 on
Table 6.3), many-to-one, one-to-one by optimal assignment, one-to-one by Tran's greedy matching (labelled
separately), homogeneity and completeness, and variation of information (lower
is better). They agree with scikit-learn to 1e-9 where it has the metric
(tests/suites/test_pos_induction.py).

How the suites were checked, and where they deviate from the paper, are declared in their spec
(`CHECKED` and `DEVIATIONS` below: the spec's `how_checked` and `deviations`); the suite card shows both.
"""

from __future__ import annotations

import random
import re
from collections.abc import Mapping
from pathlib import Path
from typing import ClassVar

from structbench.data.sources import SourceFile
from structbench.specs import Example, Split, SplitSpec, SuiteSpec, scored_split, train_split
from structbench.suite import SourceFiles, Suite
from structbench.suites.common import (
    GENERATED_LICENCE,
    GoldTagger,
    holds_nothing,
    malformed,
    read_user_file,
    user_supplied_licence,
)

CHECKED = """How it was checked: the token, tag and sentence counts above were measured on the published
files; the oracle (the gold tags of the frozen test split as clusters) scores 1.0 on every
metric but variation of information, which is 0."""
"""How the suites of this module were checked against their paper (`SuiteSpec.how_checked`)."""
DEVIATIONS = """Deviations: the `pos-ud-ewt-*` suites use
English-EWT instead of WSJ (and K = 49 or 17 instead of 45), so their numbers are not comparable
with Tran's Table 6.2 (HMM 62.5 / 41.4 / 53.3, Brown 68.2 / 49.9 / 63.0, M-1 / 1-1 / VM); `pos-wsj` is
Tran's setting on the user's copy of WSJ; `pos-synthetic` is our own corpus (K = 11), with no published
numbers of its own. docs/reproductions.md shows Table 6.2's WSJ numbers beside all three, labelled in
the published column as WSJ, another corpus: only their order carries over."""
"""Where the suites of this module depart from their paper, and why (`SuiteSpec.deviations`)."""

UD_COMMIT = "15d613d8447b3478787d4c278730a1e48a945efb"
UD_URL = f"https://raw.githubusercontent.com/UniversalDependencies/UD_English-EWT/{UD_COMMIT}"
FILES = {
    "ud_english_ewt/en_ewt-ud-dev.conllu": "531a54ff90d6ab12201c5a50c3e78e6ddac4de69abc4bce5d275d3cd29efe2b6",
    "ud_english_ewt/en_ewt-ud-test.conllu": "e266e515a0a7547657ed3d90d9ba46487d6bd251f27ad4269d4e8a427c8555cd",
}
N_SENTENCES = 4078
CITATION = (
    "Christodoulopoulos, Goldwater & Steedman 2010, Two decades of unsupervised POS induction: how far have we "
    "come?; Tran 2018, Predicting and discovering linguistic structure with neural networks (thesis, ch. 6)"
)
DIGIT = re.compile(r"\d")


def read_word_tag(
    text: str, column: int = 4, path: Path | str = "the tagged text", *, hash_tokens: bool = True
) -> list[tuple[list[str], list[str]]]:
    """(words with digits mapped to 0, tags) per sentence, from `word<TAB>tag` lines or CoNLL-U
    (tags from `column`: 3 UPOS, 4 XPOS; multiword lines and empty nodes skipped).

    A line that is neither, or whose word or tag is empty, raises UserError naming `path` (the
    file `text` was read from) and the line, so that a damaged export is never half read. A
    line starting with `#` is a comment (CoNLL-U's `# text = ...`) unless it has a tab, then it
    is the token `#` (WSJ's pound sign, `#<TAB>#`); `hash_tokens=False` is pos-wsj 1.0.0's
    reading, which dropped such tokens."""
    sentences: list[tuple[list[str], list[str]]] = []
    words: list[str] = []
    tags: list[str] = []
    for number, line in enumerate([*text.splitlines(), ""], start=1):
        if not line.strip():
            if words:
                sentences.append((words, tags))
            words, tags = [], []
            continue
        if line.startswith("#") and (not hash_tokens or "\t" not in line):
            continue
        fields = line.split("\t")
        if len(fields) >= 10:
            if "-" in fields[0] or "." in fields[0]:
                continue
            word, tag = fields[1], fields[column]
        elif len(fields) == 2:
            word, tag = fields
        else:
            expected = "`word<TAB>tag` or a CoNLL-U token line (10 tab-separated fields)"
            raise malformed(path, number, expected, f"{len(fields)} field(s) in {line!r}")
        if not word.strip() or not tag.strip():
            raise malformed(path, number, "a word and its tag", repr(line))
        words.append(DIGIT.sub("0", word))
        tags.append(tag)
    return sentences


class TagInductionSuite(Suite):
    """Sentences without tags in `train`, the same with gold tags in `test`; gold as the oracle."""

    def oracle(self, splits: Mapping[str, Split]) -> GoldTagger:
        return GoldTagger(splits["test"])


def split_pair(sentences: list[tuple[list[str], list[str]]]) -> dict[str, list[Example]]:
    return {
        "train": [Example(id=f"s{i:05d}", input=words) for i, (words, _) in enumerate(sentences)],
        "test": [
            Example(id=f"s{i:05d}", input=words, tags=tags, meta={"n_words": len(words)})
            for i, (words, tags) in enumerate(sentences)
        ],
    }


class UdPosInduction(TagInductionSuite):
    """POS induction on English-EWT dev+test; subclasses choose the tag column."""

    column: ClassVar[int]
    # github.com/UniversalDependencies/UD_English-EWT at 15d613d: LICENSE.txt is "Attribution-ShareAlike 4.0
    # International"; the README licenses the annotations under it and names the texts' own copyrights
    licence = (
        "CC BY-SA 4.0 (the treebank's annotations, as the UD_English-EWT repository states; "
        "the underlying web texts keep their authors' copyrights)"
    )

    def generate(self, draw: int, files: SourceFiles) -> dict[str, list[Example]]:
        return split_pair([s for path in FILES for s in read_word_tag(files.read_text(path), self.column)])


def _splits(n_sentences: int | None) -> list[SplitSpec]:
    """A member's splits: the same sentences twice, without and with gold tags."""
    return [
        train_split(n_sentences, "the sentences, words only"),
        scored_split("test", n_sentences, "in-distribution", "the same sentences with gold tags"),
    ]


POS = SuiteSpec(
    id="pos-induction",
    version="1.0.0",
    family="pos-induction",
    protocol="tag-induction",
    description="Induce word clusters and score them against gold part-of-speech tags.",
    citation=CITATION,
    how_checked=CHECKED,
    deviations=DEVIATIONS,
    primary_metric="v_measure",
    higher_is_better=True,
    splits=_splits(N_SENTENCES),
)
"""What every POS-induction suite shares; each member declares its id, description, K and sizes."""


class UdXpos(UdPosInduction):
    column = 4
    spec = POS.variant(
        id="pos-ud-ewt-xpos",
        description="Induce 49 word clusters on English-EWT, scored against Penn Treebank tags.",
        n_clusters=49,
    )
    sources = tuple(SourceFile(path=p, url=f"{UD_URL}/{p.split('/')[1]}", sha256=h) for p, h in FILES.items())


class UdUpos(UdPosInduction):
    column = 3
    spec = POS.variant(
        id="pos-ud-ewt-upos",
        description="Induce 17 word clusters on English-EWT, scored against universal POS tags.",
        n_clusters=17,
    )
    sources = UdXpos.sources


SYNTHETIC_RULES: dict[str, list[tuple[str, ...]]] = {
    "S": [("NP", "VP", ".")],
    "NP": [("DT", "NN"), ("DT", "JJ", "NN"), ("DT", "NNS"), ("PRP",), ("NP", "IN", "DT", "NN")],
    "VP": [("VBZ",), ("VBZ", "NP"), ("MD", "VB", "NP"), ("VBD", "NP"), ("VBZ", "IN", "DT", "NN")],
}
SYNTHETIC_LEXICON: dict[str, tuple[str, ...]] = {
    "DT": ("the", "a", "that", "this"),
    "NN": ("dog", "park", "run", "can", "walk", "book", "light", "watch"),
    "NNS": ("dogs", "parks", "runs", "walks", "books", "watches"),
    "JJ": ("old", "light", "quick", "green"),
    "PRP": ("she", "he", "it"),
    "IN": ("in", "near", "that", "like"),
    "VBZ": ("runs", "walks", "books", "watches", "likes"),
    "VBD": ("saw", "liked", "booked"),
    "MD": ("can", "will", "must"),
    "VB": ("run", "walk", "book", "watch", "like", "light"),
    ".": (".",),
}
SYNTHETIC_SENTENCES = 3000
SYNTHETIC_SEED = 20100801


def sample_tagged(rng: random.Random) -> tuple[list[str], list[str]]:
    """One sentence and its tags; the NP -> NP PP rule is taken at most once per phrase."""
    words: list[str] = []
    tags: list[str] = []

    def expand(symbol: str, depth: int) -> None:
        if symbol in SYNTHETIC_LEXICON:
            words.append(rng.choice(SYNTHETIC_LEXICON[symbol]))
            tags.append(symbol)
            return
        options = SYNTHETIC_RULES[symbol]
        if depth > 1:
            options = [o for o in options if o[0] != symbol]
        for child in rng.choice(options):
            expand(child, depth + 1)

    expand("S", 0)
    return words, tags


class PosSynthetic(TagInductionSuite):
    """Tag induction on sentences from a small grammar whose lexicon is ambiguous."""

    spec = POS.variant(
        id="pos-synthetic",
        description="Induce word clusters on a sampled tagged corpus in which many words carry two or more tags.",
        n_clusters=len(SYNTHETIC_LEXICON),
        splits=_splits(SYNTHETIC_SENTENCES),
    )
    licence = GENERATED_LICENCE

    def generate(self, draw: int, files: SourceFiles) -> dict[str, list[Example]]:
        rng = random.Random(SYNTHETIC_SEED + draw)
        return split_pair([sample_tagged(rng) for _ in range(SYNTHETIC_SENTENCES)])


WSJ = SourceFile(
    path="penn_wsj/wsj.conll",
    url="",
    sha256="",
    origin="the Penn Treebank (LDC99T42); export it as `word<TAB>tag` lines, a blank line between sentences",
)


class PosWsjV1(TagInductionSuite):
    """POS induction on the user's Penn Treebank WSJ, version 1.0.0 (superseded): the `#` tokens
    (`#<TAB>#` lines) were read as comments and dropped."""

    spec = POS.variant(
        id="pos-wsj",
        description="Induce 45 word clusters on the full WSJ (user-supplied) and score them against the Penn "
        "Treebank tags, as Tran 2018 Table 6.2 does.",
        n_clusters=45,
        splits=_splits(None),
    )
    sources = (WSJ,)
    licence = user_supplied_licence("the Penn Treebank WSJ (LDC99T42)")
    hash_tokens: ClassVar[bool] = False
    """Whether a `#<TAB>#` line is the token `#` (2.0.0) or a comment (1.0.0)."""

    def generate(self, draw: int, files: SourceFiles) -> dict[str, list[Example]]:
        path = files.path(WSJ.path)
        sentences = read_word_tag(read_user_file(path), path=path, hash_tokens=self.hash_tokens)
        if not sentences:
            raise holds_nothing(
                path, "tagged sentences", "the WSJ as `word<TAB>tag` lines (or CoNLL-U), a blank line between sentences"
            )
        return split_pair(sentences)


class PosWsj(PosWsjV1):
    """POS induction on the user's Penn Treebank WSJ, Tran's setting (K = 45, all tokens scored)."""

    spec = PosWsjV1.spec.variant(
        version="2.0.0",
        changelog=[
            "2.0.0: a `#<TAB>#` line is WSJ's pound-sign token, no longer a comment; 1.0.0 dropped every `#` "
            "token (the tag `#` among them), so its sentences lacked them."
        ],
    )
    hash_tokens = True
    superseded = (PosWsjV1,)
