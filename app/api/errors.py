"""Errors to GraphQL errors, in one place: every error carries `extensions.code`.

- a ProtocolError keeps its message; its code (and, for invalid_state, the state) goes
  into `extensions`;
- a query refused by the depth, token or alias limits: `query_too_complex`;
- any other error in the request itself (syntax, validation, variables): `invalid_input`;
- a subscriber that fell too far behind: `rate_limited`, with `after`: the cursor to
  resume from;
- anything else is a fault: logged here with its traceback, answered as
  "internal error" with code `internal` and nothing more.
"""

from __future__ import annotations

import logging
import re

from app.domain.errors import ProtocolError
from app.events.hub import FellBehind
from graphql import GraphQLError

log = logging.getLogger("app.api")

# The messages of Strawberry's QueryDepthLimiter and MaxAliasesLimiter, and of the
# parser's token limit (MaxTokensLimiter); tests/test_api_limits.py keeps them honest.
_TOO_COMPLEX = re.compile(
    r"exceeds maximum operation depth|aliases found\. Allowed|contains more than \d+ tokens"
)
_REQUEST_FAULTS = (GraphQLError, ValueError, TypeError)


def shape(error: GraphQLError) -> None:
    """Give the error its code, in place; idempotent."""
    if error.extensions and "code" in error.extensions:
        return
    original = error.original_error
    if isinstance(original, ProtocolError):
        error.message = original.message
        error.extensions = dict(original.extensions)
    elif isinstance(original, FellBehind):
        error.message = str(original)
        error.extensions = {"code": "rate_limited"}
        if original.after is not None:
            error.extensions["after"] = str(original.after)
    elif error.path is None and (original is None or isinstance(original, _REQUEST_FAULTS)):
        code = "query_too_complex" if _TOO_COMPLEX.search(error.message) else "invalid_input"
        error.extensions = {"code": code}
    else:
        _internal(error)


def _internal(error: GraphQLError) -> None:
    original = error.original_error or error
    log.error(
        "internal error at %s: %s",
        error.path,
        error.message,
        exc_info=(type(original), original, original.__traceback__),
    )
    error.message = "internal error"
    error.extensions = {"code": "internal"}
    error.original_error = None
