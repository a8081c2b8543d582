"""A subscriber's replay: the events after its cursor it may see, judged in SQL.

Visibility is `app.storage.visibility.visible` (the SQL form of `app.domain.visibility.sees`,
proven equal in tests/test_api_reads.py), by each task as it is now, with the project
memberships as they are now; and the subscription's filters, on the event as it was
written. One statement a page, no task read back into Python.
"""

from __future__ import annotations

from sqlalchemy import ColumnElement, select

from app.domain.events import Event
from app.domain.principals import Principal
from app.storage import mapping
from app.storage.store import Tx, events, tasks
from app.storage.visibility import visible


async def replay_page(
    tx: Tx,
    principal: Principal,
    after: int,
    upto: int,
    limit: int,
    project: str | None = None,
    task_id: str | None = None,
    assignee: str | None = None,
    with_task: bool = True,
) -> list[Event]:
    """Up to `limit` events in (after, upto] the principal sees now, matching the filters.
    Without `with_task` each event's `task` (the task as the event left it) is left empty,
    unread: for a reader that sends only the event's own fields."""
    where: list[ColumnElement[bool]] = [
        events.c.seq > after,
        events.c.seq <= upto,
        visible(principal),
    ]
    if project is not None:
        where.append(events.c.project == project)
    if task_id is not None:
        where.append(events.c.task_id == task_id)
    if assignee is not None:
        where.append(events.c.task["assignee"].as_string() == assignee)
    columns = events.c if with_task else [c for c in events.c if c.name != "task"]
    stmt = (
        select(*columns)
        .select_from(events.join(tasks, tasks.c.id == events.c.task_id))
        .where(*where)
        .order_by(events.c.seq)
        .limit(limit)
    )
    rows = await tx.rows(stmt)
    if not with_task:
        return [Event(**r._mapping, task={}) for r in rows]
    return [mapping.event_from_row(r) for r in rows]
