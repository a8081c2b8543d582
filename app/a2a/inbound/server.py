"""The routes of every agent's A2A server, below `/a2a`: `/{owner}/{agent}` (JSON-RPC),
`/{owner}/{agent}/message:send`, `/tasks/{id}`, ... (HTTP+JSON) and
`/{owner}/{agent}/.well-known/agent-card.json`, served by the SDK's dispatchers over our
handler (handler.py).

Each request passes `guarded` first: a body over 1 MB is refused, and the caller must hold
a valid token (401 otherwise); whether the agent is registered and not erased is read with
what each method reads (handler.py), and the card is 404 for an agent that is not. Each
stream event's SSE `id:` is its Prickle cursor: the handler notes the cursor of every event
it yields (`Call.cursors`), and `numbered` puts it on the SSE event the dispatcher made of
it, in the same order; a request's `Last-Event-ID` becomes the cursor the stream resumes
after (no gap, no duplicate).
"""

from __future__ import annotations

import hashlib
import json
from collections import deque
from collections.abc import AsyncIterable, AsyncIterator, Awaitable, Callable
from email.utils import format_datetime
from typing import Any

from a2a.server.context import ServerCallContext
from a2a.server.request_handlers.response_helpers import agent_card_to_dict
from a2a.server.routes import (
    DefaultServerCallContextBuilder,
    create_jsonrpc_routes,
    create_rest_routes,
)
from sse_starlette import EventSourceResponse, ServerSentEvent
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import BaseRoute, Route, Router
from starlette.types import Receive, Scope, Send

from app.a2a.inbound.call import Call
from app.a2a.inbound.card import agent_card
from app.a2a.inbound.handler import Handler
from app.a2a.inbound.push import SECRET_HEADER
from app.domain.clock import parse_rfc3339
from app.domain.errors import InvalidInput, ProtocolError, Unauthenticated
from app.domain.principals import AGENT_ID
from app.request_size import MAX_BODY_BYTES, bounded, gone
from app.service import reads
from app.service.admin import agent_card_public
from app.service.auth import authenticate, credential_for
from app.service.erasure import principal_info

BASE = "/{owner}/{agent}"
CARD = f"{BASE}/.well-known/agent-card.json"

A2A_JSON = "application/a2a+json"
CARD_MAX_AGE = 300  # seconds a client may keep the card before it asks again (ETag)

Endpoint = Callable[[Request], Awaitable[Response]]


class ContextBuilder(DefaultServerCallContextBuilder):
    """The SDK's call context, carrying our `Call` (made by `guarded`)."""

    def build(self, request: Request) -> ServerCallContext:
        context = super().build(request)
        context.state["prickle"] = request.state.prickle_call
        return context


def router() -> Router:
    handler, builder = Handler(), ContextBuilder()
    served = [
        *create_jsonrpc_routes(handler, BASE, builder, enable_v0_3_compat=True),
        *create_rest_routes(handler, builder, enable_v0_3_compat=True, path_prefix=BASE),
    ]
    routes: list[BaseRoute] = [Route(CARD, card, methods=["GET"])]
    for r in served:
        if not isinstance(r, Route):  # not the SDK's `/{tenant}` mount: no tenants here
            continue
        methods = sorted(r.methods or ())
        routes.append(Route(r.path, guarded(r.endpoint), methods=methods))
        if r.path == BASE:  # JSON-RPC at `{base}/` too, answered, not redirected
            routes.append(Route(f"{BASE}/", guarded(r.endpoint), methods=methods))
    return Router(routes)


def guarded(endpoint: Endpoint) -> Endpoint:
    async def guard(request: Request) -> Response:
        body = await bounded(request.scope, request.receive)
        if body is None:
            return _refusal(413, -32600, f"the request body is larger than {MAX_BODY_BYTES} bytes")
        if body is gone:
            return Response(status_code=400)  # no one is left to read it
        request = Request(request.scope, body)
        state = request.app.state
        try:
            credential = await credential_for(state.store, request.headers.get("authorization"))
        except Unauthenticated as error:
            return _refusal(401, -32600, str(error), {"www-authenticate": "Bearer"})
        agent = f"{request.path_params['owner']}/{request.path_params['agent']}"
        limit = getattr(state, "rate_limit", None)  # the GraphQL mutations' budget too
        call = Call(state.store, state.hub, credential, agent, limit=limit)
        try:
            call.after = _last_event_id(request)
        except InvalidInput as error:
            return _refusal(400, -32602, str(error))
        call.secret_asked = request.headers.get(SECRET_HEADER)
        call.disconnected = body
        request.state.prickle_call = call
        response = await endpoint(request)
        if call.secret_made is not None:  # a push config's signing secret, shown once
            response.headers[SECRET_HEADER] = call.secret_made
        if response.headers.get("content-type", "").startswith(A2A_JSON):
            # HTTP+JSON's answers are application/json (A2A v1.0 section 11.1); the SDK
            # labels them application/a2a+json, as the spec's examples do
            response.headers["content-type"] = "application/json"
        if isinstance(response, EventSourceResponse):
            response.body_iterator = numbered(response.body_iterator, call.cursors)
        return response

    return guard


async def card(request: Request) -> Response:
    """The agent's card: to a caller with a valid token, or to anyone when its owner marked
    it public (`set_agent_card_public`); 404 for an agent unknown or erased, told only to a
    caller with a token (without one, an agent that is not public is 401, known or not)."""
    store = request.app.state.store
    agent = f"{request.path_params['owner']}/{request.path_params['agent']}"
    public = await agent_card_public(store, agent)
    if not public:
        try:
            await authenticate(store, request.headers.get("authorization"))
        except Unauthenticated as error:
            return _refusal(401, -32600, str(error), {"www-authenticate": "Bearer"})
    if not await _serves(store, agent):
        return _refusal(404, -32001, f"no agent {agent[:80]!r} here")
    info = await principal_info(store, agent)
    base = str(request.url).removesuffix("/.well-known/agent-card.json")
    shown = agent_card(agent, base, info.capabilities if info else [])
    body = json.dumps(agent_card_to_dict(shown), separators=(",", ":")).encode()
    tag = '"' + hashlib.sha256(body).hexdigest()[:32] + '"'
    headers = {
        "cache-control": f"{'public' if public else 'private'}, max-age={CARD_MAX_AGE}",
        "etag": tag,
        "vary": "Authorization",
    }
    if info is not None:
        headers["last-modified"] = format_datetime(parse_rfc3339(info.created_at), usegmt=True)
    wanted = _tags(request.headers.get("if-none-match"))
    if tag in wanted or "*" in wanted:
        return Response(status_code=304, headers=headers)
    return Response(body, media_type="application/json", headers=headers)


def _tags(header: str | None) -> set[str]:
    """The entity tags of an If-None-Match header (`*` matches any; a weak `W/` one matches
    its strong twin, as RFC 9110's weak comparison for GET says)."""
    if header is None:
        return set()
    return {t.strip().removeprefix("W/") for t in header.split(",")}


async def numbered(events: AsyncIterable[Any], cursors: deque[str]) -> AsyncIterator[Any]:
    """Each SSE event with its cursor as `id:` (an error event has none)."""
    async for event in events:
        if isinstance(event, ServerSentEvent):
            if event.event != "error" and cursors:
                event.id = cursors.popleft()
        elif isinstance(event, dict) and event.get("event") != "error" and cursors:
            event = {**event, "id": cursors.popleft()}
        yield event


async def _serves(store: Any, agent: str) -> bool:
    """Whether `agent` is a registered agent, not erased."""
    if len(agent) > 79 or not AGENT_ID.match(agent):
        return False
    try:
        registered, erased = await reads.agent_standing(store, agent)
    except ProtocolError:
        return False
    return registered and not erased


def _last_event_id(request: Request) -> int | None:
    last = request.headers.get("last-event-id")
    if last is None:
        return None
    last = last.strip()
    if not (last.isascii() and last.isdigit() and len(last) <= 18):
        raise InvalidInput(f"Last-Event-ID: {last[:80]!r} is not an event cursor")
    return int(last)


def _refusal(
    status: int, code: int, message: str, headers: dict[str, str] | None = None
) -> JSONResponse:
    """A refusal before any method runs, as a JSON-RPC error body (also what an HTTP+JSON
    client reads: the status says it)."""
    body = {"jsonrpc": "2.0", "id": None, "error": {"code": code, "message": message}}
    return JSONResponse(body, status_code=status, headers=headers)


class Served:
    """The ASGI app of every agent's server (what `mount.A2A` hands each request to)."""

    def __init__(self) -> None:
        self.router = router()

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        await self.router(scope, receive, send)
