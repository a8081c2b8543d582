"""PostgreSQL: the hub's LISTEN connection, on a connection of its own.

Each channel's notifications go to its callback. The connection is watched: when it closes,
or fails to answer a periodic SELECT 1 (a connection cut without a FIN would otherwise look
alive forever), it is reopened with a short capped backoff with jitter (at most
`RETRY_SECONDS[1]` between attempts, so it is back within a second of the database; the
store's probe seeing the database back re-arms it at once: `retry_now`), and `reopened` is
told, since notifications sent meanwhile were not heard. Its loss is logged once, at INFO
(the outage's WARNING is the store's): the first failed attempt's error and the real next
delay, then its return, with how long it was away.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import random
import time
from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING

from app.wakeups import woken

if TYPE_CHECKING:
    import asyncpg

log = logging.getLogger(__name__)

CHECK_SECONDS = 5.0  # how often an idle LISTEN connection is asked SELECT 1
CONNECT_SECONDS = 5.0  # how long one attempt to open it may take
APPLICATION_NAME = "prickle-listen"
RETRY_SECONDS = (0.05, 0.5)  # reconnect delay: first, and the most it backs off to

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
        self._retry = asyncio.Event()  # set: try to reconnect now (the database is back)
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
        named = {"application_name": APPLICATION_NAME}  # as pg_stat_activity shows it
        connection = await asyncpg.connect(self.dsn, timeout=CONNECT_SECONDS, server_settings=named)
        connection.add_termination_listener(lambda *_: self._closed())
        for channel, heard in self.channels.items():
            await connection.add_listener(channel, heard)
        self.opened()
        self.connection = connection

    def retry_now(self) -> None:
        """The database is back after an outage: a reconnection waiting out its delay tries
        at once, and a connection that looks open is asked SELECT 1 at once (one cut
        without a FIN is then noticed without waiting for its next periodic check)."""
        self._retry.set()

    def _closed(self) -> None:
        self._lost.set()
        self._retry.set()

    async def _keep_listening(self) -> None:
        """When the connection drops, reconnect with capped backoff."""
        while True:
            await self._until_lost()
            lost = time.monotonic()
            with contextlib.suppress(Exception):
                if self.connection is not None:
                    self.connection.terminate()
            attempts = await self._reconnect()
            log.info(
                "the LISTEN connection was lost and is back after %.2fs (%d attempts)",
                time.monotonic() - lost,
                attempts,
            )
            self.reopened()

    async def _reconnect(self) -> int:
        """Reopen the connection; how many attempts it took."""
        step, most = RETRY_SECONDS
        attempts = 0
        while True:
            attempts += 1
            try:
                await self._open()
                return attempts
            except Exception as error:
                delay = random.uniform(step / 2, step)  # jitter: processes spread out
                if attempts == 1:  # (the outage itself is logged once, by the store's health)
                    log.info(
                        "the LISTEN connection was lost and reopening it failed (%s: %s); "
                        "retrying every %.2fs at most, polling the log meanwhile; "
                        "next try in %.2fs",
                        type(error).__name__,
                        error,
                        most,
                        delay,
                    )
                else:
                    log.debug("reopening LISTEN failed (%s); next try in %.2fs", error, delay)
                step = min(step * 2, most)
            self._retry.clear()
            await woken(self._retry, delay)

    async def _until_lost(self) -> None:
        """Return once the connection has closed, or fails to answer a periodic SELECT 1."""
        while not self._lost.is_set():
            self._retry.clear()
            await woken(self._retry, CHECK_SECONDS)
            if self._lost.is_set() or self.connection is None:
                return
            try:
                await asyncio.wait_for(self.connection.fetchval("SELECT 1"), CHECK_SECONDS)
            except asyncio.CancelledError:
                raise
            except Exception:
                return
