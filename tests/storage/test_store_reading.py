"""A query's reads share one read transaction (Store.reading); a read that fails must not
spoil the reads after it, nor the end of the block (PostgreSQL aborts a transaction at its
first failed statement)."""

from __future__ import annotations

import asyncio

import pytest
from sqlalchemy import text
from sqlalchemy.exc import DBAPIError

from app.storage.store import Store

FAILS = text("SELECT CAST('not a number' AS INTEGER)")


async def _one(store: Store) -> int:
    async with store.read() as tx:
        value: int = (await tx.conn.execute(text("SELECT 1"))).scalar_one()
        return value


async def test_a_failed_read_leaves_the_next_read_of_the_block_working(store: Store) -> None:
    if store.sqlite:
        pytest.skip("SQLite casts any text to an integer: no statement here fails")
    async with store.reading():
        assert await _one(store) == 1
        with pytest.raises(DBAPIError):
            async with store.read() as tx:
                await tx.conn.execute(FAILS)
        assert await _one(store) == 1  # a new transaction, not the aborted one
    assert await _one(store) == 1


async def test_a_read_cancelled_in_flight_leaves_the_block_closing_cleanly(store: Store) -> None:
    async def slow() -> None:
        async with store.read() as tx:
            if store.sqlite:
                await asyncio.sleep(10)
            else:  # cancelled while the statement runs
                await tx.conn.execute(text("SELECT pg_sleep(10)"))

    async with store.reading():
        task = asyncio.create_task(slow())
        await asyncio.sleep(0.2)
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task
        assert await _one(store) == 1
    assert await _one(store) == 1
