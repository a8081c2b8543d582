"""A client that went away: a send to a WebSocket (or a stream) it had already closed.

Normal, not a fault: the API's error answer logs no traceback for it, the WebSocket handler
lets it go.
"""

from __future__ import annotations

from starlette.websockets import WebSocketDisconnect
from strawberry.http.exceptions import WebSocketDisconnected

GONE = (WebSocketDisconnect, WebSocketDisconnected)


def went_away(error: BaseException) -> bool:
    return isinstance(error, GONE) or isinstance(error.__cause__, GONE)
