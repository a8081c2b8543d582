"""GraphQL over WebSockets: authentication at connection_init, pings, the subscription cap.

Both subprotocols take the bearer token in the `connection_init` payload
(`{"Authorization": "Bearer <token>"}`). Without a valid one the connection is refused
before anything runs: graphql-transport-ws closes with 4403 Forbidden, legacy graphql-ws
answers `connection_error` and closes. A subscribe sent before `connection_ack` closes
with 4401 Unauthorized (Strawberry's own check).

On graphql-transport-ws the server sends `ping` once a connection has been silent for the
keep-alive interval (legacy graphql-ws gets Strawberry's `ka` messages). A connection
holding the most operations it may gets an `error` with code `rate_limited` for the next
one, and stays open: completing an operation frees its place.

Each acknowledged connection is registered by the id of the token that opened it
(`Connections`); the moment this process hears that the token was revoked, or when the
token expires, the connection is closed with 4403 (both subprotocols).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Awaitable, Coroutine
from typing import Any, Protocol

from graphql import GraphQLFormattedError
from starlette.websockets import WebSocketDisconnected as ClosedWebSocket
from strawberry.exceptions import ConnectionRejectionError
from strawberry.http.exceptions import WebSocketDisconnected
from strawberry.subscriptions.protocols.graphql_transport_ws.handlers import (
    BaseGraphQLTransportWSHandler,
)
from strawberry.subscriptions.protocols.graphql_transport_ws.types import (
    ErrorMessage as TransportErrorMessage,
)
from strawberry.subscriptions.protocols.graphql_ws.handlers import BaseGraphQLWSHandler
from strawberry.subscriptions.protocols.graphql_ws.types import ErrorMessage as LegacyErrorMessage

from app.api import errors, persisted
from app.api.context import Context
from app.domain.clock import now
from app.domain.errors import Unauthenticated, Unavailable
from app.service.auth import Credential, Revoked, credentials_of, revoked_among
from app.service.database import Store, fault

log = logging.getLogger(__name__)

REVOKED = 4403  # graphql-transport-ws's Forbidden: the token is no longer good
GOING_AWAY = 1001  # the server is draining: resume from the last cursor on another server
TRY_AGAIN_LATER = 1013  # the database is unavailable: connect again after a moment
UNAVAILABLE_REASON = "the database is unavailable; connect again"


class Revocable(Protocol):
    async def close_revoked(self, reason: str, code: int = ...) -> None: ...


class Connections:
    """This process's open WebSocket connections on one database, by the id of the token
    that opened each. It listens to the revocations the process hears of (app/service/auth.py)
    and closes the connections of a revoked token at once, and of an expired one on time."""

    def __init__(self, store: Store) -> None:
        self.store = store
        self.by_token: dict[str, set[Revocable]] = {}
        self._expiries: dict[Revocable, asyncio.TimerHandle] = {}
        self._closing: set[asyncio.Task[None]] = set()
        credentials_of(store).listeners.append(self.revoked)

    def add(self, connection: Revocable, credential: Credential) -> None:
        self.by_token.setdefault(credential.token_id, set()).add(connection)
        if credential.expires_at is not None:
            delay = (credential.expires_at - now()).total_seconds()
            self._expiries[connection] = asyncio.get_running_loop().call_later(
                max(delay, 0.0), self._close, connection, "the token expired"
            )
        if not credentials_of(self.store).unchanged_since(credential):
            self._spawn(self._recheck([credential.token_id]))  # revoked while it connected?

    def discard(self, connection: Revocable, token_id: str) -> None:
        held = self.by_token.get(token_id)
        if held is not None:
            held.discard(connection)
            if not held:
                del self.by_token[token_id]
        timer = self._expiries.pop(connection, None)
        if timer is not None:
            timer.cancel()

    def revoked(self, token_ids: Revoked) -> None:
        if token_ids is None:  # which is unknown: ask the database about the open ones
            if self.by_token:
                self._spawn(self._recheck(list(self.by_token)))
            return
        for token_id in token_ids & self.by_token.keys():
            for connection in self.by_token.pop(token_id):
                self._close(connection, "the token was revoked")

    async def _recheck(self, token_ids: list[str]) -> None:
        try:
            gone = await revoked_among(self.store, token_ids)
        except Exception as error:  # the database may be away; the next announcement retries
            if fault(error) is None:  # (an outage is logged once, by the store)
                log.exception("re-checking the tokens of open connections failed")
            return
        self.revoked(frozenset(gone))

    def _close(self, connection: Revocable, reason: str) -> None:
        timer = self._expiries.pop(connection, None)
        if timer is not None:
            timer.cancel()
        self._spawn(connection.close_revoked(reason))

    def _spawn(self, work: Coroutine[Any, Any, None]) -> None:
        task = asyncio.get_running_loop().create_task(work)
        self._closing.add(task)
        task.add_done_callback(self._closing.discard)


_connections: dict[str, Connections] = {}


def connections_of(store: Store) -> Connections:
    """The process's registry of open connections on the store's database."""
    found = _connections.get(store.url)
    if found is None:
        found = _connections[store.url] = Connections(store)
    return found


class RevocableConnection:
    """What both handlers share: registration by token, and closing when it is revoked."""

    context: Context
    websocket: Any
    _registered: Credential | None = None
    _revoked = False

    async def initialised(self, init: Awaitable[None]) -> None:
        """The connection_init handled; when the database cannot say whether its token is
        valid, the connection is closed with 1013 (try again later), not refused as
        unauthenticated."""
        try:
            await init
        except Unavailable:
            with contextlib.suppress(Exception):
                await self.websocket.close(code=TRY_AGAIN_LATER, reason=UNAVAILABLE_REASON)

    def register(self) -> None:
        credential = self.context.credential
        if credential is not None and self._registered is None:
            self._registered = credential
            connections_of(self.context.store).add(self, credential)

    def unregister(self) -> None:
        if self._registered is not None:
            connections_of(self.context.store).discard(self, self._registered.token_id)

    async def close_revoked(self, reason: str, code: int = REVOKED) -> None:
        self._revoked = True
        with contextlib.suppress(Exception):  # it may be closing already
            await self.websocket.close(code=code, reason=reason)


async def close_every_connection(store: Store, reason: str) -> None:
    """Close each acknowledged connection on the store's database with 1001 (draining)."""
    held = connections_of(store).by_token.values()
    everyone = [connection for connections in held for connection in connections]
    await asyncio.gather(*(c.close_revoked(reason, GOING_AWAY) for c in everyone))


async def authenticate_connection(context: Context) -> None:
    """Refuse the connection unless its connection_init payload carries a valid token."""
    try:
        await context.viewer()
    except Unauthenticated as error:
        raise ConnectionRejectionError(dict(errors.as_graphql(error))) from None


def limit_error(limit: int) -> GraphQLFormattedError:
    return errors.as_graphql(
        errors.RateLimited(
            f"at most {limit} subscriptions per connection: complete one first, "
            "or open another connection"
        )
    )


def persisted_refusal(view: Any, payload: Any) -> GraphQLFormattedError | None:
    """A subscribe message's document taken from its persisted id, in place
    (app/api/persisted.py), or the refusal to send instead of running it."""
    documents: persisted.Documents | None = getattr(view, "documents", None)
    if documents is None or not isinstance(payload, dict):
        return None
    extensions = payload.get("extensions")
    document_id = persisted.ids_of(payload)
    named = isinstance(extensions, dict) and "persistedQuery" in extensions
    if not (documents.only or named or document_id is not None):
        return None
    try:
        payload["query"] = documents.resolve(payload.get("query"), extensions, document_id)
    except persisted.Refusal as refusal:
        return errors.as_graphql(refusal)
    return None


class TransportWSHandler(RevocableConnection, BaseGraphQLTransportWSHandler[Context, None]):
    """graphql-transport-ws with pings on idle connections, a clear limit error, and a
    close (4403) when the connection's token is revoked."""

    _pinger: asyncio.Task[None] | None = None
    _last_sent = 0.0

    async def handle_connection_init(self, message: Any) -> None:
        await self.initialised(super().handle_connection_init(message))
        if self.connection_acknowledged and self._pinger is None:
            self.register()
            self._pinger = asyncio.create_task(self._ping_when_idle())

    async def handle_subscribe(self, message: Any) -> None:
        limit = self.max_subscriptions_per_connection
        if (
            self.connection_acknowledged
            and limit is not None
            and message["id"] not in self.operations
            and len(self.operations) >= limit
        ):
            error: TransportErrorMessage = {
                "id": message["id"],
                "type": "error",
                "payload": [limit_error(limit)],
            }
            await self.send_message(error)
            return
        if self.connection_acknowledged and (
            refused := persisted_refusal(self.view, message.get("payload"))
        ):
            await self.send_message({"id": message["id"], "type": "error", "payload": [refused]})
            return
        await super().handle_subscribe(message)

    async def send_message(self, message: Any) -> None:
        self._last_sent = asyncio.get_running_loop().time()
        await super().send_message(message)

    async def handle_task_exception(self, error: Exception) -> None:
        """An operation that answers after its client closed the connection has nobody to
        tell: not a fault to log with a traceback."""
        if isinstance(error, ClosedWebSocket | WebSocketDisconnected) or self._revoked:
            return
        await super().handle_task_exception(error)

    async def shutdown(self) -> None:
        self.unregister()
        if self._pinger is not None:
            self._pinger.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._pinger
        await super().shutdown()

    async def _ping_when_idle(self) -> None:
        interval = float(self.view.keep_alive_interval or 15)
        loop = asyncio.get_running_loop()
        try:
            while True:
                idle = loop.time() - self._last_sent
                if idle >= interval:
                    await self.send_message({"type": "ping"})
                    idle = 0.0
                await asyncio.sleep(interval - idle)
        except (WebSocketDisconnected, RuntimeError):
            return  # the connection is closing; the handler's own loop ends it


class LegacyWSHandler(RevocableConnection, BaseGraphQLWSHandler[Context, None]):
    """graphql-ws with the same limit error as graphql-transport-ws, closed (4403) when the
    connection's token is revoked."""

    async def handle_connection_init(self, message: Any) -> None:
        await self.initialised(super().handle_connection_init(message))
        if self.connection_acknowledged:
            self.register()

    async def cleanup(self) -> None:
        self.unregister()
        await super().cleanup()

    async def handle_async_results(self, *args: Any, **kwargs: Any) -> None:
        """A client that went away mid-stream is not a fault: nothing to tell, nothing to log."""
        with contextlib.suppress(ClosedWebSocket, WebSocketDisconnected):
            await super().handle_async_results(*args, **kwargs)

    async def handle_start(self, message: Any) -> None:
        limit = self.max_subscriptions_per_connection
        if (
            self.connection_acknowledged
            and limit is not None
            and message["id"] not in self.tasks
            and len(self.tasks) >= limit
        ):
            error: LegacyErrorMessage = {
                "type": "error",
                "id": message["id"],
                "payload": limit_error(limit),
            }
            await self.send_message(error)
            return
        if self.connection_acknowledged and (
            refused := persisted_refusal(self.view, message.get("payload"))
        ):
            await self.send_message({"type": "error", "id": message["id"], "payload": refused})
            return
        await super().handle_start(message)
