"""`AsyncClient.events`: across a server restart, nothing missed and nothing twice."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator

import pytest
from conftest import packet
from harness import Server, running
from prickle_client import AsyncClient, Client, Event


@pytest.fixture
def restartable(tmp_path: object) -> Iterator[Server]:
    with running(tmp_path, "--rate-limit", "0") as server:  # type: ignore[arg-type]
        yield server


async def all_events(client: AsyncClient, project: str) -> list[int]:
    """The seqs of the project's whole log, read with the task_events query."""
    seqs: list[int] = []
    after: str | None = None
    while True:
        page = await client.task_events(project=project, after=after, first=100)
        if not page:
            return seqs
        seqs += [event.seq for event in page]
        after = page[-1].cursor


async def wait_for(received: list[Event], count: int) -> None:
    async with asyncio.timeout(30):
        while len(received) < count:
            await asyncio.sleep(0.05)


async def test_the_stream_resumes_after_a_restart(restartable: Server) -> None:
    server = restartable
    token = server.owner_token
    server.register(token, "worker")
    received: list[Event] = []
    async with AsyncClient(server.url, token) as owner:
        stream = owner.events(project="live")

        async def follow() -> None:
            async for event in stream:
                received.append(event)

        follower = asyncio.create_task(follow())
        await asyncio.sleep(0.5)  # subscribed
        for _ in range(3):
            await owner.handoff("live", "admin/worker", packet(), display_title="before")
        await wait_for(received, len(await all_events(owner, "live")))

        server.stop()
        await asyncio.sleep(0.5)  # the stream is now reconnecting
        await asyncio.to_thread(server.start, "--rate-limit", "0")
        for _ in range(3):  # made before the stream is back: replayed from its cursor
            await owner.handoff("live", "admin/worker", packet(), display_title="after")
        logged = await all_events(owner, "live")
        await wait_for(received, len(logged))
        await asyncio.sleep(0.5)  # nothing more comes
        follower.cancel()

    seqs = [event.seq for event in received]
    assert seqs == logged and len(set(seqs)) == len(seqs)
    assert stream.reconnections >= 1 and stream.cursor == received[-1].cursor


async def test_batches_catch_up_in_lists_and_resume_after_a_restart(
    restartable: Server,
) -> None:
    server = restartable
    token = server.owner_token
    server.register(token, "worker")
    batches: list[list[Event]] = []
    received: list[Event] = []
    async with AsyncClient(server.url, token) as owner:
        for _ in range(3):  # before the subscription: caught up in lists of two
            await owner.handoff("batched", "admin/worker", packet())
        stream = owner.event_batches(project="batched", after="0", batch_size=2)

        async def follow() -> None:
            async for batch in stream:
                batches.append(batch)
                received.extend(batch)

        follower = asyncio.create_task(follow())
        await wait_for(received, len(await all_events(owner, "batched")))
        server.stop()
        await asyncio.sleep(0.5)  # the stream is now reconnecting
        await asyncio.to_thread(server.start, "--rate-limit", "0")
        for _ in range(2):
            await owner.handoff("batched", "admin/worker", packet())
        logged = await all_events(owner, "batched")
        await wait_for(received, len(logged))
        await asyncio.sleep(0.5)  # nothing more comes
        follower.cancel()

    assert [event.seq for event in received] == logged
    assert all(1 <= len(batch) <= 2 for batch in batches) and len(batches[0]) == 2
    assert stream.reconnections >= 1 and stream.cursor == received[-1].cursor


def test_the_blocking_client_follows_events_and_resumes_after_a_restart(
    restartable: Server,
) -> None:
    """`Client.events`, iterated with `next`: every event once, in order, across a restart;
    its cursor is the last one's, and `close()` ends the subscription."""
    server = restartable
    token = server.owner_token
    server.register(token, "worker")
    with Client(server.url, token) as owner:
        made = [owner.handoff("blocking", "admin/worker", packet()) for _ in range(2)]
        stream = owner.events(project="blocking", after="0")
        received = [next(stream) for _ in range(4)]  # two events a handoff
        server.stop()
        server.start("--rate-limit", "0")
        made.append(owner.handoff("blocking", "admin/worker", packet()))
        received += [next(stream) for _ in range(2)]
        logged = [e.seq for e in owner.task_events(project="blocking", first=100)]
        stream.close()
        with pytest.raises(StopIteration):
            next(stream)
    assert [e.seq for e in received] == logged
    assert {e.task_id for e in received} == {t.id for t in made}
    assert stream.reconnections >= 1 and stream.cursor == received[-1].cursor
