"""A query's reads share one read transaction on PostgreSQL: one connection and one
BEGIN/COMMIT per request, however many lookups its fields make (`Store.reading`; on
SQLite, where sharing them costs more than it saves, only a query that asks for a
snapshot). Mutations and subscriptions are left as they are: a mutation reads what it has
just written, and a subscription lives longer than any transaction should. A query that
asks where the event log ends (`event_head`) reads one snapshot, so that what it reads and
that cursor agree."""

from __future__ import annotations

from collections.abc import AsyncIterator

from graphql import DocumentNode, FieldNode, OperationDefinitionNode
from strawberry.extensions import SchemaExtension
from strawberry.types.graphql import OperationType

# the fields that say which events the query's other fields hold
HEAD_FIELDS = frozenset({"event_head", "events_seen_after_head"})


class OneReadTransaction(SchemaExtension):
    async def on_execute(self) -> AsyncIterator[None]:
        context = self.execution_context
        store = getattr(context.context, "store", None)
        if store is None or context.operation_type != OperationType.QUERY:
            yield
            return
        snapshot = _asks_head(context.graphql_document, context.operation_name)
        async with store.reading(snapshot):
            yield


def _asks_head(document: DocumentNode | None, name: str | None) -> bool:
    """Whether the operation run selects a field of `HEAD_FIELDS` at its top."""
    if document is None:
        return False
    for definition in document.definitions:
        if not isinstance(definition, OperationDefinitionNode):
            continue
        if name is not None and (definition.name is None or definition.name.value != name):
            continue
        selections = definition.selection_set.selections
        if any(isinstance(s, FieldNode) and s.name.value in HEAD_FIELDS for s in selections):
            return True
    return False
