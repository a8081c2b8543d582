"""Test databases copied from templates built once per run: migrating a database takes
longer than most tests do.

Two kinds: `migrated` (the tables at the latest revision, nothing in them) and `cast` (that,
`setup` with tests/support/factory.py's cast and standing rules). On SQLite a template is a file,
copied. On PostgreSQL it is a database, copied by `CREATE DATABASE … TEMPLATE`; copying one
takes a few hundred milliseconds here (the new files are synced), so a test's copy is not
dropped after it but reset to the template's rows (every other session on it ended, every
table's rows deleted and the template's put back, in the order the foreign keys allow,
every sequence where the template's was) and given to a later test of the same kind.
Templates and copies are built on first use and removed at the end of the run (conftest.py's
`pytest_sessionfinish`).
"""

from __future__ import annotations

import asyncio
import shutil
import tempfile
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass
from graphlib import TopologicalSorter
from pathlib import Path
from typing import Any, Literal

from server import connect, new_database_name, pg_admin, pg_admin_execute, pg_url

from app.storage.migrate import upgrade
from app.storage.store import Store

Kind = Literal["migrated", "cast"]

_sqlite: dict[Kind, Path] = {}
_postgres: dict[Kind, str] = {}
_directory: list[Path] = []
_contents: dict[Kind, Contents] = {}  # each PostgreSQL template's rows and sequences
_free: dict[Kind, list[str]] = {}  # copies reset to their template, for the next test
_copies: list[str] = []  # every copy this run made


@dataclass
class Contents:
    """What a PostgreSQL template holds: each table's columns and rows (referenced tables
    first), each sequence's (last_value, is_called)."""

    tables: dict[str, tuple[list[str], list[tuple[Any, ...]]]]
    sequences: dict[str, tuple[int, bool]]


async def copy_sqlite(kind: Kind, path: Path) -> None:
    """The template of `kind` copied to `path`."""
    if kind not in _sqlite:
        if not _directory:
            _directory.append(Path(tempfile.mkdtemp(prefix="prickle-templates-")))
        template = _directory[0] / f"{kind}.db"
        await _build(kind, f"sqlite+aiosqlite:///{template}")
        _sqlite[kind] = template
    shutil.copyfile(_sqlite[kind], path)


async def pg_template(kind: Kind) -> str:
    """The name of the PostgreSQL template database of `kind` (no session stays on it)."""
    if kind not in _postgres:
        name = new_database_name(f"prickle_tpl_{kind}")
        await pg_admin_execute(f'CREATE DATABASE "{name}"')
        await _build(kind, pg_url(name))
        _contents[kind] = await _contents_of(pg_url(name))
        _postgres[kind] = name
    return _postgres[kind]


@asynccontextmanager
async def pg_copy(kind: Kind) -> AsyncIterator[str]:
    """A database with the rows of the template of `kind`, for as long as the block lasts:
    a copy reset after an earlier test, or a new one. Its URL."""
    name = await take(kind)
    yield pg_url(name)
    await give_back(kind, name)


async def take(kind: Kind) -> str:
    """The name of a database with the rows of the template of `kind`, until `give_back`."""
    template = await pg_template(kind)
    free = _free.setdefault(kind, [])
    if free:
        return free.pop()
    name = new_database_name("prickle_t")
    await pg_admin_execute(f'CREATE DATABASE "{name}" TEMPLATE "{template}"')
    _copies.append(name)
    return name


async def give_back(kind: Kind, name: str) -> None:
    """The database reset to its template's rows, for the next to `take` one of `kind`."""
    await _reset(name, _contents[kind])
    _free[kind].append(name)


async def _reset(name: str, contents: Contents) -> None:
    admin = await pg_admin()
    try:  # the servers and stores the test left are gone: nothing writes while it resets
        await admin.execute(
            "SELECT pg_terminate_backend(pid) FROM pg_stat_activity"
            " WHERE datname = $1 AND pid <> pg_backend_pid()",
            name,
        )
    finally:
        await admin.close()
    db = await connect(pg_url(name))
    try:
        async with db.transaction():  # referencing tables emptied first, filled last
            deletes = [f'DELETE FROM "{table}"' for table in reversed(contents.tables)]
            await db.execute("; ".join(deletes))
            for table, (columns, rows) in contents.tables.items():
                if rows:
                    await db.copy_records_to_table(table, records=rows, columns=columns)
            for sequence, (last_value, is_called) in contents.sequences.items():
                await db.execute("SELECT setval($1, $2, $3)", sequence, last_value, is_called)
    finally:
        await db.close()


_REFERENCES = """
SELECT c.relname, p.relname FROM pg_constraint f
JOIN pg_class c ON c.oid = f.conrelid JOIN pg_class p ON p.oid = f.confrelid
WHERE f.contype = 'f'
"""


async def _contents_of(url: str) -> Contents:
    """The template's rows, its tables in an order each table's referenced tables come
    before it (deleted the other way round), so that a reset needs no privilege beyond the
    tables' own: no foreign-key check is switched off."""
    db = await connect(url)
    try:
        names = "SELECT tablename FROM pg_tables WHERE schemaname = 'public' ORDER BY 1"
        graph: dict[str, set[str]] = {table: set() for (table,) in await db.fetch(names)}
        for table, referenced in await db.fetch(_REFERENCES):
            if table != referenced and table in graph:
                graph[table].add(referenced)
        tables = {}
        for table in TopologicalSorter(graph).static_order():
            statement = await db.prepare(f'SELECT * FROM "{table}"')
            columns = [a.name for a in statement.get_attributes()]
            tables[table] = (columns, [tuple(r) for r in await statement.fetch()])
        sequences = {}
        for (name,) in await db.fetch("SELECT sequencename FROM pg_sequences"):
            value, called = await db.fetchrow(f'SELECT last_value, is_called FROM "{name}"')
            sequences[name] = (value, called)
    finally:
        await db.close()
    return Contents(tables, sequences)


async def _build(kind: Kind, url: str) -> None:
    from factory import setup  # factory imports this module's callers' fixtures

    store = Store(url)
    try:
        await upgrade(store.engine)
        if kind == "cast":
            await setup(store)
        if url.startswith("sqlite"):
            async with store.engine.connect() as conn:  # all of it in the one file copied
                await conn.exec_driver_sql("PRAGMA wal_checkpoint(TRUNCATE)")
    finally:
        await store.close()


def remove_all() -> None:
    """Every template this run built: the files, and the PostgreSQL databases."""
    for directory in _directory:
        shutil.rmtree(directory, ignore_errors=True)
    if _postgres:
        asyncio.run(_drop(_copies + list(_postgres.values())))
    for built in (_directory, _sqlite, _postgres, _contents, _free, _copies):
        built.clear()


async def _drop(names: list[str]) -> None:
    admin = await pg_admin()
    try:
        for name in names:
            await admin.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
    finally:
        await admin.close()
