"""The event log: append in seq order, read after a seq."""

from __future__ import annotations

from sqlalchemy import Text, bindparam, cast, func, insert, select, update

from app.domain.events import Event
from app.storage import mapping
from app.storage.repositories.base import Repository
from app.storage.tables import EventCounterRow, EventRow, table_of

events = table_of(EventRow)
counter = table_of(EventCounterRow)

NOTIFY_CHANNEL = "prickle_events"

_INSERT = insert(events)
_ADVANCE_COUNTER = (
    update(counter)
    .where(counter.c.id == 1)
    .values(last_seq=counter.c.last_seq + bindparam("count"))
    .returning(counter.c.last_seq)
)
# PostgreSQL: the same, announcing the new head on commit (one round trip, not two)
_ADVANCE_COUNTER_NOTIFY = _ADVANCE_COUNTER.returning(
    func.pg_notify(NOTIFY_CHANNEL, cast(counter.c.last_seq, Text))
)
_LAST_SEQ = select(counter.c.last_seq).where(counter.c.id == 1)
_AFTER = select(events).where(events.c.seq > bindparam("after")).order_by(events.c.seq)
_COUNT = select(func.count()).select_from(events).where(events.c.task_id == bindparam("task_id"))


class Events(Repository):
    __slots__ = ()

    async def append(self, new: list[Event]) -> list[Event]:
        """Give the events the next seqs and insert them; the counter's row lock is held
        until commit, so transactions commit in seq order and readers never see a gap."""
        stmt = _ADVANCE_COUNTER if self.tx.sqlite else _ADVANCE_COUNTER_NOTIFY
        last = (await self.tx.one(stmt, {"count": len(new)}))[0]
        first = last - len(new) + 1
        rows = [mapping.event_to_row(e, first + i) for i, e in enumerate(new)]
        await self.tx.conn.execute(_INSERT, rows)
        self.tx.last_seq = last
        return [Event(**{**e.__dict__, "seq": first + i}) for i, e in enumerate(new)]

    async def last_seq(self) -> int:
        """The seq of the last committed event (0 for none)."""
        last: int = (await self.tx.conn.execute(_LAST_SEQ)).scalar_one()
        return last

    async def after(self, after: int, limit: int, task_id: str | None = None) -> list[Event]:
        stmt = _AFTER
        if task_id is not None:
            stmt = stmt.where(events.c.task_id == task_id)
        rows = await self.tx.rows(stmt.limit(limit), {"after": after})
        return [mapping.event_from_row(r) for r in rows]

    async def count(self, task_id: str) -> int:
        found: int = (await self.tx.conn.execute(_COUNT, {"task_id": task_id})).scalar_one()
        return found
