"""Every input type is built from its GraphQL value (app/api/fast/inputs.py's plan per class)
exactly as Strawberry's own conversion builds it: every field given, only the required
ones, explicit nulls, lists of leaves and of nested inputs."""

from __future__ import annotations

from typing import Any

import pytest
from graphql import (
    GraphQLEnumType,
    GraphQLInputObjectType,
    GraphQLList,
    GraphQLNonNull,
    GraphQLScalarType,
    coerce_input_value,
)
from strawberry.types import get_object_definition
from strawberry.types.arguments import convert_argument

from app.api import inputs
from app.api.schema import schema

# the plan per class is the fast path (app/api/fast/inputs.py); the same on either backend
pytestmark = [pytest.mark.fast_path, pytest.mark.once]

SCALARS: dict[str, Any] = {
    "String": "text",
    "ID": "id-1",
    "Int": 3,
    "Float": 1.5,
    "Boolean": True,
    "JSON": {"a": [1, "b", None]},
    "DateTime": "2026-12-03T10:00:00+00:00",
}
INPUTS = [
    cls
    for name, cls in vars(inputs).items()
    if not name.startswith("_") and isinstance(cls, type) and get_object_definition(cls)
]


def _value(type_: Any, how: str, depth: int = 0) -> Any:
    """A GraphQL value of `type_`: `all` fields, the `required` ones, or `nulls` for the rest."""
    required = isinstance(type_, GraphQLNonNull)
    if required:
        type_ = type_.of_type
    if isinstance(type_, GraphQLList):
        return [_value(type_.of_type, how, depth), _value(type_.of_type, how, depth)]
    if isinstance(type_, GraphQLEnumType):
        return list(type_.values)[-1]
    if isinstance(type_, GraphQLScalarType):
        return SCALARS[type_.name]
    assert isinstance(type_, GraphQLInputObjectType)
    value = {}
    for name, field in type_.fields.items():
        if isinstance(field.type, GraphQLNonNull) or how == "all":
            if depth < 3:
                value[name] = _value(field.type, how, depth + 1)
        elif how == "nulls":
            value[name] = None
    return value


def _built(cls: type, value: Any) -> Any:
    return convert_argument(value, cls, schema.schema_converter.scalar_registry, schema.config)


@pytest.mark.parametrize("cls", INPUTS, ids=lambda cls: cls.__name__)
@pytest.mark.parametrize("how", ["all", "required", "nulls"])
def test_an_input_is_built_as_strawberry_builds_it(cls: type, how: str) -> None:
    definition = get_object_definition(cls, strict=True)
    graphql_type = schema._schema.get_type(definition.name)
    coerced = coerce_input_value(_value(graphql_type, how), graphql_type)
    assert definition.from_input is not None
    ours = _built(cls, coerced)
    hooks = {c: get_object_definition(c, strict=True).from_input for c in INPUTS}
    for c in INPUTS:  # Strawberry's own conversion, nested inputs included
        get_object_definition(c, strict=True).from_input = None
    try:
        theirs = _built(cls, coerced)
    finally:
        for c, hook in hooks.items():
            get_object_definition(c, strict=True).from_input = hook
    assert ours == theirs
    assert type(ours) is type(theirs) is cls
