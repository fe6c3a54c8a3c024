"""Finding suites and models: entry points, module:Class paths, duplicates, close names."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Callable, Iterator
from importlib.metadata import EntryPoint
from pathlib import Path

import pytest

from structbench import registry
from structbench.errors import UserError
from structbench.paths import REFERENCE_VARIABLE
from structbench.runs.runner import Runner
from structbench.specs import ModelSpec
from structbench.suite import SuiteSet, member
from structbench.suites.lookup_tables import LookupTables
from structbench.suites.scan.lake import ScanSimple


@pytest.fixture(autouse=True)
def fresh_registry() -> Iterator[None]:
    registry.clear_cache()
    yield
    registry.clear_cache()


def fake_entry_points(monkeypatch: pytest.MonkeyPatch, group: str, *points: tuple[str, str]) -> None:
    """Add entry points to one group, as if another installed distribution declared them."""
    real = registry._entry_points

    def patched(asked: str) -> list[EntryPoint]:
        extra = [EntryPoint(name, value, asked) for name, value in points] if asked == group else []
        return real(asked) + extra

    monkeypatch.setattr(registry, "_entry_points", patched)


def test_builtins_are_registered() -> None:
    assert {"oracle", "copy", "random", "majority"} <= set(registry.model_names())
    assert {"lookup-tables", "lookup-tables-mt"} <= set(registry.suite_names())
    assert registry.model_factory("oracle").__name__ == "Oracle"
    assert isinstance(registry.suite("lookup-tables"), LookupTables)


KEYED = """
import json, sys
from structbench import registry
from structbench.paths import reference_bundle_dir
from structbench.runs.key import ModelKey
from structbench.runs.request import ModelRequest
from structbench.specs import ModelSpec
from structbench.store.bundle_reader import read_bundle

keyed = set()
for suite, record_json in sorted({(run.row["suite"], run.row["model_spec"]) for run in read_bundle(reference_bundle_dir()).runs}):
    record = json.loads(record_json)
    ModelKey.of_stored(suite, record)
    ModelKey.of(suite, ModelRequest.of(ModelSpec(name=record["name"], params=record.get("params") or {})))
    keyed.add(record["name"])
for name in registry.model_names():
    ModelRequest.of(ModelSpec(name=name))
heavy = sorted(name for name in ("torch", "transformers", "scipy") if name in sys.modules)
print(json.dumps({"keyed": sorted(keyed), "heavy": heavy}))
"""


def test_every_registered_model_is_checked_keyed_and_labelled_without_pytorch() -> None:
    """What a process that never trains does with a model class (`run` before its worker, `report`, the
    normalisation of a store) costs no import of PyTorch, transformers or scipy: a second or more each."""
    packaged = {name: value for name, value in os.environ.items() if name != REFERENCE_VARIABLE}  # the bundle's runs
    done = subprocess.run(
        [sys.executable, "-c", KEYED], capture_output=True, text=True, check=True, timeout=300, env=packaged
    )
    found = json.loads(done.stdout)
    assert found["heavy"] == [], done.stdout
    assert {"seq2seq-gru-attn", "transformer", "lstm-lm", "rmn", "nhmm", "lstm-g", "bow-logic"} <= set(found["keyed"])


def test_unknown_model_suggests_close_names() -> None:
    with pytest.raises(UserError, match=r"unknown model 'majorty'; did you mean majority\?"):
        registry.model_factory("majorty")
    with pytest.raises(UserError, match=r"did you mean oracle\?"):
        registry.model_factory("oracel")


def test_an_unknown_model_name_suggests_the_module_class_form_too(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """`--model memoo`: the close names, and how a model of one's own is named (issue 46)."""
    monkeypatch.chdir(tmp_path)
    with pytest.raises(UserError) as caught:
        registry.model_factory("memoo")
    assert str(caught.value).endswith(
        "(`structbench models` lists them); a model of your own is named by its module and class, "
        "e.g. --model my_model:MyModel for class MyModel in my_model.py."
    )
    (tmp_path / "memoo.py").write_text("class Memo:\n    pass\n")
    with pytest.raises(UserError, match=r"; memoo\.py is in this folder: name the class in it, --model memoo:CLASS\.$"):
        registry.model_factory("memoo")
    with pytest.raises(UserError) as suite:
        registry.suite("memoo")
    assert ":" not in str(suite.value).split("lists them")[1]  # a suite is no module:Class of the user's


def test_unknown_suite_suggests_close_names() -> None:
    with pytest.raises(UserError, match=r"unknown suite 'lookup-table'; did you mean .*lookup-tables"):
        registry.suite("lookup-table")


def test_unknown_name_without_close_match_lists_the_known_ones() -> None:
    with pytest.raises(UserError, match=r"known models: .*oracle") as caught:
        registry.model_factory("zzzzzz")
    assert "did you mean" not in str(caught.value)


@pytest.mark.parametrize(
    ("group", "name", "other", "asked"),
    [
        (registry.MODEL_GROUP, "oracle", "somewhere.else:Oracle", lambda: registry.model_factory("copy")),
        (registry.SUITE_GROUP, "lookup-tables", "somewhere.else:Tables", lambda: registry.suite("scan-simple")),
    ],
)
def test_a_plugin_reusing_a_registered_name_is_rejected(
    monkeypatch: pytest.MonkeyPatch, group: str, name: str, other: str, asked: Callable[[], object]
) -> None:
    fake_entry_points(monkeypatch, group, (name, other))
    with pytest.raises(UserError, match=f"two plugins register '{name}'") as caught:
        asked()
    assert other in str(caught.value) and "uninstall one of them or rename" in str(caught.value)


def test_the_same_entry_point_seen_twice_is_not_a_duplicate(monkeypatch: pytest.MonkeyPatch) -> None:
    fake_entry_points(monkeypatch, registry.MODEL_GROUP, ("oracle", "structbench.baselines.trivial:Oracle"))
    assert registry.model_factory("oracle").__name__ == "Oracle"
    assert registry.model_names().count("oracle") == 1


def test_clear_cache_forgets_the_entry_points_read_so_far(monkeypatch: pytest.MonkeyPatch) -> None:
    assert "counting" not in registry.model_names()
    fake_entry_points(monkeypatch, registry.MODEL_GROUP, ("counting", "tests.support.helpers:CountingCopy"))
    registry.clear_cache()
    assert "counting" in registry.model_names()
    assert registry.model_factory("counting").__name__ == "CountingCopy"


def test_module_class_paths_load_without_registration() -> None:
    assert registry.model_factory("tests.support.helpers:CountingCopy").__name__ == "CountingCopy"
    assert isinstance(registry.suite("structbench.suites.lookup_tables:LookupTables"), LookupTables)
    with pytest.raises(UserError, match="has no 'Nope'"):
        registry.model_factory("tests.support.helpers:Nope")
    with pytest.raises(UserError, match=r"cannot import module 'tests\.no_such_module'"):
        registry.model_factory("tests.no_such_module:Model")


def test_a_plugin_that_cannot_be_imported_is_a_user_error(monkeypatch: pytest.MonkeyPatch) -> None:
    fake_entry_points(monkeypatch, registry.MODEL_GROUP, ("broken", "no_such_plugin_package.models:Model"))
    with pytest.raises(UserError, match="no_such_plugin_package") as caught:
        registry.model_factory("broken")
    assert "broken" in str(caught.value)


def test_a_model_path_must_be_callable() -> None:
    with pytest.raises(UserError, match="non-callable"):
        registry.model_factory("tests.support.helpers:CONSTRUCTED")


def test_versions_must_match_the_installed_suite() -> None:
    assert registry.suite("lookup-tables@1.0.0").spec.version == "1.0.0"
    with pytest.raises(UserError, match=r"lookup-tables@9\.9\.9 is not installed") as caught:
        registry.suite("lookup-tables@9.9.9")
    assert "1.0.0" in str(caught.value)  # says which version is installed


def test_a_suite_path_must_name_a_suite_class() -> None:
    with pytest.raises(UserError, match="not a structbench Suite subclass"):
        registry.suite("tests.support.helpers:CountingCopy")


def test_the_oracle_finds_a_suite_loaded_by_module_path(runner: Runner) -> None:
    record = runner.evaluate("structbench.suites.lookup_tables:LookupTables", ModelSpec(name="oracle"), [0])
    assert record.status == {"0": "done"}
    assert record.scores["new_compositions"]["sequence_accuracy"].mean == 1.0


def test_a_neural_baseline_reads_the_recipe_of_a_suite_loaded_by_module_path() -> None:
    """A model asks about its suite by id (a neural baseline's recipe is the suite spec's `recipe`): a
    user's suite given as `module:Class` answers under its id, and never shadows an installed suite."""
    from structbench.baselines.neural.seq2seq.model import Seq2SeqGruAttention

    registry.suite("tests.support.fixtures.plugin.reverse_suite:ReverseWords")
    assert registry.suite("reverse-words").spec.id == "reverse-words"
    assert Seq2SeqGruAttention.configuration("reverse-words")["budget"] == "cpu-small"
    registry.suite("tests.test_registry:CLASHING_SCAN")
    assert isinstance(registry.suite("scan-simple"), ScanSimple)


# --- suite sets: one entry point, several suites -------------------------------------------------

TOYS = SuiteSet(
    member(LookupTables, f"ToyTables{n}", f"Lookup tables under the toy name {n}.", module=__name__, spec=spec)
    for n in (1, 2)
    for spec in [LookupTables.spec.variant(id=f"toy-tables-{n}")]
)
"""A plugin's suite set, registered in the tests below through `tests.test_registry:TOYS`."""
CLASHING = SuiteSet(
    [member(LookupTables, "Clash", "Another suite named scan-simple.", module=__name__, spec=ScanSimple.spec)]
)
NOT_A_SET = (LookupTables,)
CLASHING_SCAN = CLASHING.members["scan-simple"]
"""A user's suite loaded by path under an installed suite's id."""


def test_built_in_suite_sets_register_every_member_under_its_suite_id() -> None:
    names = registry.suite_names()
    fewshot = [f"scan-fewshot-{k}" for k in (1, 2, 4, 8, 16, 32, 64, 128, 256, 512, 1024)]
    assert set(fewshot) <= set(names)
    assert {f"logic-inference-le{n}" for n in (3, 6, 9, 12)} <= set(names)
    assert {"scan-fewshot", "scan-filler", "logic-inference", "grounded"}.isdisjoint(names)  # set names are not suites
    suite = registry.suite("scan-fewshot-64")
    assert type(suite).__name__ == "ScanFewShot64" and suite.spec.key == "scan-fewshot-64@1.0.0"
    assert type(registry.suite("structbench.suites.scan.loula:ScanFewShot64")) is type(suite)  # the old class path


def test_a_plugin_suite_set_registers_its_members(monkeypatch: pytest.MonkeyPatch) -> None:
    fake_entry_points(monkeypatch, registry.SET_GROUP, ("toys", "tests.test_registry:TOYS"))
    assert {"toy-tables-1", "toy-tables-2", "lookup-tables"} <= set(registry.suite_names())
    assert "toys" not in registry.suite_names()
    toy = registry.suite("toy-tables-2@1.0.0")
    assert isinstance(toy, LookupTables) and type(toy).__name__ == "ToyTables2" and toy.spec.id == "toy-tables-2"
    with pytest.raises(UserError, match=r"unknown suite 'toy-tables-3'; did you mean .*toy-tables-"):
        registry.suite("toy-tables-3")


def test_a_suite_set_member_reusing_a_registered_name_is_rejected(monkeypatch: pytest.MonkeyPatch) -> None:
    fake_entry_points(monkeypatch, registry.SET_GROUP, ("clash", "tests.test_registry:CLASHING"))
    with pytest.raises(UserError, match="two plugins register 'scan-simple'") as caught:
        registry.suite("lookup-tables")
    assert "tests.test_registry:Clash" in str(caught.value) and "structbench.suites.scan.lake:ScanSimple" in str(
        caught.value
    )


def test_a_suite_set_entry_point_must_name_a_suite_set(monkeypatch: pytest.MonkeyPatch) -> None:
    fake_entry_points(monkeypatch, registry.SET_GROUP, ("tuple", "tests.test_registry:NOT_A_SET"))
    with pytest.raises(UserError, match=r"'tuple' \(tests\.test_registry:NOT_A_SET\) is a tuple, not a"):
        registry.suite_names()


def test_a_suite_set_that_cannot_be_imported_is_a_user_error(monkeypatch: pytest.MonkeyPatch) -> None:
    fake_entry_points(monkeypatch, registry.SET_GROUP, ("broken", "no_such_plugin_package.suites:SUITES"))
    with pytest.raises(UserError, match=r"suite set 'broken' comes from an installed plugin .* cannot be loaded"):
        registry.suite("scan-simple")


def test_a_suite_set_refuses_two_members_with_one_id() -> None:
    twice = member(LookupTables, "Twice", "The same id again.", spec=LookupTables.spec)
    with pytest.raises(ValueError, match="two members have the id 'lookup-tables'"):
        SuiteSet([LookupTables, twice])


def test_a_suite_set_under_the_group_name_of_0_1_still_registers_with_a_warning(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    fake_entry_points(monkeypatch, registry.OLD_SET_GROUP, ("toys", "tests.test_registry:TOYS"))
    with pytest.warns(DeprecationWarning, match=r"structbench\.suite_families \(of toys = tests\.test_registry:TOYS\)"):
        names = registry.suite_names()
    assert {"toy-tables-1", "toy-tables-2"} <= set(names)
    assert list(registry.suite_sets()["toys"]) == ["toy-tables-1", "toy-tables-2"]


def test_suite_family_still_imports_as_suite_set_with_a_warning() -> None:
    with pytest.warns(DeprecationWarning, match=r"SuiteFamily is renamed structbench\.suite\.SuiteSet") as w:
        from structbench.suite import SuiteFamily
    assert SuiteFamily is SuiteSet and isinstance(TOYS, SuiteFamily)
    assert [Path(warning.filename).name for warning in w] == ["test_registry.py"]
