"""SQLite: write transactions that come while one is open share its commit.

SQLite writes one transaction at a time, and its COMMIT costs more than most of what a move
writes: the WAL frames of every page the transaction changed (each page once, however many
of its rows changed), the locks around them, and now and then a checkpoint. Under load,
several writes are ready at the same moment. The first begins a transaction on the driver
(`BEGIN IMMEDIATE`, without SQLAlchemy's transaction machinery around it); the writes that
take the store's write lock before the event loop's next turn run in the same transaction,
each inside a savepoint of its own. The transaction then commits once for all of them.

- A write whose block raises is rolled back to its savepoint and gets its error at once;
  the others are kept. The first write's own error rolls back the transaction (nothing
  has joined it yet: it held the lock throughout).
- No write returns before the commit (`Store.write` tells its listeners after it), so what
  a caller is told was written is durable. If the COMMIT fails, every write of the group
  gets the error, and nothing of the group is written.
- An error that ends SQLite's transaction itself (a full disk, say) fails the whole group
  the same way; the next write begins a new transaction.
- Each write holds the store's write lock while its block runs, as before: blocks never
  interleave, and the commit waits for a block in progress.
- A statement sent through SQLAlchemy inside begins SQLAlchemy's transaction on the writer
  (its BEGIN is skipped: the driver's transaction is open, `create_sqlite_engine`), which
  then ends the transaction instead.
"""

from __future__ import annotations

import asyncio
import contextlib
import sqlite3
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

from sqlalchemy import Connection

SAVEPOINT = "prickle_joined"


class _Group:
    """One transaction and the writes in it."""

    def __init__(self, writer: Connection, driver: sqlite3.Connection) -> None:
        self.writer = writer
        self.driver = driver
        self.done: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        self.due = False  # its commit is due: it waits only for the block in progress

    def end(self, error: BaseException | None = None) -> None:
        """Commit (after `error`, roll back) and tell every write of the group."""
        if self.done.done():
            return
        if error is None:
            try:
                if self.writer.in_transaction():
                    self.writer.commit()
                else:
                    self.driver.commit()
            except BaseException as failed:
                error = failed
        if error is None:
            self.done.set_result(None)
            return
        with contextlib.suppress(Exception):  # the connection may be unusable
            if self.writer.in_transaction():
                self.writer.rollback()
            elif self.driver.in_transaction:
                self.driver.rollback()
        self.done.set_exception(error)
        self.done.exception()  # retrieved: a group whose writes all failed has no reader


class Grouped:
    """The store's SQLite writes, several to a transaction when several are ready."""

    def __init__(self, lock: asyncio.Lock) -> None:
        self.lock = lock
        self._open: _Group | None = None  # the group a write joins

    @asynccontextmanager
    async def transaction(self, writer: Connection) -> AsyncIterator[sqlite3.Connection]:
        """The writer's driver connection, in the open group's transaction or a new one's;
        on leaving, waits until that transaction has committed."""
        driver = writer.connection.driver_connection
        assert isinstance(driver, sqlite3.Connection)
        async with self.lock:
            group, joined = self._enter(writer, driver)
            try:
                yield driver
                if joined:
                    driver.execute(f"RELEASE {SAVEPOINT}")
            except BaseException as error:
                self._failed(group, joined, error)
                raise
            finally:
                if group.due:  # its commit came while this block ran
                    self._end(group)
        if not joined:
            asyncio.get_running_loop().call_soon(self._commit_due, group)
        await group.done

    def _enter(self, writer: Connection, driver: sqlite3.Connection) -> tuple[_Group, bool]:
        group = self._open
        if group is not None and not group.done.done():
            if driver.in_transaction:
                driver.execute(f"SAVEPOINT {SAVEPOINT}")
                return group, True
            # SQLite ended the transaction under a block that went on (it caught the error)
            self._end(group, sqlite3.OperationalError("the transaction was rolled back"))
        driver.execute("BEGIN IMMEDIATE")  # (busy: the error reaches this write alone)
        group = self._open = _Group(writer, driver)
        return group, False

    def _failed(self, group: _Group, joined: bool, error: BaseException) -> None:
        """Undo the failed write's part; the whole group when that is all there is, or when
        SQLite has ended the transaction."""
        if joined and group.driver.in_transaction:
            try:
                group.driver.execute(f"ROLLBACK TO {SAVEPOINT}")
                group.driver.execute(f"RELEASE {SAVEPOINT}")
                return
            except sqlite3.Error as undoing:
                error = undoing
        self._end(group, error)

    def _commit_due(self, group: _Group) -> None:
        """The loop's next turn after the first write: the writes ready by now have joined."""
        if self.lock.locked() and self._open is group:
            group.due = True  # a block of the group in progress (one that awaited) ends it
        else:
            self._end(group)

    def _end(self, group: _Group, error: BaseException | None = None) -> None:
        if self._open is group:
            self._open = None
        group.end(error)
