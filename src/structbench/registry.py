"""Finding suites and models by name.

Names come from the entry-point groups `structbench.suites` and `structbench.models` (the
built-ins are registered there by structbench's own distribution, exactly like a
plugin) or from a `module:Class` path. A suite entry point names one `Suite` class; an entry
point of `structbench.suite_sets` names a `SuiteSet`, whose members are registered under
their suite ids as if each had an entry point of its own (so a set of eleven suites is declared
once). Two different targets under one name are refused; an unknown name is answered with the
closest registered names.

Until `structbench.errors.RENAMED_NAMES_GO_IN`, the group's name before 0.2.0,
`structbench.suite_families`, is read too, with a DeprecationWarning naming the plugin.
"""

from __future__ import annotations

import difflib
import importlib
from collections.abc import Callable, Mapping
from functools import cache, partial
from importlib.metadata import EntryPoint, entry_points
from pathlib import Path
from typing import Any

from structbench.errors import UserError, renamed
from structbench.specs import natural_key
from structbench.suite import Suite, SuiteSet

SUITE_GROUP = "structbench.suites"
SET_GROUP = "structbench.suite_sets"
OLD_SET_GROUP = "structbench.suite_families"
"""`SET_GROUP`'s name before 0.2.0, still read (with a DeprecationWarning) until `RENAMED_NAMES_GO_IN`."""
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
    points = _entry_points(group)
    if group == SET_GROUP:
        old = _entry_points(OLD_SET_GROUP)
        for point in old:
            renamed(f"the entry-point group {OLD_SET_GROUP} (of {point.name} = {point.value})", SET_GROUP)
        points += old
    return _index(group, points)


def _suite_set(name: str, point: EntryPoint) -> SuiteSet:
    suite_set = _load(point, name, "suite set")
    if not isinstance(suite_set, SuiteSet):
        raise UserError(
            f"the suite set {name!r} ({point.value}) is a {type(suite_set).__name__}, not a structbench SuiteSet; "
            "register a single suite class in structbench.suites instead."
        )
    return suite_set


def _path(suite_class: type[Suite]) -> str:
    return f"{suite_class.__module__}:{suite_class.__qualname__}"


@cache
def _suites() -> dict[str, EntryPoint | type[Suite]]:
    """Suite id -> its own entry point (loaded when asked for), or the member class of a suite set."""
    by_name: dict[str, EntryPoint | type[Suite]] = dict(_names(SUITE_GROUP))
    for set_name, point in _names(SET_GROUP).items():
        for suite_id, suite_class in _suite_set(set_name, point).members.items():
            known = by_name.get(suite_id)
            known_path = None if known is None else known.value if isinstance(known, EntryPoint) else _path(known)
            if known_path is not None and known_path != _path(suite_class):
                raise UserError(
                    f"two plugins register {suite_id!r} in {SUITE_GROUP} ({known_path} and {_path(suite_class)}, "
                    f"a member of the suite set {point.value}); uninstall one of them or rename its suite."
                )
            by_name[suite_id] = suite_class
    return by_name


def clear_cache() -> None:
    """Forget the entry points read so far (after installing a plugin in the same process)."""
    _names.cache_clear()
    _suites.cache_clear()
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
    except (Exception, SystemExit) as error:  # the module's own code failed as it was imported
        shown = f"sys.exit({error.code!r})" if isinstance(error, SystemExit) else f"{type(error).__name__}: {error}"
        raise UserError(
            f"importing module {module_name!r} for {what} {path!r} failed in the module's own code ({shown}); "
            f"fix the module (`python -c 'import {module_name}'` shows the traceback)."
        ) from None
    try:
        return getattr(module, attribute)
    except AttributeError:
        raise UserError(f"module {module_name!r} has no {attribute!r}; check the {what} path {path!r}.") from None


@cache
def _closest(name: str, registered: tuple[str, ...]) -> list[str]:
    """The registered names closest to `name`: found once per name, as a report asks about a suite it
    does not have once for each of its pages (30 such suites took difflib a quarter of a second)."""
    return difflib.get_close_matches(name, registered, n=3, cutoff=0.5)


def _unknown(registered: list[str], name: str, what: str) -> UserError:
    """An unknown name: the registered names closest to it (else all of them), and for a model the
    `module:Class` form a model of one's own is named by (with this module where `NAME.py` is here)."""
    close = _closest(name, tuple(registered))
    hint = f"did you mean {', '.join(close)}?" if close else f"known {what}s: {', '.join(sorted(registered))}."
    listing = f"(`structbench {what}s` lists them)"
    if what != "model":
        return UserError(f"unknown {what} {name!r}; {hint} {listing}")
    if name.isidentifier() and Path(f"{name}.py").is_file():
        own = f"{name}.py is in this folder: name the class in it, --model {name}:CLASS"
    else:
        own = "a model of your own is named by its module and class, e.g. --model my_model:MyModel for class MyModel in my_model.py"
    return UserError(f"unknown model {name!r}; {hint} {listing}; {own}.")


def _load(point: EntryPoint, name: str, what: str) -> Any:
    try:
        return point.load()
    except Exception as error:  # a broken plugin must not end in a traceback
        raise UserError(
            f"the {what} {name!r} comes from an installed plugin ({point.value}) that cannot be loaded ({error}); "
            "reinstall or uninstall that plugin."
        ) from None


def _lookup(registered: Callable[[], Mapping[str, Any]], name: str, what: str) -> Any:
    """What `name` (a registered name or a `module:Class` path) names; the caller checks its kind.

    `registered` is read only for a name that is no path, so that a path never depends on the
    installed plugins; its values are entry points (loaded here) or what they already name.
    """
    if ":" in name:
        return _import_path(name, what)
    targets = registered()
    if name not in targets:
        raise _unknown(list(targets), name, what)
    target = targets[name]
    return _load(target, name, what) if isinstance(target, EntryPoint) else target


def suite_names() -> list[str]:
    """Every registered suite id, numbers in ids by value (`natural_key`)."""
    return sorted(_suites(), key=natural_key)


def suite_sets() -> dict[str, list[str]]:
    """Each registered suite set (`structbench.suite_sets`) -> its members' suite ids, in declaration order."""
    return {name: list(_suite_set(name, point).members) for name, point in _names(SET_GROUP).items()}


def model_names() -> list[str]:
    return sorted(_names(MODEL_GROUP))


_LOADED_BY_PATH: dict[str, Suite] = {}
"""`ID@VERSION` and `ID` -> suites loaded by `module:Class`, so that their splits' `suite` field, and a
model that asks about its suite by id (a neural baseline reading the suite's recipe), resolve; an
installed suite of that id comes first."""


@cache
def suite(reference: str) -> Suite:
    """The suite for `ID`, `ID@VERSION` or `module:Class`; a version must match the installed one."""
    name, _, version = reference.partition("@")
    if reference in _LOADED_BY_PATH and name not in _suites():
        return _LOADED_BY_PATH[reference]
    factory = _lookup(_suites, name, "suite")
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
        _LOADED_BY_PATH[instance.spec.key] = _LOADED_BY_PATH[instance.spec.id] = instance
    return instance


def model_factory(name: str) -> Callable[..., Any]:
    """The class (or factory function) registered as model `name`."""
    factory = _lookup(partial(_names, MODEL_GROUP), name, "model")
    if not callable(factory):
        raise UserError(f"model {name!r} resolves to a non-callable {type(factory).__name__}.")
    return factory  # type: ignore[no-any-return]
