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
`WAIT_SECONDS`, the bound stays at the last one proven (`SafeBound.highest`). A transaction
computes its bound once (`age()` reads N once per transaction).

A read replica's transaction (`Tx.replayed`: the standby's replay position) proves nothing
there (a standby's sequence runs ahead of the draws, and it sees none of the primary's
running transactions): its bound is the highest the primary proved at a WAL position the
standby has replayed (`SafeBound.replayed`).
"""

from __future__ import annotations

import asyncio
import functools
import time
from collections.abc import Sequence

from sqlalchemy import BigInteger, TextClause, bindparam, func, insert, select, text

from app.domain.events import Event, Said
from app.storage import mapping
from app.storage.repositories.base import Repository, Write, cast
from app.storage.statements import once
from app.storage.tables import EventRow, table_of

events = table_of(EventRow)

NOTIFY_CHANNEL = "prickle_events"
SEQUENCE = "events_seq"
WAIT_SECONDS = 0.1  # how long a reader waits for the writers in flight before settling
POLL_SECONDS = 0.0005

_INSERT = once(insert(events))
# SQLite: one writer at a time, so the newest seq orders the next ones and commits alike
_LAST_SEQ = once(select(func.coalesce(func.max(events.c.seq), 0)))
# PostgreSQL: the newest seq told to every process listening (`Tx.announces`)
_NOTIFY = f"pg_notify('{NOTIFY_CHANNEL}', max(seq)::text)"
_ANNOUNCE = once(text(f"SELECT pg_notify('{NOTIFY_CHANNEL}', :seq)"))


@functools.cache
def _draw(announce: bool) -> TextClause:
    """PostgreSQL: the transaction id first (MATERIALIZED: taken before any seq is drawn),
    then the seqs, and if `announce` the announcement of the newest on commit: one round
    trip."""
    return once(
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
# standby's bound, `SafeBound.replayed`)
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
# a snapshot's (REPEATABLE READ: the transaction's): whether every transaction id given so far
# (below N, `age()`'s) is below its xmin, so had ended before it was taken (its xmax alone
# does not say: an id given after the last completion is running but not listed); its
# newest seq; and the WAL insert position (past every commit it holds)
_SNAPSHOT_QUIET = text(
    "SELECT age((pg_snapshot_xmin(s)::text::bigint % 4294967296)::text::xid) <= 0,"
    " (SELECT coalesce(max(seq), 0) FROM events),"
    " (pg_current_wal_insert_lsn() - '0/0'::pg_lsn)::bigint"
    " FROM pg_current_snapshot() AS s"
)
# the seqs a snapshot holds past a bound (`Events.head`)
_SEEN = (
    select(events.c.seq)
    .where(events.c.seq > bindparam("after", type_=BigInteger))
    .order_by(events.c.seq)
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


_EVENT_COLUMNS = tuple(c.name for c in events.c if c.name != "seq")
_AFTER_WRITE: dict[tuple[str, int, bool], TextClause] = {}


def _after_write(write: Write, count: int, announce: bool) -> TextClause:
    """PostgreSQL, one statement: `write` (another table's, its rows first), then, only if it
    wrote, the transaction id, `count` seqs drawn, the events inserted with them, and if
    `announce` the newest seq announced. It ends its command (`once(..., last=True)`).
    Built once per shape: the statement and its prepared form are reused."""
    key = (write.sql, count, announce)
    found = _AFTER_WRITE.get(key)
    if found is not None:
        return found
    values = ", ".join(
        "(" + ", ".join([str(i + 1)] + [cast(events, c, f"e{i}_{c}") for c in _EVENT_COLUMNS]) + ")"
        for i in range(count)
    )
    names = ", ".join(_EVENT_COLUMNS)
    picked = ", ".join(f"v.{c}" for c in _EVENT_COLUMNS)
    sql = (
        f"WITH {write.sql},"
        " me AS MATERIALIZED (SELECT pg_current_xact_id() AS xid FROM moved),"
        f" drawn AS MATERIALIZED (SELECT nextval('{SEQUENCE}') AS seq"
        f"  FROM me, generate_series(1, {count})),"
        " numbered AS (SELECT seq, row_number() OVER (ORDER BY seq) AS i FROM drawn),"
        f" added AS (INSERT INTO events (seq, {names}) SELECT n.seq, {picked}"
        f"  FROM numbered AS n JOIN (VALUES {values}) AS v(i, {names}) ON v.i = n.i"
        "  RETURNING seq)"
        f" SELECT array_agg(seq ORDER BY seq){', ' + _NOTIFY if announce else ''}"
        " FROM added HAVING count(*) > 0"
    )
    typed = [
        bindparam(f"e{i}_{c}", type_=events.c[c].type) for i in range(count) for c in _EVENT_COLUMNS
    ]
    found = _AFTER_WRITE[key] = once(text(sql).bindparams(*write.binds, *typed), last=True)
    return found


class Events(Repository):
    """The log: this repository writes the `events` table and nothing else."""

    __slots__ = ()

    async def append(self, new: Sequence[Event], after: Write | None = None) -> list[Event] | None:
        """Give the events the next seqs and insert them. Callers append after writing or
        locking the task they are about (its update takes the lock), so a task's later move
        draws a later seq.

        `after` (PostgreSQL): another table's write, handed by its repository, made first in
        the same statement, the events appended only if it wrote; None, with nothing written,
        if it did not. The write, the draw, the insert and the announcement are then one
        statement."""
        if not new:
            return []
        if after is not None:
            if self.tx.sqlite:
                raise ValueError("one statement with another write is PostgreSQL's")
            params = dict(after.params)
            for i, e in enumerate(new):
                row = mapping.event_to_row(e, 0)
                params.update({f"e{i}_{name}": row[name] for name in _EVENT_COLUMNS})
            statement = _after_write(after, len(new), self.tx.announces)
            found = await self.tx.one(statement, params)
            if found is None:
                return None
            seqs = list(found[0])
        else:
            if self.tx.sqlite:
                last = (await self.tx.one(_LAST_SEQ))[0]
                seqs = list(range(last + 1, last + len(new) + 1))
            else:
                drawn = await self.tx.one(_draw(self.tx.announces), {"count": len(new)})
                seqs = list(drawn[0])
            rows = [mapping.event_to_row(e, seq) for e, seq in zip(new, seqs, strict=True)]
            await self.tx.conn.execute(_INSERT, rows)
        self.tx.last_seq = seqs[-1]
        return [Event(**{**e.__dict__, "seq": seq}) for e, seq in zip(new, seqs, strict=True)]

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

    async def head(self) -> tuple[int, list[int]]:
        """Where this read's view of the log ends: a cursor, every event at or below it in
        the view, and the seqs past it in the view too (usually none), in order. An event is
        in the view iff its seq is at most the cursor or listed. Outside a snapshot (SQLite's
        read transactions are snapshots already) the cursor is `last_seq` and the list
        empty; in one, the bound `_snapshot_bound` finds."""
        if self.tx.sqlite or self.tx.snapshot is None or self.tx.replayed is not None:
            return await self.last_seq(), []
        bound = await self._safe_bound()
        assert self.tx.head is not None
        seen = self.tx.head[1]
        if seen is None:
            seen = [row[0] for row in await self.tx.rows(_SEEN, {"after": bound})]
            self.tx.head = (bound, seen)
        return bound, seen

    async def _snapshot_bound(self) -> int:
        """PostgreSQL, a snapshot's (`Tx.snapshot`): a seq at or below which every event
        that commits is in it, and whether none past it is. A snapshot may hold a seq while
        a lower one is still to commit, so no one seq need say what it holds. Every event
        at or below the bound proven before it was taken is in it. When every transaction id
        given so far is below its xmin, every transaction that drew a seq had ended before
        it was taken, and one given an id later draws after now, higher than any it holds:
        its newest seq is then the bound, and nothing past it is in it. Otherwise the bound
        proven before, and what it holds past that, if anything, listed by `head`
        (`Tx.head`)."""
        floor = self.tx.snapshot
        assert floor is not None
        quiet, newest, position = (await self.tx.conn.execute(_SNAPSHOT_QUIET)).one()
        if quiet:
            self.tx.safe_bound.proven(newest, position)
        bound = max(newest, floor) if quiet else floor
        self.tx.head = (bound, [] if quiet or newest <= floor else None)
        return bound

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
                self.tx.event_bound = self.tx.safe_bound.replayed(self.tx.replayed)
            elif self.tx.snapshot is not None:  # one snapshot: what it holds, in full
                self.tx.event_bound = await self._snapshot_bound()
            else:
                self.tx.event_bound = await self._prove_bound()
        return self.tx.event_bound

    async def _prove_bound(self) -> int:
        safe_bound, conn = self.tx.safe_bound, self.tx.conn
        drawn: int = (await conn.execute(_LAST_DRAWN)).scalar_one()
        if drawn <= safe_bound.highest:
            return safe_bound.highest
        has_xid, none_running, position = (await conn.execute(_NEXT_XID)).one()
        if has_xid:
            return safe_bound.highest
        deadline = time.monotonic() + WAIT_SECONDS
        while not none_running:
            await conn.execute(_FORGET_ACTIVITY)
            running, position = (await conn.execute(_RUNNING_BELOW_N)).one()
            none_running = running == 0
            if none_running:
                break
            if time.monotonic() >= deadline:
                return safe_bound.highest
            await asyncio.sleep(POLL_SECONDS)
        return safe_bound.proven(drawn, position)
