"""The event log's archive: the events of tasks that ended before a date, moved out of
`events` into `events_archive` (or a JSON Lines file), in one transaction.

Archived events interleave with kept ones: a task still open, or ended later, has events
below the highest seq moved. So a reader of the log by cursor (`task_events` without a task,
a subscription, a webhook) is served only after that seq (`archived_to`), and a cursor below
it is refused (`CursorArchived`) rather than read on with a gap; a task's own history reads
both tables (app/storage/reads.py), whole. Archiving refuses to move past an enabled webhook
that has not yet read the log so far: it would skip events the webhook has not delivered.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from sqlalchemy import delete, func, insert, select

from app.domain.errors import Conflict, CursorArchived
from app.domain.table import table
from app.storage.repositories.events import events
from app.storage.repositories.tasks import tasks
from app.storage.repositories.webhooks import webhooks
from app.storage.tables import EventArchiveRunRow, events_archive, table_of
from app.storage.tx import Tx

runs = table_of(EventArchiveRunRow)
BATCH = 10_000  # events written to a file at a time


@dataclass(frozen=True)
class Archived:
    events: int
    archived_to: int  # the oldest cursor served from now on


async def archived_to(tx: Tx) -> int:
    """The highest seq ever archived: the log is served by cursor only after it (0: none)."""
    found = await tx.one(select(func.coalesce(func.max(runs.c.archived_to), 0)))
    return int(found[0])


async def served_after(tx: Tx, cursor: int | None) -> int | None:
    """Where a read of the log from `cursor` (None: its start) begins: after the archived
    events. CursorArchived when reading on from `cursor` would skip some of them."""
    oldest = await archived_to(tx)
    if cursor is not None and cursor < oldest:
        raise CursorArchived(cursor, oldest)
    return max(cursor or 0, oldest) or cursor


def _ended_before(ended_before: str) -> Any:
    ended = tasks.c.state.in_(sorted(table().terminal)) & (tasks.c.updated_at < ended_before)
    return events.c.task_id.in_(select(tasks.c.id).where(ended))


async def archive(
    tx: Tx, ended_before: str, at: str, write: Callable[[list[dict[str, Any]]], None] | None
) -> Archived:
    """Move the events of tasks ended before `ended_before` (RFC 3339) out of the log: into
    `events_archive`, or given to `write` a batch at a time (then dropped from the database)."""
    moving = _ended_before(ended_before)
    counted = await tx.one(
        select(func.count(), func.coalesce(func.max(events.c.seq), 0)).where(moving)
    )
    count, highest = int(counted[0]), int(counted[1])
    before = await archived_to(tx)
    if count == 0:
        return Archived(0, before)
    await _refuse_behind_webhooks(tx, highest)
    if write is None:
        await tx.conn.execute(
            insert(events_archive).from_select(list(events.c.keys()), select(events).where(moving))
        )
    else:
        after = 0
        while rows := await tx.rows(
            select(events).where(moving, events.c.seq > after).order_by(events.c.seq).limit(BATCH)
        ):
            write([dict(r._mapping) for r in rows])
            after = rows[-1].seq
    await tx.conn.execute(delete(events).where(moving))
    target = "events_archive" if write is None else "file"
    oldest = max(before, highest)
    await tx.conn.execute(
        insert(runs).values(
            ended_before=ended_before, archived_to=oldest, events=count, target=target, at=at
        )
    )
    return Archived(count, oldest)


async def _refuse_behind_webhooks(tx: Tx, highest: int) -> None:
    behind = await tx.rows(
        select(webhooks.c.id, webhooks.c.read_to)
        .where(webhooks.c.enabled, webhooks.c.read_to < highest)
        .order_by(webhooks.c.id)
    )
    if behind:
        named = ", ".join(f"{r.id} (read to {r.read_to})" for r in behind[:10])
        raise Conflict(
            f"{len(behind)} enabled webhook(s) have not read the log up to {highest}, the last"
            f" event to archive: {named}; archive an earlier date, or let them catch up first"
        )
