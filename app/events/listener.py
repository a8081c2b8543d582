"""PostgreSQL: the hub's LISTEN connection, on a connection of its own.

Each channel's notifications go to its callback. The connection is watched: when it closes,
or fails to answer a periodic SELECT 1 (a connection cut without a FIN would otherwise look
alive forever), it is reopened with backoff, and `reopened` is told, since notifications
sent meanwhile were not heard.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING

from app.waiting import woken

if TYPE_CHECKING:
    import asyncpg

log = logging.getLogger(__name__)

CHECK_SECONDS = 5.0  # how often an idle LISTEN connection is asked SELECT 1
RETRY_SECONDS = (0.5, 10.0)  # reconnect delay: first, and the most it backs off to

Heard = Callable[[object, int, str, object], None]  # (connection, pid, channel, payload)


class Listener:
    def __init__(
        self,
        dsn: str,
        channels: Mapping[str, Heard],
        opened: Callable[[], None],
        reopened: Callable[[], None],
    ) -> None:
        """`opened` is told after each opening, the first included; `reopened` after each
        reconnection."""
        self.dsn = dsn
        self.channels = channels
        self.opened = opened
        self.reopened = reopened
        self.connection: asyncpg.Connection[asyncpg.Record] | None = None
        self._lost = asyncio.Event()
        self._task: asyncio.Task[None] | None = None

    async def start(self) -> None:
        await self._open()
        self._task = asyncio.create_task(self._keep_listening(), name="prickle-listen")

    async def stop(self) -> None:
        if self._task is not None:
            self._task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._task
        if self.connection is not None:
            with contextlib.suppress(Exception):
                await self.connection.close()

    async def _open(self) -> None:
        import asyncpg

        self._lost.clear()
        connection = await asyncpg.connect(self.dsn, timeout=10)
        connection.add_termination_listener(lambda *_: self._lost.set())
        for channel, heard in self.channels.items():
            await connection.add_listener(channel, heard)
        self.opened()
        self.connection = connection

    async def _keep_listening(self) -> None:
        """When the connection drops, reconnect with backoff."""
        while True:
            await self._until_lost()
            log.warning("the LISTEN connection was lost; reconnecting (polling meanwhile)")
            with contextlib.suppress(Exception):
                if self.connection is not None:
                    self.connection.terminate()
            delay, most = RETRY_SECONDS
            while True:
                await asyncio.sleep(delay)
                try:
                    await self._open()
                    break
                except Exception as error:
                    log.warning("LISTEN reconnection failed (%s); retrying in %.1fs", error, delay)
                    delay = min(delay * 2, most)
            log.warning("the LISTEN connection is back")
            self.reopened()

    async def _until_lost(self) -> None:
        """Return once the connection has closed, or fails to answer a periodic SELECT 1."""
        while not self._lost.is_set():
            if await woken(self._lost, CHECK_SECONDS):
                return
            if self.connection is None:
                return
            try:
                await asyncio.wait_for(self.connection.fetchval("SELECT 1"), CHECK_SECONDS)
            except asyncio.CancelledError:
                raise
            except Exception:
                return
