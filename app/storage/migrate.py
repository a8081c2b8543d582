"""Schema migrations: `prickle migrate` and `prickle serve` bring a database to head."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from alembic import command
from alembic.config import Config
from sqlalchemy import Connection, func, select
from sqlalchemy.ext.asyncio import AsyncEngine

MIGRATIONS = Path(__file__).parent / "migrations"
# pg_advisory_xact_lock key ("prickle" in ASCII) serialising upgrades across processes.
MIGRATION_LOCK = 0x707269636B6C65


def alembic_config() -> Config:
    config = Config()
    config.set_main_option("script_location", str(MIGRATIONS))
    return config


async def upgrade(engine: AsyncEngine, revision: str = "head") -> None:
    """Upgrade in one transaction. On PostgreSQL it first takes an advisory lock held until
    commit, so processes starting together upgrade one after the other: the first migrates,
    the others then find the database at head (DDL is transactional there)."""

    def run(sync_connection: Connection) -> None:
        config = alembic_config()
        config.attributes["connection"] = sync_connection
        command.upgrade(config, revision)

    if engine.dialect.name == "sqlite":
        await _on_sqlite(engine, run)
        return
    async with engine.begin() as conn:
        if conn.dialect.name == "postgresql":
            await conn.exec_driver_sql("SET LOCAL statement_timeout = 0")  # a long migration
            await conn.execute(select(func.pg_advisory_xact_lock(MIGRATION_LOCK)))
        await conn.run_sync(run)


async def _on_sqlite(engine: AsyncEngine, run: Callable[[Connection], None]) -> None:
    """SQLite rebuilds a table to change its constraints (batch mode); a rebuild drops the
    old table, which foreign keys being enforced would refuse. So they are off for the
    upgrade (the pragma holds outside a transaction only), and every row is checked against
    them before the upgrade commits. Likewise for a downgrade."""
    async with engine.connect() as conn:
        raw = await conn.get_raw_connection()
        await raw.driver_connection.execute("PRAGMA foreign_keys=OFF")  # type: ignore[union-attr]
        try:
            async with conn.begin():
                await conn.run_sync(run)
                broken = (await conn.exec_driver_sql("PRAGMA foreign_key_check")).all()
                if broken:
                    raise RuntimeError(f"rows break foreign keys: {broken[:5]}")
        finally:
            await raw.driver_connection.execute("PRAGMA foreign_keys=ON")  # type: ignore[union-attr]


async def downgrade(engine: AsyncEngine, revision: str) -> None:
    """Take the database back to `revision`, in one transaction (by hand: never at serve)."""

    def run(sync_connection: Connection) -> None:
        config = alembic_config()
        config.attributes["connection"] = sync_connection
        command.downgrade(config, revision)

    if engine.dialect.name == "sqlite":
        await _on_sqlite(engine, run)
        return
    async with engine.begin() as conn:
        await conn.run_sync(run)


async def autogenerate(engine: AsyncEngine, message: str) -> None:
    """Write a new revision from the difference between the tables and the database."""

    def run(sync_connection: Connection) -> None:
        config = alembic_config()
        config.attributes["connection"] = sync_connection
        command.revision(config, message=message, autogenerate=True)

    async with engine.begin() as conn:
        await conn.run_sync(run)
