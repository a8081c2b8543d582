"""One subscriber's stream: replay from a cursor (or a snapshot), then live, gapless."""

from __future__ import annotations

from collections.abc import AsyncGenerator, AsyncIterator, Callable
from dataclasses import dataclass

from app.domain.actors import sees
from app.domain.events import Event
from app.domain.principals import Principal
from app.domain.task import Task
from app.events.hub import FellBehind, Hub
from app.storage.store import Store

REPLAY_BATCH = 500

Wants = Callable[[Event], bool]
"""Whether a subscriber wants an event: its visibility and its filters."""


@dataclass(frozen=True)
class Filters:
    project: str | None = None
    task_id: str | None = None
    assignee: str | None = None


def task_of(event: Event) -> Task:
    return Task(**event.task, version=event.version, wait_agent=event.wait_agent)


def visible_to(principal: Principal, projects: set[str], filters: Filters) -> Wants:
    def wants(event: Event) -> bool:
        if filters.task_id is not None and event.task_id != filters.task_id:
            return False
        if filters.project is not None and event.project != filters.project:
            return False
        if filters.assignee is not None and event.task["assignee"] != filters.assignee:
            return False
        return event.project in projects or sees(principal, task_of(event))

    return wants


async def events_for(
    hub: Hub, store: Store, principal: Principal, filters: Filters, after: int | None
) -> AsyncGenerator[Event, None]:
    """Every event the principal may see, in seq order, without gap or duplicate."""
    async with store.read() as tx:
        projects = (
            set(await tx.projects.projects_of(principal.id)) if principal.is_person else set()
        )
    wants = visible_to(principal, projects, filters)
    sub = hub.subscribe(wants)
    try:
        cursor, version = after, 0
        if cursor is None and filters.task_id is not None:
            snapshot = await _snapshot(store, filters.task_id, wants)
            if snapshot is not None:
                yield snapshot
                cursor, version = snapshot.seq, snapshot.version
        if cursor is None:
            cursor = sub.start
        async for event in _replay(store, cursor, sub.start, wants, filters.task_id):
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


async def _snapshot(store: Store, task_id: str, wants: Wants) -> Event | None:
    """The task's current state as one event, at the log position it was read at."""
    async with store.read() as tx:
        last = await tx.events.last_seq()
        task = await tx.tasks.get(task_id)
    if task is None:
        return None
    event = Event(
        kind="snapshot",
        task_id=task.id,
        project=task.project,
        from_state=None,
        to_state=task.state,
        waiting_on=task.waiting_on,
        verb=None,
        actor=None,
        at=task.updated_at,
        version=task.version,
        task=task.to_protocol(),
        seq=last,
        wait_agent=task.wait_agent,
    )
    return event if wants(event) else None


async def _replay(
    store: Store,
    cursor: int,
    until: int,
    wants: Wants,
    task_id: str | None,
) -> AsyncIterator[Event]:
    while cursor < until:
        async with store.read() as tx:
            batch = await tx.events.after(cursor, REPLAY_BATCH, task_id=task_id)
        batch = [e for e in batch if e.seq <= until]
        if not batch:
            return
        for event in batch:
            if wants(event):
                yield event
        cursor = batch[-1].seq
