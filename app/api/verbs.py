"""The task verbs' mutations, built from their declarations in the service.

Each declared verb is one field: `task_id`, the fields of its arguments' type in their
order (each with its GraphQL type: `GRAPHQL_TYPES` below for those whose Python type is
not already one), then `expected_version`; its resolver builds the arguments, calls the
verb with the caller and returns the task.
"""

from __future__ import annotations

import dataclasses
import inspect
import types
from typing import Annotated, Any, Union, get_args, get_origin, get_type_hints

import strawberry

from app.api import enums
from app.api import inputs as graphql_inputs
from app.api.task_types import Task
from app.service import arguments, inputs
from app.service.unit import Verb
from app.service.verbs import registry

Version = Annotated[
    int | None,
    strawberry.argument(description="Refuse with conflict unless the task is at this version."),
]

# the GraphQL type of each Python type of an argument that is not one already
GRAPHQL_TYPES: dict[Any, Any] = {
    arguments.WaitFor: enums.WaitOn,
    arguments.Decision: enums.Decision,
    inputs.CheckpointInput: graphql_inputs.CheckpointInput,
    inputs.ResultInput: graphql_inputs.ResultInput,
    inputs.VerdictInput: graphql_inputs.VerdictInput,
    inputs.CapabilityInput: graphql_inputs.CapabilityInput,
}

_KEYWORD = inspect.Parameter.KEYWORD_ONLY


def fields() -> dict[str, Any]:
    """Each declared verb's mutation field, by name, in the order declared."""
    return {verb.name: _field(verb) for verb in registry()}


def _field(verb: Verb[Any]) -> Any:
    async def resolve(
        self: Any, info: strawberry.Info, task_id: str, expected_version: int | None, **given: Any
    ) -> Task:
        ctx = info.context
        args = verb.args(**given)
        return Task.from_domain(
            await verb.run(ctx.store, await ctx.viewer(), task_id, args, expected_version)
        )

    resolve.__name__ = resolve.__qualname__ = verb.name
    vars(resolve)["__signature__"] = _signature(verb)  # what Strawberry reads the arguments from
    return strawberry.mutation(resolve, description=verb.description)


def _signature(verb: Verb[Any]) -> inspect.Signature:
    hints = get_type_hints(verb.args)
    given = [
        inspect.Parameter(f.name, _KEYWORD, annotation=_graphql(hints[f.name]), default=_default(f))
        for f in dataclasses.fields(verb.args)
        if f.init
    ]
    return inspect.Signature(
        [
            inspect.Parameter("self", inspect.Parameter.POSITIONAL_OR_KEYWORD),
            inspect.Parameter("info", _KEYWORD, annotation=strawberry.Info),
            inspect.Parameter("task_id", _KEYWORD, annotation=strawberry.ID),
            *given,
            inspect.Parameter("expected_version", _KEYWORD, annotation=Version, default=None),
        ],
        return_annotation=Task,
    )


def _default(field: dataclasses.Field[Any]) -> Any:
    return inspect.Parameter.empty if field.default is dataclasses.MISSING else field.default


def _graphql(python: Any) -> Any:
    """The GraphQL type of an argument's Python type: optional and list types kept."""
    if get_origin(python) in (Union, types.UnionType):
        (inner,) = [a for a in get_args(python) if a is not type(None)]
        return _graphql(inner) | None
    if get_origin(python) is list:
        return types.GenericAlias(list, (_graphql(get_args(python)[0]),))
    return GRAPHQL_TYPES.get(python, python)
