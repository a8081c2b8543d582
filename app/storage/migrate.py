"""Schema migrations: `prickle migrate` and `prickle serve` bring a database to head."""

from __future__ import annotations

from pathlib import Path

from alembic import command
from alembic.config import Config
from sqlalchemy.ext.asyncio import AsyncEngine

MIGRATIONS = Path(__file__).parent / "migrations"


def alembic_config() -> Config:
    config = Config()
    config.set_main_option("script_location", str(MIGRATIONS))
    return config


async def upgrade(engine: AsyncEngine, revision: str = "head") -> None:
    def run(sync_connection) -> None:  # type: ignore[no-untyped-def]
        config = alembic_config()
        config.attributes["connection"] = sync_connection
        command.upgrade(config, revision)

    async with engine.begin() as conn:
        await conn.run_sync(run)


async def autogenerate(engine: AsyncEngine, message: str) -> None:
    """Write a new revision from the difference between the tables and the database."""

    def run(sync_connection) -> None:  # type: ignore[no-untyped-def]
        config = alembic_config()
        config.attributes["connection"] = sync_connection
        command.revision(config, message=message, autogenerate=True)

    async with engine.begin() as conn:
        await conn.run_sync(run)
