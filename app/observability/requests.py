"""The request middleware: a request id for every HTTP request and WebSocket connection,
echoed in the `X-Request-ID` response header, and (with `--access-log`) one log line when it
ends: method, path, status or close code, duration, principal, operation, error code.

The id is the client's `X-Request-ID` when it is a plain token of at most 128 characters
(letters, digits, `-_.:`), else a new one. The line never holds a header's or body's text
beyond that: not the query, not its variables, not the credential.
"""

from __future__ import annotations

import logging
import re
import time
import uuid

from starlette.datastructures import MutableHeaders
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from app.observability import metrics
from app.observability.context import Handled, current

log = logging.getLogger("app.requests")

HEADER = "x-request-id"
_GIVEN = re.compile(r"[A-Za-z0-9._:-]{1,128}")


def request_id_of(scope: Scope) -> str:
    """The client's X-Request-ID when it is well formed, else a new id."""
    for name, value in scope.get("headers", ()):
        if name == HEADER.encode():
            given: str = value.decode("latin-1")
            if _GIVEN.fullmatch(given):
                return given
    return uuid.uuid4().hex


class RequestLog:
    """ASGI middleware around the whole app (see the module docstring)."""

    def __init__(self, app: ASGIApp, access_log: bool = False) -> None:
        self.app = app
        self.access_log = access_log

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] not in ("http", "websocket"):
            await self.app(scope, receive, send)
            return
        handled = Handled(request_id_of(scope))
        reset = current.set(handled)
        exchange = _Exchange(scope, handled.request_id, receive, send)
        began = time.perf_counter()
        try:
            await self.app(scope, exchange.receive, exchange.send)
        finally:
            if exchange.accepted:
                metrics.connection_closed()
            if self.access_log:
                _log_line(scope, handled, exchange, time.perf_counter() - began)
            current.reset(reset)


class _Exchange:
    """The request's receive and send, noting the status (or the close code) on the way and
    adding the request id header."""

    def __init__(self, scope: Scope, request_id: str, receive: Receive, send: Send) -> None:
        self.header = (HEADER.encode(), request_id.encode())
        self._receive, self._send = receive, send
        self.status: int | None = None
        self.accepted = False

    async def receive(self) -> Message:
        message = await self._receive()
        if message["type"] == "websocket.disconnect":
            self.status = self.status or int(message.get("code", 1000))
        return message

    async def send(self, message: Message) -> None:
        kind = message["type"]
        if kind == "http.response.start":
            MutableHeaders(scope=message).append(*(h.decode() for h in self.header))
            self.status = int(message["status"])
        elif kind == "websocket.accept":
            message = {**message, "headers": [*message.get("headers", ()), self.header]}
            self.accepted = True
            metrics.connection_opened()
        elif kind == "websocket.close":
            self.status = self.status or int(message.get("code", 1000))
        await self._send(message)


def _log_line(scope: Scope, handled: Handled, exchange: _Exchange, seconds: float) -> None:
    websocket = scope["type"] == "websocket"
    log.info(
        "websocket closed" if websocket else "request",
        extra={
            "method": "WEBSOCKET" if websocket else scope.get("method"),
            "path": scope.get("path"),
            "close_code" if websocket else "status": exchange.status,
            "duration_ms": round(seconds * 1000, 3),
            "principal": handled.principal,
            "operation": handled.operation,
            "code": handled.code,
            **({"document": handled.document} if handled.document else {}),
        },
    )
