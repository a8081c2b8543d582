"""What app/main.py mounts: the middleware, the routes, and what runs beside the app."""

from __future__ import annotations

import asyncio
import contextlib
import os
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

from starlette.middleware import Middleware
from starlette.routing import Route

from app.api.ws import close_every_connection
from app.events.hub import Hub
from app.observability import drain, metrics, tracing
from app.observability.requests import RequestLog
from app.observability.settings import ACCESS_LOG
from app.service.database import Store


def middleware() -> list[Middleware]:
    """The request id and log line outermost, then the refusal of WebSockets while draining."""
    access_log = os.environ.get(ACCESS_LOG) == "1"
    return [
        *tracing.asgi_middleware(),
        Middleware(RequestLog, access_log=access_log),
        Middleware(drain.RefuseWhileDraining),
    ]


def routes() -> list[Route]:
    return [*metrics.routes(), *drain.routes()]


@asynccontextmanager
async def running(store: Store, hub: Hub) -> AsyncIterator[None]:
    """Beside the app while it serves: the hub lag figure, and draining on SIGTERM."""
    watcher = asyncio.create_task(metrics.watch_hub(hub), name="prickle-hub-lag")

    def settled() -> bool:
        return hub.head >= hub.committed and all(s.queue.empty() for s in hub.subscribers)

    async def close_all() -> None:
        await close_every_connection(store, "the server is restarting; resume from your cursor")

    undo_drain = drain.draining.install(close_all, settled)
    tracing.instrument_engine(store.statements_engine)
    try:
        yield
    finally:
        undo_drain()
        watcher.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await watcher
        metrics.process_ended()
        tracing.shutdown()
