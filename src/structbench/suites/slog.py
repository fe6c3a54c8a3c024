"""SLOG (Li et al. 2023): COGS's sentences with 17 structural generalisation cases, variable-free forms.

Reproduces SLOG as published at github.com/bingzhilee/SLOG, commit 1c55df8, in its variable-free
logical forms (`data/varfree_LF/`, the format of Qiu et al. 2022 that the authors' T5 and LLaMA
experiments read): `train` (32,755), `dev` (4,046) and `test` (4,046, in-distribution; 3,000 of its
items are of case `in_distribution`, the others of the structures train also holds, such as
`pp_4` or `wh_Q_simple_trans`), and `gen` (17 cases of 1,000), the file `gen_varfreeLF.tsv` of
`data/generalization_sets.zip`. Every file is `sentence<TAB>logical form<TAB>case`; both columns are
split on whitespace (`cook ( theme = cake , agent = * scientist )` is 11 tokens), as the authors'
files are written and as COGS's preprocessing, which SLOG inherits, splits them.

The contamination guard: the authors publish the gen set only inside a zip encrypted with the
password `SLOG` (printed in their README), so that crawlers collecting training data for language
models do not read it. The zip is ZipCrypto (deflate, the classic PKWARE encryption), which Python's
`zipfile` decrypts; it is read in memory and never written out in plain text. The plain text of gen
goes only into the frozen split under the user's `STRUCTBENCH_HOME`, as every suite's data does:
never into the repository (the manifest holds digests; tests read the zip through
`STRUCTBENCH_SOURCE_DIR`), and not into the report's downloadable files: the suite declares gen
unpublished (`Suite.unpublished_splits`), so the error browser shows gen's example ids and each
model's predictions, never its sentences or gold forms. What the site publishes for gen: scores
(the pages, `results.csv` and `results.json` hold numbers and split names only) and every model's
predictions on it (ids and output tokens, in the error browser's data files); a model's outputs are
its own, but a near-perfect model's outputs are nearly the gold forms, so a report of such a model
publishes close to the gold half of gen (and the reference bundle, where it holds such runs, likewise).

Metric: `exact_match` (primary): the predicted tokens joined by single spaces equal the gold form's
tokens joined likewise, the authors' string comparison (`ExactMatchAcc` in
`experiments/T5/allen_modules/training/metrics/exact_match.py` lines 20-47 at 1c55df8, on
whitespace-normalised predictions, `postprocess/simple.py` lines 34-43; and
`experiments/llama/metrics/ExactMatchAcc.py` lines 9-22: `pred[i] == gold[i]`, counted per generalisation
type and overall). The suite score is exact match on gen, the one ranked generalisation split, with
test beside it.

Cases: every example carries `case` (the third column); gen's also `category`, the group of
structures its case tests. SLOG's paper sorts its 17 cases into categories in its Table 2, which
could not be read where this suite was written; the three categories here follow the authors'
grammar files (`generation_scripts/grammars/` at 1c55df8): `recursion` (the `recursion_*` grammars:
PP, sentential-complement and center-embedding depth 3, between the trained depths 0-2 and 4, and
5-12, beyond them), `modifiers` (the `PP_modifying_*` and `RC_modifying_*` grammars: a PP or relative
clause on a subject or indirect object, where training modifies only objects) and `filler-gap` (the
`RC_iobj_extracted` and `wh_Q_*` grammars: relative clauses and wh-questions whose gap is in a
position training never puts one, with modified NPs, or moved out of an embedded clause). `CASES`
holds the table. Gen is one split with these breakdowns (the site plots the three categories and
tables the 17 cases, beside Table 7's per-case numbers), as COGS's gen is. The paper's own grouping,
read since in its §2 headings, has four: novel recursion depth and novel combinations of modified
phrases and grammatical roles (this suite's `recursion` and `modifiers`), novel gap positions
(`RC_iobj_extracted`, `Q_iobj_ditransV`) and novel wh-questions (the other `Q_` cases); `filler-gap`
here joins the last two. The category is in the frozen examples, so following the paper is a new
version of the suite, not an edit of this one.

Oracle: the gold forms of the frozen splits; it scores 1.0 on every split.
"""

from __future__ import annotations

import io
import zipfile
import zlib
from pathlib import Path
from typing import ClassVar

from structbench.data.sources import SourceFile
from structbench.errors import UserError
from structbench.specs import Example, SuiteSpec, dev_split, scored_split, train_split
from structbench.suite import SourceFiles
from structbench.suites.common import SemanticParsingSuite, semantic_parsing_examples

COMMIT = "1c55df85006d58b842520c79dcb8e1b43df2836f"
URL = f"https://raw.githubusercontent.com/bingzhilee/SLOG/{COMMIT}/data"
ZIP = "slog/generalization_sets.zip"
GEN_MEMBER = "generalization_sets/gen_varfreeLF.tsv"
PASSWORD = b"SLOG"
"""The zip's password, as the authors' README publishes it."""
AES = 99
"""The compression method zip files record for WinZip AES encryption, which `zipfile` cannot decrypt."""

CASES: dict[str, str] = {
    "PP_3": "recursion",
    "PP_5-12": "recursion",
    "CP_3": "recursion",
    "CP_5-12": "recursion",
    "center_embed_3": "recursion",
    "center_embed_5-12": "recursion",
    "PP_modif_subj": "modifiers",
    "PP_modif_iobj": "modifiers",
    "RC_modif_subj": "modifiers",
    "RC_modif_iobj": "modifiers",
    "RC_iobj_extracted": "filler-gap",
    "Q_subj_active": "filler-gap",
    "Q_subj_passive": "filler-gap",
    "Q_dobj_ditransV": "filler-gap",
    "Q_iobj_ditransV": "filler-gap",
    "Q_modified_NPs": "filler-gap",
    "Q_long_mv": "filler-gap",
}
"""The 17 generalisation cases (gen's third column) and their category (see the module docstring)."""
CASE_SIZE = 1_000
SIZES = {"train": 32_755, "dev": 4_046, "test": 4_046, "gen": CASE_SIZE * len(CASES)}

CHECKED = """How it was checked (tests/suites/test_slog.py): every split loads from the pinned files with the
published sizes (32,755 / 4,046 / 4,046, and 17 cases of 1,000 read from the encrypted zip with the
published password); a wrong password, a zip without the gen file and a malformed line are refused in
one sentence; the manifest and the overlap audit hold no gen sentence or logical form, and the report
publishes no gen example; exact match follows the authors' string comparison; the oracle scores 1.0
on every split."""
"""How the suite was checked against its paper (`SuiteSpec.checked`)."""
DEVIATIONS = """Deviations: none in the data. The case categories follow the authors' grammar files, not the
paper's Table 2, which could not be read where the suite was written (see the module docstring). Only
the variable-free forms are served; SLOG's COGS-style forms (`cogs_LF/`, whose train file the
reference data lacks) are not a suite here."""
"""Where the suite departs from its paper, and why (`SuiteSpec.deviations`)."""

SOURCES = (
    SourceFile(
        path="slog/varfree_LF/train.tsv",
        url=f"{URL}/varfree_LF/train.tsv",
        sha256="0afc442d1cfca446a3c356c58e979df631d19f863b62edd2c4d6cc70a34e0778",
    ),
    SourceFile(
        path="slog/varfree_LF/dev.tsv",
        url=f"{URL}/varfree_LF/dev.tsv",
        sha256="8677b6b92f9649e74f9e99c2affc9a8a0c4810a612dd32fcd1b45448ca3647f9",
    ),
    SourceFile(
        path="slog/varfree_LF/test.tsv",
        url=f"{URL}/varfree_LF/test.tsv",
        sha256="2f2942a345507ef6af5885ccde48f08bf32a1dd2ba0e19da371d4bbd40b90644",
    ),
    SourceFile(
        path=ZIP,
        url=f"{URL}/generalization_sets.zip",
        sha256="99a13618b033b9f5721107f4c163d035d92a2fee340b217a5a1f6abc63842647",
    ),
)


def read_protected(path: Path, member: str = GEN_MEMBER, password: bytes = PASSWORD) -> str:
    """The text of `member` of the encrypted zip at `path`, decrypted in memory with `password`.

    A zip that is damaged, lacks the member, is encrypted otherwise than with ZipCrypto, or does not
    open with the password is refused in one sentence naming the file."""
    fix = "point STRUCTBENCH_SOURCE_DIR at an unmodified copy of the published zip"
    try:
        with zipfile.ZipFile(path) as archive:
            try:
                info = archive.getinfo(member)
            except KeyError:
                raise UserError(f"{path} holds no {member}; {fix}.") from None
            if info.compress_type == AES:
                raise UserError(f"{path}: {member} is AES-encrypted, which Python's zipfile cannot read; {fix}.")
            try:
                data = archive.read(info, pwd=password)
            except (RuntimeError, zlib.error, zipfile.BadZipFile) as error:
                # RuntimeError: ZipCrypto's check byte refused the password; a wrong password that passes that
                # one-byte check (1 in 256) inflates garbage: zlib.error, or BadZipFile for the CRC
                raise UserError(
                    f"{path}: {member} does not open with the published password ({error}); {fix}."
                ) from None
    except (zipfile.BadZipFile, NotImplementedError, EOFError, OSError) as error:
        raise UserError(f"{path} cannot be read as a zip ({error}); {fix}.") from None
    try:
        return io.TextIOWrapper(io.BytesIO(data), encoding="utf-8").read()  # universal newlines, as read_text
    except UnicodeDecodeError:
        raise UserError(f"{path}: {member} is not UTF-8 text; {fix}.") from None


def examples_of(split: str, text: str, path: str) -> list[Example]:
    """The examples of one SLOG file (`text`, the content of `path`): meta `case`, on gen also `category`."""
    return semantic_parsing_examples(split, text, path, "SLOG", {case: {"category": c} for case, c in CASES.items()})


class Slog(SemanticParsingSuite):
    """SLOG in variable-free logical forms: train/dev/test and the 17 structural generalisation cases."""

    spec = SuiteSpec(
        id="slog",
        version="1.0.0",
        family="semantic-parsing",
        protocol="transduction",
        description="Parse English sentences into variable-free logical forms (SLOG); gen asks for 17 "
        "structures training never shows: deeper or shallower recursion, modifiers on subjects and indirect "
        "objects, and gaps in new positions.",
        citation="Li, Donatelli, Koller, Linzen, Yao & Kim 2023, SLOG: A Structural Generalization Benchmark "
        "for Semantic Parsing (EMNLP)",
        how_checked=CHECKED,
        deviations=DEVIATIONS,
        primary_metric="exact_match",
        higher_is_better=True,
        recipe="semantic-parsing",
        splits=[
            train_split(SIZES["train"], "the published varfree_LF/train.tsv"),
            dev_split(SIZES["dev"], "the published varfree_LF/dev.tsv: the training distribution (model selection)"),
            scored_split(
                "test", SIZES["test"], "in-distribution", "the published varfree_LF/test.tsv: the training distribution"
            ),
            scored_split(
                "gen",
                SIZES["gen"],
                "generalisation",
                "gen_varfreeLF.tsv of the password-protected zip: 17 structural cases of 1,000, by case and category",
            ),
        ],
    )
    sources = SOURCES
    licence = "MIT (the SLOG repository's LICENSE)"
    breakdown_keys: ClassVar[tuple[str, ...]] = ("category", "case")
    unpublished_splits: ClassVar[tuple[str, ...]] = ("gen",)

    def generate(self, draw: int, files: SourceFiles) -> dict[str, list[Example]]:
        splits = {
            name: examples_of(name, files.read_text(f"slog/varfree_LF/{name}.tsv"), f"slog/varfree_LF/{name}.tsv")
            for name in ("train", "dev", "test")
        }
        splits["gen"] = examples_of("gen", read_protected(files.path(ZIP)), f"{ZIP}:{GEN_MEMBER}")
        self.check_case_sizes(splits["gen"], CASES, CASE_SIZE, f"{ZIP}: {GEN_MEMBER}")
        return splits
