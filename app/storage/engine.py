"""The async engine from a URL: SQLite (WAL, busy timeout) by default, or PostgreSQL."""

from __future__ import annotations

import os

import orjson
from sqlalchemy import event
from sqlalchemy.engine import make_url
from sqlalchemy.ext.asyncio import AsyncEngine, create_async_engine

DEFAULT_URL = "sqlite+aiosqlite:///./prickle.db"
BUSY_TIMEOUT_MS = 10_000


def database_url(explicit: str | None = None) -> str:
    return explicit or os.environ.get("PRICKLE_DATABASE_URL") or DEFAULT_URL


def is_sqlite(url: str) -> bool:
    return make_url(url).get_backend_name() == "sqlite"


def _dumps(value: object) -> str:
    return orjson.dumps(value).decode()


def create_engine(url: str) -> AsyncEngine:
    if is_sqlite(url):
        engine = create_async_engine(
            url,
            json_serializer=_dumps,
            json_deserializer=orjson.loads,
            connect_args={"timeout": BUSY_TIMEOUT_MS / 1000},
        )
        _tune_sqlite(engine)
        return engine
    return create_async_engine(
        url, json_serializer=_dumps, json_deserializer=orjson.loads, pool_size=10, max_overflow=20,
        pool_pre_ping=True,
    )


def _tune_sqlite(engine: AsyncEngine) -> None:
    """WAL and a busy timeout; transactions begin IMMEDIATE when marked as writes.

    pysqlite's own transaction handling is switched off so that SQLAlchemy's BEGIN is the
    one SQLite sees: a write transaction takes the write lock up front instead of failing
    to upgrade a read lock later.
    """

    @event.listens_for(engine.sync_engine, "connect")
    def _connect(dbapi_connection, _record) -> None:  # type: ignore[no-untyped-def]
        dbapi_connection.isolation_level = None
        cursor = dbapi_connection.cursor()
        cursor.execute("PRAGMA journal_mode=WAL")
        cursor.execute(f"PRAGMA busy_timeout={BUSY_TIMEOUT_MS}")
        cursor.execute("PRAGMA synchronous=NORMAL")
        cursor.execute("PRAGMA foreign_keys=ON")
        cursor.close()

    @event.listens_for(engine.sync_engine, "begin")
    def _begin(conn) -> None:  # type: ignore[no-untyped-def]
        immediate = conn.get_execution_options().get("sqlite_write", False)
        conn.exec_driver_sql("BEGIN IMMEDIATE" if immediate else "BEGIN")
