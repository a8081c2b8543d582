"""The hub's LISTEN connection on PostgreSQL: it wakes the hub for other processes' commits,
and when it drops the hub logs it, catches up and listens again. A process with a hub
announces its own commits, several at a time (app/events/announcer.py).

A second `Store` on the same database stands in for another process: its commits do not
call this hub's `wake`, so only a notification (or the poll, set very slow here) can.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

import asyncpg
import pytest
from factory import PACKET
from server import postgres_only

from app.domain.principals import person
from app.events import announcer as announcer_module
from app.events import listener as listener_module
from app.events.hub import Hub
from app.service import admin, creation
from app.service.inputs import HandoffInput
from app.storage.migrate import upgrade
from app.storage.repositories.events import NOTIFY_CHANNEL
from app.storage.store import Store

pytestmark = postgres_only

ALICE = person("alice")


@pytest.fixture
async def stores(pg_database_url: str) -> AsyncIterator[tuple[Store, Store]]:
    """(the hub's store, another process's store) on one migrated database."""
    here, there = Store(pg_database_url), Store(pg_database_url)
    await upgrade(here.engine)
    await admin.register_agent(there, ALICE, "writer")
    try:
        yield here, there
    finally:
        await here.close()
        await there.close()


async def _handoff(store: Store) -> int:
    inp = HandoffInput(project="demo", assignee="alice/writer", packet=dict(PACKET))
    await creation.handoff(store, ALICE, inp)
    async with store.read() as tx:
        return await tx.events.last_seq()


async def _until_head(hub: Hub, seq: int, timeout: float) -> float:
    """Seconds until the hub has dispatched `seq`."""
    began = time.monotonic()
    async with asyncio.timeout(timeout):
        while hub.head < seq:
            await asyncio.sleep(0.01)
    return time.monotonic() - began


async def test_a_commit_in_another_process_wakes_the_hub_at_once(stores) -> None:  # type: ignore[no-untyped-def]
    here, there = stores
    hub = Hub(here, poll_seconds=60)
    await hub.start()
    try:
        for _ in range(3):
            assert await _until_head(hub, await _handoff(there), timeout=2) < 1
    finally:
        await hub.stop()


async def test_a_dropped_listen_connection_is_logged_caught_up_and_reopened(
    stores, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:  # type: ignore[no-untyped-def]
    monkeypatch.setattr(listener_module, "RETRY_SECONDS", (0.2, 1.0))
    here, there = stores
    hub = Hub(here, poll_seconds=60)
    await hub.start()
    caplog.set_level(logging.INFO, logger="app.events.listener")
    try:
        assert hub.listener is not None
        first = hub.listener.connection
        async with there.read() as tx:
            await tx.conn.exec_driver_sql(
                f"SELECT pg_terminate_backend({first.get_server_pid()})"  # type: ignore[union-attr]
            )
        # committed while nobody listens: the reconnection wakes the hub, which reads it
        assert await _until_head(hub, await _handoff(there), timeout=5) < 5
        again = hub.listener.connection
        assert again is not first and again is not None and not again.is_closed()
        # and the new connection listens
        assert await _until_head(hub, await _handoff(there), timeout=2) < 1
    finally:
        await hub.stop()
    messages = [r.getMessage() for r in caplog.records]
    assert any("LISTEN connection was lost and is back after" in m for m in messages), messages


@asynccontextmanager
async def _heard(url: str) -> AsyncIterator[list[int]]:
    """The seqs announced on `prickle_events` while the block runs, as they arrive."""
    conn = await asyncpg.connect(url.replace("postgresql+asyncpg://", "postgresql://", 1))
    payloads: list[int] = []
    await conn.add_listener(NOTIFY_CHANNEL, lambda *args: payloads.append(int(args[-1])))
    try:
        yield payloads
    finally:
        await conn.close()


async def _until_heard(payloads: list[int], seq: int, timeout: float) -> None:
    async with asyncio.timeout(timeout):
        while not payloads or payloads[-1] < seq:
            await asyncio.sleep(0.01)


async def test_a_serving_process_announces_its_commits_after_them_several_at_a_time(
    stores, pg_database_url: str, monkeypatch: pytest.MonkeyPatch
) -> None:  # type: ignore[no-untyped-def]
    monkeypatch.setattr(announcer_module, "ANNOUNCE_SECONDS", 0.5)
    here, there = stores
    listening, writing = Hub(here, poll_seconds=60), Hub(there, poll_seconds=60)
    await listening.start()
    await writing.start()
    try:
        async with _heard(pg_database_url) as payloads:
            seqs = [await _handoff(there) for _ in range(10)]
            # the first at once; those committed within the next half second together
            await _until_heard(payloads, seqs[-1], timeout=5)
            assert await _until_head(listening, seqs[-1], timeout=2) < 1
        assert payloads[0] == seqs[0]
        assert len(payloads) < len(seqs), payloads
        assert payloads == sorted(payloads) and payloads[-1] == seqs[-1]
    finally:
        await writing.stop()
        await listening.stop()


async def test_a_stopping_process_announces_what_it_has_not_told_yet(
    stores, pg_database_url: str, monkeypatch: pytest.MonkeyPatch
) -> None:  # type: ignore[no-untyped-def]
    monkeypatch.setattr(announcer_module, "ANNOUNCE_SECONDS", 30)
    _, there = stores
    writing = Hub(there, poll_seconds=60)
    await writing.start()
    async with _heard(pg_database_url) as payloads:
        first = await _handoff(there)
        await _until_heard(payloads, first, timeout=5)
        last = await _handoff(there)  # waits for the gap after the first's announcement
        await asyncio.sleep(0.2)
        assert payloads == [first]
        await writing.stop()
        await _until_heard(payloads, last, timeout=5)
    assert payloads == [first, last]
    assert there.announces  # a store without its hub announces each commit itself
    async with _heard(pg_database_url) as payloads:
        await _until_heard(payloads, await _handoff(there), timeout=5)
