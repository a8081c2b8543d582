"""The hot statements sent straight to the driver (sqlite3 or asyncpg), compiled once.

Through SQLAlchemy a statement costs about 20 µs of Python on this path (its cache key,
parameters, execution context, result) where SQLite's own work is 2 to 5 µs. A statement
built once (`once(stmt)`: the repositories say so of their
statements, knowing nothing of this module) is compiled once per set of parameter names,
with the SQLite dialect of the connection that first runs it: its SQL text, the names of
its parameters in position order, each with its type's bind processor (JSON columns encoded
exactly as SQLAlchemy encodes them), and its result columns with their types' result
processors.
`OnLoop` (loop.py) then executes it on the sqlite3 connection itself, inside
the transaction SQLAlchemy began, and answers with a `Result` offering what the
repositories use of SQLAlchemy's (first, all, one, scalar_one, rowcount), whose rows are
tuples that also have `_mapping`.

A statement whose compiled form needs SQLAlchemy at execution (Python-side defaults,
expanding IN lists, parameters it does not get) is sent through SQLAlchemy, as is every
statement while anything listens to the engine's statements (`before_cursor_execute`:
traces, tests that count statements). Driver errors are raised as SQLAlchemy's
(`IntegrityError` and the rest), as through SQLAlchemy.

On PostgreSQL (`run_on`, used by `OnDriver` in driver.py) the statement is
compiled with the asyncpg dialect and executed as SQLAlchemy's asyncpg adapter would: its
prepared form from the adapter's own cache (shared with statements sent through
SQLAlchemy), the arguments in `$n` order, the row count read from the status as the adapter
reads it, and errors translated by the adapter into SQLAlchemy's. Through SQLAlchemy a
statement costs about 100 µs of Python on this path, around asyncpg's own 30 µs.

Only statements built once (module constants, or cached builders) are taken: the registry
keeps them, keyed by identity. On the plain path (fast paths off) nothing reads it.
"""

from __future__ import annotations

import re
import sqlite3
from collections.abc import Callable, Mapping, Sequence
from typing import Any, cast

from sqlalchemy import exc
from sqlalchemy.engine import Dialect
from sqlalchemy.sql import ClauseElement
from sqlalchemy.sql.compiler import SQLCompiler

from app.compat import sqlalchemy as compat
from app.storage import statements

Processor = Callable[[Any], Any] | None

_marked: dict[int, Direct] = {}  # the statements built once met so far, with their forms


def marked(statement: object) -> Direct | None:
    """The statement's compiled forms, if it was built once (`once`)."""
    found = _marked.get(id(statement))
    if found is None:
        kept = statements.ONCE.get(id(statement))
        if kept is None:
            return None
        found = _marked[id(statement)] = Direct(kept)
    return found


class Row(tuple[Any, ...]):
    """A result row: a tuple, with its values by column key in `_mapping`."""

    __slots__ = ()
    keys: tuple[str, ...] = ()

    @property
    def _mapping(self) -> dict[str, Any]:
        return dict(zip(self.keys, self, strict=True))


class Result:
    """What the repositories use of a SQLAlchemy result, for rows already fetched."""

    __slots__ = ("_rows", "returns_rows", "rowcount", "writes")

    def __init__(
        self, rows: list[Row], rowcount: int, returns_rows: bool, writes: bool = False
    ) -> None:
        self._rows = rows
        self.rowcount = rowcount
        self.returns_rows = returns_rows
        self.writes = writes  # the statement may have written (or locked) rows

    def first(self) -> Row | None:
        return self._rows[0] if self._rows else None

    def all(self) -> list[Row]:
        return self._rows

    def one(self) -> Row:
        if len(self._rows) != 1:
            if self._rows:
                raise exc.MultipleResultsFound(
                    "Multiple rows were found when exactly one was required"
                )
            raise exc.NoResultFound("No row was found when one was required")
        return self._rows[0]

    def scalar_one(self) -> Any:
        return self.one()[0]


class _Form:
    """A statement compiled for one set of parameter names."""

    __slots__ = ("arguments", "processed", "row", "sql", "writes")

    def __init__(self, compiled: SQLCompiler, names: Sequence[str], dialect: Dialect) -> None:
        self.sql = compiled.string
        read = self.sql.lstrip()[:6].upper() == "SELECT" and "FOR UPDATE" not in self.sql
        self.writes = not read  # (a WITH statement is taken to write: the moves' ones do)
        arguments: list[tuple[str, Any, Processor]] = []  # name, fixed value, processor
        for name in compiled.positiontup or ():
            bind = compiled.binds[name]
            processor = bind.type.dialect_impl(dialect).bind_processor(dialect)
            if name in names:
                arguments.append((name, _GIVEN, processor))
            else:  # a value written in the statement itself
                value = bind.effective_value
                arguments.append((name, processor(value) if processor else value, None))
        self.arguments = tuple(arguments)
        columns = compat.result_columns(compiled)
        self.row: type[Row] | None = None
        # the columns whose values are converted (JSON, mostly), by position; the others are
        # taken as the driver gives them
        self.processed: tuple[tuple[int, Callable[[Any], Any]], ...] = ()
        if columns:
            keys = tuple(c.keyname for c in columns)
            self.row = cast(type[Row], type("Row", (Row,), {"__slots__": (), "keys": keys}))
            processors = (
                c.type.dialect_impl(dialect).result_processor(dialect, None) for c in columns
            )
            self.processed = tuple((i, p) for i, p in enumerate(processors) if p is not None)

    def values(self, params: Mapping[str, Any]) -> tuple[Any, ...]:
        return tuple(
            [
                value if value is not _GIVEN else (p(params[n]) if p else params[n])
                for n, value, p in self.arguments
            ]
        )

    def rows(self, fetched: list[tuple[Any, ...]]) -> list[Row]:
        assert self.row is not None
        make, processed = self.row, self.processed
        if not processed:
            return [make(r) for r in fetched]
        rows = []
        for fetched_row in fetched:
            values = list(fetched_row)
            for i, process in processed:
                values[i] = process(values[i])
            rows.append(make(values))
        return rows


_GIVEN = object()


class Direct:
    """One statement built once and its compiled forms, by parameter names; `last`: it ends
    its command (`statements.once(..., last=True)`)."""

    __slots__ = ("forms", "last", "statement")

    def __init__(self, statement: ClauseElement) -> None:
        self.statement = statement
        self.last = id(statement) in statements.LAST
        self.forms: dict[tuple[str, bool, tuple[str, ...]], _Form | None] = {}

    def form(self, names: tuple[str, ...], dialect: Dialect, many: bool) -> _Form | None:
        """The compiled form for these parameter names; None when SQLAlchemy must run it."""
        key = (dialect.name, many, names)
        if key in self.forms:
            return self.forms[key]
        compiled = self.statement.compile(
            dialect=dialect, column_keys=list(names), for_executemany=many
        )
        assert isinstance(compiled, SQLCompiler)
        plain = (
            dialect.paramstyle in ("qmark", "numeric_dollar")
            and not compiled.insert_prefetch
            and not compiled.update_prefetch
            and not compiled.literal_execute_params
            and not compiled.post_compile_params
            and not compiled.escaped_bind_names
            and all(
                name in names or not (bind.callable or bind.required)
                for name, bind in compiled.binds.items()
            )
        )
        found = self.forms[key] = _Form(compiled, names, dialect) if plain else None
        return found

    def run(self, driver: sqlite3.Connection, dialect: Dialect, params: Any) -> Result | None:
        """Execute on the driver with `params` (a dict, a list of dicts with the same keys,
        or None); None when SQLAlchemy must run it."""
        many = isinstance(params, list)
        first: Any = (params[0] if params else None) if many else params or {}
        if not isinstance(first, dict):
            return None
        names = tuple(first)
        if many and any(not isinstance(p, dict) or tuple(p) != names for p in params):
            return None  # rows of different columns: SQLAlchemy groups them
        form = self.form(names, dialect, many)
        if form is None:
            return None
        try:
            if many:
                cursor = driver.executemany(form.sql, [form.values(p) for p in params])
            else:
                cursor = driver.execute(form.sql, form.values(first))
            fetched = cursor.fetchall() if form.row is not None else []
            rowcount = cursor.rowcount
            cursor.close()
        except sqlite3.Error as error:
            raise exc.DBAPIError.instance(
                form.sql, params, error, sqlite3.Error, dialect=dialect, ismulti=many
            ) from error
        return Result(form.rows(fetched) if fetched else [], rowcount, form.row is not None)

    async def run_on(self, adapter: Any, dialect: Dialect, params: Any) -> Result | None:
        """Execute on PostgreSQL through the asyncpg connection of SQLAlchemy's `adapter`,
        with `params` (a dict or None); None when SQLAlchemy must run it (a list of rows)."""
        if params is not None and not isinstance(params, dict):
            return None
        given = params or {}
        form = self.form(tuple(given), dialect, False)
        if form is None:
            return None
        try:
            prepared, attributes = await compat.prepare(adapter, form.sql, dialect)
            fetched = await prepared.fetch(*form.values(given))
            status = prepared.get_statusmsg()
        except Exception as error:
            raise _translated(error, adapter, dialect, form.sql, params) from error
        counted = _COUNTED.match(status or "")
        rowcount = int(counted.group(1)) if counted else -1
        if form.row is not None:
            return Result(form.rows(fetched) if fetched else [], rowcount, True, form.writes)
        # a text() statement: its columns are known only from the prepared statement
        keys = tuple(a.name for a in attributes or ())
        row = _plain_row(keys)
        return Result([row(r) for r in fetched], rowcount, bool(keys), form.writes)


_COUNTED = re.compile(r"(?:SELECT|UPDATE|DELETE|INSERT \d+) (\d+)")  # as the adapter reads it
_plain_rows: dict[tuple[str, ...], type[Row]] = {}


def _plain_row(keys: tuple[str, ...]) -> type[Row]:
    found = _plain_rows.get(keys)
    if found is None:
        found = _plain_rows[keys] = cast(
            type[Row], type("Row", (Row,), {"__slots__": (), "keys": keys})
        )
    return found


def _translated(
    error: Exception, adapter: Any, dialect: Dialect, sql: str, params: Any
) -> Exception:
    """The driver's error as SQLAlchemy raises it (IntegrityError and the rest), by way of
    the adapter's own translation into its DBAPI's exceptions."""
    dbapi_error = compat.dbapi_error(adapter, error)
    base = dialect.loaded_dbapi.Error
    if isinstance(dbapi_error, base):
        return exc.DBAPIError.instance(sql, params, dbapi_error, base, dialect=dialect)
    return dbapi_error
