"""SLOG: the published files and the encrypted gen set, its cases, the authors' guard (no gen text in the
manifest, the overlap audit or the report's files) and exact match."""

from __future__ import annotations

import json
import os
import zipfile
from collections import Counter
from pathlib import Path

import pytest

from structbench import registry
from structbench.analysis.references import load_references
from structbench.data import freeze
from structbench.errors import UserError
from structbench.reports.render import write_report
from structbench.runs.runner import Runner
from structbench.specs import ModelSpec
from structbench.suites.slog import CASES, GEN_MEMBER, PASSWORD, ZIP, Slog, examples_of, read_protected

SIZES = {"train": 32_755, "dev": 4_046, "test": 4_046, "gen": 17_000}


def zip_path() -> Path:
    return Path(os.environ["STRUCTBENCH_SOURCE_DIR"]) / ZIP


def gen_rows() -> list[list[str]]:
    """The published gen lines (sentence, logical form, case), read with the published password."""
    return [line.split("\t") for line in read_protected(zip_path()).splitlines()]


def built() -> tuple[Slog, freeze.Manifest]:
    suite = registry.suite("slog")
    assert isinstance(suite, Slog)
    return suite, freeze.ensure_built(suite)


def test_every_split_has_the_published_size_and_matches_the_released_manifest() -> None:
    suite, manifest = built()
    released = suite.released_manifest()
    assert released is not None and freeze.expected_manifest(suite) == manifest
    assert {key: digest.n_examples for key, digest in manifest.splits.items()} == {
        f"draw0/{split}": size for split, size in SIZES.items()
    }
    assert [split.size for split in suite.spec.splits] == list(SIZES.values())
    test = freeze.load_split(suite, manifest, 0, "test").examples
    assert Counter(e.meta["case"] for e in test)["in_distribution"] == 3_000
    first = (Path(os.environ["STRUCTBENCH_SOURCE_DIR"]) / "slog" / "varfree_LF" / "test.tsv").read_text().split("\n")[0]
    sentence, logical_form, case = first.split("\t")
    assert (test[0].input, test[0].target, test[0].meta) == (sentence.split(), logical_form.split(), {"case": case})


def test_gen_holds_17_cases_of_1000_each_with_its_category() -> None:
    suite, manifest = built()
    gen = freeze.load_split(suite, manifest, 0, "gen").examples
    assert Counter(e.meta["case"] for e in gen) == dict.fromkeys(CASES, 1_000)
    assert Counter(e.meta["category"] for e in gen) == {"recursion": 6_000, "modifiers": 4_000, "filler-gap": 7_000}
    rows = gen_rows()
    assert [(e.input, e.target) for e in gen] == [(s.split(), f.split()) for s, f, _ in rows]
    # every gen structure is new: no gen sentence is a train sentence
    train = {tuple(e.input) for e in freeze.load_split(suite, manifest, 0, "train").examples}
    assert not any(tuple(e.input) in train for e in gen)


def test_the_gen_set_is_encrypted_with_zipcrypto_and_opens_only_with_the_published_password(tmp_path: Path) -> None:
    with zipfile.ZipFile(zip_path()) as archive:
        info = archive.getinfo(GEN_MEMBER)
        assert info.flag_bits & 0x1  # encrypted
        assert info.compress_type == zipfile.ZIP_DEFLATED  # ZipCrypto: AES would record method 99
        with pytest.raises(RuntimeError, match="password required"):
            archive.read(GEN_MEMBER)
    assert PASSWORD == b"SLOG"
    for wrong in (b"COGS", b"ln"):  # "ln" passes ZipCrypto's one-byte password check, then inflates garbage
        with pytest.raises(UserError, match=r"does not open with the published password"):
            read_protected(zip_path(), password=wrong)
    with pytest.raises(UserError, match=r"holds no generalization_sets/missing.tsv"):
        read_protected(zip_path(), member="generalization_sets/missing.tsv")
    damaged = tmp_path / "generalization_sets.zip"
    damaged.write_bytes(zip_path().read_bytes()[:1000])
    with pytest.raises(UserError, match=r"cannot be read as a zip"):
        read_protected(damaged)


def test_a_gen_line_of_an_unknown_case_or_of_two_columns_is_refused_with_its_line() -> None:
    line = "Who did a cat see ?\tsee ( agent = cat , theme = ? )\tQ_long_mv\n"
    assert examples_of("gen", line, "gen")[0].meta == {"case": "Q_long_mv", "category": "filler-gap"}
    with pytest.raises(UserError, match=r"^gen line 2: the case 'in_distribution' is none of SLOG's 17"):
        examples_of("gen", line + line.replace("Q_long_mv", "in_distribution"), "gen")
    with pytest.raises(UserError, match=r"^gen line 1: expected `sentence<TAB>logical form<TAB>case`"):
        examples_of("gen", "Who did a cat see ?\tQ_long_mv\n", "gen")


def test_the_manifest_and_the_overlap_audit_hold_no_gen_text() -> None:
    suite, _ = built()
    released = suite.released_manifest()
    assert released is not None
    texts = [released.read_text(), (freeze.suite_dir(suite) / "overlap.json").read_text()]
    rows = gen_rows()
    for text in texts:
        assert not any(sentence in text or form in text for sentence, form, _ in rows)
    assert json.loads(texts[0])["splits"]["draw0/gen"]["n_examples"] == 17_000


def test_the_report_publishes_no_gen_example_only_ids_and_predictions(runner: Runner, tmp_path: Path) -> None:
    runner.evaluate("slog", ModelSpec(name="copy"), [0])
    site = tmp_path / "site"
    write_report(runner.store, site)
    script = (site / "errors" / "slog@1.0.0" / "copy.js").read_text()
    payload = json.loads(script.removeprefix("structbench.runs(").removesuffix(");\n"))
    _, manifest = built()
    test_digest = manifest.splits["draw0/test"].sha256[:16]
    assert payload["runs"][0]["examples"] == {"test": test_digest}  # gen has predictions, no examples
    assert set(payload["runs"][0]["blocks"]) == {"test", "gen"}
    assert (site / "data" / f"examples-{test_digest}.js").is_file()
    assert not (site / "data" / f"examples-{manifest.splits['draw0/gen'].sha256[:16]}.js").exists()
    rows = gen_rows()
    for path in site.rglob("*"):
        if path.is_file() and path.suffix in (".html", ".js", ".csv", ".json", ".md", ".txt"):
            text = path.read_text(encoding="utf-8")
            assert not any(sentence in text for sentence, _, _ in rows[::50]), path


def test_exact_match_is_the_primary_metric_and_the_oracle_scores_1_on_every_split() -> None:
    suite, manifest = built()
    splits = {name: freeze.load_split(suite, manifest, 0, name) for name in ("test", "gen")}
    solver = suite.oracle(splits)
    for split in splits.values():
        scores = suite.score(split, solver.transduce([list(e.input) for e in split.examples]))
        assert scores.scores[0].metric == "exact_match" and scores.metrics["exact_match"] == (1.0, len(split))
        levels = {score.name for score in scores.scores if score.breakdown}
        if split.name == "gen":
            assert {f"exact_match[category={c}]" for c in ("recursion", "modifiers", "filler-gap")} <= levels
            assert len([level for level in levels if level.startswith("exact_match[case=")]) == 17


def test_the_suite_page_sets_table_7s_per_case_numbers_beside_the_measured_cases(
    runner: Runner, tmp_path: Path
) -> None:
    """Li et al.'s Table 7 (the variable-free forms) in references.yaml: one value per gen case, whose mean is
    the table's Total, shown in the page's table of gen's cases beside each measured model."""
    (table7,) = [r for r in load_references() if r.suite == "slog"]
    per_case = table7.conditions["exact_match"]["gen"]["case"]
    assert set(per_case) == set(CASES)
    assert round(100 * sum(per_case.values()) / len(per_case), 1) == round(100 * table7.values["exact_match"]["gen"], 1)
    runner.evaluate("slog", ModelSpec(name="copy"), [0])
    page = (write_report(runner.store, tmp_path / "site").parent / "suites" / "slog@1.0.0.html").read_text()
    table = page[page.index("case, on test split gen") :]
    table = table[: table.index("</table>")]
    assert f'{table7.model}<span class="tag">reported</span>' in table
    for case in CASES:
        row = table[table.index(f'<th scope="row">{case}</th>') :]
        row = row[: row.index("</tr>")]
        assert (
            f'<td class="reported"><span class="mean">{table7.printed_condition("exact_match", "gen", "case", case)}</span>'
            in row
        )
