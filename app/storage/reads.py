"""The read side's SQL: lists with filters, pages by id, batch lookups (app.service.reads
runs each in a read transaction of its own).

Every query here applies visibility in SQL (`app.storage.visibility.visible`, the SQL
form of `app.domain.visibility.sees`), judged by each task as it is now, with the
principal's project memberships as they are now. An invisible task is absent from every
result here, including counts, and so are its results, checkpoints and events.
Batch lookups take their ids as one bound parameter, so a statement's text (and the number
of statements) never depends on how many ids are asked for.
"""

from __future__ import annotations

import dataclasses
import json
from collections import defaultdict
from collections.abc import Sequence
from typing import Any

from sqlalchemy import (
    ARRAY,
    ColumnElement,
    Select,
    String,
    any_,
    func,
    literal,
    literal_column,
    select,
    text,
)

from app.domain.events import Event
from app.domain.principals import Principal
from app.domain.reads import EventFilters, Page, SavedCheckpoint, TaskFilters
from app.domain.task import JSON, Task
from app.storage import mapping
from app.storage.repositories.events import events
from app.storage.repositories.records import checkpoints, results
from app.storage.repositories.tasks import tasks
from app.storage.tx import Tx
from app.storage.visibility import visible


def _among(tx: Tx, column: ColumnElement[str], ids: Sequence[str]) -> ColumnElement[bool]:
    """`column IN ids` with the ids as a single bound parameter."""
    if tx.sqlite:
        each: Select[tuple[str]] = select(literal_column("value")).select_from(
            func.json_each(literal(json.dumps(list(ids))))
        )
        return column.in_(each)
    return column == any_(literal(list(ids), ARRAY(String)))


Columns = Sequence[str] | None  # the task columns to read; None: every one
_FIELDS = tuple(f.name for f in dataclasses.fields(Task) if f.name != "gate")
_FIELD_SET = frozenset(_FIELDS)


def _select_tasks(columns: Columns, *needed: str) -> tuple[Select[Any], Any]:
    """The statement reading these task columns (with `id` and `needed`), and the function
    making a task of each of its rows: whole, or with only those columns (the rest None)."""
    if columns is None:
        return select(tasks), mapping.task_from_row
    names = tuple(dict.fromkeys(("id", *needed, *columns)))
    fields = [n for n in names if n in _FIELD_SET]
    at = [names.index(n) for n in fields]
    rest: dict[str, Any] = {n: None for n in _FIELDS if n not in names}

    def partial(row: Any) -> Task:
        return Task(**rest, **{n: row[i] for n, i in zip(fields, at, strict=True)})

    return select(*(tasks.c[n] for n in names)), partial


def _task_filters(filters: TaskFilters) -> list[ColumnElement[bool]]:
    return [
        getattr(tasks.c, name) == value
        for name, value in vars(filters).items()
        if value is not None
    ]


async def task_page(
    tx: Tx,
    principal: Principal,
    filters: TaskFilters,
    first: int,
    after: str | None,
    columns: Columns = None,
) -> Page[Task]:
    """Visible tasks matching the filters, by id (creation order), after the cursor."""
    stmt, task_of = _select_tasks(columns)
    stmt = stmt.where(visible(principal), *_task_filters(filters))
    if after is not None:
        stmt = stmt.where(tasks.c.id > after)
    rows = await tx.rows(stmt.order_by(tasks.c.id).limit(first + 1))
    return Page(list(map(task_of, rows[:first])), len(rows) > first)


async def count_tasks(tx: Tx, principal: Principal, filters: TaskFilters) -> int:
    stmt = (
        select(func.count()).select_from(tasks).where(visible(principal), *_task_filters(filters))
    )
    count: int = (await tx.conn.execute(stmt)).scalar_one()
    return count


async def tasks_by_id(
    tx: Tx, principal: Principal, ids: Sequence[str], columns: Columns = None
) -> dict[str, Task]:
    if not ids:
        return {}
    stmt, task_of = _select_tasks(columns)
    stmt = stmt.where(_among(tx, tasks.c.id, ids), visible(principal))
    return {t.id: t for t in map(task_of, await tx.rows(stmt))}


async def children_of(
    tx: Tx, principal: Principal, parent_ids: Sequence[str], columns: Columns = None
) -> dict[str, list[Task]]:
    found: dict[str, list[Task]] = defaultdict(list)
    if parent_ids:
        stmt, task_of = _select_tasks(columns, "parent_task_id")
        stmt = stmt.where(_among(tx, tasks.c.parent_task_id, parent_ids), visible(principal))
        for task in map(task_of, await tx.rows(stmt.order_by(tasks.c.id))):
            found[task.parent_task_id or ""].append(task)
    return found


async def results_of(
    tx: Tx, principal: Principal, task_ids: Sequence[str]
) -> dict[str, list[JSON]]:
    """Every revision's result body, oldest first."""
    found: dict[str, list[JSON]] = defaultdict(list)
    if task_ids:
        stmt = (
            select(results.c.task_id, results.c.body)
            .join(tasks, tasks.c.id == results.c.task_id)
            .where(_among(tx, results.c.task_id, task_ids), visible(principal))
            .order_by(results.c.task_id, results.c.revision)
        )
        for task_id, body in await tx.rows(stmt):
            found[task_id].append(body)
    return found


async def checkpoints_of(
    tx: Tx, principal: Principal, task_ids: Sequence[str]
) -> dict[str, list[SavedCheckpoint]]:
    found: dict[str, list[SavedCheckpoint]] = defaultdict(list)
    if task_ids:
        stmt = (
            select(checkpoints)
            .join(tasks, tasks.c.id == checkpoints.c.task_id)
            .where(_among(tx, checkpoints.c.task_id, task_ids), visible(principal))
            .order_by(checkpoints.c.task_id, checkpoints.c.id)
        )
        for row in await tx.rows(stmt):
            found[row.task_id].append(SavedCheckpoint(**row._mapping))
    return found


def _events() -> Any:
    return select(events).join(tasks, tasks.c.id == events.c.task_id)


async def events_of(
    tx: Tx, principal: Principal, task_ids: Sequence[str]
) -> dict[str, list[Event]]:
    """Each task's events, oldest first."""
    found: dict[str, list[Event]] = defaultdict(list)
    if task_ids:
        stmt = _events().where(_among(tx, events.c.task_id, task_ids), visible(principal))
        for row in await tx.rows(stmt.order_by(events.c.seq)):
            found[row.task_id].append(mapping.event_from_row(row))
    return found


def _event_filters(principal: Principal, filters: EventFilters) -> list[ColumnElement[bool]]:
    where = [visible(principal)]
    if filters.task_id is not None:
        where.append(events.c.task_id == filters.task_id)
    if filters.project is not None:
        where.append(events.c.project == filters.project)
    return where


async def event_page(
    tx: Tx, principal: Principal, filters: EventFilters, first: int, after: int | None
) -> Page[Event]:
    """The history of visible tasks, oldest first, after the event cursor."""
    stmt = _events().where(*_event_filters(principal, filters))
    if after is not None:
        stmt = stmt.where(events.c.seq > after)
    if not tx.sqlite:  # a page never passes a seq that a later commit could still fill
        stmt = stmt.where(events.c.seq <= await tx.events.last_seq())
    rows = await tx.rows(stmt.order_by(events.c.seq).limit(first + 1))
    return Page([mapping.event_from_row(r) for r in rows[:first]], len(rows) > first)


async def count_task_events(tx: Tx, principal: Principal, filters: EventFilters) -> int:
    stmt = (
        select(func.count())
        .select_from(events.join(tasks, tasks.c.id == events.c.task_id))
        .where(*_event_filters(principal, filters))
    )
    count: int = (await tx.conn.execute(stmt)).scalar_one()
    return count


async def ping(tx: Tx) -> None:
    """A statement the database answers without reading any table."""
    await tx.conn.execute(text("SELECT 1"))
