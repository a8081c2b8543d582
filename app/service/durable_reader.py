"""A durable reader of the event log, kept once for every kind of row that reads it
(webhooks, remote A2A agents): each row is read by one process at a time, the one holding
its lease (storage's `Leases`), from its own cursor.

Here: claiming the free or expired leases (when told something changed, when the database
is back, and every third of the lease), renewing those held every third of the lease (a
row whose lease another process holds now has its work stopped at once), one task per row
held, woken when events commit, and the leases released when a row's work fails (another
round retries it) and when the server stops (another process continues at once). What a
row's work does with the log, its backoff and when it gives up, is the consumer's `work`.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import time
from collections.abc import Callable
from datetime import datetime, timedelta
from typing import Protocol

from app.domain.clock import new_id, now
from app.storage.outage import quietly
from app.storage.store import Store
from app.storage.tx import Tx
from app.wakeups import woken

log = logging.getLogger(__name__)

CLAIM_LIMIT = 100  # leases claimed in one transaction
STOP_SECONDS = 5.0

Clock = Callable[[], datetime]


class Leases(Protocol):
    """A repository's leases on its rows (`tx.webhooks`, `tx.remote_agents`)."""

    async def claim(self, holder: str, now: datetime, until: datetime, limit: int) -> list[str]: ...

    async def renew(self, holder: str, until: datetime) -> set[str]: ...

    async def release(self, row_id: str, holder: str) -> None: ...

    async def release_all(self, holder: str) -> None: ...


class DurableReader:
    """The leases and tasks of one kind of row; a consumer says which rows (`leases`),
    what reads the log for one of them (`work`), and what tells it to claim (`watch`)."""

    name = "reader"  # the asyncio tasks' names: prickle-NAME, prickle-NAME-ID
    what = "rows"  # in the log line of a failed claim
    failed = "reading the log for {} failed; another round will retry"  # a row's work's

    def __init__(self, store: Store, lease: float, clock: Clock = now) -> None:
        self.store = store
        self.lease = lease
        self.clock = clock
        # this process's name on the leases it holds: its pid, and an id unique to this run
        self.holder = f"{os.getpid()}-{new_id()}"
        self._workers: dict[str, asyncio.Task[None]] = {}
        self._wakes: dict[str, asyncio.Event] = {}
        self._claim = asyncio.Event()
        self._stopping = asyncio.Event()
        self._task: asyncio.Task[None] | None = None
        self._forget: list[Callable[[], None]] = []

    # what a consumer says

    def leases(self, tx: Tx) -> Leases:
        raise NotImplementedError

    async def work(self, row_id: str, wake: asyncio.Event) -> None:
        """Read the log for the row while this process holds its lease; `wake` is set when
        events commit."""
        raise NotImplementedError

    def watch(self) -> list[Callable[[], None]]:
        """Subscribe what makes this reader claim (`claim_now`); the ways to unsubscribe."""
        return []

    # running

    async def start(self) -> None:
        self._forget = self.watch()
        self._task = asyncio.create_task(self._supervise(), name=f"prickle-{self.name}")

    async def stop(self) -> None:
        for forget in self._forget:
            forget()
        self._forget = []
        self._stopping.set()
        tasks = [t for t in (self._task, *self._workers.values()) if t is not None]
        for task in tasks:
            task.cancel()
        for task in tasks:
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await asyncio.wait_for(task, STOP_SECONDS)
        self._task = None
        with contextlib.suppress(Exception):  # let another process continue at once
            async with self.store.write() as tx:
                await self.leases(tx).release_all(self.holder)

    def claim_now(self) -> None:
        """Rows were made or changed: claim at once."""
        self._claim.set()

    def back(self) -> None:
        """The database is back: claim, and every row held looks again, at once."""
        self._claim.set()
        self.wake()

    def wake(self, _seq: int = 0) -> None:
        """Events committed: every row read here looks for new ones."""
        for event in self._wakes.values():
            event.set()

    async def release(self, row_id: str) -> None:
        with contextlib.suppress(Exception):
            async with self.store.write() as tx:
                await self.leases(tx).release(row_id, self.holder)

    # claiming and renewing leases

    async def _supervise(self) -> None:
        every = self.lease / 3
        renewed_at = 0.0
        while not self._stopping.is_set():
            self._claim.clear()
            try:
                if time.monotonic() - renewed_at >= every:
                    await self._renew()
                    renewed_at = time.monotonic()
                await self._claim_free()
            except Exception as error:
                quietly(log, f"claiming {self.what} failed; trying again", error)
            await woken(self._claim, every)

    async def _renew(self) -> None:
        if not self._workers:
            return
        until = self.clock() + timedelta(seconds=self.lease)
        async with self.store.write() as tx:
            held = await self.leases(tx).renew(self.holder, until)
        for row_id, task in list(self._workers.items()):
            if row_id not in held:  # another process holds it now, or it was removed
                task.cancel()

    async def _claim_free(self) -> None:
        while not self._stopping.is_set():
            at = self.clock()
            until = at + timedelta(seconds=self.lease)
            async with self.store.write() as tx:
                ids = await self.leases(tx).claim(self.holder, at, until, CLAIM_LIMIT)
            for row_id in ids:
                if row_id not in self._workers:
                    self._wakes[row_id] = asyncio.Event()
                    self._workers[row_id] = asyncio.create_task(
                        self._run(row_id), name=f"prickle-{self.name}-{row_id}"
                    )
            if len(ids) < CLAIM_LIMIT:
                return

    async def _run(self, row_id: str) -> None:
        try:
            await self.work(row_id, self._wakes[row_id])
        except asyncio.CancelledError:
            raise
        except Exception as error:
            quietly(log, self.failed.format(row_id), error)
            await self.release(row_id)
        finally:
            self._workers.pop(row_id, None)
            self._wakes.pop(row_id, None)
