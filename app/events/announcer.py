"""PostgreSQL: this process's commits told to the other processes, several at a time.

A transaction that sends `pg_notify` pays for it at its commit: PostgreSQL queues the
notification under one lock for the whole cluster, so notifying commits take turns, and
signals every listening backend, which passes it on to its process. One notification per
move is that cost per move, in the database and in every process that listens.

A serving process announces instead (`Hub.start` turns `Store.announces` off): after a
commit, its newest seq is sent by one `pg_notify` of its own; commits made while one is on
its way, or within `ANNOUNCE_SECONDS` after it, are told together by the next. The
notification is only a wake-up: a listener reads the log itself, up to its safe bound
(the log's repository, `Events`), whatever seq it was told. Other processes therefore
hear of a commit at most `ANNOUNCE_SECONDS` and a round trip later than before. If an
announcement is lost (the database away, the process killed between its commit and its
announcement), the listeners' poll finds the events (`Hub.poll_seconds`).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging

from app.storage.outage import quietly
from app.storage.store import Store

log = logging.getLogger(__name__)

ANNOUNCE_SECONDS = 0.005  # the shortest gap between two announcements
RETRY_SECONDS = 0.25  # after a failed announcement
LAST_SECONDS = 1.0  # how long stopping waits for the last announcement


class Announcer:
    def __init__(self, store: Store) -> None:
        self.store = store
        self.wanted = 0  # the newest seq committed here
        self.told = 0  # the newest seq announced
        self._wake = asyncio.Event()
        self._task: asyncio.Task[None] | None = None

    def start(self) -> None:
        self.store.commit_listeners.append(self.committed)
        self.store.announces = False
        self._task = asyncio.create_task(self._run(), name="prickle-announce")

    async def stop(self) -> None:
        """Stop announcing: later commits announce themselves again, and what was committed
        here but not yet told is told now (if the database answers within LAST_SECONDS)."""
        self.store.announces = True
        with contextlib.suppress(ValueError):
            self.store.commit_listeners.remove(self.committed)
        if self._task is not None:
            self._task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._task
        if self.told < self.wanted:
            with contextlib.suppress(Exception):
                async with asyncio.timeout(LAST_SECONDS):
                    await self._announce()

    def committed(self, seq: int) -> None:
        """A commit listener (`Store.commit_listeners`): `seq` is this process's to tell."""
        if seq > self.wanted:
            self.wanted = seq
            self._wake.set()

    async def _run(self) -> None:
        while True:
            await self._wake.wait()
            self._wake.clear()
            while self.told < self.wanted:
                try:
                    await self._announce()
                except asyncio.CancelledError:
                    raise
                except Exception as error:  # the database may be briefly away
                    what = f"announcing seq {self.wanted} failed; retrying in {RETRY_SECONDS}s"
                    quietly(log, what, error)
                    await asyncio.sleep(RETRY_SECONDS)
                    continue
                await asyncio.sleep(ANNOUNCE_SECONDS)  # commits meanwhile go with the next

    async def _announce(self) -> None:
        seq = self.wanted
        async with self.store.write(alone=True) as tx:
            await tx.events.announce(seq)
        self.told = max(self.told, seq)
