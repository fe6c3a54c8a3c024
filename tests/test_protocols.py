"""`structbench.protocols.Model` lists every hook the engine reads, each documented, and `hook` reads them."""

from __future__ import annotations

import ast
import inspect
from pathlib import Path
from typing import get_args

import structbench
from structbench.protocols import METHOD_OF_PROTOCOL, Hook, Model, hook
from structbench.specs import PROTOCOLS

SOURCE = Path(structbench.__file__).parent


def _documented_members() -> dict[str, str]:
    """Every member `Model` declares (methods and annotated attributes) -> its docstring."""
    tree = ast.parse(inspect.getsource(Model))
    (cls,) = tree.body
    assert isinstance(cls, ast.ClassDef)
    members: dict[str, str] = {}
    for position, node in enumerate(cls.body):
        if isinstance(node, ast.FunctionDef):
            members[node.name] = ast.get_docstring(node) or ""
        elif isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name):
            following = cls.body[position + 1] if position + 1 < len(cls.body) else None
            documented = (
                isinstance(following, ast.Expr)
                and isinstance(following.value, ast.Constant)
                and isinstance(following.value.value, str)
            )
            members[node.target.id] = following.value.value if documented else ""  # type: ignore[union-attr]
    return members


def test_every_hook_is_a_documented_member_of_model_and_every_member_a_hook() -> None:
    members = _documented_members()
    assert set(members) == set(get_args(Hook))
    assert all(text.strip() for text in members.values()), [name for name, text in members.items() if not text]


def test_every_protocol_is_served_by_a_hook() -> None:
    assert set(METHOD_OF_PROTOCOL) == set(PROTOCOLS)
    assert set(METHOD_OF_PROTOCOL.values()) == {"transduce", "logprob", "classify", "induce", "region_surprisals"}


def test_hook_reads_a_member_or_its_default() -> None:
    class Labelled:
        label = "mine"
        protocols = ("transduction",)

    assert hook(Labelled, "label") == "mine" and hook(Labelled(), "protocols") == ("transduction",)
    assert hook(Labelled, "comparable", True) is True and hook(Labelled(), "close") is None


def test_the_engine_reads_hooks_through_hook_not_getattr() -> None:
    """No module of the run path names a hook in a bare getattr: a new hook is added to `Model` first."""
    hooks = set(get_args(Hook))
    for module in ("runs/identity.py", "runs/attempt.py", "runs/context.py", "runs/runner.py", "protocols.py"):
        for node in ast.walk(ast.parse((SOURCE / module).read_text())):
            if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "getattr":
                name = node.args[1] if len(node.args) > 1 else None
                named = name.value if isinstance(name, ast.Constant) else None
                assert named not in hooks, f"{module}: getattr(..., {named!r}); read it with hook()"
