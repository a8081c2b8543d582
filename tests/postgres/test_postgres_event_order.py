"""The event log on PostgreSQL, where writers commit in parallel: eight writer connections
whose commits land out of seq order, and readers polling meanwhile that must neither skip a
late commit nor read one twice, each task's events in the order of its moves."""

from __future__ import annotations

import asyncio
import random

import pytest
from factory import PACKET
from server import connect, postgres_only

from app.domain.principals import agent, person
from app.service import admin, creation, verbs
from app.service.inputs import HandoffInput
from app.storage.repositories.events import Events
from app.storage.store import Store

pytestmark = postgres_only

WRITERS = 8
TASKS_EACH = 2
ROUNDS = 15  # moves per task


@pytest.fixture
def commits_out_of_order(monkeypatch: pytest.MonkeyPatch) -> None:
    """Each writer lingers a random while between drawing its seqs and committing. Every
    write is then a transaction: a move's one statement would have committed before it."""
    append, write = Events.append, Store._write

    async def lingering(self, new, after=None):  # type: ignore[no-untyped-def]
        appended = await append(self, new, after)
        await asyncio.sleep(random.random() * 0.015)
        return appended

    monkeypatch.setattr(Events, "append", lingering)
    monkeypatch.setattr(Store, "_write", lambda self, alone=False, optimistic=False: write(self))


async def _tasks(store: Store, count: int) -> list[str]:
    alice, writer = person("alice"), agent("alice/writer")
    await admin.provision_token(store, alice)
    await admin.register_agent(store, alice, "writer")
    ids = []
    for _ in range(count):
        inp = HandoffInput(project="demo", assignee="alice/writer", packet=dict(PACKET))
        task = await creation.handoff(store, alice, inp)
        await verbs.accept_task(store, writer, task.id)
        ids.append(task.id)
    return ids


async def _write(url: str, task_ids: list[str]) -> None:
    """One writer: its own connection, moving its tasks round (accepted <-> waiting)."""
    store = Store(url)
    alice = person("alice")
    try:
        for _ in range(ROUNDS // 2):
            for task_id in task_ids:
                await verbs.stop_run(store, alice, task_id)
            for task_id in task_ids:
                await verbs.resume_run(store, alice, task_id)
        for task_id in task_ids[: ROUNDS % 2 and len(task_ids)]:
            await verbs.stop_run(store, alice, task_id)
    finally:
        await store.close()


async def _read(url: str, seen: list[tuple[int, str, int]], done: asyncio.Event) -> None:
    """A reader of the log through the repository, never looking back."""
    store = Store(url)
    try:
        while True:
            finished = done.is_set()
            head = seen[-1][0] if seen else 0
            async with store.read() as tx:
                batch = await tx.events.after(head, 1000)
            seen.extend((e.seq, e.task_id, e.version) for e in batch)
            if finished and not batch:
                return
            await asyncio.sleep(0.001)
    finally:
        await store.close()


async def _read_naively(url: str, seen: list[int], done: asyncio.Event) -> None:
    """A reader without the safe bound: it skips whatever commits below what it has read."""
    conn = await connect(url)
    try:
        while not done.is_set():
            head = seen[-1] if seen else 0
            rows = await conn.fetch("SELECT seq FROM events WHERE seq > $1 ORDER BY seq", head)
            seen.extend(r["seq"] for r in rows)
            await asyncio.sleep(0.0005)
    finally:
        await conn.close()


async def test_eight_writers_committing_out_of_order_readers_get_every_event_once_in_order(
    store: Store, commits_out_of_order: None
) -> None:
    ids = await _tasks(store, WRITERS * TASKS_EACH)
    async with store.read() as tx:
        setup = await tx.events.last_seq()
    done = asyncio.Event()
    readers: list[list[tuple[int, str, int]]] = [[], []]
    naive: list[int] = []
    reading = [asyncio.create_task(_read(store.url, r, done)) for r in readers]
    reading.append(asyncio.create_task(_read_naively(store.url, naive, done)))
    groups = [ids[i::WRITERS] for i in range(WRITERS)]
    await asyncio.gather(*(_write(store.url, g) for g in groups))
    done.set()
    await asyncio.gather(*reading)

    conn = await connect(store.url)
    try:
        log = [r["seq"] for r in await conn.fetch("SELECT seq FROM events ORDER BY seq")]
    finally:
        await conn.close()
    written = len(ids) * ROUNDS
    assert len(log) == setup + written
    for seen in readers:
        assert [s for s, _, _ in seen] == log  # every event once, in seq order
        versions: dict[str, list[int]] = {}
        for _, task_id, version in seen:
            versions.setdefault(task_id, []).append(version)
        for got in versions.values():  # each task's moves in the order they were made
            assert got == sorted(got)
            assert len(set(got[-ROUNDS:])) == ROUNDS
    # the commits did land out of seq order: a reader without the bound skipped some
    assert set(naive) < set(log[: len(naive) and log.index(naive[-1]) + 1])
