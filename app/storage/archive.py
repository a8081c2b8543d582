"""The event log's archive: the events of tasks that ended before a date, moved out of
`events` into `events_archive` (or a JSON Lines file), in one transaction.

Archived events interleave with kept ones: a task still open, or ended later, has events
below the highest seq moved. So a reader of the log by cursor (`task_events` without a task,
a subscription, a webhook) is served only after that seq (`archived_to`), and a cursor below
it is refused (`CursorArchived`) rather than read on with a gap; a task's own history reads
both tables (`event_page`), whole. Archiving refuses to move past an enabled webhook
that has not yet read the log so far: it would skip events the webhook has not delivered.
A disabled one may lie behind; enabled again, it reads the archived events it had not
delivered from `events_archive` (`log_after`). Archiving to a file (the events leave the
database) refuses to move past any webhook, enabled or not, for that reason.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from sqlalchemy import delete, func, insert, select

from app.domain.errors import Conflict, CursorArchived
from app.domain.events import Event
from app.domain.table import table
from app.storage import mapping
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
    """The events of tasks ended before the moment, but the log's newest: SQLite numbers
    an event after the newest seq in `events`, and a seq must never be given twice."""
    ended = tasks.c.state.in_(sorted(table().terminal)) & (tasks.c.updated_at < ended_before)
    newest = select(func.max(events.c.seq)).scalar_subquery()
    return events.c.task_id.in_(select(tasks.c.id).where(ended)) & (events.c.seq < newest)


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
    await _refuse_behind_webhooks(tx, highest, disabled_too=write is not None)
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


async def _refuse_behind_webhooks(tx: Tx, highest: int, disabled_too: bool) -> None:
    """Conflict when a webhook would lose events it has not delivered: an enabled one behind
    `highest`; with `disabled_too` (the events leave the database), a disabled one too."""
    which = webhooks.c.read_to < highest
    stmt = select(webhooks.c.id, webhooks.c.read_to).where(
        which if disabled_too else webhooks.c.enabled & which
    )
    behind = await tx.rows(stmt.order_by(webhooks.c.id))
    if behind:
        named = ", ".join(f"{r.id} (read to {r.read_to})" for r in behind[:10])
        kind = "" if disabled_too else "enabled "
        fix = "archive an earlier date, or let them catch up first"
        if disabled_too:
            fix += ", or delete those disabled, or archive to the table (they read it)"
        raise Conflict(
            f"{len(behind)} {kind}webhook(s) have not read the log up to {highest}, the last"
            f" event to archive: {named}; {fix}"
        )


async def log_after(
    tx: Tx, after: int, limit: int, task_id: str | None = None, upto: int | None = None
) -> list[Event]:
    """The log's events after `after`, as `tx.events.after` reads them; when `after` lies
    before the archived events, with those of `events_archive` among them, in seq order (a
    webhook enabled again behind the archive delivers what it had not)."""
    live = await tx.events.after(after, limit, task_id=task_id, upto=upto)
    if after >= await archived_to(tx):
        return live
    stmt = select(events_archive).where(events_archive.c.seq > after)
    if upto is not None:
        stmt = stmt.where(events_archive.c.seq <= upto)
    if task_id is not None:
        stmt = stmt.where(events_archive.c.task_id == task_id)
    rows = await tx.rows(stmt.order_by(events_archive.c.seq).limit(limit))
    archived = [mapping.event_from_row(r) for r in rows]
    return sorted(live + archived, key=lambda e: e.seq)[:limit]
