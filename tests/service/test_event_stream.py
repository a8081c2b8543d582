"""The event hub and streams, against a real database: order, resume, gaps, overflow."""

from __future__ import annotations

import asyncio

import pytest
from factory import PACKET

from app.domain.principals import agent, person
from app.events import stream as stream_module
from app.events.hub import FellBehind, Hub
from app.events.stream import Filters, Rows, batches_for, events_for
from app.service import admin, creation, verbs
from app.service.inputs import HandoffInput
from app.storage.event_reads import row_pages


async def _people(store):  # type: ignore[no-untyped-def]
    await admin.provision_token(store, person("alice"))
    await admin.register_agent(store, person("alice"), "coder")
    await admin.register_agent(store, person("alice"), "writer")
    return person("alice"), agent("alice/coder"), agent("alice/writer")


async def _routed(store, requester, project="demo"):  # type: ignore[no-untyped-def]
    inp = HandoffInput(project=project, assignee="alice/writer", packet=dict(PACKET))
    return await creation.handoff(store, requester, inp)


async def _take(stream, n: int, timeout: float = 10.0):  # type: ignore[no-untyped-def]
    out = []
    async with asyncio.timeout(timeout):
        async for event in stream:
            out.append(event)
            if len(out) == n:
                break
    return out


@pytest.fixture
async def hub(store):  # type: ignore[no-untyped-def]
    hub = Hub(store, poll_seconds=0.2)
    await hub.start()
    try:
        yield hub
    finally:
        await hub.stop()


async def test_live_events_arrive_in_order_with_matching_states(store, hub) -> None:
    alice, coder, writer = await _people(store)
    stream = events_for(hub, store, alice, Filters(), after=None)
    first = asyncio.ensure_future(_take(stream, 4))
    async with asyncio.timeout(5):  # until the stream has subscribed: then it hears what follows
        while not hub.subscribers:
            await asyncio.sleep(0.01)
    task = await _routed(store, coder)
    await verbs.accept_task(store, writer, task.id)
    await verbs.start_task(store, writer, task.id)
    events = await first
    assert [(e.kind, e.from_state, e.to_state) for e in events] == [
        ("created", None, "requested"),
        ("moved", "requested", "routed"),
        ("moved", "routed", "accepted"),
        ("moved", "accepted", "working"),
    ]
    assert [e.seq for e in events] == sorted(e.seq for e in events)
    await stream.aclose()


async def test_resume_from_a_cursor_replays_exactly_what_came_after(store, hub) -> None:
    alice, coder, writer = await _people(store)
    task = await _routed(store, coder)
    async with store.read() as tx:
        cursor = await tx.events.last_seq()
    await verbs.accept_task(store, writer, task.id)
    await verbs.start_task(store, writer, task.id)
    await verbs.stop_run(store, alice, task.id)
    stream = events_for(hub, store, alice, Filters(task_id=task.id), after=cursor)
    replayed = await _take(stream, 3)
    assert [e.verb for e in replayed] == ["accept_task", "start_task", "stop_run"]
    live = asyncio.ensure_future(_take(stream, 1))
    await verbs.resume_run(store, alice, task.id)
    assert [e.verb for e in await live] == ["resume_run"]
    await stream.aclose()


async def test_moves_made_while_nobody_listens_are_not_delivered_live_but_replay(
    store, hub
) -> None:
    """With no subscriber the hub follows the commits without reading them; a subscriber
    that comes later hears only what happens after it, and a cursor still replays all."""
    alice, coder, writer = await _people(store)
    quiet = await _routed(store, coder)
    await verbs.accept_task(store, writer, quiet.id)
    async with store.read() as tx:
        last = await tx.events.last_seq()
    async with asyncio.timeout(5):
        while hub.head < last:
            await asyncio.sleep(0.01)
    assert hub.head == last
    live = events_for(hub, store, alice, Filters(), after=None)
    heard = asyncio.ensure_future(_take(live, 1))
    async with asyncio.timeout(5):  # until the stream has subscribed: then it hears what follows
        while not hub.subscribers:
            await asyncio.sleep(0.01)
    await verbs.start_task(store, writer, quiet.id)
    assert [(e.verb, e.seq) for e in await heard] == [("start_task", last + 1)]
    replay = events_for(hub, store, alice, Filters(), after=0)
    assert [e.verb for e in await _take(replay, 4)] == [
        "handoff",
        "handoff",
        "accept_task",
        "start_task",
    ]
    await live.aclose()
    await replay.aclose()


async def test_a_task_subscription_without_cursor_starts_with_a_snapshot(store, hub) -> None:
    alice, coder, writer = await _people(store)
    task = await _routed(store, coder)
    stream = events_for(hub, store, alice, Filters(task_id=task.id), after=None)
    (snapshot,) = await _take(stream, 1)  # subscribed before the snapshot is read
    await verbs.accept_task(store, writer, task.id)
    (moved,) = await _take(stream, 1)
    assert (snapshot.kind, snapshot.to_state, snapshot.version) == ("snapshot", "routed", 2)
    assert (moved.kind, moved.to_state) == ("moved", "accepted")
    assert moved.seq > snapshot.seq
    await stream.aclose()


async def test_concurrent_writers_give_one_gapless_ordered_sequence(store, hub) -> None:
    alice, coder, writer = await _people(store)
    tasks = [await _routed(store, coder) for _ in range(10)]
    async with store.read() as tx:
        start = await tx.events.last_seq()
    stream = events_for(hub, store, alice, Filters(), after=start)
    got = asyncio.ensure_future(_take(stream, 30, timeout=30))

    async def drive(task_id: str) -> None:
        await verbs.accept_task(store, writer, task_id)
        await verbs.start_task(store, writer, task_id)
        await verbs.stop_run(store, alice, task_id)

    await asyncio.gather(*(drive(t.id) for t in tasks))
    events = await got
    assert [e.seq for e in events] == list(range(start + 1, start + 31))
    for t in tasks:
        mine = [e.to_state for e in events if e.task_id == t.id]
        assert mine == ["accepted", "working", "waiting"]
    await stream.aclose()


async def test_a_subscriber_never_sees_tasks_it_cannot_see(store, hub) -> None:
    alice, coder, writer = await _people(store)
    await admin.provision_token(store, person("mallory"))
    await admin.register_agent(store, person("mallory"), "spy")
    spy_stream = events_for(hub, store, agent("mallory/spy"), Filters(), after=0)
    owner_stream = events_for(hub, store, alice, Filters(), after=0)
    task = await _routed(store, coder)
    await verbs.accept_task(store, writer, task.id)
    seen = await _take(owner_stream, 3)
    assert {e.task_id for e in seen} == {task.id}
    with pytest.raises(TimeoutError):
        await _take(spy_stream, 1, timeout=0.5)
    await spy_stream.aclose()
    await owner_stream.aclose()


async def test_a_subscriber_that_falls_behind_is_closed_and_released(store) -> None:
    hub = Hub(store, queue_size=3, poll_seconds=0.2)
    await hub.start()
    try:
        alice, coder, _writer = await _people(store)
        stream = events_for(hub, store, alice, Filters(), after=None)
        first = asyncio.ensure_future(stream.__anext__())
        await asyncio.sleep(0.05)
        for _ in range(3):
            await _routed(store, coder)
        await first
        await asyncio.sleep(0.5)  # the hub fills the queue past its bound meanwhile
        with pytest.raises(FellBehind):
            async with asyncio.timeout(5):
                async for _ in stream:
                    pass
        assert hub.subscribers == set()
    finally:
        await hub.stop()


ROW_FIELDS = ("cursor", "seq", "kind", "task_id", "to_state", "version")


async def _lists(stream, total: int) -> list[list]:  # type: ignore[no-untyped-def]
    """The stream's lists until they hold `total` items between them; the stream closed."""
    out: list[list] = []
    async with asyncio.timeout(10):
        async for batch in stream:
            out.append(batch)
            if sum(len(b) for b in out) >= total:
                break
    await stream.aclose()
    return out


async def test_a_replay_of_rows_holds_exactly_the_events_of_a_replay_of_events(
    store, hub, monkeypatch
) -> None:
    """Pages of 4 over windows of seqs that widen where the subscriber sees little (another
    owner's tasks between its own): rows of the asked fields hold the same events as a
    replay of whole events, in the same full lists, without gap or duplicate."""
    monkeypatch.setattr(stream_module, "REPLAY_BATCH", 4)
    monkeypatch.setattr(stream_module, "MAX_WINDOW", 16)
    alice, coder, writer = await _people(store)
    await admin.provision_token(store, person("mallory"))
    await admin.register_agent(store, person("mallory"), "spy")
    await admin.register_agent(store, person("mallory"), "worker")
    hidden = HandoffInput(project="hidden", assignee="mallory/worker", packet=dict(PACKET))
    mine: set[str] = set()
    for _ in range(4):
        for _ in range(10):  # a long stretch alice cannot see: the window widens
            await creation.handoff(store, agent("mallory/spy"), hidden)
        for n in range(3):  # then more of hers than a page within one window
            task = await _routed(store, coder)
            mine.add(task.id)
            if n == 0:
                await verbs.accept_task(store, writer, task.id)
    async with store.read() as tx:
        log = await tx.events.after(0, 10_000)
    expected = [e for e in log if e.task_id in mine]
    assert len(expected) == 4 * 7 and len(log) > 3 * len(expected)

    as_events = await _lists(batches_for(hub, store, alice, Filters(), 0, 3), len(expected))
    as_rows = await _lists(
        batches_for(hub, store, alice, Filters(), 0, 3, ROW_FIELDS), len(expected)
    )
    full = [3] * (len(expected) // 3) + ([len(expected) % 3] if len(expected) % 3 else [])
    assert [len(b) for b in as_rows] == [len(b) for b in as_events] == full
    assert all(isinstance(b, Rows) for b in as_rows)
    rows = [tuple(r) for b in as_rows for r in b]
    assert rows == [
        (e.cursor, e.seq, e.kind, e.task_id, e.to_state, e.version, e.seq, e.version)
        for e in expected
    ]
    assert [e.seq for b in as_events for e in b] == [e.seq for e in expected]


async def test_rows_after_a_snapshot_are_only_those_of_a_later_version(store) -> None:
    alice, coder, writer = await _people(store)
    task = await _routed(store, coder)
    await verbs.accept_task(store, writer, task.id)
    await verbs.start_task(store, writer, task.id)
    read = row_pages(alice, 100, ("kind", "version"), task_id=task.id, above_version=2)
    async with store.read() as tx:
        rows = await read(tx, 0, await tx.events.last_seq())
    assert [tuple(r)[:2] for r in rows] == [("moved", 3), ("moved", 4)]
