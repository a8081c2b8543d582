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
"""

from __future__ import annotations

import asyncio
import contextlib
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

from app.api import errors
from app.api.context import Context
from app.api.delivery import running
from app.domain.errors import Unauthenticated


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


class TransportWSHandler(BaseGraphQLTransportWSHandler[Context, None]):
    """graphql-transport-ws with pings on idle connections and a clear limit error."""

    _pinger: asyncio.Task[None] | None = None
    _last_sent = 0.0

    async def handle_connection_init(self, message: Any) -> None:
        await super().handle_connection_init(message)
        if self.connection_acknowledged and self._pinger is None:
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
        await super().handle_subscribe(message)

    async def run_operation(self, operation: Any) -> None:
        running.set(operation)  # this is the operation's own task: see app/api/delivery.py
        await super().run_operation(operation)

    async def send_message(self, message: Any) -> None:
        self._last_sent = asyncio.get_running_loop().time()
        await super().send_message(message)

    async def handle_task_exception(self, error: Exception) -> None:
        """An operation that answers after its client closed the connection has nobody to
        tell: not a fault to log with a traceback."""
        if isinstance(error, ClosedWebSocket | WebSocketDisconnected):
            return
        await super().handle_task_exception(error)

    async def shutdown(self) -> None:
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


class LegacyWSHandler(BaseGraphQLWSHandler[Context, None]):
    """graphql-ws with the same limit error as graphql-transport-ws."""

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
        await super().handle_start(message)
