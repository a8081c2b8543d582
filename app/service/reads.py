"""The read side: what a viewer may see, as domain objects, each call one read transaction.

A task the viewer may not see is absent from every answer here, counts included, exactly as
if it did not exist. The batch lookups take many ids and answer with one statement, whatever
their number; the API's loaders call them once per nested list.
"""

from __future__ import annotations

from collections.abc import Sequence

from app.domain.events import Event
from app.domain.principals import Principal
from app.domain.reads import EventFilters, Page, SavedCheckpoint, TaskFilters
from app.domain.task import JSON, Task
from app.storage import reads as sql
from app.storage.store import Store


async def task(store: Store, viewer: Principal, id: str) -> Task | None:
    """The task, or None when it does not exist or the viewer may not see it."""
    return (await tasks_by_id(store, viewer, [id])).get(id)


async def task_page(
    store: Store, viewer: Principal, filters: TaskFilters, first: int, after: str | None
) -> Page[Task]:
    """Up to `first` visible tasks matching the filters, by id, after the task `after`."""
    async with store.read() as tx:
        return await sql.task_page(tx, viewer, filters, first, after)


async def count_tasks(store: Store, viewer: Principal, filters: TaskFilters) -> int:
    async with store.read() as tx:
        return await sql.count_tasks(tx, viewer, filters)


async def event_page(
    store: Store, viewer: Principal, filters: EventFilters, first: int, after: int | None
) -> Page[Event]:
    """Up to `first` events of visible tasks, oldest first, after the event seq `after`."""
    async with store.read() as tx:
        return await sql.event_page(tx, viewer, filters, first, after)


async def count_task_events(store: Store, viewer: Principal, filters: EventFilters) -> int:
    async with store.read() as tx:
        return await sql.count_task_events(tx, viewer, filters)


async def tasks_by_id(store: Store, viewer: Principal, ids: Sequence[str]) -> dict[str, Task]:
    async with store.read() as tx:
        return await sql.tasks_by_id(tx, viewer, ids)


async def children_of(store: Store, viewer: Principal, ids: Sequence[str]) -> dict[str, list[Task]]:
    """Each task's visible subtasks, by id."""
    async with store.read() as tx:
        return await sql.children_of(tx, viewer, ids)


async def results_of(store: Store, viewer: Principal, ids: Sequence[str]) -> dict[str, list[JSON]]:
    """Each task's result revisions, first to latest."""
    async with store.read() as tx:
        return await sql.results_of(tx, viewer, ids)


async def checkpoints_of(
    store: Store, viewer: Principal, ids: Sequence[str]
) -> dict[str, list[SavedCheckpoint]]:
    """Each task's saved checkpoints, oldest first."""
    async with store.read() as tx:
        return await sql.checkpoints_of(tx, viewer, ids)


async def events_of(store: Store, viewer: Principal, ids: Sequence[str]) -> dict[str, list[Event]]:
    """Each task's events, oldest first."""
    async with store.read() as tx:
        return await sql.events_of(tx, viewer, ids)


async def healthy(store: Store) -> None:
    """Returns when the database answers; raises whatever the driver raised when it does not."""
    async with store.read() as tx:
        await sql.ping(tx)
