"""Errors to GraphQL errors, in one place: every error a client sees carries `extensions.code`.

- a ProtocolError keeps its message; its code (and, for invalid_state, the state and
  waiting_on) goes into `extensions`;
- the API's own refusals, RateLimited and QueryTooComplex (defined here), likewise;
- a query refused by the depth, token or alias limits: `query_too_complex`;
- any other error in the request itself (its body, syntax, validation, variables, an
  argument graphql-core refuses): `invalid_input`;
- text the database cannot hold (PostgreSQL refuses U+0000): `invalid_input`;
- a subscriber that fell too far behind: `rate_limited`, with `after`: the cursor to
  resume from;
- the database failing (unreachable, dropped, full, read-only, timed out: the service's
  `fault`): `unavailable`, with `retry_after` (seconds) and `outcome` (`none`, or `unknown`
  when a commit's answer was lost), logged once by the store's health, not here; an HTTP
  response whose every error is so answers 503 with Retry-After (`unavailable_for`);
- anything else is a fault: logged here with its traceback, answered as
  "internal error" with code `internal` and nothing more.

`shape` gives a GraphQL error its code in place; `as_graphql` and `response_body` build
the error (and the whole response) for answers that do not come from executing a query:
a refused HTTP request, a refused WebSocket connection, the subscription cap.
"""

from __future__ import annotations

import logging
import re

from graphql import GraphQLError, GraphQLFormattedError
from strawberry.exceptions import MissingQueryError
from strawberry.schema.exceptions import CannotGetOperationTypeError, InvalidOperationTypeError

from app.api.disconnects import went_away
from app.domain.errors import InvalidInput, InvalidState, ProtocolError, Unavailable
from app.events.hub import FellBehind
from app.service.database import fault

log = logging.getLogger("app.api")

INTERNAL = "internal"

# The messages of Strawberry's QueryDepthLimiter and MaxAliasesLimiter, and of the
# parser's token limit (MaxTokensLimiter); the API's limit tests keep them honest.
_TOO_COMPLEX = re.compile(
    r"exceeds maximum operation depth|aliases found\. Allowed|contains more than \d+ tokens"
)
# Faults of the request itself; over SSE, Strawberry's refusals before anything runs (no
# query, no or an ambiguous operation, one the method does not allow) arrive this way too.
_REQUEST_FAULTS = (
    GraphQLError,
    ValueError,
    TypeError,
    MissingQueryError,
    CannotGetOperationTypeError,
    InvalidOperationTypeError,
)


class RateLimited(ProtocolError):
    """Too much at once, e.g. one more subscription than a connection may hold."""

    code = "rate_limited"

    def __init__(self, message: str, retry_after: float | None = None) -> None:
        super().__init__(message)
        self.retry_after = retry_after


class QueryTooComplex(ProtocolError):
    """A request over the size, depth, alias or token limits."""

    code = "query_too_complex"


def extensions(error: BaseException) -> dict[str, object]:
    """The GraphQL `extensions` that answer `error`."""
    if isinstance(error, InvalidState):
        return {"code": error.code, "state": error.state, "waiting_on": error.waiting_on}
    if isinstance(error, Unavailable):
        return {"code": error.code, "retry_after": error.retry_after, "outcome": error.outcome}
    if isinstance(error, RateLimited) and error.retry_after is not None:
        return {"code": error.code, "retry_after": error.retry_after}
    if isinstance(error, ProtocolError):
        return {"code": error.code}
    if isinstance(error, FellBehind):
        found: dict[str, object] = {"code": RateLimited.code}
        if error.after is not None:
            found["after"] = str(error.after)
        return found
    return {"code": INTERNAL}


def code(error: BaseException) -> str:
    return str(extensions(error)["code"])


def message(error: BaseException) -> str:
    """What a client is told: a refusal's own message; never a fault's."""
    if isinstance(error, ProtocolError):
        return error.message
    if isinstance(error, FellBehind):
        return str(error)
    return "internal error"


def as_graphql(error: BaseException) -> GraphQLFormattedError:
    """`error` as one entry of a GraphQL response's `errors`."""
    return {"message": message(error), "extensions": extensions(error)}


def response_body(error: BaseException) -> dict[str, object]:
    """A whole GraphQL response refusing the request with `error`."""
    return {"data": None, "errors": [as_graphql(error)]}


def shape(error: GraphQLError) -> None:
    """Give the error its code, in place; idempotent."""
    if error.extensions and "code" in error.extensions:
        return
    original = _client_error(error)
    if original is None:
        _internal(error)
        return
    error.message = message(original)
    error.extensions = extensions(original)


def graphql_code(error: GraphQLError) -> str:
    """The code `error` is answered with (shaping it first: the schema may not have yet)."""
    shape(error)
    return str((error.extensions or {}).get("code", INTERNAL))


def _client_error(error: GraphQLError) -> BaseException | None:
    """The refusal `error` stands for, or None when it is a fault."""
    original = error.original_error
    if isinstance(original, (ProtocolError, FellBehind)):
        return original
    if isinstance(original, GraphQLError) or (
        error.path is None and (original is None or isinstance(original, _REQUEST_FAULTS))
    ):
        # graphql-core's own refusals: of the document, the variables, or (during
        # execution, with a path) an argument, e.g. an explicit null for a non-null one
        return _request_refusal(error.message)
    return fault(original) if original is not None else None


def unavailable_for(errors: list[GraphQLError] | None, data: object) -> float | None:
    """The Retry-After of a response whose every field failed as `unavailable` (it then
    answers HTTP 503), else None."""
    if not errors or (isinstance(data, dict) and any(v is not None for v in data.values())):
        return None
    waits = []
    for error in errors:
        shape(error)
        found = error.extensions or {}
        if found.get("code") != Unavailable.code:
            return None
        waits.append(float(str(found.get("retry_after", 1))))
    return max(waits)


def _request_refusal(text: str) -> ProtocolError:
    return QueryTooComplex(text) if _TOO_COMPLEX.search(text) else InvalidInput(text)


def _internal(error: GraphQLError) -> None:
    original = error.original_error or error
    if went_away(original):  # the client closed its connection: nobody to tell, no fault
        log.debug("the client went away during %s", error.path or "its subscription")
    else:
        log.error(
            "internal error at %s: %s",
            error.path,
            error.message,
            exc_info=(type(original), original, original.__traceback__),
        )
    error.message = "internal error"
    error.extensions = {"code": INTERNAL}
    error.original_error = None
