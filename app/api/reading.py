"""A query's reads share one read transaction: one connection and one BEGIN/COMMIT per
request, however many lookups its fields make (`Store.reading`). Mutations and
subscriptions are left as they are: a mutation reads what it has just written, and a
subscription lives longer than any transaction should."""

from __future__ import annotations

from collections.abc import AsyncIterator

from strawberry.extensions import SchemaExtension
from strawberry.types.graphql import OperationType


class OneReadTransaction(SchemaExtension):
    async def on_execute(self) -> AsyncIterator[None]:
        context = self.execution_context
        store = getattr(context.context, "store", None)
        if store is None or context.operation_type != OperationType.QUERY:
            yield
            return
        async with store.reading():
            yield
