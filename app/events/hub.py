"""The hub: tails the event log in seq order and hands each event to matching subscribers.

Writers in this process wake it after their commit; on PostgreSQL, a LISTEN connection
(`Listener`) wakes it for commits made by other processes (which their hubs
announce: `Announcer`); a slow poll covers anything missed. The hub
never skips a seq: it reads the log itself, only up to the bound below which nothing can
still commit (the log's repository, `Events`; docs/events.md).

The hub also hears of tokens revoked by other processes and tells `revocation_listeners`
(the service's `Credentials`): on PostgreSQL by a second channel on the same LISTEN
connection, `prickle_tokens`, whose payload is the revoked ids; after a reconnection, when
some may have been missed, with None. On SQLite the only other process that revokes is
`prickle token revoke`; a poll of the revocation count notices it (None as well).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Callable
from dataclasses import dataclass, field

from sqlalchemy.engine import make_url

from app.domain.errors import PrickleError
from app.domain.events import Event
from app.events.announcer import Announcer
from app.events.listener import Listener
from app.events.members import Memberships
from app.storage.outage import quietly
from app.storage.repositories.events import NOTIFY_CHANNEL
from app.storage.repositories.projects import MEMBERS_CHANNEL
from app.storage.repositories.tokens import TOKENS_CHANNEL
from app.storage.store import Store
from app.wakeups import woken

log = logging.getLogger(__name__)

RETRY_SECONDS = 0.25  # after a failed read of the log (the database away)
# without LISTEN (behind a pooler, no direct URL): how often the log is read for other
# processes' commits, revoked tokens and membership changes
POLL_WITHOUT_LISTEN_SECONDS = 0.25

BATCH = 1000


class FellBehind(PrickleError):
    """The subscriber's queue filled up; it resumes from its last cursor (`after`)."""

    def __init__(self, after: int | None = None) -> None:
        resume = f'with after: "{after}"' if after is not None else "from the last cursor"
        super().__init__(f"the subscriber fell too far behind; resume {resume}")
        self.after = after


@dataclass(eq=False)
class Subscriber:
    """A subscriber's queue of events, at most `limit` long. On overflow (or when the hub
    stops) a final None is queued: the reader drains what came before it, then gets
    FellBehind. Waiting is a plain `queue.get()`, with no extra task per subscriber."""

    wants: Callable[[Event], bool]
    start: int  # the hub's head when it registered: later events arrive by queue
    limit: int = 1000
    queue: asyncio.Queue[Event | None] = field(default_factory=asyncio.Queue)
    overflowed: bool = False

    def offer(self, event: Event) -> None:
        if self.overflowed or not self.wants(event):
            return
        if self.queue.qsize() >= self.limit:
            self.close()
        else:
            self.queue.put_nowait(event)

    def close(self) -> None:
        if not self.overflowed:
            self.overflowed = True
            self.queue.put_nowait(None)

    def drain(self, most: int) -> list[Event]:
        """Up to `most` events already queued, without waiting (the final None stays, for
        the next `next()` to report)."""
        out: list[Event] = []
        while len(out) < most and not self.queue.empty():
            event = self.queue.get_nowait()
            if event is None:
                self.queue.put_nowait(None)
                break
            out.append(event)
        return out

    async def next(self) -> Event:
        event = await self.queue.get()
        if event is None:
            self.queue.put_nowait(None)  # a later call falls behind too
            raise FellBehind()
        return event


class Hub:
    def __init__(self, store: Store, queue_size: int = 1000, poll_seconds: float = 1.0) -> None:
        self.store = store
        self.queue_size = queue_size
        self.poll_seconds = poll_seconds
        self.head = 0
        self.committed = 0  # the newest seq a commit or a notification announced
        self._unsure = False  # woken without a seq (a reconnection): ask the log
        self.subscribers: set[Subscriber] = set()
        self._wake = asyncio.Event()
        self._task: asyncio.Task[None] | None = None
        self.listener: Listener | None = None  # PostgreSQL: other processes' commits
        self.revocation_listeners: list[Callable[[frozenset[str] | None], None]] = []
        self.wake_listeners: list[Callable[[int], None]] = []  # told of each commit it hears of
        self._revocations: asyncio.Task[None] | None = None
        self._forget_back: Callable[[], None] | None = None
        # project memberships of live subscribers, re-read only when a membership changed
        self.memberships = Memberships(store)
        # PostgreSQL: this process's commits told to the other processes
        self.announcer = Announcer(store)

    async def start(self) -> None:
        async with self.store.read() as tx:
            self.head = await tx.events.last_seq()
        self.store.commit_listeners.append(self.wake)
        self.store.member_listeners.append(self.memberships.changed)
        self._forget_back = self.store.health.on_back(self._database_back)
        if not self.store.sqlite:
            self.announcer.start()
        if self.store.listen_url is not None:
            self.listener = self._listener(self.store.listen_url)
            await self.listener.start()
        else:
            if not self.store.sqlite:
                self._without_listen()
            self._revocations = asyncio.create_task(
                self._poll_revocations(), name="prickle-revocations"
            )
        self._task = asyncio.create_task(self._tail(), name="prickle-event-hub")

    def _without_listen(self) -> None:
        """Behind a pooler with no direct URL: other processes' commits, revoked tokens and
        membership changes are read from the database every POLL_WITHOUT_LISTEN_SECONDS."""
        self.poll_seconds = min(self.poll_seconds, POLL_WITHOUT_LISTEN_SECONDS)
        log.warning(
            "LISTEN is unavailable (the database URL is a pooler and no "
            "--database-direct-url is set): other processes' events, revoked tokens and "
            "membership changes are read by polling the log every %.2fs",
            self.poll_seconds,
        )

    async def stop(self) -> None:
        if not self.store.sqlite:
            await self.announcer.stop()
        with contextlib.suppress(ValueError):
            self.store.commit_listeners.remove(self.wake)
        with contextlib.suppress(ValueError):
            self.store.member_listeners.remove(self.memberships.changed)
        if self._forget_back is not None:
            self._forget_back()
        for task in (self._revocations, self._task):
            if task is not None:
                task.cancel()
                with contextlib.suppress(asyncio.CancelledError):
                    await task
        if self.listener is not None:
            await self.listener.stop()
        for sub in list(self.subscribers):
            sub.close()
        self.subscribers.clear()

    def wake(self, seq: int = 0) -> None:
        self.committed = max(self.committed, seq)
        self._unsure = self._unsure or not seq
        self._wake.set()
        for listener in self.wake_listeners:
            listener(seq)

    def memberships_version(self) -> int:
        """Moves whenever a project's members change (here, or in another process)."""
        return self.memberships.version

    async def subscribe(self, wants: Callable[[Event], bool]) -> Subscriber:
        if not self.subscribers:  # the head moved without reading while nobody listened
            await self._settle_head()
        sub = Subscriber(wants, self.head, self.queue_size)
        self.subscribers.add(sub)
        return sub

    async def _settle_head(self) -> None:
        """Before the first subscriber: on SQLite the announced seq is where the log is
        complete; on PostgreSQL a lower seq may still be in flight, so the head is the safe
        bound, read now (it may be below the announced seq the idle head had moved to)."""
        if self.store.sqlite:
            self.head = max(self.head, self.committed)
            return
        async with self.store.read() as tx:
            safe = await tx.events.last_seq()
        if not self.subscribers:
            self.head = safe

    def unsubscribe(self, sub: Subscriber) -> None:
        self.subscribers.discard(sub)

    async def _tail(self) -> None:
        while True:
            if not await woken(self._wake, self.poll_seconds):
                self._unsure = True
                if self.listener is None and not self.store.sqlite:
                    self.memberships.changed()  # another process's change goes unheard
            self._wake.clear()
            try:
                if self.subscribers:
                    await self._catch_up()
                else:
                    await self._skip()
            except asyncio.CancelledError:
                raise
            except Exception as error:  # the database may be away; the next wake retries
                quietly(log, "reading the event log failed", error)
                await asyncio.sleep(RETRY_SECONDS)

    async def _catch_up(self) -> None:
        while True:
            async with self.store.read() as tx:
                batch = await tx.events.after(self.head, BATCH)
            if batch:
                await self.memberships.refresh()
            for event in batch:
                self.head = event.seq
                for sub in list(self.subscribers):
                    sub.offer(event)
                    if sub.overflowed:  # it gets nothing more: let go of it now
                        self.subscribers.discard(sub)
            if len(batch) < BATCH:
                return

    async def _skip(self) -> None:
        """With nobody subscribed, move the head to the newest committed seq without reading
        the events: to the one announced, or after a poll or a reconnection (either may
        follow a missed announcement) to the log's. On PostgreSQL the announced seq may have
        lower ones still in flight: the first subscriber settles the head (`subscribe`).
        With a read replica the log's bound is proven at every wake all the same: a
        standby's reads of the log go as far as the bounds proven here (storage's `Replica`)."""
        if self._unsure or self.store.replica is not None:
            async with self.store.read() as tx:
                self.committed = max(self.committed, await tx.events.last_seq())
            self._unsure = False
        if not self.subscribers:  # one may have come meanwhile: then its events are read
            self.head = max(self.head, self.committed)

    def _listener(self, listen_url: str) -> Listener:
        """The LISTEN connection's: commits, revoked tokens and membership changes of other
        processes. Whatever it may have missed while away is asked for again."""
        url = make_url(listen_url).set(drivername="postgresql")
        channels = {
            NOTIFY_CHANNEL: self._notified,
            TOKENS_CHANNEL: self._tokens_notified,
            MEMBERS_CHANNEL: self.memberships.notified,
        }
        return Listener(
            url.render_as_string(hide_password=False),
            channels,
            opened=self.memberships.changed,  # a change may have gone unheard meanwhile
            reopened=self._heard_again,
        )

    def _database_back(self) -> None:
        """After an outage: read the log now, and reopen LISTEN now if it is still away."""
        if self.listener is not None:
            self.listener.retry_now()
        self._heard_again()

    def _heard_again(self) -> None:
        """After a reconnection: commits and revocations announced meanwhile were not heard
        (the poll read the commits; the hub asks the log again)."""
        self.wake()
        self._revoked(None)

    def _notified(self, _conn: object, _pid: int, _channel: str, payload: object) -> None:
        self.wake(int(payload) if isinstance(payload, str) and payload.isdigit() else 0)

    def _tokens_notified(self, _conn: object, _pid: int, _channel: str, payload: object) -> None:
        text = payload if isinstance(payload, str) else ""
        self._revoked(frozenset(i for i in text.split(",") if i))

    def _revoked(self, token_ids: frozenset[str] | None) -> None:
        for listener in list(self.revocation_listeners):
            try:
                listener(token_ids)
            except Exception:
                log.exception("a revocation listener failed")

    async def _poll_revocations(self) -> None:
        """SQLite, and PostgreSQL without LISTEN: when the count of revoked tokens changes,
        some were revoked (perhaps by `prickle token revoke`, which has no other way to tell
        this process)."""
        seen: int | None = None
        while True:
            try:
                async with self.store.read() as tx:
                    count = await tx.tokens.revoked_count()
                if seen is not None and count != seen:
                    self._revoked(None)
                seen = count
            except asyncio.CancelledError:
                raise
            except Exception as error:  # the database may be away; the next poll retries
                quietly(log, "reading the revocation count failed", error)
            await asyncio.sleep(self.poll_seconds)
