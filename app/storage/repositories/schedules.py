"""Owner schedules and their runs: one row per schedule, one per (schedule, due time) run.

Times are stored as fixed-width UTC RFC 3339 text (`rfc3339`), which sorts in time order, so
`next_run_at <= :now` is a range scan on its index.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from sqlalchemy import bindparam, delete, func, insert, select, update
from sqlalchemy.dialects.postgresql import insert as pg_insert
from sqlalchemy.dialects.sqlite import insert as sqlite_insert

from app.domain.clock import parse_rfc3339, rfc3339
from app.domain.schedules import Schedule
from app.storage.repositories.base import Repository
from app.storage.tables import ScheduleRow, ScheduleRunRow, table_of

schedules = table_of(ScheduleRow)
schedule_runs = table_of(ScheduleRunRow)

_MOMENTS = ("starts_at", "ends_at", "next_run_at", "last_run_at", "created_at")
_FIELDS = tuple(f.name for f in dataclasses.fields(Schedule))

_INSERT = insert(schedules)
_BY_ID = select(schedules).where(schedules.c.id == bindparam("schedule_id"))
_BY_ID_LOCKED = _BY_ID.with_for_update()
_UPDATE = update(schedules).where(schedules.c.id == bindparam("where_id"))
_DELETE = delete(schedules).where(schedules.c.id == bindparam("schedule_id"))
_DELETE_RUNS = delete(schedule_runs).where(schedule_runs.c.schedule_id == bindparam("schedule_id"))
# The due schedules to run next. On PostgreSQL each process skips the rows another one has
# locked (is running); SQLite renders no FOR UPDATE: its one writer at a time is the claim.
_DUE = (
    select(schedules)
    .where(schedules.c.next_run_at <= bindparam("now"), schedules.c.paused.is_(False))
    .order_by(schedules.c.next_run_at, schedules.c.id)
    .limit(bindparam("limit"))
    .with_for_update(skip_locked=True)
)
_SET_ASIDE = _UPDATE.values(last_error=bindparam("error"), next_run_at=bindparam("until"))
_EARLIEST = select(func.min(schedules.c.next_run_at)).where(schedules.c.paused.is_(False))


@dataclass(frozen=True)
class Unreadable:
    """A claimed schedule whose stored row does not make a Schedule (a time that does not
    parse, as an older server could have left it): its id, and why."""

    id: str
    error: str


def schedule_from_row(row: Any) -> Schedule:
    values = row._mapping
    fields = {name: values[name] for name in _FIELDS}
    for name in _MOMENTS:
        if fields[name] is not None:
            fields[name] = parse_rfc3339(fields[name])
    return Schedule(**fields)


def _claimed(row: Any) -> Schedule | Unreadable:
    try:
        return schedule_from_row(row)
    except (ValueError, TypeError, OverflowError) as error:
        return Unreadable(row._mapping["id"], f"{type(error).__name__}: {error}")


def schedule_to_row(schedule: Schedule) -> dict[str, Any]:
    row = {name: getattr(schedule, name) for name in _FIELDS}
    for name in _MOMENTS:
        if row[name] is not None:
            row[name] = rfc3339(row[name])
    return row


class Schedules(Repository):
    __slots__ = ()

    async def get(self, schedule_id: str, for_update: bool = False) -> Schedule | None:
        stmt = _BY_ID_LOCKED if for_update and not self.tx.sqlite else _BY_ID
        row = await self.tx.one(stmt, {"schedule_id": schedule_id})
        return schedule_from_row(row) if row else None

    async def insert(self, schedule: Schedule) -> None:
        await self.tx.conn.execute(_INSERT, schedule_to_row(schedule))

    async def update(self, schedule: Schedule) -> None:
        row = schedule_to_row(schedule)
        del row["id"]
        await self.tx.conn.execute(_UPDATE, {**row, "where_id": schedule.id})

    async def delete(self, schedule_id: str) -> bool:
        """The schedule and the record of its runs (its tasks stay)."""
        params = {"schedule_id": schedule_id}
        await self.tx.conn.execute(_DELETE_RUNS, params)
        return bool((await self.tx.conn.execute(_DELETE, params)).rowcount)

    async def of(self, owner: str | None, project: str | None) -> list[Schedule]:
        """Schedules of the owner and/or in the project (None: any), oldest first."""
        stmt = select(schedules).order_by(schedules.c.id)
        if owner is not None:
            stmt = stmt.where(schedules.c.owner == owner)
        if project is not None:
            stmt = stmt.where(schedules.c.project == project)
        return [schedule_from_row(r) for r in await self.tx.rows(stmt)]

    async def claim_due(self, now: datetime, limit: int) -> list[Schedule | Unreadable]:
        """Up to `limit` schedules due at `now` (next_run_at <= now, not paused), those due
        longest ago first, locked for this transaction; none that another transaction holds.
        A row that cannot be read comes as `Unreadable`, so that it stops no other one."""
        rows = await self.tx.rows(_DUE, {"now": rfc3339(now), "limit": limit})
        return [_claimed(row) for row in rows]

    async def set_aside(self, schedule_id: str, error: str, until: datetime) -> None:
        """A schedule that could not run: why, on the schedule, and not due before `until`."""
        await self.tx.conn.execute(
            _SET_ASIDE,
            {"where_id": schedule_id, "error": error, "until": rfc3339(until)},
        )

    async def earliest_due(self) -> datetime | None:
        """The earliest next_run_at of any schedule; None when nothing is due ever."""
        row = await self.tx.one(_EARLIEST)
        return parse_rfc3339(row[0]) if row and row[0] is not None else None

    async def insert_run(self, schedule_id: str, due_at: datetime, at: datetime) -> bool:
        """Record a run of `due_at`; False when that due time already has one (another
        process ran it: on PostgreSQL this waits for that process's commit)."""
        values = {
            "schedule_id": schedule_id,
            "due_at": rfc3339(due_at),
            "created_at": rfc3339(at),
        }
        stmt = (sqlite_insert if self.tx.sqlite else pg_insert)(schedule_runs).values(**values)
        done = await self.tx.conn.execute(stmt.on_conflict_do_nothing())
        return bool(done.rowcount)

    async def finish_run(
        self, schedule_id: str, due_at: datetime, task_id: str | None, error: str | None
    ) -> None:
        stmt = (
            update(schedule_runs)
            .where(
                schedule_runs.c.schedule_id == schedule_id,
                schedule_runs.c.due_at == rfc3339(due_at),
            )
            .values(task_id=task_id, error=error)
        )
        await self.tx.conn.execute(stmt)
