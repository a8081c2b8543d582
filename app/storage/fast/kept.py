"""PostgreSQL: pooled connections kept checked out between the store's transactions.

Through SQLAlchemy's pool every transaction checks a connection out and back in: two hops
into a greenlet, the pool's bookkeeping and its events, about 200 µs of Python on this
machine, where the transaction's own statements cost the database a few hundred. The store
keeps the connections its finished transactions leave (up to the pool's size), newest
first, and hands them to the next ones.

A kept connection is handed on only if its block ended cleanly with no transaction open
and nobody waits for the pool; any other goes back to the pool, which resets or replaces
it. One idle for a second or more is asked `SELECT 1`-like first (the adapter's own ping),
as the pool's checkout does (`create_engine`): a database restart then costs no request.
"""

from __future__ import annotations

import time
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager, suppress

from sqlalchemy.ext.asyncio import AsyncConnection, AsyncEngine

from app.compat import sqlalchemy as compat
from app.storage.engine import IDLE_PING_SECONDS
from app.storage.fast.driver import adapter_of


class Kept:
    def __init__(self, engine: AsyncEngine, most: int) -> None:
        self.engine = engine
        self.most = most
        self._idle: list[tuple[AsyncConnection, float]] = []  # newest last
        self._waiting = 0  # transactions waiting for the pool to give a connection

    @asynccontextmanager
    async def connection(self) -> AsyncIterator[AsyncConnection]:
        conn = await self._take()
        clean = False
        try:
            yield conn
            clean = True
        finally:
            # while others wait for the pool, a connection goes back to it: kept here, it
            # would sit idle while they wait (a pool without overflow has no other)
            if clean and not self._waiting and len(self._idle) < self.most and _reusable(conn):
                self._idle.append((conn, time.monotonic()))
            else:
                await conn.close()

    async def _take(self) -> AsyncConnection:
        while self._idle:
            conn, since = self._idle.pop()
            if time.monotonic() - since < IDLE_PING_SECONDS:
                return conn
            try:
                await compat.ping(adapter_of(conn))
            except Exception as error:  # gone: the pool forgets it
                with suppress(Exception):
                    await conn.invalidate(error)
                with suppress(Exception):
                    await conn.close()
                continue
            return conn
        self._waiting += 1
        try:
            return await self.engine.connect()
        finally:
            self._waiting -= 1

    async def close(self) -> None:
        idle, self._idle = self._idle, []
        for conn, _ in idle:
            with suppress(Exception):
                await conn.close()


def _reusable(conn: AsyncConnection) -> bool:
    if conn.closed or conn.invalidated or conn.in_transaction():
        return False
    adapter = adapter_of(conn)
    return not compat.in_transaction(adapter) and not adapter.driver_connection.is_closed()
