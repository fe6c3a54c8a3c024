"""The model contract is declared once, in the typed protocols that `structbench.protocols.Model` unites:
every other list of it (the hook names, the method of each protocol, the runtime checks, the docs) is
derived from it or checked against it here, so that none can drift."""

from __future__ import annotations

import ast
import inspect
import re
from pathlib import Path
from typing import Protocol, runtime_checkable

import pytest

import structbench
from structbench import protocols
from structbench.protocols import (
    CLASS_HOOKS,
    HOOKS,
    METHOD_OF_PROTOCOL,
    RECIPE_HOOKS,
    SERVES,
    BuiltInRecipes,
    ContinuationScorer,
    Model,
    ModelClass,
    hook,
    protocol_members,
    recipe_hook,
)
from structbench.specs import PROTOCOLS

SOURCE = Path(structbench.__file__).parent
ADDING_A_MODEL = (
    Path(__file__).resolve().parents[1] / "docs" / "adding-a-model.md"
)  # the checkout, not the installed package
MODELS = ("baselines", "adapters", "suites")
"""Folders of models and suites, not of the engine: they read their own attributes as they like."""


def _declared(protocol: type) -> dict[str, str]:
    """Every member `protocol`'s own class body declares (methods and annotated attributes) -> its docstring."""
    (cls,) = ast.parse(inspect.getsource(protocol)).body
    assert isinstance(cls, ast.ClassDef)
    members: dict[str, str] = {}
    for position, node in enumerate(cls.body):
        if isinstance(node, ast.FunctionDef):
            members[node.name] = ast.get_docstring(node) or ""
        elif isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name):
            following = cls.body[position + 1] if position + 1 < len(cls.body) else None
            text = (
                following.value.value
                if isinstance(following, ast.Expr) and isinstance(following.value, ast.Constant)
                else ""
            )
            members[node.target.id] = text if isinstance(text, str) else ""
    return members


def _contract_parts(protocol: type) -> list[type]:
    return [owner for owner in protocol.__mro__ if getattr(owner, "_is_protocol", False) and owner is not Protocol]


def test_every_hook_is_declared_once_and_documented() -> None:
    declared: dict[str, str] = {}
    for part in _contract_parts(Model):
        own = _declared(part)
        assert not set(own) & set(declared), f"{part.__name__} declares again {sorted(set(own) & set(declared))}"
        declared |= own
    assert set(declared) == HOOKS
    assert [name for name, text in declared.items() if not text.strip()] == []
    assert set(_declared(BuiltInRecipes)) == RECIPE_HOOKS and all(_declared(BuiltInRecipes).values())


def test_the_hook_list_follows_the_protocol() -> None:
    """A member added to a protocol is a hook without any other list to update."""

    class Extra(Protocol):
        def surprisal(self, regions: list[list[str]]) -> list[float]: ...

    class Wider(Model, Extra, Protocol): ...

    assert protocol_members(Wider) == HOOKS | {"surprisal"}
    assert CLASS_HOOKS < HOOKS and {"protocols", "transduce", "fit", "close"} <= HOOKS - CLASS_HOOKS
    assert not RECIPE_HOOKS & HOOKS, "the built-in recipes' hooks are not part of the model contract"


def test_every_runtime_check_is_part_of_the_contract() -> None:
    """The typed protocols the runner checks with `isinstance` are `Model`'s own parts: a method the runner
    asks is one the contract declares, with the same signature."""
    runtime = {
        obj
        for obj in vars(protocols).values()
        if isinstance(obj, type)
        and getattr(obj, "_is_runtime_protocol", False)
        and obj.__module__ == protocols.__name__
    }
    parts = set(_contract_parts(Model))
    assert runtime - {Model} <= parts
    assert set(SERVES.values()) | {ContinuationScorer} <= parts
    assert ModelClass in parts and BuiltInRecipes not in parts


def test_every_protocol_is_served_by_one_method_of_the_contract() -> None:
    assert set(METHOD_OF_PROTOCOL) == set(PROTOCOLS) == set(SERVES)
    assert METHOD_OF_PROTOCOL == {
        "transduction": "transduce",
        "minimal-pair": "logprob",
        "forced-choice": "logprob",
        "classification": "classify",
        "tag-induction": "induce",
        "region-surprisal": "region_surprisals",
    }


def test_hook_reads_a_member_or_its_default_and_refuses_a_name_that_is_no_hook() -> None:
    class Labelled:
        label = "mine"
        protocols = ("transduction",)

        @classmethod
        def in_quickstart(cls, suite_id: str) -> bool:
            return suite_id == "miniscan"

    assert hook(Labelled, "label") == "mine" and hook(Labelled(), "protocols") == ("transduction",)
    assert hook(Labelled, "comparable", True) is True and hook(Labelled(), "close") is None
    assert recipe_hook(Labelled, "in_quickstart")("miniscan") and recipe_hook(Labelled, "budget_shortfall") is None
    with pytest.raises(ValueError, match=r"'in_quickstart' is not a hook of structbench\.protocols\.Model"):
        hook(Labelled, "in_quickstart")
    with pytest.raises(ValueError, match=r"'label' is not a member of structbench\.protocols\.BuiltInRecipes"):
        recipe_hook(Labelled, "label")


def _engine_modules() -> list[Path]:
    return [path for path in sorted(SOURCE.rglob("*.py")) if path.relative_to(SOURCE).parts[0] not in MODELS]


def test_the_engine_names_only_declared_hooks_and_reads_them_through_hook() -> None:
    """Every `hook(owner, "name")` of the engine names a member of `Model`, every `recipe_hook` one of
    `BuiltInRecipes`, and no engine module reads either with a bare getattr or hasattr: a new hook is
    declared in the contract first."""
    readers = {"hook": HOOKS, "recipe_hook": RECIPE_HOOKS}
    for path in _engine_modules():
        module = path.relative_to(SOURCE)
        for node in ast.walk(ast.parse(path.read_text())):
            if not (isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and len(node.args) > 1):
                continue
            name = node.args[1]
            named = name.value if isinstance(name, ast.Constant) else None
            if node.func.id in readers and named is not None:  # a name in a variable is checked when read
                assert named in readers[node.func.id], f"{module}:{node.lineno}: {node.func.id}(..., {named!r})"
            elif node.func.id in ("getattr", "hasattr") and module != Path("protocols.py"):
                assert named not in HOOKS | RECIPE_HOOKS, f"{module}:{node.lineno}: {node.func.id}(..., {named!r})"


def test_adding_a_model_documents_the_public_contract_only() -> None:
    """The page for a model's author names every hook, and not the built-in baselines' own questions."""
    text = ADDING_A_MODEL.read_text(encoding="utf-8")
    named = set(re.findall(r"`([a-z_]+)[`(]", text))
    assert named >= HOOKS, sorted(HOOKS - named)
    assert not RECIPE_HOOKS & named


def test_the_neural_baselines_answer_the_built_in_recipes_questions() -> None:
    from structbench.baselines.neural.classifier.model import LstmLogic
    from structbench.cli.report import trained_in_quickstart

    @runtime_checkable
    class Answers(BuiltInRecipes, Protocol): ...

    assert isinstance(LstmLogic, Answers)
    assert trained_in_quickstart("miniscan") == ("lla-lstm", "lstm-thrush")
