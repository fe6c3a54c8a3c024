"""Importing a paper's per-item results as published runs, checked against the suite's items.

A per-item results file (CSV, TSV or JSON lines) has one row per (model, seed, split, item) with a
right/wrong verdict and optionally a score; `Columns` says which of its columns holds which. Each
row's split must be a test split of the suite and its item must name one of that split's examples:
by the example's id, or by its `meta["item"]` after adding `item_offset` (SyntaxGym's authors number
a suite's items from 0, its files from 1). The rows become `structbench.store.published.PublishedRun`s
labelled `published:MODEL`, each saying where it came from (paper, file, SHA-256, URL or commit).

The file is untrusted input: it is read through the bounded reader (`structbench.store.untrusted`,
at most `MAX_BYTES`, a regular file, no link followed unless the user named it), and every field is
checked; a bad row is one sentence naming the file, the row and the fix, and nothing is stored
unless the whole file is good.

`SYNTAXGYM_RESULTS` are the authors' per-item files of Hu et al. 2020, pinned by URL and SHA-256 at
the results commit; `syntaxgym_runs` reads them (from `STRUCTBENCH_SOURCE_DIR` or the pinned URLs).
"""

from __future__ import annotations

import csv
import io
import math
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from structbench.data.freeze import ensure_built, load_split
from structbench.data.sources import SourceFile, resolve, sha256_bytes
from structbench.errors import UserError
from structbench.store.published import LABEL_PREFIX, PublishedRun
from structbench.store.untrusted import Refused, parse_json, read_file
from structbench.suite import Suite

MAX_BYTES = 64 * 1024 * 1024
"""The largest results file read (the biggest SyntaxGym file is under 1 MiB)."""
MAX_ROWS = 2_000_000
"""The most rows one file may hold."""
MAX_FIELD = 256
"""The longest model name, split or item a row may give."""
FORMATS = ("csv", "tsv", "jsonl")
TRUE = {"true": True, "1": True, "1.0": True, "false": False, "0": False, "0.0": False}
"""How a verdict may be written (case ignored)."""
NAME_CHARACTERS = set("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-_.+")


@dataclass(frozen=True)
class Columns:
    """Which column of the file holds what; `model` and `seed` may be absent (then `model_name` and seed 0)."""

    split: str = "split"
    item: str = "item"
    correct: str = "correct"
    score: str | None = None
    model: str | None = "model"
    seed: str | None = "seed"
    seed_in_model: bool = False
    """The model column reads `NAME_SEED` (SyntaxGym's files): the seed is the text after its last `_`."""

    @classmethod
    def parse(cls, parts: Sequence[str]) -> Columns:
        """`["split=suite", "item=item", ...]` (`--columns` split at its commas); a key left out keeps its
        default, a COLUMN `-` is none."""
        fields: dict[str, Any] = {}
        for part in parts:
            key, _, value = part.partition("=")
            if key not in ("split", "item", "correct", "score", "model", "seed") or not value:
                raise UserError(
                    f"--columns: {part!r} is not KEY=COLUMN with KEY one of split, item, correct, score, model, "
                    "seed; e.g. --columns split=suite,item=item,correct=correct."
                )
            fields[key] = None if value == "-" else value
        return cls(**fields)


@dataclass(frozen=True)
class Source:
    """Where a results file came from, as each of its runs records it."""

    paper: str
    file: str
    url: str = ""
    commit: str = ""

    def record(self, sha256: str) -> dict[str, str]:
        return {
            k: v
            for k, v in {
                "paper": self.paper,
                "file": self.file,
                "sha256": sha256,
                "url": self.url,
                "commit": self.commit,
            }.items()
            if v
        }


def _format(path: Path, given: str | None) -> str:
    if given is not None:
        return given
    suffix = path.suffix.lower().lstrip(".")
    if suffix in FORMATS:
        return suffix
    if suffix == "json":
        return "jsonl"
    raise UserError(f"{path}: cannot tell its format from its name; pass --format csv, tsv or jsonl.")


def _rows(path: Path, data: bytes, kind: str) -> Iterator[tuple[int, Mapping[str, Any]]]:
    """(row number as the user counts it, row) of the file: the header is row 1 of a CSV or TSV."""
    try:
        text = data.decode("utf-8-sig")
    except UnicodeDecodeError as error:
        raise UserError(
            f"{path} is not UTF-8 text (byte {error.start}); save it as UTF-8 and import it again."
        ) from None
    if kind == "jsonl":
        for number, line in enumerate(text.splitlines(), start=1):
            if not line.strip():
                continue
            try:
                row = parse_json(line, max_depth=2)
            except (Refused, ValueError) as error:
                raise UserError(f"{path}, line {number}: not a JSON object ({error}); fix that line.") from None
            if not isinstance(row, dict):
                raise UserError(f"{path}, line {number}: not a JSON object; each line must be one object.")
            yield number, row
        return
    reader = csv.DictReader(io.StringIO(text, newline=""), delimiter="\t" if kind == "tsv" else ",")
    try:
        for number, row in enumerate(reader, start=2):
            if None in row:
                raise UserError(f"{path}, row {number}: more fields than the header names; fix that row.")
            yield number, row
    except csv.Error as error:
        raise UserError(f"{path}, row {reader.line_num}: not {kind.upper()} ({error}); fix that row.") from None


def _text(path: Path, number: int, row: Mapping[str, Any], column: str) -> str:
    if column not in row or row[column] is None:
        raise UserError(f"{path}, row {number}: no {column!r} field; pass --columns to name the file's columns.")
    value = row[column]
    if isinstance(value, bool) or not isinstance(value, str | int | float):
        raise UserError(f"{path}, row {number}: {column!r} is {value!r}, not text or a number; fix that row.")
    text = str(value).strip()
    if not text or len(text) > MAX_FIELD:
        raise UserError(
            f"{path}, row {number}: {column!r} is empty or longer than {MAX_FIELD} characters; fix that row."
        )
    return text


def _correct(path: Path, number: int, row: Mapping[str, Any], column: str) -> bool:
    value = row.get(column)
    if isinstance(value, bool):
        return value
    verdict = TRUE.get(str(value).strip().lower()) if isinstance(value, str | int | float) else None
    if verdict is None:
        raise UserError(
            f"{path}, row {number}: {column!r} is {value!r}, not a verdict (True/False or 1/0); fix that row."
        )
    return verdict


def _score(path: Path, number: int, row: Mapping[str, Any], column: str) -> float:
    value = row.get(column)
    try:
        score = float(value) if isinstance(value, str | int | float) and not isinstance(value, bool) else math.nan
    except ValueError:
        score = math.nan
    if not math.isfinite(score):
        raise UserError(f"{path}, row {number}: {column!r} is {value!r}, not a finite number; fix that row.")
    return score


def _name(path: Path, number: int, name: str) -> str:
    if not set(name) <= NAME_CHARACTERS:
        raise UserError(
            f"{path}, row {number}: the model name {name!r} holds characters other than letters, digits and "
            "- _ . +; pass --model-name NAME."
        )
    return name


def item_index(suite: Suite, source_dir: Path | None = None) -> tuple[str, dict[str, dict[str, str]]]:
    """The suite's data hash, and per test split: every name an item may go by (its id, its `meta["item"]`)
    -> its example id."""
    manifest = ensure_built(suite, source_dir)
    index: dict[str, dict[str, str]] = {}
    for split in suite.spec.splits_with_role("test"):
        names: dict[str, str] = {}
        for example in load_split(suite, manifest, 0, split.name).examples:
            names[example.id] = example.id
            if "item" in example.meta:
                names.setdefault(f"#{example.meta['item']}", example.id)
        index[split.name] = names
    return manifest.suite_hash, index


def read_results(
    path: Path,
    suite: Suite,
    source: Source,
    *,
    columns: Columns = Columns(),
    kind: str | None = None,
    model_name: str | None = None,
    item_offset: int = 0,
    source_dir: Path | None = None,
    follow: bool = True,
) -> list[PublishedRun]:
    """The published runs of one per-item results file, every row checked against `suite`'s items."""
    try:
        data = read_file(path, MAX_BYTES, follow=follow)
    except Refused as error:
        raise UserError(f"cannot import {path}: {error}; pass a per-item results file.") from None
    kind = _format(path, kind)
    suite_hash, index = item_index(suite, source_dir)
    found: dict[tuple[str, int], dict[str, dict[str, tuple[bool, float | None]]]] = {}
    for count, (number, row) in enumerate(_rows(path, data, kind), start=1):
        if count > MAX_ROWS:
            raise UserError(f"{path} holds more than {MAX_ROWS:,} rows; split it into several files.")
        split = _text(path, number, row, columns.split)
        if split not in index:
            raise UserError(
                f"{path}, row {number}: {split!r} is not a test split of {suite.spec.key}; its test splits are "
                f"{', '.join(sorted(index)[:6])}{', ...' if len(index) > 6 else ''}."
            )
        item = _text(path, number, row, columns.item)
        example_id = index[split].get(item)
        if example_id is None:
            try:
                example_id = index[split].get(f"#{int(item) + item_offset}")
            except ValueError:
                example_id = None
        if example_id is None:
            raise UserError(
                f"{path}, row {number}: item {item!r} is no item of {suite.spec.key}'s split {split!r} (an example id, "
                f"or its item number after adding {item_offset}); check --item-offset and --columns."
            )
        if columns.model is None:
            model = model_name
            seed_text = "0" if columns.seed is None else _text(path, number, row, columns.seed)
        else:
            model = _text(path, number, row, columns.model)
            if columns.seed_in_model:
                model, _, seed_text = model.rpartition("_")
            else:
                seed_text = "0" if columns.seed is None else _text(path, number, row, columns.seed)
            model = model_name or model.rstrip("_")
        if not model:
            raise UserError(f"{path}, row {number}: no model name; pass --model-name NAME.")
        try:
            seed = int(seed_text)
        except ValueError:
            raise UserError(
                f"{path}, row {number}: the seed {seed_text!r} is not a whole number; fix that row."
            ) from None
        if not 0 <= seed < 2**63:
            raise UserError(f"{path}, row {number}: the seed {seed} is out of range (0 to 2^63 - 1); fix that row.")
        label = LABEL_PREFIX + _name(path, number, model)
        correct = _correct(path, number, row, columns.correct)
        score = None if columns.score is None else _score(path, number, row, columns.score)
        items = found.setdefault((label, seed), {}).setdefault(split, {})
        if example_id in items:
            raise UserError(
                f"{path}, row {number}: {model} seed {seed} has {split!r} item {item!r} twice; keep one row per item."
            )
        items[example_id] = (correct, score)
    if not found:
        raise UserError(f"{path} holds no rows; pass a file with one row per item.")
    record = source.record(sha256_bytes(data))
    return [
        PublishedRun(
            suite=suite.spec.id,
            version=suite.spec.version,
            suite_hash=suite_hash,
            model=label,
            seed=seed,
            source=record,
            items=items,
        )
        for (label, seed), items in sorted(found.items())
    ]


# The authors' per-item results of Hu, Gauthier, Qian, Wilcox & Levy 2020

SYNTAXGYM_PAPER = (
    "Hu, Gauthier, Qian, Wilcox & Levy 2020, A systematic assessment of syntactic generalization in neural "
    "language models (ACL)"
)
SYNTAXGYM_RESULTS_COMMIT = "43f1f86b746254406dafc89bd17b9d4976607ef6"
"""github.com/cpllab/syntactic-generalization `master`: the published results (as `suites/syntaxgym.py`)."""
SYNTAXGYM_FILES: tuple[tuple[str, str], ...] = (
    ("1gram_bllip-lg", "0edf640d87722ccc16274914cac14200ba187cea8af1c9e426c75124717e912b"),
    ("1gram_bllip-md", "ce02ea383a5d1b3ff22ca33f81e036d9f696fa5fcdcc08f78ef7c19dfc0cde77"),
    ("1gram_bllip-sm", "332ea959bdf18bad078e65225a8bb042e134e165b418ab16009a8496bd5b7d74"),
    ("1gram_bllip-xs", "3a59f4a6578191f1e52d48fc2bc81b0f460ce009ff60a1f80bfd4488201a51a5"),
    ("gpt-2-pretrained_", "2abc9cd1d16712ffef7e1a4b635b3fec1ea509d9df0d090ac351b72d26433a42"),
    ("gpt-2-xl-pretrained_", "4a6057cb89ce64e4425a3ada7a1975180d7d272f8c57907177419b5af611c041"),
    ("gpt-2_bllip-lg-gptbpe", "ffa4b9ba95cb38a49ddc0aed517b760513301455c4a40b49344af0e8caf8b742"),
    ("gpt-2_bllip-md-gptbpe", "5fadc149b4c1408442ba1ced3b3103d954b01e678df8175f7a7c7947f310aaac"),
    ("gpt-2_bllip-sm-gptbpe", "9e54e78dc7192eca1d022369574188a5863f54485fad93161cd4b14c005d0622"),
    ("gpt-2_bllip-xs-gptbpe", "12e8c684d58aadc957dd8aae636c713d426a8def229034ab4d79ed8ad20838a6"),
    ("grnn_", "c2aa594a9c10be635be3c828fb486d71591d76995143052a6bce2ae86dac4902"),
    ("jrnn_", "bbfa979a0f51c3709d92421b0a7094d3910f308af540b23992b52c1351562a8e"),
    ("ngram-no-rand_bllip-lg", "124387cba7592e214e438aad37270812ff51663580f91a06e36707a794029a37"),
    ("ngram-no-rand_bllip-md", "0ee28add6dc282b4b6b66cf95b1b9b4244d4b6ffb7270324f5e1bc2808793a5c"),
    ("ngram-no-rand_bllip-sm", "1fba75393887fd30fb7b9b4251844d29d87618f22674bcacc1d4a6a7ad7edd10"),
    ("ngram-no-rand_bllip-xs", "6135b26f1ad6b0aab26083bb133aaceaed057aac49efea30b641a3bd7dfef7a9"),
    ("ngram-single_bllip-lg", "5442c02b8678d55f7c15e16117ba387bab5e451c40481980f476124373107e22"),
    ("ngram-single_bllip-md", "df8f01904386452fb1b7d34cac26f7649a4c3370534fd6c1c029a9603bc5628e"),
    ("ngram-single_bllip-sm", "54e3cd3b08ca5a11a86b85946862420912edd14046f5197d3858269ae8b2f1cd"),
    ("ngram-single_bllip-xs", "62f5306c8417d96ae66f911c116fe689117c13e3cda897ec0883f340b9bba7ba"),
    ("ngram_bllip-lg", "cf6dfb1b2077aa8b03bf85c12a3cddaf6469d40440e80b5ba546d455cffa5539"),
    ("ngram_bllip-md", "4ec998e06ab97346c75df2ba1023f8b0d4d607e2f9859fe9d97fec4799435e7b"),
    ("ngram_bllip-sm", "8f6850d8f77425d5fe05e9b354c54a3fa7d4b9b4f111f7751b192f8be447e55f"),
    ("ngram_bllip-xs", "c29124d2f5d257f774b92ef4c528aedaf5cc20a44374b0a74e6536ab31550750"),
    ("ordered-neurons_bllip-lg", "9d11ad8b490b5ca753407de356386a9032240e1f9576a41c12e89ad10e5ac44c"),
    ("ordered-neurons_bllip-md", "be23d642271d4e4371c1c0f0b4618e883c98f601e7d28bc6b6ccf5ecc7a30351"),
    ("ordered-neurons_bllip-sm", "3b5d9ce40d56144d41c8160ae3a812fd776a3d3f32d844891bd83cbcb1f6cd02"),
    ("ordered-neurons_bllip-xs", "f669fa1b2d362088411153be2c00411cf1ea8127b5312eaf205da03bbad1af43"),
    ("rnng_bllip-lg", "ba2de65f29e6e039f59493ff02af3e4f02497b2a2f13d1a2433cf9dc20c96a5c"),
    ("rnng_bllip-md", "39e37083c42616616b53eefe99d5d207ea7d4b7089b7e5d8d39377902e4a3345"),
    ("rnng_bllip-sm", "dcb234d5089d7938dee9a98e6cc2c5e5bb9c426215232334515cffb22bf95b4c"),
    ("rnng_bllip-xs", "1a65cdd6d7ffa9a032a3a9cb4a1db3cb6344b5bdc73218be6a8dcabdd822b2cb"),
    ("transformer-xl_", "39f7065be9e2d152b74189c1c4b4cc705f41f60e2b728aebf49f572b981a8e96"),
    ("vanilla_bllip-lg", "37acec671139b1af5f59190c3560ce4abdee409c667b12abf3d0993418ef8675"),
    ("vanilla_bllip-md", "50ea21a55d3d803e1392cbe8976383a7196d70d83f3c1bd8f02db22212e06054"),
    ("vanilla_bllip-sm", "0261a69acf131357f72c3cfec0b22639ae44de95f9d06d159b14954fb639874d"),
    ("vanilla_bllip-xs", "9b3f1a0f41065602658c329c265d1eca4874b38f06fc9fc3661fd9738c12c3e3"),
)
"""(model as the file names it, SHA-256) of every `data/raw/sg_results/syntaxgym_results_MODEL.csv` at the results
commit but the random baseline's (over 4 MiB, and no model)."""
SYNTAXGYM_RESULTS = tuple(
    SourceFile(
        path=f"syntaxgym/sg_results/syntaxgym_results_{name}.csv",
        url=f"https://raw.githubusercontent.com/cpllab/syntactic-generalization/{SYNTAXGYM_RESULTS_COMMIT}/"
        f"data/raw/sg_results/syntaxgym_results_{name}.csv",
        sha256=sha256,
    )
    for name, sha256 in SYNTAXGYM_FILES
)
SYNTAXGYM_COLUMNS = Columns(split="suite", item="item", correct="correct", model="model", seed_in_model=True)
"""`model,suite,item,correct`, the model column `NAME_SEED`."""
SYNTAXGYM_ITEM_OFFSET = 1
"""The files number a suite's items from 0, the suite files (and `meta["item"]`) from 1."""


def syntaxgym_model(name: str) -> str:
    """The published model's name from its file's: `gpt-2-pretrained_` -> `gpt-2-pretrained`. Named by the file,
    not its model column, because two files (ngram, ngram-single) use the same names in that column."""
    return name.rstrip("_")


def syntaxgym_runs(suite: Suite, source_dir: Path | None = None) -> list[PublishedRun]:
    """Every published run of the SyntaxGym paper's per-item files, on `syntaxgym@1.0.0`."""
    if suite.spec.key != "syntaxgym@1.0.0":
        raise UserError(f"the SyntaxGym paper's per-item results are of syntaxgym@1.0.0, not {suite.spec.key}.")
    runs: list[PublishedRun] = []
    for (name, _), pinned in zip(SYNTAXGYM_FILES, SYNTAXGYM_RESULTS, strict=True):
        path = resolve(pinned, source_dir)
        runs += read_results(
            path,
            suite,
            Source(
                paper=SYNTAXGYM_PAPER,
                file=pinned.path.rpartition("/")[2],
                url=pinned.url,
                commit=SYNTAXGYM_RESULTS_COMMIT,
            ),
            columns=SYNTAXGYM_COLUMNS,
            kind="csv",
            model_name=syntaxgym_model(name),
            item_offset=SYNTAXGYM_ITEM_OFFSET,
            source_dir=source_dir,
        )
    return runs
