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

import json
from collections import defaultdict
from collections.abc import Callable, Sequence
from typing import Any

from sqlalchemy import (
    ARRAY,
    ColumnElement,
    Select,
    String,
    Table,
    and_,
    any_,
    false,
    func,
    literal,
    literal_column,
    or_,
    select,
    union_all,
)

from app.domain.events import Event
from app.domain.principals import Principal
from app.domain.reads import EventFilters, Page, SavedCheckpoint, TaskFilters
from app.domain.task import JSON, Task
from app.storage import mapping
from app.storage.archive import archived_to, served_after
from app.storage.repositories.events import events
from app.storage.repositories.records import checkpoints, results
from app.storage.repositories.tasks import Columns, select_tasks, tasks
from app.storage.tables import events_archive
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


def _task_filters(filters: TaskFilters) -> list[ColumnElement[bool]]:
    given = {name: value for name, value in vars(filters).items() if value is not None}
    state_in = given.pop("state_in", None)
    updated_after = given.pop("updated_after", None)
    where = [getattr(tasks.c, name) == value for name, value in given.items()]
    if state_in is not None:
        where.append(or_(false(), *(_in_state(state, on) for state, on in state_in)))
    if updated_after is not None:
        where.append(tasks.c.updated_at > updated_after)  # RFC 3339 in UTC: ordered as text
    return where


def _in_state(state: str, waiting_on: str | None) -> ColumnElement[bool]:
    if waiting_on is None:
        return tasks.c.state == state
    return and_(tasks.c.state == state, tasks.c.waiting_on == waiting_on)


async def task_page(
    tx: Tx,
    principal: Principal,
    filters: TaskFilters,
    first: int,
    after: str | None,
    columns: Columns = None,
    before: str | None = None,
    backward: bool = False,
) -> Page[Task]:
    """Visible tasks matching the filters, by id (creation order), after the cursor `after`
    and before `before`: the first `first` of them, or the last when `backward`.

    Planned for its own filters (`Tx.custom_plans`): a plan made without them (PostgreSQL's
    generic plan of a prepared statement, after its fifth run on a connection) estimates a
    filter's rows as an average, and for a large project's state it read and sorted every
    match (1 s at a million tasks) instead of walking `(project, state, id)` to the page's
    end (docs/performance.md, "At scale")."""
    stmt, task_of = select_tasks(columns)
    stmt = stmt.where(visible(principal), *_task_filters(filters))
    if after is not None:
        stmt = stmt.where(tasks.c.id > after)
    if before is not None:
        stmt = stmt.where(tasks.c.id < before)
    order = tasks.c.id.desc() if backward else tasks.c.id
    await tx.custom_plans()
    rows = await tx.rows(stmt.order_by(order).limit(first + 1))
    found = list(map(task_of, rows[:first]))
    return Page(found[::-1] if backward else found, len(rows) > first)


async def count_tasks(
    tx: Tx, principal: Principal, filters: TaskFilters, limit: int | None = None
) -> int:
    """The visible tasks matching the filters; with `limit`, at most that many (counting
    stops there, so its cost is bounded however many match)."""
    return await _count(
        tx, select(tasks.c.id).where(visible(principal), *_task_filters(filters)), limit
    )


async def _count(tx: Tx, rows: Select[Any], limit: int | None) -> int:
    """`rows` counted; with `limit`, the first that many in the order of `rows`' one column
    (an id or a seq: the last column of the filters' indexes, so that the count reads them
    in order and stops, whichever part of the table the rows lie in)."""
    if limit is not None:
        rows = rows.order_by(*rows.selected_columns).limit(limit)
    stmt = select(func.count()).select_from(rows.subquery())
    await tx.custom_plans()
    count: int = (await tx.conn.execute(stmt)).scalar_one()
    return count


async def tasks_by_id(
    tx: Tx, principal: Principal, ids: Sequence[str], columns: Columns = None
) -> dict[str, Task]:
    if not ids:
        return {}
    stmt, task_of = select_tasks(columns)
    stmt = stmt.where(_among(tx, tasks.c.id, ids), visible(principal))
    return {t.id: t for t in map(task_of, await tx.rows(stmt))}


async def children_of(
    tx: Tx, principal: Principal, parent_ids: Sequence[str], columns: Columns = None
) -> dict[str, list[Task]]:
    found: dict[str, list[Task]] = defaultdict(list)
    if parent_ids:
        stmt, task_of = select_tasks(columns, "parent_task_id")
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


def _history(build: Callable[[Table], Select[Any]]) -> Any:
    """A task's history: `build`'s rows from the log and from its archive
    (`archive`), as one subquery with the log's columns."""
    return union_all(build(events), build(events_archive)).subquery()


def _joined(log: Table) -> Select[Any]:
    return select(log).join(tasks, tasks.c.id == log.c.task_id)


async def events_of(
    tx: Tx, principal: Principal, task_ids: Sequence[str]
) -> dict[str, list[Event]]:
    """Each task's events, oldest first, archived ones too."""
    found: dict[str, list[Event]] = defaultdict(list)
    if task_ids:
        both = _history(
            lambda log: _joined(log).where(_among(tx, log.c.task_id, task_ids), visible(principal))
        )
        for row in await tx.rows(select(both).order_by(both.c.seq)):
            found[row.task_id].append(mapping.event_from_row(row))
    return found


def _event_filters(
    principal: Principal, filters: EventFilters, log: Table = events
) -> list[ColumnElement[bool]]:
    where = [visible(principal)]
    if filters.task_id is not None:
        where.append(log.c.task_id == filters.task_id)
    if filters.project is not None:
        where.append(log.c.project == filters.project)
    return where


async def event_page(
    tx: Tx,
    principal: Principal,
    filters: EventFilters,
    first: int,
    after: int | None,
    before: int | None = None,
    backward: bool = False,
) -> Page[Event]:
    """The history of visible tasks, oldest first, after the event cursor `after` and before
    `before`: the first `first` of those events, or the last when `backward`. A task's own
    history includes its archived events; the log's, not by task, is served after the
    archived ones only, and refuses a cursor before them (`CursorArchived`)."""
    if filters.task_id is None:
        after = await served_after(tx, after)
    bound = None if tx.sqlite else await tx.events.last_seq()

    def page_of(log: Table) -> Select[Any]:
        stmt = _joined(log).where(*_event_filters(principal, filters, log))
        if after is not None:
            stmt = stmt.where(log.c.seq > after)
        if before is not None:
            stmt = stmt.where(log.c.seq < before)
        if bound is not None:  # a page never passes a seq that a later commit could still fill
            stmt = stmt.where(log.c.seq <= bound)
        return stmt

    if filters.task_id is None:
        seq = events.c.seq
        stmt: Any = page_of(events).order_by(seq.desc() if backward else seq)
    else:
        both = _history(page_of)
        stmt = select(both).order_by(both.c.seq.desc() if backward else both.c.seq)
    await tx.custom_plans()
    rows = await tx.rows(stmt.limit(first + 1))
    found = [mapping.event_from_row(r) for r in rows[:first]]
    return Page(found[::-1] if backward else found, len(rows) > first)


async def count_task_events(
    tx: Tx, principal: Principal, filters: EventFilters, limit: int | None = None
) -> int:
    """The visible events matching the filters (a task's archived ones too; the log's after
    the archived ones); with `limit`, at most that many."""

    def matching(log: Table) -> Select[Any]:
        return (
            select(log.c.seq)
            .select_from(log.join(tasks, tasks.c.id == log.c.task_id))
            .where(*_event_filters(principal, filters, log))
        )

    if filters.task_id is not None:
        both = _history(matching)
        return await _count(tx, select(both.c.seq), limit)
    rows = matching(events)
    floor = await archived_to(tx)
    if floor:
        rows = rows.where(events.c.seq > floor)
    return await _count(tx, rows, limit)
