"""GraphQL over HTTP (the GraphQL Foundation's specification, its September 2026 release): the
response's media type chosen from the request's `Accept`, and the status that goes with it.

- `application/graphql-response+json` when `Accept` names it with a weight at least that of
  `application/json` (a client following the specification sends
  `application/graphql-response+json, application/json;q=0.9`). Then the status says what
  happened: a request that fails before execution starts (its document does not parse or
  validate, its variables do not coerce, a limit refuses it) is answered 400 with `errors`
  and no `data`; once execution has started the answer is 2xx: 200 with `data` alone, 294
  ("partial success") with `data` and `errors`; 503 when every field failed as
  `unavailable`, as before.
- `application/json` for the legacy clients: when `Accept` names it first, or names only
  `*/*` or `application/*`, or is absent (what a browser's `fetch()`, curl and most HTTP
  libraries send). Those answers keep the old behaviour, 200 with `data: null` and `errors`
  for a document that does not parse or validate, as the specification's audits expect of
  `application/json`.
- An `Accept` that names neither (nor a wildcard, nor `text/event-stream`, which asks for
  the subscription stream: `EventStream`) is answered 406 `not_acceptable`; nothing runs.
"""

from __future__ import annotations

from graphql import GraphQLError

from app.api.errors import INTERNAL, shape
from app.domain.errors import Unavailable

GRAPHQL_RESPONSE = "application/graphql-response+json"
JSON = "application/json"
PARTIAL_SUCCESS = 294
NOT_ACCEPTABLE = "not_acceptable"


def negotiate(accept: str | None) -> str | None:
    """The media type to answer `accept` with, or None when the server has none it accepts."""
    if accept is None or not accept.strip():
        return JSON
    best: dict[str, float] = {}
    for entry in accept.split(","):
        kind, _, parameters = entry.partition(";")
        kind = kind.strip().lower()
        weight = _weight(parameters)
        if kind in (GRAPHQL_RESPONSE, JSON, "*/*", "application/*"):
            best[kind] = max(weight, best.get(kind, 0.0))
    graphql_response, json = best.get(GRAPHQL_RESPONSE, 0.0), best.get(JSON, 0.0)
    if graphql_response > 0 and graphql_response >= json:
        return GRAPHQL_RESPONSE
    if json > 0 or best.get("*/*", 0.0) > 0 or best.get("application/*", 0.0) > 0:
        return JSON
    return None


def _weight(parameters: str) -> float:
    for parameter in parameters.split(";"):
        name, _, value = parameter.partition("=")
        if name.strip().lower() == "q":
            try:
                return min(max(float(value.strip()), 0.0), 1.0)
            except ValueError:
                return 0.0
    return 1.0


def before_execution(data: object, errors: list[GraphQLError] | None) -> bool:
    """Whether a result is a request error: it failed before execution began (no data, and
    none of its errors belongs to a field) because of the request, not of the server."""
    if data is not None or not errors:
        return False
    for error in errors:
        shape(error)
        code = (error.extensions or {}).get("code")
        if error.path is not None or code in (INTERNAL, Unavailable.code):
            return False
    return True
