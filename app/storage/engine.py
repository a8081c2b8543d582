"""Engines from a URL: SQLite (WAL, busy timeout) by default, or PostgreSQL.

On SQLite the store runs its transactions on a plain (blocking) engine, on the event
loop's own thread; see `create_sqlite_engine`. The async engine remains for migrations
and for anything that wants an `AsyncEngine`.
"""

from __future__ import annotations

import sqlite3
import time
from typing import Any, Protocol

import orjson
from sqlalchemy import Connection, Engine, event, exc
from sqlalchemy import create_engine as create_blocking_engine
from sqlalchemy.engine import make_url
from sqlalchemy.ext.asyncio import AsyncEngine, create_async_engine
from sqlalchemy.pool import ConnectionPoolEntry, PoolProxiedConnection, QueuePool

from app.compat import sqlalchemy as compat
from app.settings import current
from app.storage.pooling import Budget, session_settings, unnamed

BUSY_TIMEOUT_MS = 10_000
IDLE_PING_SECONDS = 1.0


def database_url(explicit: str | None = None) -> str:
    """`explicit`, else the setting (--database-url, PRICKLE_DATABASE_URL, the default)."""
    return explicit or current().database_url


def pool_size() -> int:
    """Connections each process keeps open (PRICKLE_DB_POOL_SIZE, default 20).

    A query holds one connection for its whole request and a mutation one per transaction,
    so a steady load of N requests in flight wants N; beyond the pool, a connection is
    opened for the request and closed after it (up to as many again on PostgreSQL)."""
    return current().db_pool_size


def is_sqlite(url: str) -> bool:
    return make_url(url).get_backend_name() == "sqlite"


def is_sqlite_file(url: str) -> bool:
    return is_sqlite(url) and make_url(url).database not in (None, "", ":memory:")


def _dumps(value: object) -> str:
    return orjson.dumps(value).decode()


def statement_timeout_ms() -> int:
    """PostgreSQL takes whole milliseconds, at least 1, at most 2^31 - 1 (24.8 days)."""
    return min(max(round(current().db_statement_timeout * 1000), 1), 2**31 - 1)


def startup_settings() -> dict[str, str]:
    """What a direct connection sets at its start. No JIT: it starts by the planner's
    estimates, and on a large table a statement that reads a few rows through an index can
    be estimated dear enough to spend far longer compiling than running
    (docs/operations.md, "At scale")."""
    return {"statement_timeout": str(statement_timeout_ms()), "jit": "off"}


def create_engine(
    url: str,
    pooled: bool = False,
    budget: Budget | None = None,
    connect_seconds: float | None = None,
    prepared: bool = False,
) -> AsyncEngine:
    """`pooled`: the URL is a transaction-mode pooler (the pooling module's `pooled`);
    `prepared`: one that keeps each client's prepared statements (statements named and
    cached); `budget`: the pool's size and overflow (by default the pool size and as many
    again);
    `connect_seconds`: the longest a new connection may take (by default asyncpg's)."""
    if is_sqlite(url):
        engine = create_async_engine(
            url,
            json_serializer=_dumps,
            json_deserializer=orjson.loads,
            connect_args={"timeout": BUSY_TIMEOUT_MS / 1000},
        )
        _tune_sqlite(engine.sync_engine)
        return engine
    statement_ms = statement_timeout_ms()
    connect_args: dict[str, Any] = {"server_settings": startup_settings()}
    if pooled:  # no startup parameter a pooler refuses: set per transaction
        connect_args = {}
    if pooled and not prepared:  # and no named statement
        connect_args = {
            "statement_cache_size": 0,
            "prepared_statement_cache_size": 0,
            "prepared_statement_name_func": unnamed,
        }
    if connect_seconds is not None:
        connect_args["timeout"] = connect_seconds
    engine = create_async_engine(
        url,
        json_serializer=_dumps,
        json_deserializer=orjson.loads,
        pool_size=budget.pool if budget else pool_size(),
        max_overflow=budget.overflow if budget else pool_size(),
        # neither waits for ever: past either, the request answers unavailable
        pool_timeout=current().db_pool_timeout,
        connect_args=connect_args,
    )
    _ping_when_idle(engine.sync_engine)
    if pooled:
        _set_per_transaction(engine.sync_engine, session_settings(statement_ms))
    return engine


def _set_per_transaction(engine: Engine, settings: str) -> None:
    """Behind a pooler: each transaction begun through SQLAlchemy first sets what a direct
    connection sets at its start (the fast paths set it where they begin, driver.py)."""

    @event.listens_for(engine, "begin")
    def _begin(conn: Connection) -> None:
        if compat.begun(conn.connection.dbapi_connection):  # the fast path's: set already
            return
        conn.exec_driver_sql(settings)


class Pingable(Protocol):
    """A DBAPI connection that can check it is alive (SQLAlchemy's asyncpg adapter)."""

    def ping(self) -> None: ...


def _ping_when_idle(engine: Engine) -> None:
    """Check a pooled connection before use if it has been idle for a second or more.

    A database restart leaves the pool holding dead connections; a connection found dead
    is replaced before the transaction starts, so the restart costs no request. SQLAlchemy's
    `pool_pre_ping` does this on every checkout, which on asyncpg is three round trips
    (BEGIN, a ping, ROLLBACK) before each transaction; a connection in steady use has just
    proved itself alive, so only an idle one is asked.
    """

    @event.listens_for(engine, "checkin")
    def _checkin(_dbapi_connection: object, record: ConnectionPoolEntry) -> None:
        record.info["idle_since"] = time.monotonic()

    @event.listens_for(engine, "checkout")
    def _checkout(
        dbapi_connection: Pingable, record: ConnectionPoolEntry, _proxy: PoolProxiedConnection
    ) -> None:
        since = record.info.get("idle_since")
        if since is None or time.monotonic() - since < IDLE_PING_SECONDS:
            return
        try:
            dbapi_connection.ping()
        except Exception as error:
            raise exc.DisconnectionError(f"a pooled connection is gone ({error})") from error


def create_sqlite_engine(url: str) -> Engine:
    """A blocking pysqlite engine on the same file, for the store's transactions.

    Through aiosqlite every statement is several hops to a worker thread and back, and each
    transaction more (checkout, BEGIN, COMMIT, reset): 54 µs a statement and 208 µs a
    transaction here, against 20 µs and 15 µs called directly, while SQLite itself answers
    a lookup in 4 µs. Calling it on the loop's thread blocks the loop only that long.
    Reads in WAL mode never wait for a writer; writes in this process are serialised by
    the store's lock before BEGIN, so a write waits (busy timeout) only for another
    process's write, such as `prickle token create`.

    The pool never blocks (unbounded overflow): a caller waiting for a connection on the
    loop's thread would wait for ever, since only the loop can return one.
    """
    engine = create_blocking_engine(
        make_url(url).set(drivername="sqlite"),
        json_serializer=_dumps,
        json_deserializer=orjson.loads,
        connect_args={"timeout": BUSY_TIMEOUT_MS / 1000, "check_same_thread": False},
        poolclass=QueuePool,
        pool_size=pool_size(),
        max_overflow=-1,
    )
    _tune_sqlite(engine)
    return engine


class Blocking:
    """A blocking engine's connection behind the `await conn.execute(...)` that `Tx` uses:
    each statement runs on the event loop's own thread."""

    __slots__ = ("conn",)

    def __init__(self, conn: Connection) -> None:
        self.conn = conn

    async def execute(self, statement: Any, parameters: Any = None) -> Any:
        return self.conn.execute(statement, parameters)


def _tune_sqlite(engine: Engine) -> None:
    """WAL and a busy timeout; transactions begin IMMEDIATE when marked as writes.

    pysqlite's own transaction handling is switched off so that SQLAlchemy's BEGIN is the
    one SQLite sees: a write transaction takes the write lock up front instead of failing
    to upgrade a read lock later.
    """

    @event.listens_for(engine, "connect")
    def _connect(dbapi_connection: sqlite3.Connection, _record: ConnectionPoolEntry) -> None:
        dbapi_connection.isolation_level = None
        cursor = dbapi_connection.cursor()
        cursor.execute("PRAGMA journal_mode=WAL")
        cursor.execute(f"PRAGMA busy_timeout={BUSY_TIMEOUT_MS}")
        cursor.execute("PRAGMA synchronous=NORMAL")
        cursor.execute("PRAGMA foreign_keys=ON")
        cursor.close()

    @event.listens_for(engine, "begin")
    def _begin(conn: Connection) -> None:
        # the blocking engine's BEGIN goes straight to the driver: it needs none of a
        # statement's machinery (compiling, parameters, a result), which costs more than
        # SQLite's own work here
        begin = "BEGIN IMMEDIATE" if conn.get_execution_options().get("sqlite_write") else "BEGIN"
        driver = conn.connection.driver_connection
        if isinstance(driver, sqlite3.Connection):
            if not driver.in_transaction:  # the store's write began it on the driver itself
                driver.execute(begin)
        else:
            conn.exec_driver_sql(begin)
