"""Test databases copied from templates built once per run: migrating a database takes
longer than most tests do.

Two kinds: `migrated` (the tables at the latest revision, nothing in them) and `cast` (that,
`setup` with tests/factory.py's cast and standing rules). On SQLite a template is a file,
copied; on PostgreSQL it is a database, copied by `CREATE DATABASE … TEMPLATE`. Templates are
built on first use and removed at the end of the run (conftest.py's `pytest_sessionfinish`).
"""

from __future__ import annotations

import asyncio
import shutil
import tempfile
from pathlib import Path
from typing import Literal

from server import new_database_name, pg_admin, pg_admin_execute, pg_url

from app.storage.migrate import upgrade
from app.storage.store import Store

Kind = Literal["migrated", "cast"]

_sqlite: dict[Kind, Path] = {}
_postgres: dict[Kind, str] = {}
_directory: list[Path] = []


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
        _postgres[kind] = name
    return _postgres[kind]


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
        asyncio.run(_drop(list(_postgres.values())))
    _directory.clear()
    _sqlite.clear()
    _postgres.clear()


async def _drop(names: list[str]) -> None:
    admin = await pg_admin()
    try:
        for name in names:
            await admin.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
    finally:
        await admin.close()
