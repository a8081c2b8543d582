"""The storage interface: a unit of work per command, reads and writes behind one class.

`Store.write()` yields a `Tx` in one transaction that commits only when
the block ends without error; listeners learn the new last event seq only after the commit.
`Store.read()` yields one in a read transaction of its own.

Each transaction runs on SQLAlchemy's public API: a connection from its pool, BEGIN, the
statements, COMMIT; on SQLite, on the blocking engine (`create_sqlite_engine`), one write at
a time. With the fast paths on (`PRICKLE_FAST_PATHS`, the default) and SQLAlchemy having
what they use (`app.compat.sqlalchemy`), the same blocks run on them instead, with the
same answers: the fast paths installed at the app's assembly (`install`, called by
app/storage/fast), which this module does not import.

With a read replica (`--database-read-url`, `Replica`) a query's reads for a
known client may be served by the standby, the store choosing where (`reading()`); every
other read and every write goes to the primary.

A transaction the database cannot serve (unreachable, dropped, full, read-only, timed out:
`Health`) raises `Unavailable` instead of the driver's error, and `health`
learns of it, as of the first success after it.
"""

from __future__ import annotations

import asyncio
import sqlite3
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import (
    AbstractAsyncContextManager,
    AsyncExitStack,
    asynccontextmanager,
    nullcontext,
    suppress,
)
from typing import Any, Generic, Protocol, TypeVar

from sqlalchemy import Engine
from sqlalchemy.ext.asyncio import AsyncEngine

from app.compat import sqlalchemy as compat
from app.domain.errors import ChangedConcurrently, ProtocolError
from app.settings import current
from app.storage import replica
from app.storage.engine import (
    Blocking,
    create_engine,
    create_sqlite_engine,
    database_url,
    is_sqlite,
    is_sqlite_file,
    pool_size,
    statement_timeout_ms,
)
from app.storage.outage import (
    PROBE_TIMEOUT,
    Health,
    fault,
    probe,
    recovery_conflict,
    unholdable,
)
from app.storage.pooling import (
    Budget,
    budget,
    connect_arguments,
    direct_url,
    plain_dsn,
    pooled,
    prepared,
    session_settings,
)
from app.storage.repositories.base import SafeBound, TxConnection
from app.storage.shared_read import shared_of, sharing
from app.storage.tx import Tx

T = TypeVar("T")


class FastWays(Protocol):
    """The fast paths a store takes, when some are installed (`install`): the ways its blocks
    run instead of SQLAlchemy's plain ones (`FastPaths`)."""

    def write(self, alone: bool, optimistic: bool = False) -> AbstractAsyncContextManager[Tx]: ...

    def read(self, alone: bool = False) -> AbstractAsyncContextManager[Tx]: ...

    def reading(self, snapshot: bool = False) -> AbstractAsyncContextManager[None]: ...

    def shared_read(self, snapshot: bool = False) -> AbstractAsyncContextManager[Tx]: ...

    def transaction(self, write: bool, alone: bool = False) -> AbstractAsyncContextManager[Tx]: ...

    async def close(self) -> None: ...


class FastFactory(Protocol):
    """What builds a store's fast paths: its engines, its SQLite write lock, how it makes a
    `Tx` on a connection, the connections to keep (`most`), what each transaction sets
    first behind a pooler (`settings`), and the pool's hard limit (`limit`)."""

    def __call__(
        self,
        engine: AsyncEngine,
        blocking: Engine | None,
        write_lock: asyncio.Lock | None,
        tx: Callable[[TxConnection], Tx],
        most: int | None = None,
        settings: str | None = None,
        limit: int | None = None,
    ) -> FastWays: ...


_installed: list[FastFactory] = []  # the fast paths installed from outside: none, or one


def install(paths: FastFactory | None) -> None:
    """Every store built from now on takes `paths` (as its `fast` and the compat check
    allow); None: none. The fast paths install themselves at the app's assembly
    (app/storage/fast), so nothing of the plain path imports them."""
    _installed[:] = [paths] if paths is not None else []


COMMAND_TRIES = 3  # a command run optimistically, before it runs under locks


class Store:
    def __init__(self, url: str | None = None, fast: bool | None = None) -> None:
        """`fast`: whether to take the fast paths, when some are installed (`install`); by
        default as `PRICKLE_FAST_PATHS` says. They are taken only where SQLAlchemy has what
        they use (`compat.usable()`)."""
        self.url = database_url(url)
        self.sqlite = is_sqlite(self.url)
        # PostgreSQL behind a transaction-mode pooler (`pooled`), and the
        # connection straight to it for what holds a session (LISTEN, migrations)
        self.pooled = pooled() and not self.sqlite
        self.prepared = self.pooled and prepared()  # and it keeps prepared statements
        self.direct_url = direct_url() if not self.sqlite else None
        # PostgreSQL: a hot standby a query's reads may be served by (`Replica`)
        self.read_url = replica.read_url() if not self.sqlite else None
        self.budget: Budget | None = None  # PostgreSQL: the connections it may hold
        if not self.sqlite:
            self.budget = budget(pool_size(), self.listen_url is not None, bool(self.read_url))
        self.engine = create_engine(self.url, self.pooled, self.budget, prepared=self.prepared)
        self.replica: replica.Replica | None = None
        self._replica_engine: AsyncEngine | None = None
        self._replica_fast: FastWays | None = None
        if self.read_url is not None and self.budget is not None:
            self.replica = replica.Replica(self.read_url)
            self._replica_engine = create_engine(
                self.read_url,
                self.pooled,
                Budget(self.budget.replica, self.budget.replica_overflow, 0),
                connect_seconds=replica.CONNECT_SECONDS,
                prepared=self.prepared,
            )
        self._direct_engine: AsyncEngine | None = None
        self._blocking = create_sqlite_engine(self.url) if is_sqlite_file(self.url) else None
        self._write_lock = asyncio.Lock() if self.sqlite else None  # SQLite: one write at a time
        self.safe_bound = SafeBound()  # the event log's safe bound, as far as proven (PostgreSQL)
        self.commit_listeners: list[Callable[[int], None]] = []
        # PostgreSQL: whether a writing transaction tells the other processes of its seqs
        # itself (pg_notify, at its commit); a hub announcing for it turns this off
        # (the events' `Announcer`)
        self.announces = True
        self.member_listeners: list[Callable[[], None]] = []  # told after a membership change
        self.health = Health(local=self.sqlite)  # the database's state, its outages logged once
        self._probe: asyncio.Task[None] | None = None  # its probe, once `watch()` started it
        self._probe_stopping = asyncio.Event()
        self._probe_connection: Any = None  # PostgreSQL: the probe's asyncpg connection
        self._versions: sqlite3.Connection | None = None  # a SQLite file's, for data_version()
        self.fast: FastWays | None = None
        if _installed and _fast(fast):
            settings = session_settings(statement_timeout_ms()) if self.pooled else None
            most = self.budget.pool if self.budget else pool_size()
            limit = self.budget.pool if self.budget and not self.budget.overflow else None
            self.fast = _installed[0](
                self.engine, self._blocking, self._write_lock, self._tx, most, settings, limit
            )
            if self._replica_engine is not None and self.budget is not None:
                self._replica_fast = _installed[0](
                    self._replica_engine, None, None, self._tx, self.budget.replica, settings
                )

    @property
    def listen_url(self) -> str | None:
        """Where this process may LISTEN (PostgreSQL): the direct URL, else the database URL
        unless it is a pooler; None: nowhere (the hub polls)."""
        if self.sqlite:
            return None
        return self.direct_url or (None if self.pooled else self.url)

    @property
    def direct_engine(self) -> AsyncEngine:
        """The engine for what holds a session (migrations): on the direct URL when there is
        one, else the store's own (a migration is one transaction: a pooler serves it)."""
        if self.direct_url is None:
            return self.engine
        if self._direct_engine is None:
            self._direct_engine = create_engine(self.direct_url, budget=Budget(1, 0, 0))
        return self._direct_engine

    async def command(self, work: Callable[[Tx], Awaitable[T]]) -> T:
        """Run `work`, a command on tasks: it loads what it changes, checks it, and writes
        each task by `tx.tasks.save(task, version, events)` (or `add`), the task's version
        guarding its save. Storage chooses how it runs:

        - first optimistically, up to COMMAND_TRIES times: its loads take no lock, and where
          its one write is its last (a move), that write is one statement that commits by
          itself (PostgreSQL's fast path: no BEGIN, no COMMIT); where it writes before, the
          transaction begins at that write. When a task it saves was changed meanwhile
          (`ChangedConcurrently`), nothing is written, and it runs again, reading anew;
        - then in a transaction whose loads lock each task (`for_update`), which no
          concurrent change can refuse.

        A refusal it raises is raised, with nothing written."""
        for _ in range(COMMAND_TRIES):
            try:
                async with self._write(optimistic=True) as tx:
                    return await work(tx)
            except ChangedConcurrently:
                continue  # changed meanwhile: read it again
        async with self._write() as tx:
            tx.locking = True
            return await work(tx)

    def write(self, alone: bool = False) -> AbstractAsyncContextManager[Tx]:
        """A write transaction. `alone`: the block's only write is its last statement, which
        checks what the block read; on the fast paths on PostgreSQL the block then runs
        without BEGIN and COMMIT, each statement committing by itself, saving two round
        trips. Elsewhere it is an ordinary transaction."""
        return self._write(alone=alone)

    @asynccontextmanager
    async def _write(self, alone: bool = False, optimistic: bool = False) -> AsyncIterator[Tx]:
        if self.fast is not None:
            transaction = self.fast.write(alone, optimistic)
        else:
            transaction = self._transaction(write=True)
        committing = False  # (on PostgreSQL's fast path, a block run alone: `tx.unsure`)
        opened: Tx | None = None
        try:
            async with transaction as tx:
                opened = tx
                yield tx
                committing = True
        except ProtocolError:
            raise
        except Exception as error:
            self._refuse(error, True, committing or (opened is not None and opened.unsure))
            raise
        if self.health.down:
            self.health.served(write=True)
        if tx.last_seq:
            for listener in self.commit_listeners:
                listener(tx.last_seq)
        if tx.members_changed:
            for told in self.member_listeners:
                told()
        if self.replica is not None:
            await self._wrote(self.replica)

    async def _wrote(self, standby: replica.Replica) -> None:
        """The client's floor (`Replica.wrote`): the primary's WAL position past the
        write just committed, and past a proof of the log's bound that covers it; unknown
        (the client reads the primary) if it cannot be read."""
        client = replica.current()
        if client is None:
            return
        position = None
        with suppress(Exception):  # the write stands; the floor is what is unknown
            async with self._primary_read() as tx:
                # the log's bound proven past the write, at a position below the floor: the
                # client's reads of the log on the standby include its own events
                await tx.events.last_seq()
                position = await replica.inserted_position(tx.conn)
        standby.wrote(client[0], position)

    def read(self, alone: bool = False) -> AbstractAsyncContextManager[Tx]:
        """A read transaction; on the fast paths, inside `reading()`, the one it shares.
        `alone`: a block of one statement, in a transaction of its own, never the shared one
        (it sees every commit made before it began); on PostgreSQL's fast path the statement
        runs without BEGIN and COMMIT. Inside a `reading()` routed to the read replica, the
        one it shares (there on either path)."""
        if self.fast:
            return self._guarded(self.fast.read(alone))
        shared = None if alone or self.replica is None else shared_of(self)
        if shared is not None:
            return self._guarded(shared.tx())
        return self._guarded(self._transaction(write=False))

    def fresh_read(self) -> AbstractAsyncContextManager[Tx]:
        """A read of one statement that sees every commit made before it began: never the
        shared read, and on PostgreSQL's fast path without BEGIN and COMMIT
        (`read(alone=True)`)."""
        return self.read(alone=True)

    def _primary_read(self, alone: bool = False) -> AbstractAsyncContextManager[Tx]:
        """A read transaction of its own on the primary, never a shared one."""
        if self.fast:
            return self.fast.transaction(write=False, alone=alone)
        return self._transaction(write=False)

    def data_version(self) -> int | None:
        """A number that moves whenever any other connection commits to the database, of this
        process or another: a SQLite file's `PRAGMA data_version`, read on a connection of
        its own that never writes (a couple of microseconds). 0, always, for SQLite in
        memory, which no other process reaches. None where there is no such number
        (PostgreSQL), or when it cannot be read now: then the caller reads the rows."""
        if not self.sqlite:
            return None
        if self._blocking is None:
            return 0
        try:
            if self._versions is None:
                held = self._blocking.raw_connection()
                raw = held.driver_connection
                held.detach()  # the store's own, never handed to a transaction
                assert isinstance(raw, sqlite3.Connection)
                self._versions = raw
            version: int = self._versions.execute("PRAGMA data_version").fetchone()[0]
        except sqlite3.Error:
            self._versions = None
            return None
        return version

    def reading(self, snapshot: bool = False) -> AbstractAsyncContextManager[None]:
        """A query's reads. On PostgreSQL's fast paths every `read()` inside (in this task and the
        tasks it starts) shares one read transaction on one connection, opened on first use, its
        statements one at a time: a query costs one connection checkout and one BEGIN/COMMIT,
        however many lookups its fields make (on SQLite's, only a `snapshot` block shares one).
        Writes inside still take their own transactions. With a read replica and a known client
        (`replica.client`), the shared transaction is on the standby when it has replayed the
        client's floor (on either path), else on the primary. `snapshot`: on the primary's fast
        path, every read of the block sees one snapshot, as on SQLite (PostgreSQL: REPEATABLE READ;
        `Events.head` says which events it holds); elsewhere as without."""
        client = replica.current() if self.replica is not None else None
        if client is not None:
            return self._guarded(self._routed_reading(replica.Route(*client), snapshot))
        return self._guarded(self.fast.reading(snapshot)) if self.fast else nullcontext()

    @asynccontextmanager
    async def _routed_reading(self, route: replica.Route, snapshot: bool) -> AsyncIterator[None]:
        with replica.routing(route):
            async with sharing(self.fast or self, lambda: self._routed(route, snapshot)):
                yield

    @asynccontextmanager
    async def _routed(self, route: replica.Route, snapshot: bool) -> AsyncIterator[Tx]:
        """A routed block's shared read: on the standby when it has replayed the client's
        floor within the wait, else on the primary; the client's floor raised to what it
        may have seen (the position at the read's end)."""
        standby = self.replica
        assert standby is not None
        route.on_replica, route.why = False, "unavailable"
        if standby.usable():
            stack = AsyncExitStack()
            try:
                tx = await stack.enter_async_context(self._replica_transaction())
                tx.replayed = await standby.caught_up(tx.conn, standby.floor(route))
                fresh = tx.replayed is not None
            except Exception as error:  # refused, dropped, promoted: the primary reads
                with suppress(Exception):
                    await stack.aclose()
                standby.failed(error)
                fresh = False
            else:
                standby.answered()
                if not fresh:
                    route.why = "lagging"
                    await stack.aclose()
            if fresh:
                route.on_replica, route.why = True, ""
                try:
                    yield tx
                except BaseException as error:
                    if not await stack.__aexit__(type(error), error, error.__traceback__):
                        raise
                    return
                position = None
                try:
                    position = await replica.replayed_position(tx.conn)
                    await stack.aclose()
                except Exception as error:  # the reads were answered: only the end failed
                    with suppress(Exception):
                        await stack.aclose()
                    if fault(error) is not None:
                        standby.failed(error)
                standby.read(route, position)
                return
        shared = self.fast.shared_read(snapshot) if self.fast else self._transaction(write=False)
        async with shared as tx:
            yield tx
            position = None
            with suppress(Exception):  # (a statement failed: the transaction is aborted)
                position = await replica.inserted_position(tx.conn)
        standby.read(route, position)

    def _replica_transaction(self) -> AbstractAsyncContextManager[Tx]:
        """A read transaction on the standby."""
        if self._replica_fast is not None:
            return self._replica_fast.transaction(write=False)
        return self._standby_transaction()

    @asynccontextmanager
    async def _standby_transaction(self) -> AsyncIterator[Tx]:
        assert self._replica_engine is not None
        async with self._replica_engine.connect() as conn, conn.begin():
            yield self._tx(conn)

    def _guarded(self, block: AbstractAsyncContextManager[T]) -> AbstractAsyncContextManager[T]:
        """A block of reads whose database failures are answered `unavailable`."""
        return _Guarded(self, block)

    def _refuse(self, error: Exception, write: bool, committing: bool) -> None:
        """Raise `Unavailable` when `error` is the database failing (told to `health`), and
        `InvalidInput` when it is a value the database cannot hold."""
        refusal = fault(error, write, committing)
        standby = not write and self.replica is not None and replica.reading_replica()
        if refusal is None and standby:
            refusal = recovery_conflict(error)
        if refusal is not None:
            if standby and self.replica is not None:
                self.replica.failed(error)  # the standby's failure, not the database's
            else:
                self.health.failed(refusal, error)
            raise refusal from error
        bad = unholdable(error)
        if bad is not None:
            raise bad from error

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
        return Tx(conn, self.sqlite, self.safe_bound, self.announces)

    def watch(self) -> None:
        """Start the probe that keeps `health` told whether the database answers."""
        if self._probe is None:
            self._probe = asyncio.create_task(
                probe(self.health, self._ask, self._probe_stopping), name="prickle-probe"
            )

    async def _ask(self) -> None:
        """`SELECT 1` on a connection of the probe's own (the pool may be busy, not down)."""
        if self.sqlite:
            async with self.engine.connect() as conn:
                await conn.exec_driver_sql("SELECT 1")
            return
        import asyncpg

        try:
            if self._probe_connection is None or self._probe_connection.is_closed():
                self._probe_connection = await asyncpg.connect(
                    plain_dsn(self.url),
                    timeout=PROBE_TIMEOUT,
                    server_settings={"application_name": "prickle-probe"},
                    **connect_arguments(self.pooled),
                )
            await self._probe_connection.execute("SELECT 1")  # one message: no statement
        except BaseException:
            if self._probe_connection is not None:
                self._probe_connection.terminate()
                self._probe_connection = None
            raise

    async def close(self) -> None:
        if self._probe is not None:  # asked to stop, not cancelled (see `probe`)
            self._probe_stopping.set()
            await asyncio.wait({self._probe}, timeout=2 * PROBE_TIMEOUT)
        if self._probe_connection is not None:
            self._probe_connection.terminate()
        if self.fast is not None:
            await self.fast.close()
        if self._versions is not None:
            self._versions.close()
            self._versions = None
        if self._blocking is not None:
            self._blocking.dispose()
        if self._replica_fast is not None:
            await self._replica_fast.close()
        await self.engine.dispose()
        if self._replica_engine is not None:
            await self._replica_engine.dispose()
        if self._direct_engine is not None:
            await self._direct_engine.dispose()


class _Guarded(Generic[T]):
    """`block`, its database failures raised as `Unavailable` (a class, not a generator: it
    wraps every read, and costs a fraction of an `asynccontextmanager`)."""

    __slots__ = ("block", "store")

    def __init__(self, store: Store, block: AbstractAsyncContextManager[T]) -> None:
        self.store = store
        self.block = block

    async def __aenter__(self) -> T:
        try:
            return await self.block.__aenter__()
        except ProtocolError:
            raise
        except Exception as error:
            self.store._refuse(error, False, False)
            raise

    async def __aexit__(
        self, kind: type[BaseException] | None, error: BaseException | None, trace: Any
    ) -> bool | None:
        try:
            handled = await self.block.__aexit__(kind, error, trace)
        except ProtocolError:
            raise
        except Exception as raised:
            self.store._refuse(raised, False, False)
            raise
        if isinstance(error, Exception) and not handled:
            if not isinstance(error, ProtocolError):
                self.store._refuse(error, False, False)
        elif error is None and self.store.health.down and not replica.reading_replica():
            self.store.health.served(write=False)
        return handled


def _fast(asked: bool | None) -> bool:
    """Whether the store takes the fast paths: asked for (by default, the switch is on) and
    SQLAlchemy has what they use."""
    on = current().fast_paths if asked is None else asked
    return on and compat.usable()
