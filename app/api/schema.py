"""The schema: queries, mutations, the subscription, limits and error codes.

`prickle schema` prints `sdl()`; the committed schema.graphql must equal it.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from graphql import GraphQLError
from strawberry import Schema
from strawberry.extensions import (
    MaxAliasesLimiter,
    MaxTokensLimiter,
    ParserCache,
    QueryDepthLimiter,
    SchemaExtension,
    ValidationCache,
)
from strawberry.printer import print_schema
from strawberry.schema.config import StrawberryConfig
from strawberry.types import ExecutionContext, ExecutionResult
from strawberry.types.graphql import OperationType

from app.api import errors
from app.api.mutations import Mutation
from app.api.queries import Query
from app.api.sharing import SharingExecutor
from app.api.subscriptions import Subscription

MAX_DEPTH = 12
MAX_TOKENS = 4000
MAX_ALIASES = 30
CACHED_DOCUMENTS = 256


def shared(extension: SchemaExtension) -> Callable[[], SchemaExtension]:
    """The one instance for every request (the caches and limits are built once)."""
    return lambda: extension


class PrickleSchema(Schema):
    async def execute(self, *args: Any, **kwargs: Any) -> ExecutionResult:
        """Subscriptions only stream (over WebSockets): a plain execution refuses them."""
        allowed = kwargs.get("allowed_operation_types")
        if allowed is not None:
            kwargs["allowed_operation_types"] = set(allowed) - {OperationType.SUBSCRIPTION}
        return await super().execute(*args, **kwargs)

    def process_errors(
        self, errors_: list[GraphQLError], execution_context: ExecutionContext | None = None
    ) -> None:
        for error in errors_:
            errors.shape(error)


schema = PrickleSchema(
    query=Query,
    mutation=Mutation,
    subscription=Subscription,
    config=StrawberryConfig(auto_camel_case=False),
    execution_context_class=SharingExecutor,
    extensions=[
        shared(QueryDepthLimiter(max_depth=MAX_DEPTH)),
        shared(MaxTokensLimiter(max_token_count=MAX_TOKENS)),
        shared(MaxAliasesLimiter(max_alias_count=MAX_ALIASES)),
        # Clients send the same few documents: parse and validate each once (bounded LRU;
        # the parse options, so the token limit, and the validation rules are in the keys).
        shared(ParserCache(maxsize=CACHED_DOCUMENTS)),
        shared(ValidationCache(maxsize=CACHED_DOCUMENTS)),
    ],
)


def sdl() -> str:
    return print_schema(schema) + "\n"
