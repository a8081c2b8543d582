"""The schema: queries, mutations, the subscription, limits and error codes.

Every Mutation field spends one of its caller's tokens before its resolver runs
(`SpendsAToken`, docs/limits.md): a document with three mutations spends three.
`build_schema(fast)` wires in the fast paths (app/api/fast) or leaves execution to
Strawberry; `schema` is the one `PRICKLE_FAST_PATHS` and the compat check ask for.
`prickle schema` prints `sdl()`; the committed schema.graphql must equal it.

What observes the requests (metrics, the log line, traces) is not the API's: the app
builds the app's schema with it (`build(extensions=...)`). `schema` here has none.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from graphql import GraphQLError
from strawberry import Schema
from strawberry.extensions import (
    FieldExtension,
    MaxAliasesLimiter,
    MaxTokensLimiter,
    ParserCache,
    QueryDepthLimiter,
    SchemaExtension,
    ValidationCache,
)
from strawberry.printer import print_schema
from strawberry.schema.config import StrawberryConfig
from strawberry.types import ExecutionContext, ExecutionResult, Info, get_object_definition
from strawberry.types.graphql import OperationType

from app.api import errors
from app.api import fast as fast_paths
from app.api.fast import inputs as fast_inputs
from app.api.fast.compiled import CompilingExecutor
from app.api.limits import RateLimit
from app.api.mutations import Mutation
from app.api.queries import Query
from app.api.reading import OneReadTransaction
from app.api.subscriptions import Subscription

MAX_DEPTH = 12
MAX_TOKENS = 4000
MAX_ALIASES = 30
CACHED_DOCUMENTS = 256


class SpendsAToken(FieldExtension):
    """The mutation rate limit, in one place: a mutation field spends one of its caller's
    tokens (the app's `rate_limit`, None when off) before its resolver runs; with none
    left it is refused with `rate_limited` and `retry_after`, and the resolver never runs."""

    async def resolve_async(self, next_: Any, source: Any, info: Info, **kwargs: Any) -> Any:
        limit: RateLimit | None = getattr(info.context.request.app.state, "rate_limit", None)
        if limit is not None:
            refused = limit.refused(await info.context.viewer())
            if refused is not None:
                raise errors.RateLimited(refused.message, retry_after=refused.retry_after)
        return await next_(source, info, **kwargs)


def _limit_mutations() -> None:
    for field in get_object_definition(Mutation, strict=True).fields:
        if not any(isinstance(e, SpendsAToken) for e in field.extensions):
            field.extensions.append(SpendsAToken())


_limit_mutations()


def shared(extension: SchemaExtension) -> Callable[[], SchemaExtension]:
    """The one instance for every request (the caches and limits are built once)."""
    return lambda: extension


class PrickleSchema(Schema):
    fast = False  # whether its fast paths are wired in (`build_schema`)

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


def build_schema(
    fast: bool, extensions: Sequence[Callable[[], SchemaExtension]] = ()
) -> PrickleSchema:
    """The schema, with `extensions` after its own (they see each request as answered); with
    `fast`, its fast paths wired in: the compiled executor (compiled pages and mutations,
    shared subscription results) and inputs built by plan."""
    fast_inputs.wire(fast)
    fast_paths.wire(fast)
    built = PrickleSchema(
        query=Query,
        mutation=Mutation,
        subscription=Subscription,
        config=StrawberryConfig(auto_camel_case=False),
        execution_context_class=CompilingExecutor if fast else None,
        extensions=[
            shared(QueryDepthLimiter(max_depth=MAX_DEPTH)),
            shared(MaxTokensLimiter(max_token_count=MAX_TOKENS)),
            shared(MaxAliasesLimiter(max_alias_count=MAX_ALIASES)),
            # Clients send the same few documents: parse and validate each once (bounded
            # LRU; the parse options, so the token limit, and the validation rules are in
            # the keys).
            shared(ParserCache(maxsize=CACHED_DOCUMENTS)),
            shared(ValidationCache(maxsize=CACHED_DOCUMENTS)),
            OneReadTransaction,  # a query's reads in one transaction
            *extensions,
        ],
    )
    built.fast = fast
    return built


# `prickle schema`, and whoever executes documents without the app
schema = build_schema(fast_paths.enabled())


def sdl() -> str:
    return print_schema(schema) + "\n"
