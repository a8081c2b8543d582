"""Strawberry's and graphql-core's internals that the API's fast paths use (app/api/fast),
here and nowhere else in app/.

`usable()` checks once that every name in `REQUIRED` is there. Where one is missing (a
version the fast paths were not written for), it logs one warning naming the library, its
version and what is missing, and answers False: the server then runs plain Strawberry, on
its public API only. It never raises, and neither does importing this module: a name that
is missing is None here (a base class: `object`), and only used once `usable()`.
"""

from __future__ import annotations

import importlib
import logging
from collections.abc import Callable
from functools import cache
from importlib.metadata import PackageNotFoundError, version
from typing import TYPE_CHECKING, Any

import graphql

log = logging.getLogger(__name__)

LIBRARY = "strawberry-graphql"
HANDLERS = "strawberry.subscriptions.protocols.graphql_transport_ws.handlers"

REQUIRED: tuple[tuple[str, str], ...] = (
    ("strawberry.types.info", "Info._raw_info"),
    ("strawberry.schema.schema", "StrawberryGraphQLCoreExecutionContext"),
    (HANDLERS, "BaseGraphQLTransportWSHandler.run_operation"),
    (HANDLERS, "Operation.handler"),
    (HANDLERS, "Operation.id"),
    (HANDLERS, "Operation.send_next"),
    ("strawberry.types.base", "StrawberryObjectDefinition.from_input"),
    ("strawberry.types.base", "StrawberryList"),
    ("strawberry.types.base", "StrawberryMaybe"),
    ("strawberry.types.base", "StrawberryOptional"),
    ("strawberry.types.enum", "StrawberryEnumDefinition"),
    ("strawberry.types.enum", "has_enum_definition"),
    ("strawberry.types.arguments", "InputContext.convert"),
    ("strawberry.scalars", "is_scalar"),
    ("graphql", "Executor.build_per_event_executor"),
    ("graphql", "Executor.build_resolve_info"),
    ("graphql", "Executor.build_response"),
    ("graphql", "Executor.collected_errors"),
    ("graphql", "Executor.execute_operation"),
    ("graphql", "Executor.middleware_manager"),
    ("graphql", "Executor.variable_values"),
    ("graphql", "VariableValues.coerced"),
)
"""(module, name or Class.attribute): what the fast paths rely on."""


def _found(module: str, path: str) -> Any:
    """The object at `path` in `module` (a class attribute, or one its instances are
    annotated to have), or None."""
    try:
        found: Any = importlib.import_module(module)
    except ImportError:
        return None
    for name in path.split("."):
        owner, found = found, getattr(found, name, None)
        if found is None and _annotated(owner, name):
            found = name
        if found is None:
            return None
    return found


def _annotated(owner: Any, name: str) -> bool:
    """Whether a class declares `name` for its instances (an annotation, or a slot)."""
    for klass in getattr(owner, "__mro__", ()):
        if name in getattr(klass, "__annotations__", {}) or name in getattr(klass, "__slots__", ()):
            return True
    return False


def missing() -> list[str]:
    """The names of `REQUIRED` that are not there."""
    return [f"{module}:{path}" for module, path in REQUIRED if _found(module, path) is None]


@cache
def usable() -> bool:
    """Whether every name the fast paths rely on is there (checked once; a warning if not)."""
    absent = missing()
    if absent:
        log.warning(
            "%s %s (graphql-core %s): the API's fast paths are off, the plain path answers;"
            " missing: %s",
            LIBRARY,
            _version(LIBRARY),
            _version("graphql-core"),
            ", ".join(absent),
        )
    return not absent


def _version(distribution: str) -> str:
    try:
        return version(distribution)
    except PackageNotFoundError:
        return "(version unknown)"


def _class(module: str, name: str, stand_in: type) -> Any:
    found = _found(module, name)
    return found if isinstance(found, type) else stand_in


if TYPE_CHECKING:
    from strawberry.scalars import is_scalar
    from strawberry.schema.schema import StrawberryGraphQLCoreExecutionContext as CoreExecutor
    from strawberry.types.arguments import InputContext
    from strawberry.types.base import StrawberryList, StrawberryMaybe, StrawberryOptional
    from strawberry.types.enum import StrawberryEnumDefinition, has_enum_definition
else:
    CoreExecutor = _class(
        "strawberry.schema.schema",
        "StrawberryGraphQLCoreExecutionContext",
        object,  # a stand-in, never used: `usable()` is False then
    )
    InputContext = _found("strawberry.types.arguments", "InputContext")
    StrawberryList = _found("strawberry.types.base", "StrawberryList")
    StrawberryMaybe = _found("strawberry.types.base", "StrawberryMaybe")
    StrawberryOptional = _found("strawberry.types.base", "StrawberryOptional")
    StrawberryEnumDefinition = _found("strawberry.types.enum", "StrawberryEnumDefinition")
    has_enum_definition = _found("strawberry.types.enum", "has_enum_definition")
    is_scalar = _found("strawberry.scalars", "is_scalar")

__all__ = [
    "CoreExecutor",
    "InputContext",
    "StrawberryEnumDefinition",
    "StrawberryList",
    "StrawberryMaybe",
    "StrawberryOptional",
    "has_enum_definition",
    "is_scalar",
    "operation_is_open",
    "raw_info",
    "send_result",
    "set_from_input",
    "usable",
]


def raw_info(info: Any) -> graphql.GraphQLResolveInfo[Any]:
    """graphql-core's resolve info under a Strawberry `Info` (its field nodes, fragments)."""
    raw: graphql.GraphQLResolveInfo[Any] = info._raw_info
    return raw


def operation_is_open(operation: Any) -> bool:
    """Whether a graphql-transport-ws operation (Strawberry's `Operation`) is still its
    handler's: once completed, Strawberry is cancelling its task."""
    return operation.handler.operations.get(operation.id) is operation


async def send_result(operation: Any, result: graphql.ExecutionResult) -> None:
    """Send a result as the operation's `next` message, as Strawberry sends it."""
    await operation.send_next(result)


def set_from_input(definition: Any, build: Callable[..., Any] | None) -> None:
    """Set (or clear, with None) an input type's `from_input` hook, Strawberry's hook for a
    type that builds its own value."""
    definition.from_input = build
