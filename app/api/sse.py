"""GraphQL over Server-Sent Events: the graphql-sse protocol, distinct connections mode.

A request to `/graphql` whose `Accept` names `text/event-stream` (POST with a JSON body,
or GET with the query in its parameters) is answered with an event stream: one `next`
message per result, then `complete`. Strawberry serves the protocol (its `SSETransport`);
this module adds what the task server needs on top:

- each `next` message that carries a `task_events` event has an SSE `id:` line, the
  event's cursor. The resolver notes the cursor of the event it yields (`sending`); the
  view's `process_result`, which runs for that very result before it is encoded, moves
  it to a context variable (`number_next`) that `EventStream.encode_next` reads;
- a request with `Last-Event-ID` resumes after that cursor: the header takes the place
  of the subscription's `after` argument (`resumes_after`), so a reconnect continues
  with no gap and no duplicate;
- the caller authenticates before the stream opens (`GraphQLApp.get_context`): without a valid
  bearer token the answer is 401 with a GraphQL error `unauthenticated`, not a stream;
- a principal holds at most `PRICKLE_STREAMS_PER_PRINCIPAL` (default 100) live
  subscriptions over SSE in a process (each SSE connection holds one: the distinct
  connections mode's counterpart of the WebSocket per-connection cap); the next gets a
  `next` message with the error `rate_limited`, then `complete`;
- a stream ends with the error `unauthenticated` the moment the token that opened it is
  revoked or expires, as a WebSocket connection is closed then, and just ends when the
  server drains (the service's `until_revoked`, which A2A's streams use too);
- idle streams get a comment (`: ping`) every `PRICKLE_PING_SECONDS` (default 15), so
  that proxies keep them open.

Queries and mutations sent this way are served too, as the protocol allows: one `next`
message with the result (no `id:` line), then `complete`. Mutations need POST.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from contextvars import ContextVar
from types import MappingProxyType

from starlette.requests import HTTPConnection
from strawberry.http import GraphQLHTTPResponse
from strawberry.http.streaming import HTTPStreamTransport, JSONEncoder, SSETransport
from strawberry.subscriptions import GRAPHQL_SSE_PROTOCOL

from app.api.errors import RateLimited
from app.api.queries import event_cursor
from app.domain.principals import Principal
from app.service.holders import Places
from app.settings import current

MEDIA_TYPE = "text/event-stream"

_CURSOR = "event_stream_cursor"  # in request.state: the cursor of the event just yielded
_event_id: ContextVar[str | None] = ContextVar("event_stream_id", default=None)
_places = Places(  # live SSE subscriptions, by principal
    lambda limit: RateLimited(
        f"at most {limit} subscriptions over SSE at once per principal: "
        "close one first, or use one WebSocket connection for several"
    )
)


class EventStream(SSETransport):
    """Strawberry's SSE transport, with the event cursor as each `next` message's `id:`
    and the server's keep-alive interval."""

    def __init__(self) -> None:
        super().__init__(current().ping_seconds)

    def encode_next(self, response: GraphQLHTTPResponse, encode_json: JSONEncoder) -> str:
        message = super().encode_next(response, encode_json)
        event_id = _event_id.get()
        return f"id: {event_id}\r\n{message}" if event_id is not None else message

    def accepts(self, accept: str) -> bool:
        return prefers_event_stream(accept)


TRANSPORTS: Mapping[str, type[HTTPStreamTransport]] = MappingProxyType(
    {GRAPHQL_SSE_PROTOCOL: EventStream}
)
"""The view's streaming transports (its `stream_transport_classes_by_protocol`)."""


def is_event_stream(connection: HTTPConnection) -> bool:
    """Whether an HTTP request asks for an event stream (its Accept names it)."""
    if connection.scope["type"] != "http":
        return False
    return prefers_event_stream(connection.headers.get("accept", ""))


_JSON_TYPES = frozenset(
    ("application/graphql-response+json", "application/graphql+json", "application/json")
)


def prefers_event_stream(accept: str) -> bool:
    """Whether an `Accept` header prefers an event stream to a JSON answer: it names
    `text/event-stream` with a weight above every JSON type's, or as high and before them.
    A client that lists the JSON types first and the stream after them (urql's default for
    queries and mutations) gets JSON."""
    stream: tuple[float, int] | None = None
    json: tuple[float, int] | None = None
    for position, entry in enumerate(accept.split(",")):
        kind, _, parameters = entry.partition(";")
        kind = kind.strip().lower()
        rank = (_weight(parameters), -position)
        if kind == MEDIA_TYPE and (stream is None or rank > stream):
            stream = rank
        elif kind in _JSON_TYPES and (json is None or rank > json):
            json = rank
    if stream is None or stream[0] <= 0:
        return False
    return json is None or stream[0] > json[0] or (stream[0] == json[0] and stream[1] > json[1])


def _weight(parameters: str) -> float:
    for parameter in parameters.split(";"):
        name, _, value = parameter.partition("=")
        if name.strip().lower() == "q":
            try:
                return min(max(float(value.strip()), 0.0), 1.0)
            except ValueError:
                return 0.0
    return 1.0


def resumes_after(connection: HTTPConnection, after: str | None) -> int | None:
    """The cursor a subscription starts after: an SSE request's `Last-Event-ID` (the last
    event its client received before reconnecting), else the `after` argument. A value
    that is not a cursor is refused naming where it came from."""
    if connection.scope["type"] == "http":
        last = connection.headers.get("last-event-id")
        if last:
            return event_cursor(last.strip(), "Last-Event-ID header")
    return event_cursor(after)


def sending(connection: HTTPConnection, cursor: str) -> None:
    """Note the cursor of the event the subscription is about to yield (over SSE)."""
    if connection.scope["type"] == "http":
        setattr(connection.state, _CURSOR, cursor)


def number_next(connection: HTTPConnection) -> None:
    """Called for each result before it is encoded: the next `next` message's `id:` is the
    cursor of the event that made the result, if one did (none for an error that ends
    the stream, nor for a query's result)."""
    cursor = getattr(connection.state, _CURSOR, None)
    if cursor is not None:
        setattr(connection.state, _CURSOR, None)
    _event_id.set(cursor)


@contextmanager
def stream_place(connection: HTTPConnection, principal: Principal) -> Iterator[None]:
    """Hold one of the principal's places for a live subscription over SSE while it runs;
    over the cap, `rate_limited`. Nothing to hold for a WebSocket operation."""
    if connection.scope["type"] != "http":
        yield
        return
    with _places.held(principal):
        yield
