"""The PostgreSQL pool: connections the database dropped (as a restart does) are replaced
before use, so the next request after a restart does not fail."""

from __future__ import annotations

import asyncio

from server import connect, postgres_only

from app.storage import engine as engine_module
from app.storage.migrate import upgrade
from app.storage.store import Store

pytestmark = postgres_only


async def _drop_every_other_connection(url: str) -> int:
    killer = await connect(url, timeout=10)
    try:
        return await killer.fetchval(
            "SELECT count(pg_terminate_backend(pid)) FROM pg_stat_activity"
            " WHERE datname = current_database() AND pid <> pg_backend_pid()"
        )
    finally:
        await killer.close()


async def _last_seq(store: Store) -> int:
    async with store.read() as tx:
        await asyncio.sleep(0.05)  # hold it, so that the reads below use several connections
        return await tx.events.last_seq()


async def test_connections_the_database_dropped_are_replaced_before_use(
    pg_database_url: str,
) -> None:
    store = Store(pg_database_url)
    await upgrade(store.engine)
    try:
        async with asyncio.timeout(30):
            assert await asyncio.gather(*(_last_seq(store) for _ in range(3))) == [0, 0, 0]
            assert await _drop_every_other_connection(pg_database_url) >= 3
            await asyncio.sleep(engine_module.IDLE_PING_SECONDS + 0.2)
            assert [await _last_seq(store) for _ in range(5)] == [0] * 5
    finally:
        await store.close()
