"""SQLAlchemy's private names, used by the storage's fast paths (app/storage/fast), in one place.

The fast paths reach under SQLAlchemy's public API: the asyncpg adapter's transaction, its
prepared statements and its error translation, and a compiled statement's result columns.
Every such access is one of the functions below; `REQUIRED` lists the names they touch.
`usable()` checks once that each is there. Where one is missing (a SQLAlchemy the fast paths
were not written for) it logs one warning naming SQLAlchemy's version and what is missing,
and the store runs the plain path, on SQLAlchemy's public API only.
"""

from __future__ import annotations

import functools
import importlib
import logging
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import sqlalchemy
from sqlalchemy.engine import Dialect
from sqlalchemy.sql.compiler import SQLCompiler

logger = logging.getLogger(__name__)

_ASYNCPG = "sqlalchemy.dialects.postgresql.asyncpg"
# (module, class, name): each private name the functions below use, on the class that has it
REQUIRED: tuple[tuple[str, str, str], ...] = (
    (_ASYNCPG, "AsyncAdapt_asyncpg_connection", "_transaction"),
    (_ASYNCPG, "AsyncAdapt_asyncpg_connection", "_start_transaction"),
    (_ASYNCPG, "AsyncAdapt_asyncpg_connection", "_call_and_discard"),
    (_ASYNCPG, "AsyncAdapt_asyncpg_connection", "_prepare"),
    (_ASYNCPG, "AsyncAdapt_asyncpg_connection", "_handle_exception"),
    (_ASYNCPG, "AsyncAdapt_asyncpg_connection", "_async_ping"),
    (_ASYNCPG, "AsyncAdapt_asyncpg_connection", "_isolation_setting"),
    (_ASYNCPG, "AsyncAdapt_asyncpg_connection", "isolation_level"),
    (_ASYNCPG, "AsyncAdapt_asyncpg_connection", "readonly"),
    (_ASYNCPG, "PGDialect_asyncpg", "_invalidate_schema_cache_asof"),
    ("sqlalchemy.sql.compiler", "SQLCompiler", "_result_columns"),
)


@functools.cache
def usable() -> bool:
    """Whether this SQLAlchemy has every name in `REQUIRED`; checked once. Never raises."""
    missing = [
        f"{owner}.{name}" for module, owner, name in REQUIRED if not _has(module, owner, name)
    ]
    if missing:
        logger.warning(
            "sqlalchemy %s lacks what the storage's fast paths use (%s): "
            "the server runs the plain path",
            sqlalchemy.__version__,
            ", ".join(missing),
        )
    return not missing


def _has(module: str, owner: str, name: str) -> bool:
    try:
        return hasattr(getattr(importlib.import_module(module), owner), name)
    except Exception:  # a module or class of another name, or one that fails to import
        return False


def result_columns(compiled: SQLCompiler) -> list[Any]:
    """What SQLAlchemy's result reads of a compiled statement's columns: keys and types."""
    return compiled._result_columns


# SQLAlchemy's asyncpg adapter (`AsyncAdapt_asyncpg_connection`, the DBAPI connection of a
# pooled PostgreSQL connection)


def in_transaction(adapter: Any) -> bool:
    """Whether the adapter has begun a transaction on asyncpg."""
    return adapter._transaction is not None


def begun(adapter: Any) -> bool:
    """Whether the adapter has begun a transaction; False for a connection without that
    attribute (another SQLAlchemy: the plain path)."""
    return getattr(adapter, "_transaction", None) is not None


async def begin(adapter: Any) -> None:
    """Begin a transaction on asyncpg, as the adapter does before its first statement."""
    await adapter._start_transaction()


@contextmanager
def snapshot(adapter: Any) -> Iterator[None]:
    """The transaction the adapter begins inside (at its next first statement, on asyncpg or
    through SQLAlchemy) is REPEATABLE READ READ ONLY: one snapshot for all its statements;
    the adapter's own settings are back after."""
    saved = adapter.isolation_level, adapter._isolation_setting, adapter.readonly
    adapter.isolation_level = adapter._isolation_setting = "repeatable_read"
    adapter.readonly = True
    try:
        yield
    finally:
        adapter.isolation_level, adapter._isolation_setting, adapter.readonly = saved


async def commit(adapter: Any) -> None:
    await adapter._call_and_discard(adapter._transaction.commit)


async def rollback(adapter: Any) -> None:
    await adapter._call_and_discard(adapter._transaction.rollback)


async def prepare(adapter: Any, sql: str, dialect: Dialect) -> tuple[Any, Any]:
    """The prepared statement and its attributes, from the adapter's own cache."""
    asof = dialect._invalidate_schema_cache_asof  # type: ignore[attr-defined]
    prepared: tuple[Any, Any] = await adapter._prepare(sql, asof)
    return prepared


def dbapi_error(adapter: Any, error: Exception) -> Exception:
    """asyncpg's `error` as the adapter translates it into its DBAPI's exceptions."""
    try:
        adapter._handle_exception(error)  # always raises: the DBAPI's error for `error`
    except Exception as translated:
        return translated
    return error  # pragma: no cover (the adapter always raises)


async def ping(adapter: Any) -> None:
    """The adapter's own liveness check, as the pool's pre-ping makes it."""
    await adapter._async_ping()
