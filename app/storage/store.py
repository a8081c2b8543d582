"""The storage interface: a unit of work per command, reads and writes behind one class.

`Store.write()` yields a `Tx` in one transaction that commits only when the block ends
without error; listeners learn the new last event seq only after the commit.
"""

from __future__ import annotations

import asyncio
import sqlite3
from collections.abc import AsyncIterator, Callable
from contextlib import AsyncExitStack, asynccontextmanager, suppress
from contextvars import ContextVar
from functools import cached_property
from typing import Any

from sqlalchemy import Connection, Engine, Table, text
from sqlalchemy.exc import DBAPIError
from sqlalchemy.ext.asyncio import AsyncConnection

from app.domain.gate import GateRule
from app.domain.policy import ResultRule
from app.storage.direct import marked
from app.storage.engine import (
    create_engine,
    create_sqlite_engine,
    database_url,
    is_sqlite,
    is_sqlite_file,
    pool_size,
)
from app.storage.grouped import Grouped
from app.storage.kept import Kept
from app.storage.repositories.approvals import Approvals, approvals
from app.storage.repositories.erasures import Erasures
from app.storage.repositories.events import NOTIFY_CHANNEL, Events, Horizon, events
from app.storage.repositories.principals import Principals, agents, capabilities, persons
from app.storage.repositories.projects import Projects, members
from app.storage.repositories.records import Checkpoints, Results, checkpoints, results
from app.storage.repositories.rules import GATE, RESULT, Rules, gate_rules, result_rules
from app.storage.repositories.schedules import Schedules
from app.storage.repositories.tasks import Tasks, tasks
from app.storage.repositories.tokens import Tokens, tokens
from app.storage.repositories.webhooks import Webhooks

__all__ = [
    "NOTIFY_CHANNEL",
    "Store",
    "Tx",
    "agents",
    "approvals",
    "capabilities",
    "checkpoints",
    "events",
    "gate_rules",
    "members",
    "persons",
    "result_rules",
    "results",
    "tasks",
    "tokens",
]


class Store:
    def __init__(self, url: str | None = None) -> None:
        self.url = database_url(url)
        self.sqlite = is_sqlite(self.url)
        self.engine = create_engine(self.url)
        self._blocking = create_sqlite_engine(self.url) if is_sqlite_file(self.url) else None
        self._write_lock = asyncio.Lock() if self.sqlite else None
        # a SQLite file's writes (app/storage/grouped.py)
        self._grouped: Grouped | None = None
        if self._write_lock is not None and self._blocking is not None:
            self._grouped = Grouped(self._write_lock)
        self.horizon = Horizon()  # the event log's safe bound, as far as proven (PostgreSQL)
        self._writer: Connection | None = None  # SQLite file: the one connection that writes
        self._kept = Kept(self.engine, pool_size())  # PostgreSQL: connections between uses
        self.commit_listeners: list[Callable[[int], None]] = []
        # PostgreSQL: whether a writing transaction tells the other processes of its seqs
        # itself (pg_notify, at its commit); a hub announcing for it turns this off
        # (app/events/announcer.py)
        self.announces = True
        self.member_listeners: list[Callable[[], None]] = []  # told after a membership change

    @asynccontextmanager
    async def write(self, alone: bool = False) -> AsyncIterator[Tx]:
        """A write transaction. `alone`: the block's only write is its last statement, which
        checks what the block read (a move guarded by the task's version); on PostgreSQL
        the block then runs without BEGIN and COMMIT, each statement committing by itself,
        saving two round trips. Elsewhere, and while statements are listened to, it is an
        ordinary transaction. On a SQLite file the writes ready together share one (each in
        a savepoint) and its commit, which the block's end waits for
        (app/storage/grouped.py)."""
        if self._write_lock is None:
            async with self._transaction(write=True, alone=alone) as tx:
                yield tx
        elif self._grouped is not None and not self._listened_to():
            # the writes ready together share a transaction and its commit
            writer = self._sqlite_writer()
            async with self._grouped.transaction(writer) as driver:
                tx = Tx(_OnLoop(writer, driver), sqlite=True, horizon=self.horizon)
                yield tx
        else:
            async with self._write_lock, self._transaction(write=True) as tx:
                yield tx
        if tx.last_seq:
            for listener in self.commit_listeners:
                listener(tx.last_seq)
        if tx.members_changed:
            for told in self.member_listeners:
                told()

    def _listened_to(self) -> bool:
        """A SQLite file whose statements are listened to (traces, tests that count them):
        its writes run one transaction each, all through SQLAlchemy."""
        return bool(self._sqlite_writer().dispatch.before_cursor_execute)

    @asynccontextmanager
    async def read(self) -> AsyncIterator[Tx]:
        """A read transaction; inside `reading()`, the one it shares."""
        shared = _shared_read.get()
        if shared is not None and shared.store is self and not shared.closed:
            async with shared.tx() as tx:
                yield tx
            return
        async with self._transaction(write=False) as tx:
            yield tx

    @asynccontextmanager
    async def reading(self) -> AsyncIterator[None]:
        """Every `read()` inside (in this task and the tasks it starts) shares one read
        transaction on one connection, opened on first use, its statements one at a time:
        a query costs one connection checkout and one BEGIN/COMMIT, however many lookups its
        fields make. Writes inside still take their own transactions."""
        shared = _SharedRead(self)
        token = _shared_read.set(shared)
        try:
            yield
        finally:
            _shared_read.reset(token)
            await shared.close()

    @property
    def statements_engine(self) -> Engine:
        """The engine whose events see every statement of the store's transactions."""
        return self._blocking or self.engine.sync_engine

    @asynccontextmanager
    async def _transaction(self, write: bool, alone: bool = False) -> AsyncIterator[Tx]:
        if self._blocking is not None:
            if write:  # listened to (`write` groups the others): all by SQLAlchemy
                writer = self._sqlite_writer()
                with writer.begin():
                    yield Tx(_OnLoop(writer), sqlite=True, horizon=self.horizon)
                return
            with self._blocking.connect() as blocking, blocking.begin():
                yield Tx(_OnLoop(blocking), sqlite=True, horizon=self.horizon)
            return
        if self.sqlite:  # in memory: through the async engine
            async with self.engine.connect() as conn:
                if write:
                    conn = await conn.execution_options(sqlite_write=True)
                async with conn.begin():
                    yield Tx(conn, True, self.horizon)
            return
        async with self._kept.connection() as conn:
            if _listened(conn):
                async with conn.begin():  # listened to: every statement through SQLAlchemy
                    yield Tx(conn, False, self.horizon, self.announces)
                return
            async with _on_driver(conn, transactional=not alone) as on_driver:
                yield Tx(on_driver, False, self.horizon, self.announces)

    def _sqlite_writer(self) -> Connection:
        """The connection the store's SQLite writes use, kept open between them: no pool
        checkout, reset and return around each transaction."""
        assert self._blocking is not None
        if self._writer is None or self._writer.closed:
            self._writer = self._blocking.connect().execution_options(sqlite_write=True)
        return self._writer

    async def close(self) -> None:
        if self._writer is not None:
            self._writer.close()
            self._writer = None
        if self._blocking is not None:
            self._blocking.dispose()
        await self._kept.close()
        await self.engine.dispose()


class _SharedRead:
    """The read transaction of one `Store.reading()` block."""

    def __init__(self, store: Store) -> None:
        self.store = store
        self.lock = asyncio.Lock()  # one statement at a time on the connection
        self.stack = AsyncExitStack()
        self.opened: Tx | None = None
        self.holder: asyncio.Task[Any] | None = None  # the task inside a read() block
        self.closed = False  # a task started inside and outliving the block reads on its own

    @asynccontextmanager
    async def tx(self) -> AsyncIterator[Tx]:
        task = asyncio.current_task()
        if self.holder is task and self.opened is not None:  # a read() within a read()
            yield self.opened
            return
        async with self.lock:
            if self.closed:  # waited for the lock while the block ended
                async with self.store._transaction(write=False) as own:
                    yield own
                return
            if self.opened is None:
                self.opened = await self.stack.enter_async_context(
                    self.store._transaction(write=False)
                )
            self.holder = task
            try:
                yield self.opened
            except BaseException:
                # a failed statement leaves the transaction unusable (PostgreSQL aborts it):
                # roll it back; the next read() of the block opens a new one
                self.opened = None
                with suppress(Exception):  # the connection may be gone: the pool drops it
                    await self.stack.aclose()
                raise
            finally:
                self.holder = None

    async def close(self) -> None:
        self.closed = True
        async with self.lock:
            self.opened = None
            await self.stack.aclose()


_CUSTOM_PLANS = text("SET LOCAL plan_cache_mode = force_custom_plan")
_shared_read: ContextVar[_SharedRead | None] = ContextVar("shared_read", default=None)


def _listened(conn: AsyncConnection) -> bool:
    """Whether anything listens to the connection's statements (traces, tests)."""
    return conn.sync_connection is not None and bool(
        conn.sync_connection.dispatch.before_cursor_execute
    )


@asynccontextmanager
async def _on_driver(conn: AsyncConnection, transactional: bool) -> AsyncIterator[_OnDriver]:
    """PostgreSQL: a transaction begun (at its first statement) and ended on SQLAlchemy's
    asyncpg adapter, without SQLAlchemy's transaction machinery around it; not
    `transactional`, each statement commits by itself. A statement sent through SQLAlchemy
    joins the adapter's transaction, beginning it if none is open, and SQLAlchemy then
    ends it instead."""
    assert conn.sync_connection is not None
    adapter: Any = conn.sync_connection.connection.dbapi_connection
    on_driver = _OnDriver(conn, adapter, transactional)
    ended = False
    try:
        yield on_driver
        if conn.in_transaction():
            await conn.commit()
        elif adapter._transaction is not None:
            await adapter._call_and_discard(adapter._transaction.commit)
        ended = True
    finally:
        if not ended:
            with suppress(Exception):  # the connection may be gone: the pool drops it
                if conn.in_transaction():
                    await conn.rollback()
                elif adapter._transaction is not None:
                    await adapter._call_and_discard(adapter._transaction.rollback)


class _OnDriver:
    """PostgreSQL: an `AsyncConnection` behind the `await conn.execute(...)` that Tx uses;
    a statement marked `direct` goes straight to asyncpg (app/storage/direct.py)."""

    __slots__ = ("adapter", "conn", "transactional", "written")

    def __init__(self, conn: AsyncConnection, adapter: Any, transactional: bool) -> None:
        self.conn = conn
        self.adapter = adapter
        self.transactional = transactional
        self.written = False  # not transactional: the block's one write has committed

    def __getattr__(self, name: str) -> Any:  # the rest of AsyncConnection, as it is
        return getattr(self.conn, name)

    async def execute(self, statement: Any, parameters: Any = None) -> Any:
        if self.written:
            raise RuntimeError("a statement after the last write of a block run alone")
        found = marked(statement)
        if found is not None:
            if self.transactional and self.adapter._transaction is None:
                await self.adapter._start_transaction()
            try:
                done = await found.run_on(self.adapter, self.conn.dialect, parameters)
            except DBAPIError as error:
                if self.conn.dialect.is_disconnect(error.orig, self.adapter, None):  # type: ignore[arg-type]
                    await self.conn.invalidate(error)  # the pool opens a new one
                raise
            if done is not None:
                self.written = done.writes and self.adapter._transaction is None
                return done
        return await self.conn.execute(statement, parameters)


class _OnLoop:
    """A blocking SQLite connection behind the `await conn.execute(...)` that Tx uses; a
    statement marked `direct` goes straight to the driver (app/storage/direct.py) unless
    something listens to the engine's statements."""

    __slots__ = ("blocking", "driver")

    def __init__(self, blocking: Connection, driver: sqlite3.Connection | None = None) -> None:
        self.blocking = blocking
        self.driver = driver

    async def execute(self, statement: Any, parameters: Any = None) -> Any:
        found = marked(statement)
        if found is not None and not self.blocking.dispatch.before_cursor_execute:
            if self.driver is None:
                driver = self.blocking.connection.driver_connection
                assert isinstance(driver, sqlite3.Connection)
                self.driver = driver
            done = found.run(self.driver, self.blocking.dialect, parameters)
            if done is not None:
                return done
        return self.blocking.execute(statement, parameters)


class Tx:
    """One transaction's view of the database: its repositories share its connection."""

    def __init__(
        self,
        conn: AsyncConnection | _OnLoop | _OnDriver,
        sqlite: bool,
        horizon: Horizon | None = None,
        announces: bool = True,
    ) -> None:
        self.conn = conn
        self.sqlite = sqlite
        self.horizon = horizon if horizon is not None else Horizon()
        self.announces = announces  # PostgreSQL: its events' statement sends pg_notify
        self.event_bound: int | None = None  # the log's safe bound, once read (PostgreSQL)
        self.last_seq = 0  # the last seq this transaction appended; 0 for none
        self.members_changed = False  # a project's members changed (Projects sets it)
        # what a statement read ahead for a repository, by (what, key): asked for later in
        # the same transaction, it is not read again
        self.read_ahead: dict[tuple[str, str], Any] = {}
        self._savepoints = 0  # savepoints made: each one's name is new
        self._riders: list[tuple[Table, dict[str, Any]]] = []
        self._custom_plans = False

    async def begin(self) -> None:
        """More than one write follows: in a block run `alone` (`Store.write`), the
        transaction begins now; elsewhere it is already open."""
        if isinstance(self.conn, _OnDriver):
            self.conn.transactional = True

    async def custom_plans(self) -> None:
        """PostgreSQL: the rest of this transaction plans each statement for its parameters.
        A prepared statement run a sixth time on a connection may get a generic plan, made
        without its parameters; for a replay's page (a range of seqs, joined with the tasks)
        that plan can read far more than the page (docs/performance.md)."""
        if not self.sqlite and not self._custom_plans:
            self._custom_plans = True
            await self.conn.execute(_CUSTOM_PLANS)

    def ride(self, table: Table, row: dict[str, Any]) -> None:
        """A row to insert with the task's next write (`Events.append`)."""
        self._riders.append((table, row))

    def take_riders(self) -> list[tuple[Table, dict[str, Any]]]:
        riders, self._riders = self._riders, []
        return riders

    async def rows(self, stmt: Any, params: dict[str, Any] | None = None) -> list[Any]:
        return list((await self.conn.execute(stmt, params)).all())

    @asynccontextmanager
    async def savepoint(self) -> AsyncIterator[None]:
        """What the block writes is undone when it raises, and the transaction goes on (on
        PostgreSQL too, where a failed statement aborts the transaction up to the last
        savepoint). Plain SQL statements: the same on every way a Tx is driven."""
        self._savepoints += 1
        name = f"sp_{self._savepoints}"
        last_seq = self.last_seq
        await self.conn.execute(text(f"SAVEPOINT {name}"))
        try:
            yield
        except Exception:  # (a cancellation ends the whole transaction instead)
            await self.conn.execute(text(f"ROLLBACK TO SAVEPOINT {name}"))
            await self.conn.execute(text(f"RELEASE SAVEPOINT {name}"))
            self.last_seq = last_seq  # the events appended inside are gone
            raise
        await self.conn.execute(text(f"RELEASE SAVEPOINT {name}"))

    async def one(self, stmt: Any, params: dict[str, Any] | None = None) -> Any:
        return (await self.conn.execute(stmt, params)).first()

    @cached_property
    def tasks(self) -> Tasks:
        return Tasks(self)

    @cached_property
    def events(self) -> Events:
        return Events(self)

    @cached_property
    def principals(self) -> Principals:
        return Principals(self)

    @cached_property
    def tokens(self) -> Tokens:
        return Tokens(self)

    @cached_property
    def gate_rules(self) -> Rules[GateRule]:
        return Rules(self, GATE)

    @cached_property
    def result_rules(self) -> Rules[ResultRule]:
        return Rules(self, RESULT)

    @cached_property
    def approvals(self) -> Approvals:
        return Approvals(self)

    @cached_property
    def projects(self) -> Projects:
        return Projects(self)

    @cached_property
    def checkpoints(self) -> Checkpoints:
        return Checkpoints(self)

    @cached_property
    def results(self) -> Results:
        return Results(self)

    @cached_property
    def schedules(self) -> Schedules:
        return Schedules(self)

    @cached_property
    def erasures(self) -> Erasures:
        return Erasures(self)

    @cached_property
    def webhooks(self) -> Webhooks:
        return Webhooks(self)
