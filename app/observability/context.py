"""What the server knows about the request being served, for its log line and its metrics.

The request middleware (`RequestLog`) opens a `Handled` for each HTTP
request and WebSocket connection; the schema extension (`observing`)
fills in the principal, the operation and the error code. Every log line written while it
is open carries its request id (`RequestIdFilter`).
"""

from __future__ import annotations

from contextvars import ContextVar
from dataclasses import dataclass


@dataclass
class Handled:
    request_id: str
    principal: str | None = None
    operation: str | None = None
    code: str | None = None
    document: str | None = None  # how the request's document came, when it named one by id


current: ContextVar[Handled | None] = ContextVar("prickle_request", default=None)


def request_id() -> str | None:
    handled = current.get()
    return handled.request_id if handled is not None else None
