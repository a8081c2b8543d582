"""A subscriber's replay: the events after its cursor it may see, judged in SQL.

Visibility is `app.storage.visibility.visible` (the SQL form of `app.domain.visibility.sees`,
proven equal by the read tests), by each task as it is now, with the project
memberships as they are now; and the subscription's filters, on the event as it was
written. One statement a page, built once a replay, no task read back into Python; each
planned for its page's range (`Tx.custom_plans`).

`event_pages` reads whole events; `row_pages` only the fields a reader sends, as rows, for
a reader that builds its messages from them (task_event_batches: `BatchSender`).
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Sequence
from typing import Any

from sqlalchemy import BigInteger, ColumnElement, Select, String, bindparam, cast, select

from app.domain.events import Event
from app.domain.principals import Principal
from app.storage import mapping
from app.storage.repositories.events import events
from app.storage.repositories.tasks import tasks
from app.storage.tx import Tx
from app.storage.visibility import visible

ROW_FIELDS = frozenset({c.name for c in events.c if c.name not in ("task", "wait_agent")}) | {
    "cursor"
}
"""The fields `row_pages` reads: an event's own (its `task` and `wait_agent` aside) and
its `cursor`."""


def event_pages(
    principal: Principal,
    limit: int,
    project: str | None = None,
    task_id: str | None = None,
    assignee: str | None = None,
) -> Callable[[Tx, int, int], Awaitable[list[Event]]]:
    """`read(tx, after, upto)`: up to `limit` events in (after, upto] the principal sees
    now, matching the filters. The statement is built once, for every page of a replay."""
    stmt = _replayed(select(*events.c), principal, project, task_id, assignee).limit(limit)

    async def read(tx: Tx, after: int, upto: int) -> list[Event]:
        await tx.custom_plans()
        rows = await tx.rows(stmt, {"after": after, "upto": upto})
        return [mapping.event_from_row(r) for r in rows]

    return read


def row_pages(
    principal: Principal,
    limit: int,
    fields: Sequence[str],
    project: str | None = None,
    task_id: str | None = None,
    assignee: str | None = None,
    above_version: int = 0,
) -> Callable[[Tx, int, int], Awaitable[list[Sequence[Any]]]]:
    """`event_pages`' events whose version is above `above_version`, each as a row: the
    values of `fields` (of ROW_FIELDS, in that order; `cursor` is the seq as text), then
    its seq and its version."""
    columns = [cast(events.c.seq, String) if f == "cursor" else events.c[f] for f in fields]
    query = select(*columns, events.c.seq, events.c.version)
    stmt = _replayed(query, principal, project, task_id, assignee).limit(limit)
    if above_version:
        stmt = stmt.where(events.c.version > above_version)

    async def read(tx: Tx, after: int, upto: int) -> list[Sequence[Any]]:
        await tx.custom_plans()
        return await tx.rows(stmt, {"after": after, "upto": upto})

    return read


def _replayed(
    stmt: Select[Any],
    principal: Principal,
    project: str | None,
    task_id: str | None,
    assignee: str | None,
) -> Select[Any]:
    """`stmt` over the events in (:after, :upto] the principal sees, filtered, in order."""
    where: list[ColumnElement[bool]] = [
        events.c.seq > bindparam("after", type_=BigInteger),
        events.c.seq <= bindparam("upto", type_=BigInteger),
        visible(principal),
    ]
    if project is not None:
        where.append(events.c.project == project)
    if task_id is not None:
        where.append(events.c.task_id == task_id)
    if assignee is not None:
        where.append(events.c.task["assignee"].as_string() == assignee)
    return (
        stmt.select_from(events.join(tasks, tasks.c.id == events.c.task_id))
        .where(*where)
        .order_by(events.c.seq)
    )
