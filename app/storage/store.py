"""The storage interface: a unit of work per command, reads and writes behind one class.

`Store.write()` yields a `Tx` in one transaction that commits only when the block ends
without error; listeners learn the new last event seq only after the commit.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from typing import Any

from sqlalchemy import (
    Connection,
    Engine,
    Text,
    bindparam,
    cast,
    delete,
    func,
    insert,
    select,
    update,
)
from sqlalchemy.dialects.postgresql import insert as pg_insert
from sqlalchemy.dialects.sqlite import insert as sqlite_insert
from sqlalchemy.exc import IntegrityError
from sqlalchemy.ext.asyncio import AsyncConnection

from app.domain.errors import Conflict
from app.domain.events import Event
from app.domain.gate import GateRule
from app.domain.policy import ResultRule
from app.domain.task import Task
from app.storage import mapping
from app.storage.engine import (
    create_engine,
    create_sqlite_engine,
    database_url,
    is_sqlite,
    is_sqlite_file,
)
from app.storage.tables import (
    AgentRow,
    ApprovalRow,
    CapabilityRow,
    CheckpointRow,
    EventCounterRow,
    EventRow,
    GateRuleRow,
    PersonRow,
    ProjectMemberRow,
    ResultRow,
    ResultRuleRow,
    TaskRow,
    TokenRow,
)  # fmt: skip

tasks = TaskRow.__table__
events = EventRow.__table__
counter = EventCounterRow.__table__
checkpoints = CheckpointRow.__table__
results = ResultRow.__table__
persons = PersonRow.__table__
agents = AgentRow.__table__
tokens = TokenRow.__table__
capabilities = CapabilityRow.__table__
gate_rules = GateRuleRow.__table__
result_rules = ResultRuleRow.__table__
approvals = ApprovalRow.__table__
members = ProjectMemberRow.__table__

NOTIFY_CHANNEL = "prickle_events"

# The statements a move runs, built once. A statement built per call (`.values(**row)`,
# `column == value`) spends more time making bind parameters and their cache keys than
# SQLite spends running it; these take their values as execution parameters instead.
_INSERT_TASK, _INSERT_EVENTS, _INSERT_RESULT = insert(tasks), insert(events), insert(results)
_INSERT_CHECKPOINT, _INSERT_APPROVAL = insert(checkpoints), insert(approvals)
_TASK_BY_ID = select(tasks).where(tasks.c.id == bindparam("task_id"))
_TASK_BY_ID_LOCKED = _TASK_BY_ID.with_for_update()
_UPDATE_TASK = update(tasks).where(
    tasks.c.id == bindparam("where_id"), tasks.c.version == bindparam("where_version")
)
_ADVANCE_COUNTER = (
    update(counter).where(counter.c.id == 1)
    .values(last_seq=counter.c.last_seq + bindparam("count")).returning(counter.c.last_seq)
)  # fmt: skip
# PostgreSQL: the same, announcing the new head on commit (one round trip, not two)
_ADVANCE_COUNTER_NOTIFY = _ADVANCE_COUNTER.returning(
    func.pg_notify(NOTIFY_CHANNEL, cast(counter.c.last_seq, Text))
)
_AGENT_EXISTS = select(agents.c.id).where(agents.c.id == bindparam("agent_id"))
_PROJECT_EXISTS = select(members.c.project).where(members.c.project == bindparam("project")).limit(1)
_MEMBER_ROLE = select(members.c.role).where(
    members.c.project == bindparam("project"), members.c.handle == bindparam("handle")
)
_GATE_RULES = select(gate_rules).where(gate_rules.c.owner == bindparam("owner"))
_RESULT_RULES = select(result_rules).where(result_rules.c.owner == bindparam("owner"))
_EARLIER_RESULTS = select(results.c.revision, results.c.body).where(
    results.c.task_id == bindparam("task_id"), results.c.revision < bindparam("below"),
    results.c.status != "superseded",
)
_EVENTS_AFTER = select(events).where(events.c.seq > bindparam("after")).order_by(events.c.seq)


class Store:
    def __init__(self, url: str | None = None) -> None:
        self.url = database_url(url)
        self.sqlite = is_sqlite(self.url)
        self.engine = create_engine(self.url)
        self._blocking = create_sqlite_engine(self.url) if is_sqlite_file(self.url) else None
        self._write_lock = asyncio.Lock() if self.sqlite else None
        self.commit_listeners: list[Callable[[int], None]] = []

    @asynccontextmanager
    async def write(self) -> AsyncIterator[Tx]:
        if self._write_lock is None:
            async with self._transaction(write=True) as tx:
                yield tx
        else:
            async with self._write_lock, self._transaction(write=True) as tx:
                yield tx
        if tx.last_seq:
            for listener in self.commit_listeners:
                listener(tx.last_seq)

    @asynccontextmanager
    async def read(self) -> AsyncIterator[Tx]:
        async with self._transaction(write=False) as tx:
            yield tx

    @property
    def statements_engine(self) -> Engine:
        """The engine whose events see every statement of the store's transactions."""
        return self._blocking or self.engine.sync_engine

    @asynccontextmanager
    async def _transaction(self, write: bool) -> AsyncIterator[Tx]:
        if self._blocking is not None:
            with self._blocking.connect() as blocking:
                if write:
                    blocking.execution_options(sqlite_write=True)
                with blocking.begin():
                    yield Tx(_OnLoop(blocking), sqlite=True)
            return
        async with self.engine.connect() as conn:
            if write and self.sqlite:
                conn = await conn.execution_options(sqlite_write=True)
            async with conn.begin():
                yield Tx(conn, self.sqlite)

    async def close(self) -> None:
        if self._blocking is not None:
            self._blocking.dispose()
        await self.engine.dispose()


class _OnLoop:
    """A blocking SQLite connection behind the `await conn.execute(...)` that Tx uses."""

    __slots__ = ("blocking",)

    def __init__(self, blocking: Connection) -> None:
        self.blocking = blocking

    async def execute(self, statement: Any, parameters: Any = None) -> Any:
        return self.blocking.execute(statement, parameters)


class Tx:
    """One transaction's view of the database."""

    def __init__(self, conn: AsyncConnection | _OnLoop, sqlite: bool) -> None:
        self.conn = conn
        self.sqlite = sqlite
        self.last_seq = 0

    async def _rows(self, stmt: Any, params: dict[str, Any] | None = None) -> list[Any]:
        return list((await self.conn.execute(stmt, params)).all())

    async def _one(self, stmt: Any, params: dict[str, Any] | None = None) -> Any:
        return (await self.conn.execute(stmt, params)).first()

    # tasks

    async def get_task(self, task_id: str, for_update: bool = False) -> Task | None:
        stmt = _TASK_BY_ID_LOCKED if for_update and not self.sqlite else _TASK_BY_ID
        row = await self._one(stmt, {"task_id": task_id})
        return mapping.task_from_row(row) if row else None

    async def get_tasks(self, ids: list[str]) -> list[Task]:
        if not ids:
            return []
        rows = await self._rows(select(tasks).where(tasks.c.id.in_(ids)))
        return [mapping.task_from_row(r) for r in rows]

    async def insert_task(self, task: Task, created_by: str) -> None:
        """Conflict when the creator already used the task's idempotency key (a concurrent
        creation committed first); the transaction is then spoilt and must be rolled back."""
        try:
            await self.conn.execute(_INSERT_TASK, mapping.task_to_row(task, created_by))
        except IntegrityError as error:
            if task.idempotency_key is None:
                raise
            raise Conflict(f"idempotency key {task.idempotency_key!r} is already in use") from error

    async def update_task(self, task: Task, old_version: int) -> None:
        row = mapping.task_to_row(task)
        del row["id"]
        params = {**row, "where_id": task.id, "where_version": old_version}
        if (await self.conn.execute(_UPDATE_TASK, params)).rowcount != 1:
            raise Conflict(f"task {task.id} changed concurrently; read it again and retry")

    async def find_idempotent(self, created_by: str, key: str) -> Task | None:
        stmt = select(tasks).where(tasks.c.created_by == created_by, tasks.c.idempotency_key == key)
        row = await self._one(stmt)
        return mapping.task_from_row(row) if row else None

    async def child_states(self, parent_id: str) -> list[str]:
        return [r[0] for r in await self._rows(select(tasks.c.state).where(tasks.c.parent_task_id == parent_id))]

    async def project_exists(self, project: str) -> bool:
        return await self._one(_PROJECT_EXISTS, {"project": project}) is not None

    # the event log

    async def append_events(self, new: list[Event]) -> list[Event]:
        """Give the events the next seqs and insert them; the counter's row lock is held
        until commit, so transactions commit in seq order and readers never see a gap."""
        stmt = _ADVANCE_COUNTER if self.sqlite else _ADVANCE_COUNTER_NOTIFY
        last = (await self.conn.execute(stmt, {"count": len(new)})).first()[0]
        first = last - len(new) + 1
        await self.conn.execute(
            _INSERT_EVENTS, [mapping.event_to_row(e, first + i) for i, e in enumerate(new)]
        )
        self.last_seq = last
        return [Event(**{**e.__dict__, "seq": first + i}) for i, e in enumerate(new)]

    async def last_seq_committed(self) -> int:
        return (await self.conn.execute(select(counter.c.last_seq).where(counter.c.id == 1))).scalar_one()

    async def events_after(self, after: int, limit: int, task_id: str | None = None) -> list[Event]:
        stmt = _EVENTS_AFTER
        if task_id is not None:
            stmt = stmt.where(events.c.task_id == task_id)
        rows = await self._rows(stmt.limit(limit), {"after": after})
        return [mapping.event_from_row(r) for r in rows]

    async def count_events(self, task_id: str) -> int:
        stmt = select(func.count()).select_from(events).where(events.c.task_id == task_id)
        return (await self.conn.execute(stmt)).scalar_one()

    # principals

    async def _insert_missing(self, table: Any, values: dict[str, Any]) -> None:
        """Insert the row unless its key exists, even if a concurrent transaction inserts it
        first (a plain INSERT would then fail on the primary key)."""
        stmt = (sqlite_insert if self.sqlite else pg_insert)(table).values(**values)
        await self.conn.execute(stmt.on_conflict_do_nothing())

    async def ensure_person(self, handle: str, at: str) -> None:
        if await self._one(select(persons.c.handle).where(persons.c.handle == handle)) is None:
            await self._insert_missing(persons, {"handle": handle, "created_at": at})

    async def person_exists(self, handle: str) -> bool:
        return await self._one(select(persons.c.handle).where(persons.c.handle == handle)) is not None

    async def ensure_agent(self, agent_id: str, owner: str, at: str) -> None:
        await self.ensure_person(owner, at)
        if not await self.agent_exists(agent_id):
            await self._insert_missing(agents, {"id": agent_id, "owner": owner, "created_at": at})

    async def agent_exists(self, agent_id: str) -> bool:
        return await self._one(_AGENT_EXISTS, {"agent_id": agent_id}) is not None

    async def count_persons(self) -> int:
        return (await self.conn.execute(select(func.count()).select_from(persons))).scalar_one()

    async def put_token(self, token_sha256: str, kind: str, principal_id: str, at: str) -> None:
        await self.conn.execute(
            insert(tokens).values(
                token_sha256=token_sha256, principal_kind=kind, principal_id=principal_id, created_at=at
            )
        )

    async def principal_for_token(self, token_sha256: str) -> tuple[str, str] | None:
        stmt = select(tokens.c.principal_kind, tokens.c.principal_id)
        row = await self._one(stmt.where(tokens.c.token_sha256 == token_sha256))
        return (row[0], row[1]) if row else None

    async def set_capabilities(self, agent_id: str, offered: list[tuple[str, str]]) -> None:
        await self.conn.execute(delete(capabilities).where(capabilities.c.agent_id == agent_id))
        if offered:
            rows = [{"agent_id": agent_id, "kind": k, "name": n} for k, n in dict.fromkeys(offered)]
            await self.conn.execute(insert(capabilities), rows)

    async def agents_offering(self, kind: str, name: str) -> list[str]:
        stmt = select(capabilities.c.agent_id).where(capabilities.c.kind == kind, capabilities.c.name == name)
        return [r[0] for r in await self._rows(stmt.order_by(capabilities.c.agent_id))]

    async def capabilities_of(self, agent_id: str) -> list[tuple[str, str]]:
        stmt = select(capabilities.c.kind, capabilities.c.name).where(capabilities.c.agent_id == agent_id)
        return [(r[0], r[1]) for r in await self._rows(stmt.order_by(capabilities.c.kind, capabilities.c.name))]

    # rules

    async def gate_rules(self, owner: str) -> list[GateRule]:
        rows = await self._rows(_GATE_RULES, {"owner": owner})
        return [mapping.gate_rule_from_row(r) for r in rows]

    async def insert_gate_rule(self, rule: GateRule) -> None:
        await self.conn.execute(insert(gate_rules).values(**rule.__dict__))

    async def delete_gate_rule(self, rule_id: str, owner: str) -> bool:
        stmt = delete(gate_rules).where(gate_rules.c.id == rule_id, gate_rules.c.owner == owner)
        return (await self.conn.execute(stmt)).rowcount == 1

    async def result_rules(self, owner: str) -> list[ResultRule]:
        rows = await self._rows(_RESULT_RULES, {"owner": owner})
        return [mapping.result_rule_from_row(r) for r in rows]

    async def insert_result_rule(self, rule: ResultRule) -> None:
        await self.conn.execute(insert(result_rules).values(**rule.__dict__))

    async def delete_result_rule(self, rule_id: str, owner: str) -> bool:
        stmt = delete(result_rules).where(result_rules.c.id == rule_id, result_rules.c.owner == owner)
        return (await self.conn.execute(stmt)).rowcount == 1

    # approvals

    async def insert_approval(self, approval_id: str, task_id: str, owner: str, at: str) -> None:
        await self.conn.execute(
            _INSERT_APPROVAL,
            {"id": approval_id, "task_id": task_id, "owner": owner, "status": "pending", "created_at": at},
        )

    async def close_approval(self, approval_id: str, status: str, reason: str | None, at: str) -> None:
        stmt = update(approvals).where(approvals.c.id == approval_id, approvals.c.status == "pending")
        await self.conn.execute(stmt.values(status=status, reason=reason, decided_at=at))

    # project members

    async def is_member(self, project: str, handle: str) -> bool:
        return await self.member_role(project, handle) is not None

    async def member_role(self, project: str, handle: str) -> str | None:
        row = await self._one(_MEMBER_ROLE, {"project": project, "handle": handle})
        return row[0] if row else None

    async def add_member(self, project: str, handle: str, role: str, at: str) -> None:
        if await self.member_role(project, handle) is None:
            row = {"project": project, "handle": handle, "role": role, "created_at": at}
            await self._insert_missing(members, row)

    async def projects_of(self, handle: str) -> list[str]:
        return [r[0] for r in await self._rows(select(members.c.project).where(members.c.handle == handle))]

    # checkpoints and results

    async def insert_checkpoint(self, row: dict[str, Any]) -> None:
        await self.conn.execute(_INSERT_CHECKPOINT, row)

    async def checkpoint_hashes(self, ids: list[str]) -> dict[str, tuple[str, str]]:
        """checkpoint id -> (task id, sha256)"""
        if not ids:
            return {}
        stmt = select(checkpoints.c.id, checkpoints.c.task_id, checkpoints.c.sha256)
        return {r[0]: (r[1], r[2]) for r in await self._rows(stmt.where(checkpoints.c.id.in_(ids)))}

    async def insert_result(self, row: dict[str, Any]) -> None:
        await self.conn.execute(_INSERT_RESULT, row)

    async def find_submission(self, task_id: str, submission_id: str) -> Any:
        stmt = select(results).where(results.c.task_id == task_id, results.c.submission_id == submission_id)
        return await self._one(stmt)

    async def set_result(self, task_id: str, revision: int, status: str, body: dict[str, Any]) -> None:
        stmt = update(results).where(results.c.task_id == task_id, results.c.revision == revision)
        await self.conn.execute(stmt.values(status=status, body=body))

    async def supersede_results(self, task_id: str, below_revision: int) -> None:
        """Mark every earlier revision superseded, in its status column and its body."""
        params = {"task_id": task_id, "below": below_revision}
        for revision, body in await self._rows(_EARLIER_RESULTS, params):
            await self.set_result(task_id, revision, "superseded", {**body, "status": "superseded"})


async def init_counter(conn: AsyncConnection) -> None:
    if (await conn.execute(select(counter.c.id).where(counter.c.id == 1))).first() is None:
        await conn.execute(insert(counter).values(id=1, last_seq=0))
