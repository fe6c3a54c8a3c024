"""`SuiteSpec`'s fields renamed in 0.2.0 (`checked` -> `how_checked`, `task` -> `recipe`): a plugin that
still uses the old names keeps working for one minor version, with a DeprecationWarning, and no spec
is stored differently: the JSON of a spec (the store's `suites` table, the reference bundle's
`suites/` files) keeps the keys of 0.1, so that what is stored stays as it is and reads."""

from __future__ import annotations

import ast
import json
import warnings
from pathlib import Path

import pytest

import structbench
from structbench import registry
from structbench.errors import RENAMED_NAMES_GO_IN
from structbench.runs.runner import Runner
from structbench.specs import STORED_NAMES, ModelSpec, SuiteSpec, dev_split, scored_split, train_split
from structbench.store import Store
from structbench.store.bundle import read_suites
from tests.support.fixtures.plugin.reverse_suite import ReverseWords

BUNDLE = Path(structbench.__file__).parent / "reference_runs"
OLD_KEYWORDS = {"checked": "Checked by hand.", "task": "scan"}
NEW_KEYWORDS = {"how_checked": "Checked by hand.", "recipe": "scan"}


def fields() -> dict[str, object]:
    return {
        "id": "toy",
        "version": "1.0.0",
        "family": "systematicity",
        "protocol": "transduction",
        "description": "A toy.",
        "citation": "None.",
        "primary_metric": "sequence_accuracy",
        "splits": [train_split(4), dev_split(2), scored_split("test", 2, "generalisation")],
    }


class OldNamesReverseWords(ReverseWords):
    """The plugin suite of `tests/support/fixtures/plugin`, declared as a plugin written for 0.1 declares it."""

    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)
        spec = ReverseWords.spec.variant(id="reverse-words-old", **OLD_KEYWORDS)


def test_the_old_keywords_build_the_same_spec_with_a_warning_at_the_callers_line() -> None:
    with pytest.warns(DeprecationWarning) as w:
        old = SuiteSpec(**fields(), **OLD_KEYWORDS)
    assert old == SuiteSpec(**fields(), **NEW_KEYWORDS)
    assert {Path(warning.filename).name for warning in w} == {"test_specs.py"}
    assert sorted(str(warning.message) for warning in w) == [
        "SuiteSpec's keyword checked= is renamed how_checked=; the old name goes in structbench 0.3.0.",
        "SuiteSpec's keyword task= is renamed recipe=; the old name goes in structbench 0.3.0.",
    ]


def test_variant_takes_the_old_keywords_with_a_warning() -> None:
    base = SuiteSpec(**fields())
    with pytest.warns(DeprecationWarning, match="keyword checked= is renamed how_checked=") as w:
        changed = base.variant(checked="Again.", version="2.0.0")
    assert (changed.how_checked, changed.version, changed.recipe) == ("Again.", "2.0.0", "default")
    assert [Path(warning.filename).name for warning in w] == ["test_specs.py"]


def test_the_old_attributes_read_with_a_warning() -> None:
    spec = SuiteSpec(**fields(), **NEW_KEYWORDS)
    with pytest.warns(DeprecationWarning, match=r"SuiteSpec\.task is renamed SuiteSpec\.recipe"):
        assert spec.task == "scan"
    with pytest.warns(DeprecationWarning, match=r"SuiteSpec\.checked is renamed SuiteSpec\.how_checked"):
        assert spec.checked == "Checked by hand."


def test_an_old_and_a_new_name_of_one_field_are_refused_together() -> None:
    with pytest.raises(TypeError, match=r"takes recipe= \(formerly task=\), not both"):
        SuiteSpec(**fields(), task="scan", recipe="lookup")


def test_a_suite_without_a_recipe_trains_with_each_models_default_recipe() -> None:
    assert SuiteSpec(**fields()).recipe == "default"


def test_a_spec_is_stored_under_the_keys_of_0_1_in_its_fields_order() -> None:
    stored = json.loads(SuiteSpec(**fields(), **NEW_KEYWORDS).model_dump_json())
    renamed_back = [STORED_NAMES.get(name, name) for name in SuiteSpec.model_fields]
    assert list(stored) == renamed_back
    assert (stored["checked"], stored["task"]) == ("Checked by hand.", "scan")
    assert "recipe" not in stored and "how_checked" not in stored


def test_every_spec_of_the_reference_bundle_reads_without_a_warning_and_is_written_back_unchanged() -> None:
    """The bundle's `suites/` files were written by 0.1: each reads as the installed spec of its
    version, and written again (as `reference export` writes it) is the same bytes."""
    paths = sorted((BUNDLE / "suites").glob("*.json"))
    assert paths
    with warnings.catch_warnings():
        warnings.simplefilter("error", DeprecationWarning)
        specs = read_suites(BUNDLE)
    for path, (spec, suite_hash) in zip(paths, specs, strict=True):
        text = json.dumps({"suite_hash": suite_hash, "spec": spec.model_dump(mode="json")}, indent=1) + "\n"
        assert text == path.read_text(encoding="utf-8"), path.name
        installed = registry.suite(spec.key).spec
        assert list(json.loads(installed.model_dump_json())) == list(json.loads(text)["spec"]), spec.key


def test_a_spec_stored_by_0_1_in_a_store_reads_and_stays_as_stored(tmp_path: Path) -> None:
    installed = registry.suite("miniscan").spec
    text = (BUNDLE / "suites" / "miniscan@1.0.0-4eaeda443ea7.json").read_text(encoding="utf-8")
    stored = json.dumps(json.loads(text)["spec"], separators=(",", ":"), ensure_ascii=False)  # as 0.1's store wrote it
    with Store(tmp_path / "results.sqlite") as store:
        store._db.execute("INSERT INTO suites VALUES ('miniscan', '1.0.0', ?, ?)", ("a" * 64, stored))
        store.record_suite(installed, "a" * 64)  # the same suite version again: the row is kept as it is
        store.record_suite(installed, "b" * 64)  # written by this version
        with warnings.catch_warnings():
            warnings.simplefilter("error", DeprecationWarning)
            specs = store.suite_specs()
        rows = dict(store._db.execute("SELECT suite_hash, spec FROM suites").fetchall())
    assert specs[("miniscan", "1.0.0", "a" * 64)] == installed == specs[("miniscan", "1.0.0", "b" * 64)]
    assert rows["a" * 64] == stored == rows["b" * 64]


def test_a_plugin_suite_declared_with_the_old_keywords_builds_and_runs(runner: Runner) -> None:
    path = f"{__name__}:OldNamesReverseWords"
    record = runner.evaluate(path, ModelSpec(name="oracle"), [0])
    assert record.status == {"0": "done"} and record.scores["test"]["sequence_accuracy"].mean == 1.0
    stored = runner.store.suite_specs()[("reverse-words-old", "1.0.0", record.suite_hash)]
    assert (stored.how_checked, stored.recipe) == ("Checked by hand.", "scan")


def test_no_built_in_suite_uses_an_old_name() -> None:
    """The deprecated names are for plugins: structbench's own suites declare their specs
    (`SuiteSpec(...)`, `.variant(...)`) and sets with the new ones."""
    old = []
    for path in sorted((Path(structbench.__file__).parent / "suites").rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Name) and node.id == "SuiteFamily":
                old.append(f"{path.name}:{node.lineno} SuiteFamily")
            if not isinstance(node, ast.Call):
                continue
            called = node.func.id if isinstance(node.func, ast.Name) else getattr(node.func, "attr", "")
            if called in ("SuiteSpec", "variant"):
                old += [f"{path.name}:{node.lineno} {k.arg}=" for k in node.keywords if k.arg in STORED_NAMES.values()]
    assert old == []


def test_the_old_names_are_dropped_when_their_release_comes() -> None:
    """Until 0.3.0 the old names work (here, and `structbench.suite.SuiteFamily`, the entry-point group
    `structbench.suite_families`); once the version reaches it, remove them and this test."""
    version = tuple(int(part) for part in structbench.__version__.split(".")[:2])
    assert version < tuple(int(part) for part in RENAMED_NAMES_GO_IN.split(".")[:2])
