"""Draining on SIGTERM, for a restart that loses nobody.

`/readyz` also answers 503 while the database does not answer (within a second of its
going, and of its return: the store's probe).

The first SIGTERM marks the process as draining (`/readyz` answers 503 from that moment;
`/healthz` stays the liveness check), lets the hub hand out what is already committed (at
most `SETTLE_SECONDS`), and closes every WebSocket connection with 1001 (going away) after
its last event: its subscriber resumes from its cursor on another server, with no gap and
no duplicate. Then uvicorn's own handling runs: it stops accepting, finishes the requests
in flight (at most `--graceful-timeout` seconds) and the process exits. A WebSocket that
opens while the process drains is closed with 1001 at once.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import signal
import threading
import time
from collections.abc import Callable
from types import FrameType
from typing import Any

from starlette.requests import Request
from starlette.responses import JSONResponse
from starlette.routing import Route
from starlette.types import ASGIApp, Receive, Scope, Send

log = logging.getLogger(__name__)

GOING_AWAY = 1001
SETTLE_SECONDS = 2.0


class Draining:
    """This process's draining state."""

    def __init__(self) -> None:
        self.since: float | None = None
        self._tasks: set[asyncio.Task[None]] = set()

    @property
    def active(self) -> bool:
        return self.since is not None

    def install(
        self, close_all: Callable[[], Any], settled: Callable[[], bool]
    ) -> Callable[[], None]:
        """Chain onto the SIGTERM handler the server (uvicorn) installed: drain first, then
        hand on. Nothing where there is none to chain to (the app served in a test, or
        outside the main thread). Returns what undoes it."""
        if threading.current_thread() is not threading.main_thread():
            return _nothing
        previous = signal.getsignal(signal.SIGTERM)
        if not callable(previous):
            return _nothing
        loop = asyncio.get_running_loop()

        def on_sigterm(sig: int, frame: FrameType | None) -> None:
            if self.active:
                previous(sig, frame)
                return
            self.since = time.monotonic()
            log.info("draining: closing WebSocket connections with 1001, then shutting down")

            async def drain() -> None:
                try:
                    await _until(settled, SETTLE_SECONDS)
                    await close_all()
                finally:
                    previous(sig, frame)

            loop.call_soon_threadsafe(self._spawn, drain)

        signal.signal(signal.SIGTERM, on_sigterm)

        def undo() -> None:
            if signal.getsignal(signal.SIGTERM) is on_sigterm:
                signal.signal(signal.SIGTERM, previous)

        return undo

    def _spawn(self, work: Callable[[], Any]) -> None:
        task = asyncio.get_running_loop().create_task(work())
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)


draining = Draining()


def _nothing() -> None:
    return None


async def _until(done: Callable[[], bool], seconds: float) -> None:
    deadline = time.monotonic() + seconds
    while not done() and time.monotonic() < deadline:
        await asyncio.sleep(0.02)


class RefuseWhileDraining:
    """ASGI middleware: a WebSocket that opens while the process drains is closed with 1001."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "websocket" and draining.active:
            with contextlib.suppress(Exception):
                await receive()  # websocket.connect
                await send({"type": "websocket.close", "code": GOING_AWAY})
            return
        await self.app(scope, receive, send)


async def readyz(request: Request) -> JSONResponse:
    """200 while the process takes work; 503 from the moment it starts draining, and while
    its database does not answer (`app.state.database_up`, its probe's last answer)."""
    if draining.active:
        return JSONResponse({"status": "draining"}, status_code=503)
    database_up = getattr(request.app.state, "database_up", None)
    if database_up is not None and not database_up():
        return JSONResponse({"status": "unavailable", "database": "down"}, status_code=503)
    return JSONResponse({"status": "ready"})


def routes() -> list[Route]:
    return [Route("/readyz", readyz)]
