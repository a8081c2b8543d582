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
(the service's `Holders`); the moment this process hears that the token was revoked, or when
the token expires, the connection is closed with 4403 (both subprotocols). Each operation
a connection sends proves its token again first: one sent after the token's revocation
returned is not run, and the connection is closed with 4403 then.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Awaitable
from typing import Any

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
from app.domain.errors import Unauthenticated, Unavailable
from app.service.auth import Credential, credential_for
from app.service.database import Store
from app.service.holders import holders_of

REVOKED = 4403  # graphql-transport-ws's Forbidden: the token is no longer good
GOING_AWAY = 1001  # the server is draining: resume from the last cursor on another server
TRY_AGAIN_LATER = 1013  # the database is unavailable: connect again after a moment
UNAVAILABLE_REASON = "the database is unavailable; connect again"


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
            holders_of(self.context.store).add(self, credential)

    def unregister(self) -> None:
        if self._registered is not None:
            holders_of(self.context.store).discard(self, self._registered.token_id)

    async def token_holds(self) -> bool:
        """Whether the connection's token is still good, proved now, before an operation
        runs; if not, the connection is closed with 4403. (Before `connection_ack` there
        is nothing to prove: Strawberry refuses the operation itself.) When the database
        cannot say, the operation runs and meets the outage itself."""
        if self._registered is None:
            return True
        try:
            await credential_for(self.context.store, self.context.authorization())
        except Unauthenticated as error:
            await self.close_revoked(str(error))
            return False
        except Unavailable:
            return True
        return True

    async def close_revoked(self, reason: str, draining: bool = False) -> None:
        self._revoked = True
        with contextlib.suppress(Exception):  # it may be closing already
            await self.websocket.close(code=GOING_AWAY if draining else REVOKED, reason=reason)


async def close_every_connection(store: Store, reason: str) -> None:
    """Close each acknowledged connection, and each stream over SSE or A2A, on the store's
    database: 1001 (draining) for a connection; a stream just ends."""
    await holders_of(store).close_all(reason)


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
    (`Documents`), or the refusal to send instead of running it."""
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
        if not await self.token_holds():
            return
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
        if not await self.token_holds():
            return
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
