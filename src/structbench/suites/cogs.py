"""COGS (Kim & Linzen 2020): English sentences to logical forms, and 21 generalisation cases.

Reproduces COGS as published at github.com/najoungkim/COGS, commit 165a7b6 (2022-09-13, the fix of
50 `obj_pp_to_subj_pp` items): `train` (24,155), `dev` (3,000) and `test` (3,000, in-distribution)
and `gen` (21,000: 21 cases of 1,000). Every file is `sentence<TAB>logical form<TAB>case`. A model
reads the sentence and writes the logical form (transduction). Tokenisation is the authors' own:
both columns are split on whitespace (`scripts/reformat_data_for_opennmt.py` writes the columns
as they are and builds the vocabularies with `str.split()`; OpenNMT's `_feature_tokenize`, in
`src/OpenNMT-py/onmt/inputters/text_dataset.py` lines 46-70 of that commit, splits on whitespace
again), so `A rose was helped by a dog .` is 8 tokens and a logical form such as
`rose ( x _ 1 ) AND help . theme ( x _ 3 , x _ 1 ) ...` is a token per symbol, as published.

Metric: `exact_match` (primary): the predicted tokens joined by single spaces equal the gold logical
form's tokens joined likewise, as the authors' evaluation computes it (`Translation.acc` in
`src/OpenNMT-py/onmt/translate/translation.py` lines 179-187 at 165a7b6: `' '.join(best_pred) ==
' '.join(gold_sent)`, summed by `Translator.translate` as PRED ACC, translator.py lines 347,
385-386 and 429). It equals the protocol's `sequence_accuracy` for every prediction whose tokens hold no
space. The headline is exact match on `gen` (the suite score: gen is the one ranked generalisation
split), with `test` beside it: the generalisation gap.

`gen` is one split, not 21: the paper headlines the aggregate generalisation accuracy, and the
site's leaderboard then shows one gen column beside test (21 scored splits would give 21 columns,
each ranked, and a suite score that is their mean: the same number, less readable). The cases are
its breakdowns: every gen example carries `case` (the file's third column) and `kind`, `lexical` or
`structural` as the authors group them (README at 165a7b6: "`cp_recursion`, `pp_recursion`, and
`obj_pp_to_subj_pp` correspond to structural generalization and the rest, lexical generalization").
The site plots the two kinds per model and tables the 21 cases (too many categories for a plot);
`CASES` gives each case's paper section, as `data/gen_cases_to_paper_sections.json` names it.

The gen file is over 4 MiB and is not among the reference files this project is checked against; it
is pinned by its git blob id at the pinned commit (`a54a3c9b…`, `data.sources.SourceFile.git_blob`),
downloaded from that commit on first use and verified, or read from `cogs/gen.tsv` under
`--source-dir` or `STRUCTBENCH_SOURCE_DIR`. Without it (offline, no local copy) the suite is skipped
by `build` and `quickstart` with the one-line reason, as the user-data suites are. The other three
files are pinned by SHA-256.

Manifest: the released manifest fingerprints every split, and the gen split's fingerprint (the
SHA-256 of its JSON lines) can only be computed from the file, which no machine this suite was
written on had. So `cogs@1.0.0` ships no released manifest yet: its first build writes a local one,
and later reads are verified against that, as for the user-data suites. Nothing is lost in pinning:
every source file is pinned (three by SHA-256, gen by blob id), so every machine that builds it builds
the same data, and tests/suites/test_cogs.py pins the digests of train, dev and test. Whoever first
builds it with the gen file commits the manifest that build writes (`suites/manifests/`).

Oracle: the gold logical forms of the frozen splits (a semantic interpreter for the COGS grammar is
beyond this suite); it scores 1.0 on every split, which proves the data and the scorer agree.

How the suite was checked, and where it deviates from the paper, are declared in its spec (`CHECKED`
and `DEVIATIONS` below); the suite card shows both.
"""

from __future__ import annotations

from typing import ClassVar, Literal

from structbench.data.sources import SourceFile
from structbench.specs import Example, SuiteSpec, dev_split, scored_split, train_split
from structbench.suite import SourceFiles
from structbench.suites.common import SemanticParsingSuite, semantic_parsing_examples

COMMIT = "165a7b669eade971fa47bf568a2e51925360fed8"
URL = f"https://raw.githubusercontent.com/najoungkim/COGS/{COMMIT}/data"
GEN_BLOB = "a54a3c9b5f46464daf9b10fc6df7133796f1f293"
"""`git ls-tree 165a7b6 data/gen.tsv`: the pin of the generalisation set."""

Kind = Literal["lexical", "structural"]
CASES: dict[str, tuple[str, Kind]] = {
    "subj_to_obj_common": ("3.1.1", "lexical"),
    "subj_to_obj_proper": ("3.1.2", "lexical"),
    "obj_to_subj_common": ("3.1.3", "lexical"),
    "obj_to_subj_proper": ("3.1.4", "lexical"),
    "prim_to_subj_common": ("3.1.5", "lexical"),
    "prim_to_subj_proper": ("3.1.6", "lexical"),
    "prim_to_obj_common": ("3.1.7", "lexical"),
    "prim_to_obj_proper": ("3.1.8", "lexical"),
    "prim_to_inf_arg": ("3.1.9", "lexical"),
    "obj_pp_to_subj_pp": ("3.2.1", "structural"),
    "cp_recursion": ("3.3.1", "structural"),
    "pp_recursion": ("3.3.2", "structural"),
    "active_to_passive": ("3.4.1", "lexical"),
    "passive_to_active": ("3.4.2", "lexical"),
    "obj_omitted_transitive_to_transitive": ("3.4.3", "lexical"),
    "unacc_to_transitive": ("3.4.4", "lexical"),
    "do_dative_to_pp_dative": ("3.4.5", "lexical"),
    "pp_dative_to_do_dative": ("3.4.6", "lexical"),
    "only_seen_as_transitive_subj_as_unacc_subj": ("3.5.1", "lexical"),
    "only_seen_as_unacc_subj_as_obj_omitted_transitive_subj": ("3.5.2", "lexical"),
    "only_seen_as_unacc_subj_as_unerg_subj": ("3.5.3", "lexical"),
}
"""The 21 generalisation cases: paper section (`data/gen_cases_to_paper_sections.json`) and kind
(structural: the three the authors' README names; lexical: the rest)."""
CASE_SIZE = 1_000
SIZES = {"train": 24_155, "dev": 3_000, "test": 3_000, "gen": CASE_SIZE * len(CASES)}
IN_DISTRIBUTION = "in_distribution"
"""The case column of every dev and test line."""

CHECKED = """How it was checked (tests/suites/test_cogs.py): train, dev and test load from the pinned files
with the published sizes (24,155 / 3,000 / 3,000), every dev and test line of case in_distribution,
and their split digests are pinned in the test; the gen loader builds a suite from a fixture in the gen
file's format (made by the test, verified by its git blob id) with the case and kind of every line,
and refuses an unknown case, a malformed line and a copy whose blob id is not the pin; the 21 cases
and their sections are those of the published gen_cases_to_paper_sections.json; without the gen file
the suite is skipped with a one-line reason; exact match follows the authors' Translation.acc (tokens
joined by spaces, compared as strings); the oracle scores 1.0 on every split."""
"""How the suite was checked against its paper (`SuiteSpec.checked`)."""
DEVIATIONS = """Deviations: none in the data. The gen file could not be read on the machine this suite was
written on, so gen's size and cases are checked on a fixture and at build time (21 cases of 1,000,
each a known case), not against the published file; its manifest is written by the first build that
has the file (see the module docstring)."""
"""Where the suite departs from its paper, and why (`SuiteSpec.deviations`)."""


def source(name: str, sha256: str = "", git_blob: str = "") -> SourceFile:
    return SourceFile(path=f"cogs/{name}.tsv", url=f"{URL}/{name}.tsv", sha256=sha256, git_blob=git_blob)


SOURCES: tuple[SourceFile, ...] = (
    source("train", sha256="220b3804b562c0156ee986eff1bdd15c27e52142549362a64f57baf86e304c78"),
    source("dev", sha256="ab66388a309c7ac1ad210c781a6a0ce12281a9ef24619a12422a752cef61bc21"),
    source("test", sha256="68f8e51e9f6d9cd22d64efe68dd21d7ea5ba327e9a2359481030161aea757035"),
    source("gen", git_blob=GEN_BLOB),
)


GEN_META = {case: {"kind": kind} for case, (_, kind) in CASES.items()}
"""What a gen example's meta holds beyond its case."""


def examples_of(split: str, text: str, path: str) -> list[Example]:
    """The examples of one COGS file (`text`, the content of `path`): meta `case`, on gen also `kind`;
    dev and test must be all in_distribution."""
    return semantic_parsing_examples(split, text, path, "COGS", GEN_META, IN_DISTRIBUTION)


class Cogs(SemanticParsingSuite):
    """COGS: train/dev/test and the 21-case generalisation set, scored by exact match of the logical form."""

    spec = SuiteSpec(
        id="cogs",
        version="1.0.0",
        family="semantic-parsing",
        protocol="transduction",
        description="Parse English sentences into logical forms (COGS); gen asks for 21 kinds of new "
        "combinations of known words and structures, 18 lexical and 3 structural.",
        citation="Kim & Linzen 2020, COGS: A Compositional Generalization Challenge Based on Semantic "
        "Interpretation (EMNLP)",
        how_checked=CHECKED,
        deviations=DEVIATIONS,
        primary_metric="exact_match",
        higher_is_better=True,
        recipe="semantic-parsing",
        splits=[
            train_split(SIZES["train"], "the published train.tsv"),
            dev_split(SIZES["dev"], "the published dev.tsv: the training distribution (model selection)"),
            scored_split("test", SIZES["test"], "in-distribution", "the published test.tsv: the training distribution"),
            scored_split(
                "gen",
                SIZES["gen"],
                "generalisation",
                "the published gen.tsv: 21 cases of 1,000, by case and kind (lexical or structural)",
            ),
        ],
    )
    sources = SOURCES
    licence = "MIT (the COGS repository's LICENSE)"
    breakdown_keys: ClassVar[tuple[str, ...]] = ("kind", "case")

    case_size: ClassVar[int] = CASE_SIZE
    """Examples of each generalisation case in gen (a test's fixture has fewer)."""

    def generate(self, draw: int, files: SourceFiles) -> dict[str, list[Example]]:
        # gen first: the file a machine may lack, before the seconds spent on the others
        texts = {name: files.read_text(f"cogs/{name}.tsv") for name in ("gen", "train", "dev", "test")}
        splits = {name: examples_of(name, texts[name], f"cogs/{name}.tsv") for name in ("train", "dev", "test", "gen")}
        self.check_case_sizes(splits["gen"], CASES, self.case_size, "cogs/gen.tsv")
        return splits
