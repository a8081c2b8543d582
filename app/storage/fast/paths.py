"""The store's transactions on the fast paths (`Store(fast=True)`): which way each block runs.

- PostgreSQL: on connections kept checked out between transactions (kept.py), statements on
  SQLAlchemy's asyncpg adapter, a write run `alone` without BEGIN and COMMIT (driver.py).
- A SQLite file: the writes ready together share one transaction and its commit (grouped.py)
  on one connection kept open; marked statements go straight to sqlite3 (loop.py).
- Every read of a `reading()` block shares one transaction (shared_read.py): on PostgreSQL;
  on SQLite only when the block asks for one snapshot.

While anything listens to the statements (traces, tests that count them) every statement
goes through SQLAlchemy, in an ordinary transaction. SQLite in memory runs as on the plain
path.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Callable
from contextlib import AbstractAsyncContextManager, asynccontextmanager, nullcontext

from sqlalchemy import Connection, Engine, exc
from sqlalchemy.ext.asyncio import AsyncConnection, AsyncEngine

from app.compat import sqlalchemy as compat
from app.settings import current
from app.storage.engine import pool_size
from app.storage.fast.driver import adapter_of, on_driver
from app.storage.fast.grouped import Grouped
from app.storage.fast.kept import Kept
from app.storage.fast.loop import OnLoop
from app.storage.repositories.base import TxConnection
from app.storage.shared_read import shared_of, sharing
from app.storage.tx import Tx


class FastPaths:
    def __init__(
        self,
        engine: AsyncEngine,
        blocking: Engine | None,
        write_lock: asyncio.Lock | None,
        tx: Callable[[TxConnection], Tx],
        most: int | None = None,
        settings: str | None = None,
        limit: int | None = None,
    ) -> None:
        """`most`: connections kept between transactions (by default the pool's size);
        `limit`: the most the pool opens, when it has no overflow (a connection budget);
        `settings`: behind a pooler, what each transaction sets first (every block then a
        transaction: a write never runs `alone`)."""
        self.engine = engine
        self.blocking = blocking  # a SQLite file's
        self.write_lock = write_lock
        self.sqlite = write_lock is not None  # (SQLite writes one at a time: the store's lock)
        self.tx = tx  # a Tx on a connection, as the store makes one
        self.grouped: Grouped | None = None
        if write_lock is not None and blocking is not None:
            self.grouped = Grouped(write_lock)
        self.writer: Connection | None = None  # SQLite file: the one connection that writes
        self.kept = Kept(engine, most or pool_size())  # PostgreSQL: connections between uses
        # PostgreSQL: queries' shared reads held at once, one fewer than the connections
        self.shared_reads: asyncio.Semaphore | None = None
        if not self.sqlite and blocking is None and limit is not None:
            self.shared_reads = asyncio.Semaphore(max(1, limit - 1))
        self.settings = settings

    def write(self, alone: bool, optimistic: bool = False) -> AbstractAsyncContextManager[Tx]:
        """`optimistic`: a command's (`Store.command`): on PostgreSQL begun at its first write
        that does not end it."""
        if self.write_lock is None:
            return self.transaction(write=True, alone=alone, optimistic=optimistic)
        if self.grouped is not None and not self._listened_to():
            return self._grouped_write(self.grouped)
        return self._locked_write(self.write_lock)

    @asynccontextmanager
    async def _grouped_write(self, grouped: Grouped) -> AsyncIterator[Tx]:
        """A SQLite file's write, in the transaction of the writes ready with it."""
        writer = self._sqlite_writer()
        async with grouped.transaction(writer) as driver:
            yield self.tx(OnLoop(writer, driver))

    @asynccontextmanager
    async def _locked_write(self, lock: asyncio.Lock) -> AsyncIterator[Tx]:
        async with lock, self.transaction(write=True) as tx:
            yield tx

    def _listened_to(self) -> bool:
        """A SQLite file whose statements are listened to (traces, tests that count them):
        its writes run one transaction each, all through SQLAlchemy."""
        return bool(self._sqlite_writer().dispatch.before_cursor_execute)

    def read(self, alone: bool = False) -> AbstractAsyncContextManager[Tx]:
        """A read transaction; inside `reading()`, the one it shares, unless `alone` (one
        statement: on PostgreSQL run without BEGIN and COMMIT)."""
        if alone:
            return self.transaction(write=False, alone=True)
        shared = shared_of(self)
        return shared.tx() if shared is not None else self._read()

    def reading(self, snapshot: bool = False) -> AbstractAsyncContextManager[None]:
        """A query's reads: on PostgreSQL one shared read transaction. On SQLite each read
        its own (sharing them cost a task page up to a third of its requests a second),
        unless the query asks for `snapshot`: a SQLite read transaction is one."""
        if self.sqlite and not snapshot:
            return nullcontext()
        return sharing(self, lambda: self.shared_read(snapshot))

    @asynccontextmanager
    async def shared_read(self, snapshot: bool = False) -> AsyncIterator[Tx]:
        """A query's shared read, once fewer than all but one of the pool's connections are
        held by other queries: a query may write while it holds its read (a token's minute of
        use), and that write then always finds a connection. Without the bound, queries
        holding every connection of a full pool would each wait for another for ever.
        `snapshot`: on PostgreSQL one snapshot (`transaction`), taken after the log's safe
        bound is proven anew, in a read of its own before (`Tx.snapshot`)."""
        if snapshot and not self.sqlite and self.blocking is None:
            async with self.transaction(write=False, alone=True) as tx:
                await tx.events.last_seq()
        if self.shared_reads is None:
            async with self.transaction(write=False, snapshot=snapshot) as tx:
                yield tx
            return
        try:  # as long as a wait for the pool may last, and answered the same
            await asyncio.wait_for(self.shared_reads.acquire(), current().db_pool_timeout)
        except TimeoutError:
            raise exc.TimeoutError(
                "every connection but one is held by a query's read; timed out waiting"
            ) from None
        try:
            async with self.transaction(write=False, snapshot=snapshot) as tx:
                yield tx
        finally:
            self.shared_reads.release()

    def _read(self) -> AbstractAsyncContextManager[Tx]:
        return self.transaction(write=False)

    @asynccontextmanager
    async def transaction(
        self, write: bool, alone: bool = False, optimistic: bool = False, snapshot: bool = False
    ) -> AsyncIterator[Tx]:
        """`snapshot`: a read; on PostgreSQL REPEATABLE READ READ ONLY, every statement seeing
        the one snapshot its first one took (as SQLite's read transaction does), which never
        fails to serialize (`Tx.snapshot`)."""
        if self.blocking is not None:
            if write:  # listened to (`write` groups the others): all by SQLAlchemy
                writer = self._sqlite_writer()
                with writer.begin():
                    yield self.tx(OnLoop(writer))
                return
            with self.blocking.connect() as blocking, blocking.begin():  # `alone` or not
                yield self.tx(OnLoop(blocking))
            return
        if self.sqlite:  # in memory: through the async engine
            async with self.engine.connect() as conn:
                if write:
                    conn = await conn.execution_options(sqlite_write=True)
                async with conn.begin():
                    yield self.tx(conn)
            return
        async with self.kept.connection() as conn:
            with compat.snapshot(adapter_of(conn)) if snapshot else nullcontext():
                if _listened(conn):
                    async with conn.begin():  # listened to: every statement through SQLAlchemy
                        yield _snapshot(self.tx(conn), snapshot)
                    return
                transactional = not (alone or optimistic) or self.settings is not None
                at_write = optimistic and not transactional
                async with on_driver(conn, transactional, self.settings, at_write) as driven:
                    yield _snapshot(self.tx(driven), snapshot)

    def _sqlite_writer(self) -> Connection:
        """The connection the store's SQLite writes use, kept open between them: no pool
        checkout, reset and return around each transaction."""
        assert self.blocking is not None
        if self.writer is None or self.writer.closed:
            self.writer = self.blocking.connect().execution_options(sqlite_write=True)
        return self.writer

    async def close(self) -> None:
        if self.writer is not None:
            self.writer.close()
            self.writer = None
        await self.kept.close()


def _snapshot(tx: Tx, snapshot: bool) -> Tx:
    """`tx`, marked a snapshot's before its first statement: every event at or below the
    safe bound proven so far had committed before its snapshot was taken."""
    if snapshot:
        tx.snapshot = tx.safe_bound.highest
    return tx


def _listened(conn: AsyncConnection) -> bool:
    """Whether anything listens to the connection's statements (traces, tests)."""
    return conn.sync_connection is not None and bool(
        conn.sync_connection.dispatch.before_cursor_execute
    )
