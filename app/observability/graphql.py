"""The schema extension that tells the request's log line and the metrics what was done:
the principal, the operation (its root fields), the error code, the time it took.

Which code an error is answered with is the API's to say (`app.api.errors`): the app
hands its coder over (`observing(errors.graphql_code)`), and this package imports nothing
of the API.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable, Iterator
from functools import cache

from graphql import FieldNode, GraphQLError, OperationDefinitionNode
from strawberry.extensions import SchemaExtension
from strawberry.types import ExecutionContext, get_object_definition
from strawberry.types.graphql import OperationType

from app.observability import metrics
from app.observability.context import current

log = logging.getLogger(__name__)

OK = "ok"
UNKNOWN = "unknown"

Coder = Callable[[GraphQLError], str]  # the code a client is answered with for this error


def observing(code: Coder) -> Callable[[], SchemaExtension]:
    """The extension of each request, naming each error by `code`."""
    return lambda: Observed(code)


class Observed(SchemaExtension):
    """Counts and times each query and mutation, and each open subscription."""

    _subscribed = False

    def __init__(self, code: Coder) -> None:
        super().__init__()
        self._code = code

    def on_operation(self) -> Iterator[None]:
        """The whole request; for a subscription, as long as it streams."""
        began = time.perf_counter()
        try:
            yield
        finally:
            try:
                if self._subscribed:
                    metrics.SUBSCRIPTIONS.dec()
                    self._note([name for _, name in _selected(self.execution_context)], None)
                else:
                    self._record(time.perf_counter() - began)
            except Exception:  # a figure is never worth failing the request
                log.exception("recording the request's figures failed")

    def on_execute(self) -> Iterator[None]:
        if _kind(self.execution_context) == OperationType.SUBSCRIPTION.value:
            self._subscribed = True
            metrics.SUBSCRIPTIONS.inc()
        yield

    def _record(self, seconds: float) -> None:
        context = self.execution_context
        found = _errors(context)
        kind = _kind(context)
        selected = _known(context, _selected(context))
        fields = [name for _, name in selected]
        operation = ",".join(sorted(set(fields))) or UNKNOWN
        code = self._code(found[0]) if found else OK
        metrics.REQUESTS.labels(kind, operation, code).inc()
        metrics.DURATION.labels(kind, operation).observe(seconds)
        if kind == "mutation":
            for key, name in selected:
                metrics.MUTATIONS.labels(name, self._field_code(key, found)).inc()
        self._note(fields, code)

    def _note(self, fields: list[str], code: str | None) -> None:
        handled = current.get()
        if handled is None:
            return
        principal = getattr(self.execution_context.context, "principal", None)
        if principal is not None:
            handled.principal = principal.id
        handled.operation = self.execution_context.operation_name or ",".join(fields) or None
        handled.code = code

    def _field_code(self, key: str, found: list[GraphQLError]) -> str:
        for error in found:
            if error.path and error.path[0] == key:
                return self._code(error)
        return OK


def _kind(context: ExecutionContext) -> str:
    """query, mutation or subscription; unknown when the document did not parse."""
    try:
        return context.operation_type.value
    except Exception:
        return UNKNOWN


def _errors(context: object) -> list[GraphQLError]:
    result = getattr(context, "result", None)
    found = list(getattr(result, "errors", None) or [])
    return found or list(getattr(context, "pre_execution_errors", None) or [])


def _selected(context: object) -> list[tuple[str, str]]:
    """(response key, field name) of each field at the root of the operation executed."""
    document = getattr(context, "graphql_document", None)
    name = getattr(context, "operation_name", None)
    if document is None:
        return []
    for definition in document.definitions:
        if isinstance(definition, OperationDefinitionNode) and (
            name is None or (definition.name and definition.name.value == name)
        ):
            return [
                ((s.alias or s.name).value, s.name.value)
                for s in definition.selection_set.selections
                if isinstance(s, FieldNode) and not s.name.value.startswith("__")
            ]
    return []


def _known(context: ExecutionContext, selected: list[tuple[str, str]]) -> list[tuple[str, str]]:
    """Only the fields the schema has (a refused document may name any): bounded labels."""
    kind = _kind(context)
    root = getattr(getattr(context, "schema", None), kind, None) if kind != UNKNOWN else None
    fields = _fields_of(root) if root is not None else frozenset()
    return [(key, name) for key, name in selected if name in fields]


@cache
def _fields_of(root: type) -> frozenset[str]:
    """The names of a root type's fields (Strawberry's public type definition)."""
    definition = get_object_definition(root)
    if definition is None:
        return frozenset()
    return frozenset(f.graphql_name or f.python_name for f in definition.fields)
