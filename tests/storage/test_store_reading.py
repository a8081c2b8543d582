"""A query's reads share one read transaction (Store.reading); a read that fails must not
spoil the reads after it, nor the end of the block (PostgreSQL aborts a transaction at its
first failed statement)."""

from __future__ import annotations

import asyncio

import pytest
from factory import give, setup
from sqlalchemy import text
from sqlalchemy.exc import DBAPIError

from app.service import reads
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


# What a query's first screen counts and the event cursor it subscribes after must agree:
# every event is in the counts iff its seq is at most `event_head` or listed past it.

_EVENTS = text("SELECT count(*) FROM events")
_UPTO = text("SELECT count(*) FROM events WHERE seq <= :head")


async def _counted(store: Store) -> int:
    async with store.read() as tx:
        found: int = (await tx.conn.execute(_EVENTS)).scalar_one()
        return found


async def _agree(store: Store, counted: int, head: int, seen: list[int]) -> None:
    """`counted` events are exactly those at or below `head` and those `seen` past it."""
    assert all(seq > head for seq in seen) and seen == sorted(set(seen))
    async with store.fresh_read() as tx:
        upto: int = (await tx.conn.execute(_UPTO, {"head": head})).scalar_one()
        listed = await tx.rows(text("SELECT seq FROM events WHERE seq > :head"), {"head": head})
    assert {seq for (seq,) in listed} >= set(seen)
    assert counted == upto + len(seen)


async def test_a_move_committed_between_a_query_s_reads_is_counted_once(store: Store) -> None:
    if store.fast is None:
        pytest.skip("the plain path shares no read transaction among a query's reads")
    await setup(store)
    await give(store)
    before = await _counted(store)
    async with store.reading(snapshot=True):
        counted = await _counted(store)
        await give(store)  # committed by another connection between the query's reads
        head, seen = await reads.event_head(store)
    assert counted == before
    await _agree(store, counted, head, seen)


async def test_a_query_s_head_lists_what_it_holds_past_a_seq_still_to_commit(
    store: Store,
) -> None:
    if store.sqlite or store.fast is None:
        pytest.skip("PostgreSQL's writers commit out of seq order; the plain path shares none")
    await setup(store)
    await give(store)
    async with store.engine.connect() as writer:
        # a writer in flight: its seq drawn, below the next one, not committed
        await writer.execute(text("SELECT pg_current_xact_id()"))
        await writer.execute(text("SELECT nextval('events_seq')"))
        await give(store)  # a higher seq, committed
        async with store.reading(snapshot=True):
            counted = await _counted(store)
            head, seen = await reads.event_head(store)
        await writer.rollback()
    assert seen  # the newest is held though a seq below it may commit
    await _agree(store, counted, head, seen)
