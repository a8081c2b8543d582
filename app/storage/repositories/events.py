"""The event log: append with the next seqs, read after a seq up to the safe bound.

SQLite has one writer at a time: it numbers its events after the newest seq (the rowid's
b-tree: one page read), and they commit in order.
PostgreSQL writers draw seqs from the sequence `events_seq` and commit in parallel, so a
seq can commit after a higher one; readers there read only up to the *safe bound*, a seq
at or below which nothing can still commit (docs/events.md has the argument):

1. read L, the last seq drawn (`pg_sequence_last_value`: no snapshot hides a draw);
2. then fix N, the next transaction id to be given (`age()` measures from it);
3. L is safe once no transaction of this database below N is still running. A writer
   takes its transaction id before it draws a seq, so whoever drew a seq up to L had an
   id below N.

Usually none is running below N (the snapshot says so: one round trip), or those running
end within a few milliseconds (`pg_stat_activity`'s `backend_xid`); if not within
`WAIT_SECONDS`, the bound stays at the last one proven (`Horizon.safe`). A transaction
computes its bound once (`age()` reads N once per transaction).

A read replica's transaction (`Tx.replayed`: the standby's replay position) proves nothing
there (a standby's sequence runs ahead of the draws, and it sees none of the primary's
running transactions): its bound is the highest the primary proved at a WAL position the
standby has replayed (`Horizon.replayed`).
"""

from __future__ import annotations

import asyncio
import functools
import time
from typing import Any

from sqlalchemy import (
    BigInteger,
    Table,
    TextClause,
    bindparam,
    func,
    insert,
    select,
    text,
)
from sqlalchemy.dialects.postgresql.asyncpg import PGDialect_asyncpg
from sqlalchemy.exc import IntegrityError

from app.domain.events import Event, Said
from app.domain.task import Task
from app.storage import mapping
from app.storage.fast.direct import direct
from app.storage.repositories.base import Repository, insert_of
from app.storage.repositories.tasks import (
    changed_concurrently,
    links_of,
    refused_insert,
    task_links,
    tasks,
)
from app.storage.tables import EventRow, table_of

events = table_of(EventRow)

NOTIFY_CHANNEL = "prickle_events"
SEQUENCE = "events_seq"
WAIT_SECONDS = 0.1  # how long a reader waits for the writers in flight before settling
POLL_SECONDS = 0.0005

_INSERT = direct(insert(events))
# SQLite: one writer at a time, so the newest seq orders the next ones and commits alike
_LAST_SEQ = direct(select(func.coalesce(func.max(events.c.seq), 0)))
# PostgreSQL: the newest seq told to every process listening (`Tx.announces`)
_NOTIFY = f"pg_notify('{NOTIFY_CHANNEL}', max(seq)::text)"
_ANNOUNCE = direct(text(f"SELECT pg_notify('{NOTIFY_CHANNEL}', :seq)"))


@functools.cache
def _draw(announce: bool) -> TextClause:
    """PostgreSQL: the transaction id first (MATERIALIZED: taken before any seq is drawn),
    then the seqs, and if `announce` the announcement of the newest on commit: one round
    trip."""
    return direct(
        text(
            "WITH me AS MATERIALIZED (SELECT pg_current_xact_id() AS xid),"
            f" drawn AS MATERIALIZED (SELECT nextval('{SEQUENCE}') AS seq"
            "  FROM me, generate_series(1, :count))"
            f" SELECT array_agg(seq ORDER BY seq){', ' + _NOTIFY if announce else ''} FROM drawn"
        )
    )


_LAST_DRAWN = text(f"SELECT coalesce(pg_sequence_last_value('{SEQUENCE}'), 0)")
# N, the next transaction id: `age()` measures from it, read at its first call in the
# transaction (or from this transaction's own id, when it has one: then no proof here);
# and whether no transaction at all is running below N (the snapshot's oldest running)
# (and the primary's WAL insert position: past every commit the snapshot saw, for a
# standby's bound, `Horizon.replayed`)
_NEXT_XID = text(
    "SELECT pg_current_xact_id_if_assigned() IS NOT NULL,"
    " age((pg_snapshot_xmin(s)::text::bigint % 4294967296)::text::xid) <= 0,"
    " (pg_current_wal_insert_lsn() - '0/0'::pg_lsn)::bigint"
    " FROM pg_current_snapshot() AS s"
)
# the statistics snapshot is kept until the transaction ends unless cleared
_FORGET_ACTIVITY = text("SELECT pg_stat_clear_snapshot()")
# transactions of this database still running below N (only they can draw from its sequence)
_RUNNING_BELOW_N = text(
    "SELECT count(*), (pg_current_wal_insert_lsn() - '0/0'::pg_lsn)::bigint"
    " FROM pg_stat_activity WHERE datname = current_database()"
    " AND backend_xid IS NOT NULL AND age(backend_xid) > 0 AND pid <> pg_backend_pid()"
)
_AFTER = select(events).where(events.c.seq > bindparam("after")).order_by(events.c.seq)
_UPTO = events.c.seq <= bindparam("upto", type_=BigInteger)
_COUNT = select(func.count()).select_from(events).where(events.c.task_id == bindparam("task_id"))
_SAID = (
    select(events.c.seq, events.c.kind, events.c.to_state, events.c.waiting_on, events.c.note)
    .where(events.c.task_id == bindparam("task_id"), events.c.note.is_not(None))
    .order_by(events.c.seq)
)
_FIRST = (
    select(events).where(events.c.task_id == bindparam("task_id")).order_by(events.c.seq).limit(1)
)


Moved = tuple[Task, int]  # a task moved in this transaction, and the version it was loaded at
Created = tuple[Task, str]  # a task created in this transaction, and its creator's id
_EVENT_COLUMNS = tuple(c.name for c in events.c if c.name != "seq")
_PG = PGDialect_asyncpg()  # type: ignore[no-untyped-call]


@functools.cache
def _one_write(
    head: str,
    columns: tuple[str, ...],
    count: int,
    riders: tuple[tuple[Table, tuple[str, ...]], ...],
    announce: bool,
) -> TextClause:
    """PostgreSQL, one statement: the task's write, then, only if it was written, the
    transaction id, `count` seqs drawn, the events inserted with them, the `riders` (rows
    of other tables that go with the task's write) inserted, and if `announce` the newest
    seq announced.

    `head` "moved" updates the task's changed `columns` if it is still at the version
    loaded (no row comes back on a conflict); "created" inserts it with `columns`.
    Built once per shape: the statement and its prepared form are reused."""
    if head == "moved":
        sets = ", ".join(f"{name} = :t_{name}" for name in columns) or "version = version"
        task = (
            f"UPDATE tasks SET {sets}"
            "  WHERE id = :where_id AND version = :where_version RETURNING id"
        )
    else:
        given = ", ".join(f":t_{name}" for name in columns)
        task = f"INSERT INTO tasks ({', '.join(columns)}) VALUES ({given}) RETURNING id"
    values = ", ".join(
        "("
        + ", ".join([str(i + 1)] + [_cast(events, c, f"e{i}_{c}") for c in _EVENT_COLUMNS])
        + ")"
        for i in range(count)
    )
    names = ", ".join(_EVENT_COLUMNS)
    picked = ", ".join(f"v.{c}" for c in _EVENT_COLUMNS)
    ridden = "".join(
        f" r{j} AS (INSERT INTO {table.name} ({', '.join(cols)})"
        f"  SELECT {', '.join(_cast(table, c, f'r{j}_{c}') for c in cols)} FROM moved),"
        for j, (table, cols) in enumerate(riders)
    )
    sql = (
        f"WITH moved AS ({task}),"
        " me AS MATERIALIZED (SELECT pg_current_xact_id() AS xid FROM moved),"
        f" drawn AS MATERIALIZED (SELECT nextval('{SEQUENCE}') AS seq"
        f"  FROM me, generate_series(1, {count})),"
        " numbered AS (SELECT seq, row_number() OVER (ORDER BY seq) AS i FROM drawn),"
        f"{ridden}"
        f" added AS (INSERT INTO events (seq, {names}) SELECT n.seq, {picked}"
        f"  FROM numbered AS n JOIN (VALUES {values}) AS v(i, {names}) ON v.i = n.i"
        "  RETURNING seq)"
        f" SELECT array_agg(seq ORDER BY seq){', ' + _NOTIFY if announce else ''}"
        " FROM added HAVING count(*) > 0"
    )
    typed = [bindparam(f"t_{name}", type_=tasks.c[name].type) for name in columns]
    if head == "moved":
        typed += [bindparam("where_id", type_=tasks.c.id.type)]
        typed += [bindparam("where_version", type_=tasks.c.version.type)]
    typed += [
        bindparam(f"e{i}_{c}", type_=events.c[c].type) for i in range(count) for c in _EVENT_COLUMNS
    ]
    typed += [
        bindparam(f"r{j}_{c}", type_=table.c[c].type)
        for j, (table, cols) in enumerate(riders)
        for c in cols
    ]
    return direct(text(sql).bindparams(*typed))


def _cast(table: Table, column: str, param: str) -> str:
    """A parameter inside VALUES or a SELECT list, cast to its column's type (nothing else
    types it there)."""
    kind = table.c[column].type.dialect_impl(_PG).compile(dialect=_PG)
    return f"CAST(:{param} AS {kind})"


class Events(Repository):
    __slots__ = ()

    async def append(
        self, new: list[Event], moved: Moved | None = None, created: Created | None = None
    ) -> list[Event]:
        """Give the events the next seqs and insert them, with the task's write and the
        rows that ride on it (`Tx.ride`). Callers append after locking the task
        (`tasks.get(for_update=True)`), or with `moved`, whose update takes the lock, so a
        task's later move draws a later seq.

        `moved`, a task and the version it was loaded at, is updated first (a conflict
        unless still at that version); `created`, a new task and its creator, is inserted
        first. On PostgreSQL the task's write, the riders, the draw, the insert and the
        announcement are then one statement."""
        if (moved or created) is not None and (self.tx.sqlite or not new):
            if moved is not None:
                await self.tx.tasks.update(*moved)
            if created is not None:
                await self.tx.tasks.insert(*created)
            moved = created = None
        if created is not None:  # its steps in the task's graph ride on its insert
            for link in links_of(created[0]):
                self.tx.ride(task_links, link)
        if moved is None and created is None:
            for table, row in self.tx.take_riders():
                await self.tx.conn.execute(insert_of(table), row)
        if not new:
            return []
        if moved is not None or created is not None:
            seqs = await self._one_write(new, moved, created)
        elif self.tx.sqlite:
            last = (await self.tx.one(_LAST_SEQ))[0]
            seqs = list(range(last + 1, last + len(new) + 1))
        else:
            seqs = list((await self.tx.one(_draw(self.tx.announces), {"count": len(new)}))[0])
        if moved is None and created is None:
            rows = [mapping.event_to_row(e, seq) for e, seq in zip(new, seqs, strict=True)]
            await self.tx.conn.execute(_INSERT, rows)
        self.tx.last_seq = seqs[-1]
        return [Event(**{**e.__dict__, "seq": seq}) for e, seq in zip(new, seqs, strict=True)]

    async def _one_write(
        self, new: list[Event], moved: Moved | None, created: Created | None
    ) -> list[int]:
        if moved is not None:
            task, old_version = moved
            columns = self.tx.tasks.changes(task)
            params: dict[str, Any] = {f"t_{name}": value for name, value in columns.items()}
            params.update(where_id=task.id, where_version=old_version)
        else:
            assert created is not None
            task = created[0]
            columns = mapping.task_to_row(task, created[1])
            params = {f"t_{name}": value for name, value in columns.items()}
        for i, e in enumerate(new):
            row = mapping.event_to_row(e, 0)
            params.update({f"e{i}_{name}": row[name] for name in _EVENT_COLUMNS})
        riders = self.tx.take_riders()
        for j, (_, ridden) in enumerate(riders):
            params.update({f"r{j}_{name}": value for name, value in ridden.items()})
        shape = tuple((table, tuple(ridden)) for table, ridden in riders)
        head = "moved" if moved is not None else "created"
        statement = _one_write(head, tuple(columns), len(new), shape, self.tx.announces)
        try:
            found = await self.tx.one(statement, params)
        except IntegrityError as error:
            refused = refused_insert(task) if created is not None else None
            if refused is None:
                raise
            raise refused from error
        if found is None:
            raise changed_concurrently(task.id)
        return list(found[0])

    async def announce(self, seq: int) -> None:
        """PostgreSQL: tell every process listening that the log has grown to `seq` (for the
        transactions that did not announce themselves: `Tx.announces`)."""
        await self.tx.conn.execute(_ANNOUNCE, {"seq": str(seq)})

    async def last_seq(self) -> int:
        """The seq up to which the log is complete: no event at or below it can still commit
        (0 for none). On SQLite the last committed seq."""
        if self.tx.sqlite:
            last: int = (await self.tx.conn.execute(_LAST_SEQ)).scalar_one()
            return last
        return await self._safe_bound()

    async def after(
        self, after: int, limit: int, task_id: str | None = None, upto: int | None = None
    ) -> list[Event]:
        """The events after `after`, in seq order, never past the safe bound (or `upto`, a
        bound the caller already holds from `last_seq`)."""
        stmt = _AFTER
        params: dict[str, int] = {"after": after}
        if not self.tx.sqlite or upto is not None:
            params["upto"] = upto if upto is not None else await self._safe_bound()
            if params["upto"] <= after:
                return []
            stmt = stmt.where(_UPTO)
        if task_id is not None:
            stmt = stmt.where(events.c.task_id == task_id)
        rows = await self.tx.rows(stmt.limit(limit), params)
        return [mapping.event_from_row(r) for r in rows]

    async def first(self, task_id: str) -> Event | None:
        """The task's first event: `created`, with the task as it was created."""
        row = await self.tx.one(_FIRST, {"task_id": task_id})
        return mapping.event_from_row(row) if row else None

    async def said(self, task_id: str) -> list[Said]:
        """What the task's events said (their notes), oldest first; not the tasks they carry."""
        rows = await self.tx.rows(_SAID, {"task_id": task_id})
        return [Said(*row) for row in rows]

    async def count(self, task_id: str) -> int:
        found: int = (await self.tx.conn.execute(_COUNT, {"task_id": task_id})).scalar_one()
        return found

    async def _safe_bound(self) -> int:
        if self.tx.event_bound is None:
            if self.tx.replayed is not None:  # a standby's: what the primary proved before
                self.tx.event_bound = self.tx.horizon.replayed(self.tx.replayed)
            else:
                self.tx.event_bound = await self._prove_bound()
        return self.tx.event_bound

    async def _prove_bound(self) -> int:
        horizon, conn = self.tx.horizon, self.tx.conn
        drawn: int = (await conn.execute(_LAST_DRAWN)).scalar_one()
        if drawn <= horizon.safe:
            return horizon.safe
        has_xid, none_running, position = (await conn.execute(_NEXT_XID)).one()
        if has_xid:
            return horizon.safe
        deadline = time.monotonic() + WAIT_SECONDS
        while not none_running:
            await conn.execute(_FORGET_ACTIVITY)
            running, position = (await conn.execute(_RUNNING_BELOW_N)).one()
            none_running = running == 0
            if none_running:
                break
            if time.monotonic() >= deadline:
                return horizon.safe
            await asyncio.sleep(POLL_SECONDS)
        return horizon.proven(drawn, position)
