"""What the app mounts at `/a2a`: every agent's A2A server, built on its first request.

Importing this module loads nothing of the A2A SDK: `prickle serve` starts as fast as
before, and a server nobody speaks A2A to never imports it.
"""

from __future__ import annotations

import asyncio
from typing import Any

from starlette.types import Receive, Scope, Send

from app.domain.events import Event
from app.domain.principals import Principal
from app.domain.task import Task


class A2A:
    """The ASGI app under `/a2a`: app.a2a.inbound.server's, made once, when first asked."""

    def __init__(self) -> None:
        self._served: Any = None
        self._lock = asyncio.Lock()

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if self._served is None:
            async with self._lock:
                if self._served is None:
                    from app.a2a.inbound import server

                    self._served = server.Served()
        await self._served(scope, receive, send)


def push_body(event: Event, task: Task, timestamp: str, owner: Principal) -> bytes:
    """An A2A push notification's body (`push.body`), the SDK imported on the
    first one: what webhook delivery sends to an A2A push notification config."""
    from app.a2a.inbound import push

    return push.body(event, task, timestamp, owner)
