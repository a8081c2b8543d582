"""The dispatcher: runs inside `prickle serve`, in every worker process, and sends the tasks
routed to remote A2A agents.

Each remote agent is a durable reader of the event log, as each webhook is
(`DurableReader`): one process at a time dispatches to it, the one holding
its lease (`leased_by`, `lease_until`), claimed in a transaction (on PostgreSQL with FOR
UPDATE SKIP LOCKED) and renewed every third of the lease. When that process dies, another
(or the restarted one) claims the agent once the lease has run out and continues from its
cursor (`read_to`) and from the tasks it had sent (`remote_tasks`).

Reading the log: a task routed to the agent becomes a task to send, with a message id made
from the task and the routing event (the same after any crash); any other event of a task
being followed wakes its follower (an answer to send back, a cancel to pass on). The cursor
moves past the events only with those rows written, in one transaction conditional on the
lease. Each open task then has a follower (follower.py).
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable

from app.a2a.outbound.settings import Settings
from app.service.durable_reader import DurableReader, Leases
from app.service.remote_agents import on_change
from app.storage.store import Store
from app.storage.tx import Tx


class Dispatcher(DurableReader):
    name = "a2a-outbound"
    what = "remote agents"
    failed = "dispatching to {} failed; another round will retry"

    def __init__(self, store: Store, settings: Settings) -> None:
        super().__init__(store, settings.lease)
        self.settings = settings

    def leases(self, tx: Tx) -> Leases:
        return tx.remote_agents

    def watch(self) -> list[Callable[[], None]]:
        return [on_change(self.store, self.claim_now)]

    async def work(self, agent_id: str, wake: asyncio.Event) -> None:
        # the A2A SDK loads with the work of an agent, once one is claimed
        from app.a2a.outbound.agent import Agent, held

        try:
            agent = await held(self.store, agent_id, self.holder)
            if agent is not None:
                await Agent(self.store, self.settings, self.holder, agent).run(wake, self._stopping)
        finally:  # its lease free at once, and claimed again if it is still there
            await self.release(agent_id)
            self.claim_now()
