"""Checking a model's `--set` values against its constructor before anything runs.

A model's settings are the keyword arguments of its constructor. Their names are checked
against the signature, and where the constructor annotates them (`order: PositiveInt = 4`)
their types and ranges too, by pydantic, so that `epochs=-3` or `order=2.5` is one sentence
before any data is built instead of a failed (or, worse, a finished) run. Which of them key a
run (not those asking for a default) is the run key's rule, `structbench.runs.key`.
"""

from __future__ import annotations

import inspect
import json
import types
import typing
from collections.abc import Callable
from typing import Any

from pydantic import ConfigDict, ValidationError, create_model

from structbench import registry
from structbench.errors import UserError
from structbench.specs import ModelSpec


def _annotated_parameters(factory: Callable[..., Any]) -> dict[str, Any]:
    """name -> (type, default) of the constructor's annotated keyword parameters."""
    target = factory.__init__ if inspect.isclass(factory) else factory
    try:
        hints = typing.get_type_hints(target, include_extras=True)
        signature = inspect.signature(target)
    except (NameError, TypeError, ValueError):  # unresolvable annotations: names are checked only
        return {}
    return {
        name: (hints[name], ... if parameter.default is inspect.Parameter.empty else parameter.default)
        for name, parameter in signature.parameters.items()
        if name in hints and parameter.kind in (parameter.POSITIONAL_OR_KEYWORD, parameter.KEYWORD_ONLY)
    }


def _is_text(annotation: Any) -> bool:
    """Whether a setting annotated `annotation` takes only strings: `str`, `Annotated[str, ...]`, a
    `Literal` of strings, or one of those or None."""
    origin, arguments = typing.get_origin(annotation), typing.get_args(annotation)
    if annotation is str:
        return True
    if origin is typing.Annotated:
        return _is_text(arguments[0])
    if origin is typing.Literal:
        return all(isinstance(argument, str) for argument in arguments)
    if origin in (typing.Union, types.UnionType):
        rest = [argument for argument in arguments if argument is not type(None)]
        return bool(rest) and all(_is_text(argument) for argument in rest)
    return False


def text_settings(name: str) -> frozenset[str]:
    """The settings of model `name` whose constructor annotation takes only strings, which `--set`
    therefore reads as text (`parse_settings(..., text=...)`): `--set fallback=111` is "111"."""
    return frozenset(
        key
        for key, (annotation, _) in _annotated_parameters(registry.model_factory(name)).items()
        if _is_text(annotation)
    )


def _defaults(factory: Callable[..., Any]) -> list[tuple[str, Any]]:
    """(name, default) of each setting of `factory` with a default, in declaration order: the fields of
    its `settings_class` (a neural baseline's recipe settings, taken as keywords) where it has one, else
    its constructor's keyword parameters."""
    fields = getattr(getattr(factory, "settings_class", None), "model_fields", None)
    if isinstance(fields, dict):
        return [(name, field.default) for name, field in fields.items() if not field.is_required()]
    try:
        signature = inspect.signature(factory)
    except (TypeError, ValueError):
        return []
    return [
        (name, parameter.default)
        for name, parameter in signature.parameters.items()
        if parameter.default is not inspect.Parameter.empty
        and parameter.kind in (parameter.POSITIONAL_OR_KEYWORD, parameter.KEYWORD_ONLY)
    ]


def setting_example(name: str) -> str:
    """How `--set` is written for model `name`, from its own settings: `e.g. --set order=4` (a
    setting with a number for its default where it has one), or that it takes none."""
    defaults = _defaults(registry.model_factory(name))
    for kinds in ((int,), (float,), (str,), (bool,)):
        for key, value in defaults:
            if isinstance(value, kinds) and (kinds == (bool,) or not isinstance(value, bool)):
                shown = value if isinstance(value, str) else json.dumps(value)
                return f"e.g. --set {key}={shown}"
    return f"model {name!r} takes no settings"


def check_settings(spec: ModelSpec) -> None:
    """Refuse `--set` keys the model's constructor does not take, and values its annotations
    rule out, naming the setting and what it must be."""
    factory = registry.model_factory(spec.name)
    try:
        signature = inspect.signature(factory)
    except (TypeError, ValueError):
        return
    accepts_any = any(p.kind is inspect.Parameter.VAR_KEYWORD for p in signature.parameters.values())
    unknown = [key for key in spec.params if key not in signature.parameters]
    if unknown and not accepts_any:
        known = [n for n, p in signature.parameters.items() if p.kind is not inspect.Parameter.VAR_POSITIONAL]
        raise UserError(
            f"model {spec.name!r} has no setting {', '.join(map(repr, unknown))}; "
            + (f"its settings are: {', '.join(known)}." if known else "it takes no settings.")
        )
    fields = {name: field for name, field in _annotated_parameters(factory).items() if name in spec.params}
    if not fields:
        return
    settings = create_model(f"{spec.name}-settings", __config__=ConfigDict(arbitrary_types_allowed=True), **fields)
    try:
        settings.model_validate({name: spec.params[name] for name in fields})
    except ValidationError as error:
        problems = "; ".join(f"{'.'.join(map(str, e['loc']))}={e['input']!r}: {e['msg']}" for e in error.errors())
        # `--set` reads a str setting as text; a grid file's unquoted 111 is a number YAML made
        quote = (
            " (in a grid file, quote a text value: '111')"
            if any(e["type"] == "string_type" for e in error.errors())
            else ""
        )
        raise UserError(f"invalid setting for model {spec.name!r} ({problems}); fix the --set value{quote}.") from None
