"""A webhook's backlog: the events after its cursor it would be sent now.

The count applies visibility in SQL (`app.storage.visibility.visible`, the SQL form of the
rule delivery applies, `app.domain.visibility.sees`), by each task as it is now, and the
webhook's filters, as delivery does.
"""

from __future__ import annotations

from sqlalchemy import ColumnElement, func, select

from app.domain.webhooks import Webhook
from app.storage.repositories.events import events
from app.storage.repositories.tasks import tasks
from app.storage.tx import Tx
from app.storage.visibility import visible


def _matching(webhook: Webhook) -> list[ColumnElement[bool]]:
    f = webhook.filters
    where = [events.c.seq > webhook.read_to, visible(webhook.owner)]
    if f.project is not None:
        where.append(events.c.project == f.project)
    if f.task_id is not None:
        where.append(events.c.task_id == f.task_id)
    if f.assignee is not None:
        where.append(events.c.task["assignee"].as_string() == f.assignee)
    if f.kinds is not None:
        where.append(events.c.kind.in_(f.kinds))
    return where


async def pending(tx: Tx, webhook: Webhook) -> int:
    """Events matched but not yet delivered."""
    stmt = (
        select(func.count())
        .select_from(events.join(tasks, tasks.c.id == events.c.task_id))
        .where(*_matching(webhook))
    )
    found: int = (await tx.conn.execute(stmt)).scalar_one()
    return found
