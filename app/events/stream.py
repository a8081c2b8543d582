"""One subscriber's stream: replay from a cursor (or a snapshot), then live, gapless; one
event at a time (`events_for`) or in lists of up to a size (`batches_for`).

Visibility is the domain's rule (`app.domain.visibility.sees`) with the subscriber's project
memberships as they are now (kept current by the hub's `Memberships`). A replayed event is
judged by its task as it is now, as HTTP `task_events` judges it (in SQL, the rule's SQL
form: app/storage/event_reads.py); a live event by its task as the event left it, which is
the task as it is at the moment the event happens.
"""

from __future__ import annotations

from collections.abc import AsyncGenerator, AsyncIterator, Callable, Container
from dataclasses import dataclass

from app.domain.events import Event
from app.domain.principals import Principal
from app.domain.task import Task
from app.domain.visibility import sees
from app.events.hub import FellBehind, Hub
from app.storage.event_reads import replay_page
from app.storage.store import Store

REPLAY_BATCH = 1000  # events read per statement while replaying

Wants = Callable[[Event], bool]
"""Whether a subscriber wants an event: its visibility and its filters."""


@dataclass(frozen=True)
class Filters:
    project: str | None = None
    task_id: str | None = None
    assignee: str | None = None

    def match(self, event: Event) -> bool:
        return (
            (self.task_id is None or event.task_id == self.task_id)
            and (self.project is None or event.project == self.project)
            and (self.assignee is None or event.task["assignee"] == self.assignee)
        )


def task_of(event: Event) -> Task:
    return Task(**event.task, version=event.version, wait_agent=event.wait_agent)


def visible_to(principal: Principal, projects: Container[str], filters: Filters) -> Wants:
    """A live event the subscriber wants: its filters match, and it sees the task as the event
    left it."""

    def wants(event: Event) -> bool:
        return filters.match(event) and sees(principal, task_of(event), projects)

    return wants


async def events_for(
    hub: Hub, store: Store, principal: Principal, filters: Filters, after: int | None
) -> AsyncGenerator[Event, None]:
    """Every event the principal may see, in seq order, without gap or duplicate."""
    member = principal.id if principal.is_person else None
    projects: Container[str] = await hub.memberships.track(member) if member else ()
    try:
        async for event in _stream(hub, store, principal, projects, filters, after):
            yield event
    finally:
        if member:
            hub.memberships.untrack(member)


async def _stream(
    hub: Hub,
    store: Store,
    principal: Principal,
    projects: Container[str],
    filters: Filters,
    after: int | None,
) -> AsyncIterator[Event]:
    wants = visible_to(principal, projects, filters)
    sub = await hub.subscribe(wants)
    try:
        cursor, version = after, 0
        if cursor is None and filters.task_id is not None:
            snapshot = await _snapshot(store, filters.task_id, wants)
            if snapshot is not None:
                yield snapshot
                cursor, version = snapshot.seq, snapshot.version
        if cursor is None:
            cursor = sub.start
        async for event in _replay(store, principal, filters, cursor, sub.start):
            cursor = event.seq
            if event.version > version:
                yield event
        cursor = max(cursor, sub.start)
        while True:
            try:
                event = await sub.next()
            except FellBehind:
                raise FellBehind(cursor) from None
            if event.seq > cursor:
                cursor = event.seq
                if event.version > version:
                    yield event
    finally:
        hub.unsubscribe(sub)


async def batches_for(
    hub: Hub,
    store: Store,
    principal: Principal,
    filters: Filters,
    after: int | None,
    size: int,
    with_task: bool = True,
) -> AsyncGenerator[list[Event], None]:
    """The same events as `events_for`, in lists of at most `size`: a replay in full lists,
    then live, each list what had arrived by the time the last was taken. Without
    `with_task`, replayed events' `task` is left empty (the reader sends only their own
    fields)."""
    member = principal.id if principal.is_person else None
    projects: Container[str] = await hub.memberships.track(member) if member else ()
    try:
        replay = _Replay(size, with_task)
        async for batch in _batches(hub, store, principal, projects, filters, after, replay):
            yield batch
    finally:
        if member:
            hub.memberships.untrack(member)


async def _batches(
    hub: Hub,
    store: Store,
    principal: Principal,
    projects: Container[str],
    filters: Filters,
    after: int | None,
    replay: _Replay,
) -> AsyncIterator[list[Event]]:
    size = replay.size
    sub = await hub.subscribe(visible_to(principal, projects, filters))
    try:
        cursor, version = after, 0
        if cursor is None and filters.task_id is not None:
            snapshot = await _snapshot(store, filters.task_id, sub.wants)
            if snapshot is not None:
                yield [snapshot]
                cursor, version = snapshot.seq, snapshot.version
        if cursor is None:
            cursor = sub.start
        batch: list[Event] = []
        page = max(size, REPLAY_BATCH)
        replayed = _replay(store, principal, filters, cursor, sub.start, page, replay.with_task)
        async for event in replayed:
            if event.version > version:
                batch.append(event)
                if len(batch) == size:
                    yield batch
                    batch = []
        if batch:
            yield batch
        cursor = max(cursor, sub.start)
        while True:
            try:
                arrived = [await sub.next(), *sub.drain(size - 1)]
            except FellBehind:
                raise FellBehind(cursor) from None
            batch = [e for e in arrived if e.seq > cursor and e.version > version]
            if batch:
                cursor = batch[-1].seq
                yield batch
    finally:
        hub.unsubscribe(sub)


async def _snapshot(store: Store, task_id: str, wants: Wants) -> Event | None:
    """The task's current state as one event, at the log position it was read at."""
    async with store.read() as tx:
        last = await tx.events.last_seq()
        task = await tx.tasks.get(task_id)
    if task is None:
        return None
    event = task.snapshot(last)
    return event if wants(event) else None


@dataclass(frozen=True)
class _Replay:
    size: int  # events a list at most
    with_task: bool  # read each replayed event's `task`


async def _replay(
    store: Store,
    principal: Principal,
    filters: Filters,
    cursor: int,
    until: int,
    page: int = REPLAY_BATCH,
    with_task: bool = True,
) -> AsyncIterator[Event]:
    """The events in (cursor, until] the principal sees now and the filters match, a page
    (one statement, visibility judged in SQL) at a time."""
    f = filters
    while cursor < until:
        async with store.read() as tx:
            batch = await replay_page(
                tx, principal, cursor, until, page, f.project, f.task_id, f.assignee, with_task
            )
        for event in batch:
            yield event
        if len(batch) < page:
            return
        cursor = batch[-1].seq
