"""Building an input from its GraphQL value by a plan made once per class.

Strawberry converts an input field by field, working out each field's type again on every
request (about 55 µs for a handoff's input and 65 for a result's); `from_input`, its hook
for types that build their own value, does the same from a plan made once per class: a
leaf (a scalar or an enum, or a list of them) is taken as graphql-core coerced it, as
Strawberry takes it; anything else (a nested input) goes to Strawberry's own conversion.
The input-building tests hold each input to what Strawberry builds.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import MISSING
from typing import Any

from strawberry.relay import GlobalID
from strawberry.types import get_object_definition
from strawberry.types.unset import UNSET

from app.api.inputs import INPUTS
from app.compat.strawberry import (
    InputContext,
    StrawberryEnumDefinition,
    StrawberryList,
    StrawberryMaybe,
    StrawberryOptional,
    has_enum_definition,
    is_scalar,
    set_from_input,
)

_TAKEN, _LISTED, _CONVERTED = 0, 1, 2
_Plan = tuple[dict[str, None], tuple[tuple[str, str, int, Any], ...]]
_plans: dict[type, _Plan] = {}
_wired = False


def wire(on: bool) -> None:
    """Build every input type by its plan (`on`), or leave it to Strawberry. The hook is
    the type's, so it holds for every schema in the process."""
    global _wired
    if on or _wired:
        for cls in INPUTS:
            set_from_input(get_object_definition(cls, strict=True), _build if on else None)
        _wired = on


def _build(cls: type, value: Mapping[str, Any], context: InputContext) -> Any:
    plan = _plans.get(cls)
    if plan is None:
        plan = _plans[cls] = _plan(cls, context)
    unset, fields = plan
    kwargs: dict[str, Any] = dict(unset)  # graphql-core has checked the required ones
    for graphql_name, python_name, how, type_ in fields:
        if graphql_name in value:
            item = value[graphql_name]
            if how == _CONVERTED:
                kwargs[python_name] = context.convert(item, type_, graphql_name)
            elif how == _TAKEN or item is None or item is UNSET:
                kwargs[python_name] = item
            else:
                kwargs[python_name] = list(item)  # a copy, as Strawberry makes
    return cls(**kwargs)


def _plan(cls: type, context: InputContext) -> _Plan:
    definition = get_object_definition(cls, strict=True)
    unset = {
        f.python_name: None
        for f in definition.fields
        if f.default_value is MISSING and f.default_factory is MISSING
    }
    fields = []
    for field in definition.fields:
        type_ = field.resolve_type(type_definition=definition)
        how = _CONVERTED
        if _leaf(type_, context, optional=True):
            how = _TAKEN
        elif isinstance(type_, StrawberryOptional) and not isinstance(type_, StrawberryMaybe):
            if isinstance(type_.of_type, StrawberryList) and _leaf(type_.of_type.of_type, context):
                how = _LISTED
        elif isinstance(type_, StrawberryList) and _leaf(type_.of_type, context):
            how = _LISTED
        name = context.config.name_converter.from_field(field)
        fields.append((name, field.python_name, how, type_))
    return unset, tuple(fields)


def _leaf(type_: Any, context: InputContext, optional: bool = True) -> bool:
    """A scalar or an enum (or, with `optional`, either or null): taken as it comes."""
    if optional and isinstance(type_, StrawberryOptional):
        if isinstance(type_, StrawberryMaybe):
            return False
        type_ = type_.of_type
    return (
        isinstance(type_, StrawberryEnumDefinition)
        or has_enum_definition(type_)
        or (is_scalar(type_, context.scalar_registry) and type_ is not GlobalID)
    )
