"""Remote A2A agents, the tasks sent to them, and the lease of the process dispatching to
each (`Leases`, as webhooks'; every change the dispatcher makes is
conditional on still holding the lease)."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from sqlalchemy import delete, insert, select, update

from app.domain.remote_agents import RemoteAgent, RemoteTask
from app.storage.repositories.base import Repository, insert_missing
from app.storage.repositories.leases import Leases
from app.storage.tables import RemoteAgentRow, RemoteTaskRow, table_of

agents = table_of(RemoteAgentRow)
tasks = table_of(RemoteTaskRow)
_LEASES = Leases(agents, "agent_id")


def _agent(row: Any) -> RemoteAgent:
    m = row._mapping
    return RemoteAgent(
        m["agent_id"], m["owner"], m["card_url"], m["credential"], m["created_at"], m["read_to"]
    )


def _task(row: Any) -> RemoteTask:
    m = row._mapping
    return RemoteTask(
        m["task_id"],
        m["agent_id"],
        m["message_id"],
        m["remote_task_id"],
        m["sent_at"],
        m["asked"],
        m["answered"],
        m["checkpointed"],
        m["done"],
    )


class RemoteAgents(Repository):
    __slots__ = ()

    # the owner's verbs

    async def put(self, agent: RemoteAgent) -> None:
        """Insert the remote agent, or change its card URL and credential (its cursor and
        lease stay)."""
        if await self.get(agent.agent_id) is not None:
            stmt = update(agents).where(agents.c.agent_id == agent.agent_id)
            await self.tx.conn.execute(
                stmt.values(card_url=agent.card_url, credential=agent.credential)
            )
            return
        values = {
            "agent_id": agent.agent_id,
            "owner": agent.owner,
            "card_url": agent.card_url,
            "credential": agent.credential,
            "created_at": agent.created_at,
            "read_to": agent.read_to,
        }
        await self.tx.conn.execute(insert(agents).values(**values))

    async def get(self, agent_id: str) -> RemoteAgent | None:
        row = await self.tx.one(select(agents).where(agents.c.agent_id == agent_id))
        return _agent(row) if row else None

    async def of(self, owner: str) -> list[RemoteAgent]:
        stmt = select(agents).where(agents.c.owner == owner).order_by(agents.c.agent_id)
        return [_agent(r) for r in await self.tx.rows(stmt)]

    async def delete(self, agent_id: str) -> bool:
        done = await self.tx.conn.execute(delete(agents).where(agents.c.agent_id == agent_id))
        return bool(done.rowcount)

    # the dispatcher's lease

    async def claim(self, holder: str, now: datetime, until: datetime, limit: int) -> list[str]:
        """Claim up to `limit` remote agents whose lease is free or expired; their ids."""
        return await _LEASES.claim(self.tx, holder, now, until, limit)

    async def renew(self, holder: str, until: datetime) -> set[str]:
        """Extend every lease `holder` still holds; the ids of those agents."""
        return await _LEASES.renew(self.tx, holder, until)

    async def held(self, agent_id: str, holder: str) -> RemoteAgent | None:
        """The remote agent, while `holder` holds its lease."""
        row = await self.tx.one(select(agents).where(*_LEASES.held(agent_id, holder)))
        return _agent(row) if row else None

    async def advance(self, agent_id: str, holder: str, read_to: int) -> bool:
        """Move the cursor if `holder` still holds the lease; whether it did."""
        stmt = update(agents).where(*_LEASES.held(agent_id, holder)).values(read_to=read_to)
        return bool((await self.tx.conn.execute(stmt)).rowcount)

    async def release_all(self, holder: str) -> None:
        await _LEASES.release_all(self.tx, holder)

    async def release(self, agent_id: str, holder: str) -> None:
        await _LEASES.release(self.tx, agent_id, holder)

    # the tasks sent

    async def send_task(self, task_id: str, agent_id: str, message_id: str) -> None:
        """A task to send with `message_id` (routed to the agent, again if it was before)."""
        values = {"task_id": task_id, "agent_id": agent_id, "message_id": message_id}
        found = await self.task(task_id)
        if found is None:
            await insert_missing(self.tx, tasks, {**values, "done": False})
        elif found.message_id != message_id:
            fresh = {
                "remote_task_id": None,
                "sent_at": None,
                "asked": None,
                "answered": None,
                "checkpointed": None,
                "done": False,
            }
            stmt = update(tasks).where(tasks.c.task_id == task_id)
            await self.tx.conn.execute(stmt.values(**values, **fresh))

    async def task(self, task_id: str) -> RemoteTask | None:
        row = await self.tx.one(select(tasks).where(tasks.c.task_id == task_id))
        return _task(row) if row else None

    async def open_tasks(self, agent_id: str) -> list[RemoteTask]:
        stmt = select(tasks).where(tasks.c.agent_id == agent_id, tasks.c.done.is_(False))
        return [_task(r) for r in await self.tx.rows(stmt.order_by(tasks.c.task_id))]

    async def change_task(self, task_id: str, holder: str, **values: Any) -> bool:
        """Change the task's row if `holder` holds its agent's lease; whether it did."""
        leased = (
            select(agents.c.agent_id)
            .where(agents.c.agent_id == tasks.c.agent_id, agents.c.leased_by == holder)
            .exists()
        )
        stmt = update(tasks).where(tasks.c.task_id == task_id, leased).values(**values)
        return bool((await self.tx.conn.execute(stmt)).rowcount)
