"""One subscriber's stream: replay from a cursor (or a snapshot), then live, gapless; one
event at a time (`events_for`) or in lists of up to a size (`batches_for`).

Visibility is the domain's rule (`app.domain.visibility.sees`) with the subscriber's project
memberships as they are now (kept current by the hub's `Memberships`). A replayed event is
judged by its task as it is now, as HTTP `task_events` judges it (in SQL, the rule's SQL
form: storage's `event_pages`); a live event by its task as the event left it, which is
the task as it is at the moment the event happens.
"""

from __future__ import annotations

from collections.abc import (
    AsyncGenerator,
    AsyncIterator,
    Awaitable,
    Callable,
    Container,
    Sequence,
)
from dataclasses import dataclass
from typing import Any, TypeVar

from app.domain.events import Event
from app.domain.principals import Principal
from app.domain.task import Task
from app.domain.visibility import sees
from app.events.hub import FellBehind, Hub
from app.storage.archive import served_after
from app.storage.event_reads import event_pages, row_pages
from app.storage.store import Store
from app.storage.tx import Tx

REPLAY_BATCH = 1000  # events read per statement while replaying
MAX_WINDOW = 64 * REPLAY_BATCH  # seqs a replay's statement ranges over at most

T = TypeVar("T")
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
    """Every event the principal may see, in seq order, without gap or duplicate; a cursor
    before the archived events is refused (`CursorArchived`)."""
    await _refuse_archived(store, after)
    member = principal.id if principal.is_person else None
    projects: Container[str] = await hub.memberships.track(member) if member else ()
    try:
        async for event in _stream(hub, store, principal, projects, filters, after):
            yield event
    finally:
        if member:
            hub.memberships.untrack(member)


async def _refuse_archived(store: Store, after: int | None) -> None:
    """CursorArchived when replaying from `after` would skip archived events (whatever the
    filters: a task's archived events are not replayed either)."""
    if after is not None:
        async with store.read() as tx:
            await served_after(tx, after)


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
    fields: Sequence[str] | None = None,
) -> AsyncGenerator[list[Event] | Rows, None]:
    """The same events as `events_for`, in lists of at most `size`: a replay in full lists,
    then live, each list what had arrived by the time the last was taken. With `fields`
    (of `app.storage.event_reads.ROW_FIELDS`), each replayed list is `Rows` of those
    fields instead of events: for a reader that sends only them."""
    await _refuse_archived(store, after)
    member = principal.id if principal.is_person else None
    projects: Container[str] = await hub.memberships.track(member) if member else ()
    try:
        async for batch in _batches(hub, store, principal, projects, filters, after, size, fields):
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
    size: int,
    fields: Sequence[str] | None,
) -> AsyncIterator[list[Event] | Rows]:
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
        page = -(-REPLAY_BATCH // size) * size  # whole lists a page, at least REPLAY_BATCH
        if fields is not None:
            pages = _replay_rows(
                store, principal, filters, cursor, sub.start, page, fields, version
            )
            held: list[Sequence[Any]] = []  # rows short of a full list, so far
            async for rows in pages:
                held += rows
                full = len(held) - len(held) % size
                for i in range(0, full, size):
                    yield Rows(held[i : i + size])
                held = held[full:]
            if held:
                yield Rows(held)
        else:
            batch: list[Event] = []
            async for event in _replay(store, principal, filters, cursor, sub.start, page):
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


async def _replay(
    store: Store,
    principal: Principal,
    filters: Filters,
    cursor: int,
    until: int,
    page: int = REPLAY_BATCH,
) -> AsyncIterator[Event]:
    """The events in (cursor, until] the principal sees now and the filters match, a page
    (one statement, visibility judged in SQL) at a time."""
    f = filters
    read = event_pages(principal, page, f.project, f.task_id, f.assignee)
    async for events in _pages(store, read, _event_seq, cursor, until, page):
        for event in events:
            yield event


class Rows(list[Sequence[Any]]):
    """Replayed events in seq order, each a row of the reader's fields (`batches_for`), then
    its seq and its version."""


def _replay_rows(
    store: Store,
    principal: Principal,
    filters: Filters,
    cursor: int,
    until: int,
    page: int,
    fields: Sequence[str],
    above_version: int,
) -> AsyncIterator[list[Sequence[Any]]]:
    """`_replay`'s events of a version above `above_version` (a snapshot's; 0 for all), as
    pages of rows (`row_pages`)."""
    f = filters
    read = row_pages(principal, page, fields, f.project, f.task_id, f.assignee, above_version)
    return _pages(store, read, _row_seq, cursor, until, page)


def _event_seq(event: Event) -> int:
    return event.seq


def _row_seq(row: Sequence[Any]) -> int:
    return int(row[-2])


async def _pages(
    store: Store,
    read: Callable[[Tx, int, int], Awaitable[list[T]]],
    seq: Callable[[T], int],
    cursor: int,
    until: int,
    page: int,
) -> AsyncIterator[list[T]]:
    """(cursor, until] in pages of at most `page`, in seq order, each page one statement,
    `read(tx, after, upto)`, over a window of seqs: `page` wide at first, twice as wide
    after each window that held less than half a page. A statement never ranges over the
    rest of the log: a planner without statistics (a fresh database, or autovacuum off)
    sorts every row its range matches before the limit, so pages over the whole rest made
    a replay quadratic (docs/performance.md). A full page goes on from its last seq, any
    other from its window's end: the windows cover (cursor, until] without gap or
    overlap."""
    width = page
    while cursor < until:
        upto = min(until, cursor + width)
        async with store.read() as tx:
            got = await read(tx, cursor, upto)
        if got:
            yield got
        if len(got) == page:
            cursor = seq(got[-1])
            continue
        cursor = upto
        if len(got) < page // 2:
            width = min(width * 2, MAX_WINDOW)
