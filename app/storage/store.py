"""The storage interface: a unit of work per command, reads and writes behind one class.

`Store.write()` yields a `Tx` (app/storage/tx.py) in one transaction that commits only when
the block ends without error; listeners learn the new last event seq only after the commit.
`Store.read()` yields one in a read transaction of its own.

Each transaction runs on SQLAlchemy's public API: a connection from its pool, BEGIN, the
statements, COMMIT; on SQLite, on the blocking engine of app/storage/engine.py, one write at
a time. With the fast paths on (`PRICKLE_FAST_PATHS`, the default) and SQLAlchemy having
what they use (app/compat/sqlalchemy.py), the same blocks run on them instead
(app/storage/fast/paths.py), with the same answers.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Callable
from contextlib import AbstractAsyncContextManager, asynccontextmanager, nullcontext

from sqlalchemy import Engine

from app import tuning
from app.compat import sqlalchemy as compat
from app.storage.engine import (
    Blocking,
    create_engine,
    create_sqlite_engine,
    database_url,
    is_sqlite,
    is_sqlite_file,
)
from app.storage.fast.paths import FastPaths
from app.storage.repositories.base import Horizon, TxConnection
from app.storage.tx import Tx


class Store:
    def __init__(self, url: str | None = None, fast: bool | None = None) -> None:
        """`fast`: whether to take the fast paths; by default as `PRICKLE_FAST_PATHS` says.
        They are taken only where SQLAlchemy has what they use (`compat.usable()`)."""
        self.url = database_url(url)
        self.sqlite = is_sqlite(self.url)
        self.engine = create_engine(self.url)
        self._blocking = create_sqlite_engine(self.url) if is_sqlite_file(self.url) else None
        self._write_lock = asyncio.Lock() if self.sqlite else None  # SQLite: one write at a time
        self.horizon = Horizon()  # the event log's safe bound, as far as proven (PostgreSQL)
        self.commit_listeners: list[Callable[[int], None]] = []
        # PostgreSQL: whether a writing transaction tells the other processes of its seqs
        # itself (pg_notify, at its commit); a hub announcing for it turns this off
        # (app/events/announcer.py)
        self.announces = True
        self.member_listeners: list[Callable[[], None]] = []  # told after a membership change
        self.fast: FastPaths | None = None
        if _fast(fast):
            self.fast = FastPaths(self.engine, self._blocking, self._write_lock, self._tx)

    @asynccontextmanager
    async def write(self, alone: bool = False) -> AsyncIterator[Tx]:
        """A write transaction. `alone`: the block's only write is its last statement, which
        checks what the block read (a move guarded by the task's version); on the fast paths
        on PostgreSQL the block then runs without BEGIN and COMMIT, each statement committing
        by itself, saving two round trips. Elsewhere it is an ordinary transaction."""
        transaction = self.fast.write(alone) if self.fast else self._transaction(write=True)
        async with transaction as tx:
            yield tx
        if tx.last_seq:
            for listener in self.commit_listeners:
                listener(tx.last_seq)
        if tx.members_changed:
            for told in self.member_listeners:
                told()

    def read(self) -> AbstractAsyncContextManager[Tx]:
        """A read transaction; on the fast paths, inside `reading()`, the one it shares."""
        return self.fast.read() if self.fast else self._transaction(write=False)

    def reading(self) -> AbstractAsyncContextManager[None]:
        """A query's reads. On the fast paths every `read()` inside (in this task and the
        tasks it starts) shares one read transaction on one connection, opened on first use,
        its statements one at a time: a query costs one connection checkout and one
        BEGIN/COMMIT, however many lookups its fields make. Writes inside still take their
        own transactions."""
        return self.fast.reading() if self.fast else nullcontext()

    @property
    def statements_engine(self) -> Engine:
        """The engine whose events see every statement of the store's transactions."""
        return self._blocking or self.engine.sync_engine

    @asynccontextmanager
    async def _transaction(self, write: bool) -> AsyncIterator[Tx]:
        """One transaction on a connection from SQLAlchemy's pool; on SQLite a write holds
        the store's write lock throughout."""
        async with self._write_lock if write and self._write_lock else nullcontext():
            if self._blocking is not None:
                with self._blocking.connect() as conn:
                    if write:
                        conn.execution_options(sqlite_write=True)  # BEGIN IMMEDIATE
                    with conn.begin():
                        yield self._tx(Blocking(conn))
                return
            async with self.engine.connect() as conn:
                if write and self.sqlite:
                    conn = await conn.execution_options(sqlite_write=True)
                async with conn.begin():
                    yield self._tx(conn)

    def _tx(self, conn: TxConnection) -> Tx:
        return Tx(conn, self.sqlite, self.horizon, self.announces)

    async def close(self) -> None:
        if self.fast is not None:
            await self.fast.close()
        if self._blocking is not None:
            self._blocking.dispose()
        await self.engine.dispose()


def _fast(asked: bool | None) -> bool:
    """Whether the store takes the fast paths: asked for (by default, the switch is on) and
    SQLAlchemy has what they use."""
    on = tuning.FAST_PATHS.value() if asked is None else asked
    return on and compat.usable()
