"""The storage interface: a unit of work per command, reads and writes behind one class.

`Store.write()` yields a `Tx` in one transaction that commits only when the block ends
without error; listeners learn the new last event seq only after the commit.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from typing import Any

from sqlalchemy import delete, func, insert, select, update
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
from app.storage.engine import create_engine, database_url, is_sqlite
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


class Store:
    def __init__(self, url: str | None = None) -> None:
        self.url = database_url(url)
        self.sqlite = is_sqlite(self.url)
        self.engine = create_engine(self.url)
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

    @asynccontextmanager
    async def _transaction(self, write: bool) -> AsyncIterator[Tx]:
        async with self.engine.connect() as conn:
            if write and self.sqlite:
                conn = await conn.execution_options(sqlite_write=True)
            async with conn.begin():
                yield Tx(conn, self.sqlite)

    async def close(self) -> None:
        await self.engine.dispose()


class Tx:
    """One transaction's view of the database."""

    def __init__(self, conn: AsyncConnection, sqlite: bool) -> None:
        self.conn = conn
        self.sqlite = sqlite
        self.last_seq = 0

    async def _rows(self, stmt: Any) -> list[Any]:
        return list((await self.conn.execute(stmt)).all())

    async def _one(self, stmt: Any) -> Any:
        return (await self.conn.execute(stmt)).first()

    # tasks

    async def get_task(self, task_id: str, for_update: bool = False) -> Task | None:
        stmt = select(tasks).where(tasks.c.id == task_id)
        if for_update and not self.sqlite:
            stmt = stmt.with_for_update()
        row = await self._one(stmt)
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
            await self.conn.execute(insert(tasks).values(mapping.task_to_row(task, created_by)))
        except IntegrityError as error:
            if task.idempotency_key is None:
                raise
            raise Conflict(f"idempotency key {task.idempotency_key!r} is already in use") from error

    async def update_task(self, task: Task, old_version: int) -> None:
        row = mapping.task_to_row(task)
        stmt = update(tasks).where(tasks.c.id == task.id, tasks.c.version == old_version)
        if (await self.conn.execute(stmt.values(row))).rowcount != 1:
            raise Conflict(f"task {task.id} changed concurrently; read it again and retry")

    async def find_idempotent(self, created_by: str, key: str) -> Task | None:
        stmt = select(tasks).where(tasks.c.created_by == created_by, tasks.c.idempotency_key == key)
        row = await self._one(stmt)
        return mapping.task_from_row(row) if row else None

    async def child_states(self, parent_id: str) -> list[str]:
        return [r[0] for r in await self._rows(select(tasks.c.state).where(tasks.c.parent_task_id == parent_id))]

    async def project_exists(self, project: str) -> bool:
        stmt = select(members.c.project).where(members.c.project == project).limit(1)
        return await self._one(stmt) is not None

    # the event log

    async def append_events(self, new: list[Event]) -> list[Event]:
        """Give the events the next seqs and insert them; the counter's row lock is held
        until commit, so transactions commit in seq order and readers never see a gap."""
        stmt = (
            update(counter).where(counter.c.id == 1)
            .values(last_seq=counter.c.last_seq + len(new)).returning(counter.c.last_seq)
        )  # fmt: skip
        last = (await self.conn.execute(stmt)).scalar_one()
        first = last - len(new) + 1
        await self.conn.execute(
            insert(events), [mapping.event_to_row(e, first + i) for i, e in enumerate(new)]
        )
        if not self.sqlite:
            await self.conn.execute(select(func.pg_notify(NOTIFY_CHANNEL, str(last))))
        self.last_seq = last
        return [Event(**{**e.__dict__, "seq": first + i}) for i, e in enumerate(new)]

    async def last_seq_committed(self) -> int:
        return (await self.conn.execute(select(counter.c.last_seq).where(counter.c.id == 1))).scalar_one()

    async def events_after(self, after: int, limit: int, task_id: str | None = None) -> list[Event]:
        stmt = select(events).where(events.c.seq > after)
        if task_id is not None:
            stmt = stmt.where(events.c.task_id == task_id)
        rows = await self._rows(stmt.order_by(events.c.seq).limit(limit))
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
        return await self._one(select(agents.c.id).where(agents.c.id == agent_id)) is not None

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
        rows = await self._rows(select(gate_rules).where(gate_rules.c.owner == owner))
        return [mapping.gate_rule_from_row(r) for r in rows]

    async def insert_gate_rule(self, rule: GateRule) -> None:
        await self.conn.execute(insert(gate_rules).values(**rule.__dict__))

    async def delete_gate_rule(self, rule_id: str, owner: str) -> bool:
        stmt = delete(gate_rules).where(gate_rules.c.id == rule_id, gate_rules.c.owner == owner)
        return (await self.conn.execute(stmt)).rowcount == 1

    async def result_rules(self, owner: str) -> list[ResultRule]:
        rows = await self._rows(select(result_rules).where(result_rules.c.owner == owner))
        return [mapping.result_rule_from_row(r) for r in rows]

    async def insert_result_rule(self, rule: ResultRule) -> None:
        await self.conn.execute(insert(result_rules).values(**rule.__dict__))

    async def delete_result_rule(self, rule_id: str, owner: str) -> bool:
        stmt = delete(result_rules).where(result_rules.c.id == rule_id, result_rules.c.owner == owner)
        return (await self.conn.execute(stmt)).rowcount == 1

    # approvals

    async def insert_approval(self, approval_id: str, task_id: str, owner: str, at: str) -> None:
        await self.conn.execute(
            insert(approvals).values(id=approval_id, task_id=task_id, owner=owner, status="pending", created_at=at)
        )

    async def close_approval(self, approval_id: str, status: str, reason: str | None, at: str) -> None:
        stmt = update(approvals).where(approvals.c.id == approval_id, approvals.c.status == "pending")
        await self.conn.execute(stmt.values(status=status, reason=reason, decided_at=at))

    # project members

    async def is_member(self, project: str, handle: str) -> bool:
        stmt = select(members.c.handle).where(members.c.project == project, members.c.handle == handle)
        return await self._one(stmt) is not None

    async def member_role(self, project: str, handle: str) -> str | None:
        stmt = select(members.c.role).where(members.c.project == project, members.c.handle == handle)
        row = await self._one(stmt)
        return row[0] if row else None

    async def add_member(self, project: str, handle: str, role: str, at: str) -> None:
        if await self.member_role(project, handle) is None:
            row = {"project": project, "handle": handle, "role": role, "created_at": at}
            await self._insert_missing(members, row)

    async def projects_of(self, handle: str) -> list[str]:
        return [r[0] for r in await self._rows(select(members.c.project).where(members.c.handle == handle))]

    # checkpoints and results

    async def insert_checkpoint(self, row: dict[str, Any]) -> None:
        await self.conn.execute(insert(checkpoints).values(**row))

    async def checkpoint_hashes(self, ids: list[str]) -> dict[str, tuple[str, str]]:
        """checkpoint id -> (task id, sha256)"""
        if not ids:
            return {}
        stmt = select(checkpoints.c.id, checkpoints.c.task_id, checkpoints.c.sha256)
        return {r[0]: (r[1], r[2]) for r in await self._rows(stmt.where(checkpoints.c.id.in_(ids)))}

    async def insert_result(self, row: dict[str, Any]) -> None:
        await self.conn.execute(insert(results).values(**row))

    async def find_submission(self, task_id: str, submission_id: str) -> Any:
        stmt = select(results).where(results.c.task_id == task_id, results.c.submission_id == submission_id)
        return await self._one(stmt)

    async def set_result(self, task_id: str, revision: int, status: str, body: dict[str, Any]) -> None:
        stmt = update(results).where(results.c.task_id == task_id, results.c.revision == revision)
        await self.conn.execute(stmt.values(status=status, body=body))

    async def supersede_results(self, task_id: str, below_revision: int) -> None:
        """Mark every earlier revision superseded, in its status column and its body."""
        stmt = select(results.c.revision, results.c.body).where(
            results.c.task_id == task_id, results.c.revision < below_revision, results.c.status != "superseded"
        )
        for revision, body in await self._rows(stmt):
            await self.set_result(task_id, revision, "superseded", {**body, "status": "superseded"})


async def init_counter(conn: AsyncConnection) -> None:
    if (await conn.execute(select(counter.c.id).where(counter.c.id == 1))).first() is None:
        await conn.execute(insert(counter).values(id=1, last_seq=0))
