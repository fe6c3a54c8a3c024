"""Finding suites and models by name.

Names come from the entry-point groups `structbench.suites` and `structbench.models` (the
built-ins are registered there by structbench's own distribution, exactly like a
plugin) or from a `module:Class` path. Two different targets under one name are refused;
an unknown name is answered with the closest registered names.
"""

from __future__ import annotations

import difflib
import importlib
from collections.abc import Callable
from functools import cache
from importlib.metadata import EntryPoint, entry_points
from typing import Any

from structbench.errors import UserError
from structbench.suite import Suite

SUITE_GROUP = "structbench.suites"
MODEL_GROUP = "structbench.models"


def _entry_points(group: str) -> list[EntryPoint]:
    return list(entry_points(group=group))


def _index(group: str, points: list[EntryPoint]) -> dict[str, EntryPoint]:
    by_name: dict[str, EntryPoint] = {}
    for point in points:
        known = by_name.get(point.name)
        if known is not None and known.value != point.value:
            raise UserError(
                f"two plugins register {point.name!r} in {group} ({known.value} and {point.value}); "
                "uninstall one of them or rename its entry point."
            )
        by_name[point.name] = point
    return by_name


@cache
def _names(group: str) -> dict[str, EntryPoint]:
    return _index(group, _entry_points(group))


def clear_cache() -> None:
    """Forget the entry points read so far (after installing a plugin in the same process)."""
    _names.cache_clear()
    suite.cache_clear()


def _import_path(path: str, what: str) -> Any:
    module_name, _, attribute = path.partition(":")
    try:
        module = importlib.import_module(module_name)
    except (ImportError, ValueError, TypeError) as error:  # ValueError/TypeError: empty or relative module
        raise UserError(
            f"cannot import module {module_name!r} for {what} {path!r} ({error}); run structbench from the folder "
            "that holds it or put that folder on PYTHONPATH."
        ) from None
    try:
        return getattr(module, attribute)
    except AttributeError:
        raise UserError(f"module {module_name!r} has no {attribute!r}; check the {what} path {path!r}.") from None


def _lookup(group: str, name: str, what: str) -> Any:
    if ":" in name:
        return _import_path(name, what)
    registered = _names(group)
    if name not in registered:
        close = difflib.get_close_matches(name, list(registered), n=3, cutoff=0.5)
        hint = f"did you mean {', '.join(close)}?" if close else f"known {what}s: {', '.join(sorted(registered))}."
        raise UserError(f"unknown {what} {name!r}; {hint} (`structbench {what}s` lists them)")
    point = registered[name]
    try:
        return point.load()
    except Exception as error:  # a broken plugin must not end in a traceback
        raise UserError(
            f"the {what} {name!r} comes from an installed plugin ({point.value}) that cannot be loaded ({error}); "
            "reinstall or uninstall that plugin."
        ) from None


def suite_names() -> list[str]:
    return sorted(_names(SUITE_GROUP))


def model_names() -> list[str]:
    return sorted(_names(MODEL_GROUP))


_LOADED_BY_PATH: dict[str, Suite] = {}
"""`ID@VERSION` -> suites loaded by `module:Class`, so that their splits' `suite` field resolves."""


@cache
def suite(reference: str) -> Suite:
    """The suite for `ID`, `ID@VERSION` or `module:Class`; a version must match the installed one."""
    if reference in _LOADED_BY_PATH:
        return _LOADED_BY_PATH[reference]
    name, _, version = reference.partition("@")
    factory = _lookup(SUITE_GROUP, name, "suite")
    if not (isinstance(factory, type) and issubclass(factory, Suite)):
        raise UserError(f"{name!r} is not a structbench Suite subclass; derive it from structbench.suite.Suite.")
    if version and version != factory.spec.version:
        earlier = {cls.spec.version: cls for cls in factory.superseded}
        if version not in earlier:
            installed = ", ".join([factory.spec.version, *earlier])
            raise UserError(
                f"{factory.spec.id}@{version} is not installed (this structbench has version {installed}); "
                f"install the structbench release that shipped {version}."
            )
        factory = earlier[version]
    instance = factory()
    if ":" in name:
        _LOADED_BY_PATH[instance.spec.key] = instance
    return instance


def model_factory(name: str) -> Callable[..., Any]:
    """The class (or factory function) registered as model `name`."""
    factory = _lookup(MODEL_GROUP, name, "model")
    if not callable(factory):
        raise UserError(f"model {name!r} resolves to a non-callable {type(factory).__name__}.")
    return factory  # type: ignore[no-any-return]
