"""The dispatcher: runs inside `prickle serve`, in every worker process, and sends the tasks
routed to remote A2A agents.

Each remote agent is a durable reader of the event log, as each webhook is
(app/service/webhook_delivery.py): one process at a time dispatches to it, the one holding
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
import contextlib
import logging
import os
import time
from collections.abc import Callable
from datetime import timedelta

from app.a2a.outbound.settings import Settings
from app.domain.clock import new_id, now
from app.service.remote_agents import on_change
from app.storage.outage import quietly
from app.storage.store import Store
from app.waiting import woken

log = logging.getLogger(__name__)

CLAIM_LIMIT = 100
STOP_SECONDS = 5.0


class Dispatcher:
    def __init__(self, store: Store, settings: Settings) -> None:
        self.store = store
        self.settings = settings
        self.holder = f"{os.getpid()}-{new_id()}"
        self._workers: dict[str, asyncio.Task[None]] = {}
        self._wakes: dict[str, asyncio.Event] = {}
        self._claim = asyncio.Event()
        self._stopping = asyncio.Event()
        self._task: asyncio.Task[None] | None = None
        self._forget: Callable[[], None] | None = None

    async def start(self) -> None:
        self._forget = on_change(self.store, self._claim.set)
        self._task = asyncio.create_task(self._supervise(), name="prickle-a2a-outbound")

    async def stop(self) -> None:
        if self._forget is not None:
            self._forget()
            self._forget = None
        self._stopping.set()
        tasks = [t for t in (self._task, *self._workers.values()) if t is not None]
        for task in tasks:
            task.cancel()
        for task in tasks:
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await asyncio.wait_for(task, STOP_SECONDS)
        with contextlib.suppress(Exception):  # let another process continue at once
            async with self.store.write() as tx:
                await tx.remote_agents.release_all(self.holder)

    def wake(self, _seq: int = 0) -> None:
        """Events committed: every agent dispatched here reads them."""
        for event in self._wakes.values():
            event.set()

    # claiming and renewing leases

    async def _supervise(self) -> None:
        every = self.settings.lease / 3
        renewed_at = 0.0
        while not self._stopping.is_set():
            self._claim.clear()
            try:
                if time.monotonic() - renewed_at >= every:
                    await self._renew()
                    renewed_at = time.monotonic()
                await self._claim_free()
            except Exception as error:
                quietly(log, "claiming remote agents failed; trying again", error)
            await woken(self._claim, every)

    async def _renew(self) -> None:
        if not self._workers:
            return
        until = now() + timedelta(seconds=self.settings.lease)
        async with self.store.write() as tx:
            held = await tx.remote_agents.renew(self.holder, until)
        for agent_id, task in list(self._workers.items()):
            if agent_id not in held:  # another process holds it now, or it was removed
                task.cancel()

    async def _claim_free(self) -> None:
        at = now()
        until = at + timedelta(seconds=self.settings.lease)
        async with self.store.write() as tx:
            ids = await tx.remote_agents.claim(self.holder, at, until, CLAIM_LIMIT)
        for agent_id in ids:
            if agent_id not in self._workers:
                self._wakes[agent_id] = asyncio.Event()
                self._workers[agent_id] = asyncio.create_task(
                    self._work(agent_id), name=f"prickle-a2a-{agent_id}"
                )

    # one remote agent

    async def _work(self, agent_id: str) -> None:
        # the A2A SDK loads with the work of an agent, once one is claimed
        from app.a2a.outbound.agent import Agent, held

        try:
            agent = await held(self.store, agent_id, self.holder)
            if agent is not None:
                wake = self._wakes[agent_id]
                await Agent(self.store, self.settings, self.holder, agent).run(wake, self._stopping)
        except asyncio.CancelledError:
            raise
        except Exception as error:
            quietly(log, f"dispatching to {agent_id} failed; another round will retry", error)
        finally:
            self._workers.pop(agent_id, None)
            self._wakes.pop(agent_id, None)
            with contextlib.suppress(Exception):
                async with self.store.write() as tx:
                    await tx.remote_agents.release(agent_id, self.holder)
            self._claim.set()
