"""The scheduler: runs due owner schedules inside `prickle serve`, in every worker process.

Each round it runs due schedules, up to CLAIM_LIMIT per transaction
(app.service.schedules.run_due), until none is due, then sleeps until the earliest
next_run_at, at most `recheck` seconds (so that schedules made or resumed by another
process are seen), and is woken at once when this process makes, changes or resumes one.
Processes coordinate through the database only: on PostgreSQL each claims due schedules
with FOR UPDATE SKIP LOCKED; on SQLite one writer at a time is the claim.

`stop()` lets the transaction in progress finish, then ends the loop.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Callable
from datetime import datetime

from app.domain.clock import now
from app.service.schedules import on_change, run_due
from app.settings import Settings
from app.storage.outage import quietly
from app.storage.store import Store
from app.wakeups import woken

log = logging.getLogger(__name__)

HELD_ELSEWHERE_SECONDS = 0.05  # a due schedule another process is running: look again soon
ERROR_SECONDS = 0.5  # after a failed round (the database gone), wait this long
STOP_SECONDS = 10.0  # how long stop() waits for the transaction in progress

Clock = Callable[[], datetime]


class Scheduler:
    def __init__(
        self, store: Store, clock: Clock = now, recheck: float = Settings.scheduler_recheck
    ) -> None:
        self.store = store
        self.clock = clock
        self.recheck = recheck
        self._wake = asyncio.Event()
        self._stopping = False
        self._task: asyncio.Task[None] | None = None
        self._forget: Callable[[], None] | None = None

    async def start(self) -> None:
        forget_change = on_change(self.store, self.wake)
        forget_back = self.store.health.on_back(self.wake)  # the database is back: run now

        def forget() -> None:
            forget_change()
            forget_back()

        self._forget = forget
        self._task = asyncio.create_task(self._loop(), name="prickle-scheduler")

    async def stop(self) -> None:
        if self._forget is not None:
            self._forget()
            self._forget = None
        task, self._task = self._task, None
        if task is None:
            return
        self._stopping = True
        self.wake()
        done, _ = await asyncio.wait({task}, timeout=STOP_SECONDS)
        if not done:
            task.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await task

    def wake(self) -> None:
        self._wake.set()

    async def run_due(self) -> int:
        """Run every schedule due now, a few per transaction; how many schedules ran."""
        count = 0
        while not self._stopping and (claimed := await run_due(self.store, self.clock())):
            count += claimed
        return count

    async def _loop(self) -> None:
        while not self._stopping:
            self._wake.clear()
            try:
                await self.run_due()
                delay = await self._delay()
            except Exception as error:
                quietly(log, "the scheduler's round failed; trying again", error)
                delay = ERROR_SECONDS
            if self._stopping:
                return
            await woken(self._wake, delay)

    async def _delay(self) -> float:
        """Seconds until the earliest next_run_at, at most `recheck`."""
        async with self.store.read() as tx:
            earliest = await tx.schedules.earliest_due()
        if earliest is None:
            return self.recheck
        seconds = (earliest - self.clock()).total_seconds()
        if seconds <= 0:  # due, yet not claimed: another process is running it
            return HELD_ELSEWHERE_SECONDS
        return min(seconds, self.recheck)
