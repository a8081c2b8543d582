"""PostgreSQL: a transaction's statements on SQLAlchemy's asyncpg adapter, beside its
transaction machinery.

The transaction is begun (at its first statement) and ended on the adapter itself, without
SQLAlchemy's `begin()` and `commit()` around it; a block run `alone` (`Store.write`) begins
none, each statement committing by itself; a command (`Store.command`) begins it at its first
write that does not end the command, so that a command whose one write is its last statement
is that statement alone. A statement built once (`once`) goes straight to
asyncpg (direct.py). One sent through SQLAlchemy joins the adapter's transaction, beginning
it if none is open, and SQLAlchemy then ends it instead.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager, suppress
from typing import Any

from sqlalchemy.exc import DBAPIError
from sqlalchemy.ext.asyncio import AsyncConnection

from app.compat import sqlalchemy as compat
from app.storage.fast.direct import marked


@asynccontextmanager
async def on_driver(
    conn: AsyncConnection, transactional: bool, settings: str | None = None, at_write: bool = False
) -> AsyncIterator[OnDriver]:
    """`conn` driven on its adapter; not `transactional`, each statement commits by itself,
    unless `at_write`: then the transaction begins at the first write that does not end the
    command. `settings`: what the transaction sets at its BEGIN (behind a pooler)."""
    on = OnDriver(conn, adapter_of(conn), transactional, settings, at_write)
    ended = False
    try:
        yield on
        await _end(on, commit=True)
        ended = True
    finally:
        if not ended:
            with suppress(Exception):  # the connection may be gone: the pool drops it
                await _end(on, commit=False)


async def _end(on: OnDriver, commit: bool) -> None:
    conn, adapter = on.conn, on.adapter
    if conn.in_transaction():
        await (conn.commit() if commit else conn.rollback())
    elif compat.in_transaction(adapter):
        await (compat.commit(adapter) if commit else compat.rollback(adapter))


def adapter_of(conn: AsyncConnection) -> Any:
    """SQLAlchemy's asyncpg adapter under `conn` (its DBAPI connection)."""
    assert conn.sync_connection is not None
    return conn.sync_connection.connection.dbapi_connection


class OnDriver:
    """An `AsyncConnection` behind the `await conn.execute(...)` that Tx uses, its marked
    statements sent straight to asyncpg."""

    __slots__ = ("adapter", "at_write", "conn", "settings", "transactional", "unsure", "written")

    def __init__(
        self,
        conn: AsyncConnection,
        adapter: Any,
        transactional: bool,
        settings: str | None = None,
        at_write: bool = False,
    ) -> None:
        self.conn = conn
        self.adapter = adapter
        self.transactional = transactional
        self.at_write = at_write  # not transactional: begins at a write not ending the command
        self.settings = settings
        self.written = False  # not transactional: the block's one write has committed
        # a write committing by itself failed with its answer lost: it may have committed
        self.unsure = False

    def __getattr__(self, name: str) -> Any:  # the rest of AsyncConnection, as it is
        return getattr(self.conn, name)

    async def execute(self, statement: Any, parameters: Any = None) -> Any:
        if self.written:
            raise RuntimeError("a statement after the last write of a block run alone")
        found = marked(statement)
        if found is not None:
            if (
                self.transactional
                or (
                    self.at_write
                    and not found.last
                    and _writes(found, parameters, self.conn.dialect)
                )
            ) and not compat.in_transaction(self.adapter):
                self.transactional = True
                await compat.begin(self.adapter)
                if self.settings is not None:  # one message, no statement left behind
                    await self.adapter.driver_connection.execute(self.settings)
            alone = not compat.in_transaction(self.adapter)
            try:
                done = await found.run_on(self.adapter, self.conn.dialect, parameters)
            except Exception as error:
                self.unsure = alone and _writes(found, parameters, self.conn.dialect)
                if isinstance(error, DBAPIError):
                    await self._drop_if_gone(error)
                raise
            if done is not None:
                self.written = done.writes and not compat.in_transaction(self.adapter)
                return done
        return await self.conn.execute(statement, parameters)

    async def _drop_if_gone(self, error: DBAPIError) -> None:
        if self.conn.dialect.is_disconnect(error.orig, self.adapter, None):  # type: ignore[arg-type]
            await self.conn.invalidate(error)  # the pool opens a new one


def _writes(found: Any, parameters: Any, dialect: Any) -> bool:
    """Whether the marked statement may write (a SELECT without FOR UPDATE does not)."""
    if parameters is not None and not isinstance(parameters, dict):
        return True  # rows in a list: an insert, through SQLAlchemy
    names = tuple(parameters) if isinstance(parameters, dict) else ()
    form = found.form(names, dialect, False)
    return form is None or bool(form.writes)
