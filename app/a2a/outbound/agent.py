"""The work of one remote agent while this process holds its lease: read the log after its
cursor, record each task routed to it, and follow each task sent (`Follower`).
Imported when the dispatcher claims its first agent: the A2A SDK loads with it."""

from __future__ import annotations

import asyncio
import contextlib
import logging

from app.a2a.outbound.follower import Follower, LeaseLost, Timing
from app.a2a.outbound.mapping import message_id
from app.a2a.outbound.remote import Remote
from app.a2a.outbound.settings import Settings
from app.domain.errors import InvalidInput
from app.domain.events import Event
from app.domain.remote_agents import RemoteAgent
from app.storage.archive import log_after
from app.storage.store import Store
from app.wakeups import woken

log = logging.getLogger(__name__)

BATCH = 100  # events read at a time for one agent


async def held(store: Store, agent_id: str, holder: str) -> RemoteAgent | None:
    """The remote agent, while `holder` holds its lease."""
    async with store.read() as tx:
        return await tx.remote_agents.held(agent_id, holder)


class Agent:
    """The work of one remote agent while this process holds its lease."""

    def __init__(self, store: Store, settings: Settings, holder: str, agent: RemoteAgent) -> None:
        self.store = store
        self.agent = agent
        self.holder = holder
        self.remote = Remote(agent, settings.allow_private, settings.timeout)
        self.timing = Timing(settings.poll)
        self.every = settings.lease / 3
        self.followers: dict[str, tuple[Follower, asyncio.Task[None]]] = {}

    async def run(self, wake: asyncio.Event, stopping: asyncio.Event) -> None:
        """Read the log and follow the tasks sent, woken by commits (`wake`), until the
        server stops or the lease is lost."""
        try:
            await self._open()
            while not stopping.is_set():
                wake.clear()
                if not await self._read():
                    return
                await self._follow()
                await woken(wake, self.every)
        finally:
            for _, task in self.followers.values():
                task.cancel()
            for _, task in self.followers.values():
                with contextlib.suppress(BaseException):
                    await task
            await self.remote.close()

    async def _open(self) -> None:
        """Read the card, again after a backoff until it answers."""
        attempt = 0
        while True:
            try:
                await self.remote.open()
                return
            except InvalidInput as failure:
                log.warning("the card of %s: %s", self.agent.agent_id, failure.message)
            await asyncio.sleep(self.timing.wait(attempt))
            attempt += 1

    async def _read(self) -> bool:
        """Read the events after the cursor; False when the lease is lost."""
        while True:
            agent = await held(self.store, self.agent.agent_id, self.holder)
            if agent is None:
                return False
            async with self.store.read() as tx:
                head = await tx.events.last_seq()
                events = await log_after(tx, agent.read_to, BATCH, upto=head)  # archived too
            end = events[-1].seq if len(events) == BATCH else max(head, agent.read_to)
            if end <= agent.read_to:
                return True
            routed = [e for e in events if self._routed_here(e)]
            try:
                async with self.store.write() as tx:
                    if not await tx.remote_agents.advance(agent.agent_id, self.holder, end):
                        raise LeaseLost(agent.agent_id)  # nothing is written
                    for event in routed:
                        sent = message_id(event.task_id, event.seq)
                        await tx.remote_agents.send_task(event.task_id, agent.agent_id, sent)
            except LeaseLost:
                return False
            for event in events:
                found = self.followers.get(event.task_id)
                if found is not None:
                    found[0].poke()

    def _routed_here(self, event: Event) -> bool:
        return (
            event.to_state == "routed"
            and event.from_state != "routed"
            and event.task.get("assignee") == self.agent.agent_id
        )

    async def _follow(self) -> None:
        """A follower for each open task sent to the agent."""
        async with self.store.read() as tx:
            sent = await tx.remote_agents.open_tasks(self.agent.agent_id)
        for row in sent:
            found = self.followers.get(row.task_id)
            if found is not None and not found[1].done():
                continue
            follower = Follower(self.store, self.remote, self.holder, row.task_id, self.timing)
            task = asyncio.create_task(follower.run(), name=f"prickle-a2a-task-{row.task_id}")
            self.followers[row.task_id] = (follower, task)
