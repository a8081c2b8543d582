"""Webhook delivery: runs inside `prickle serve`, in every worker process.

Each webhook is a durable reader of the event log (`DurableReader`). One
process at a time delivers it: the one holding its lease (`leased_by`, `lease_until` on its
row), claimed in a transaction (on PostgreSQL with FOR UPDATE SKIP LOCKED) and renewed every
third of the lease while held. When that process dies, another one (or the restarted one)
claims the webhook once the lease has run out and continues from its cursor.

Each held webhook has a task of its own here: it reads the events after its cursor, keeps
those its owner may see now and its filters match, and POSTs them one by one, the next only
after a 2xx. The 2xx answers are written together (`_settle`: the attempts and the cursor
past them, in one transaction): at the end of each batch, before a failure is written, at
least every SETTLE_SECONDS, and when the server stops; after a crash, those answered since
the last write are sent again (same `webhook-id`).
A failure is retried after the backoff (5 s, 30 s, 2 min, 10 min, 1 h, then hourly), with
the same `webhook-id`; after GIVE_UP_SECONDS of failures the webhook is disabled with a
reason. Every write is conditional on still holding the lease. A failing endpoint only
delays its own webhook: at most `concurrency` requests are in flight in a process, and a
webhook waiting for its next attempt holds none.

The hub wakes the tasks when events commit (here, or in another process through its LISTEN
connection); webhooks made or enabled in this process wake the claiming loop at once, and it
also looks for unclaimed webhooks every third of the lease.
"""

from __future__ import annotations

import asyncio
import contextlib
import time
from collections.abc import Callable, Container, Mapping
from dataclasses import dataclass, replace
from datetime import datetime, timedelta

import httpx

from app import settings
from app.domain.clock import now, rfc3339
from app.domain.events import Event
from app.domain.principals import Principal
from app.domain.task import Task
from app.domain.webhooks import (
    Delivery,
    Webhook,
    backoff,
    body_of,
    message_id,
    sign,
    wanted,
)
from app.events.stream import task_of
from app.service.durable_reader import Clock, DurableReader, Leases
from app.service.webhook_urls import client
from app.service.webhooks import on_change
from app.storage.archive import log_after
from app.storage.store import Store
from app.storage.tx import Tx
from app.wakeups import woken

CONCURRENCY = 64  # requests in flight at once, per process
BATCH = 100  # events read at a time for one webhook
SETTLE_SECONDS = 0.5  # the longest 2xx answers wait to be written together
Body = Callable[[Event, Task, str, Principal], bytes]
"""A POST body of another payload than Prickle's: (event, task, timestamp, the webhook's
owner) → bytes (an A2A push notification's: app.main hands app/a2a's)."""
PUSH_TOKEN_HEADER = "x-a2a-notification-token"


@dataclass(frozen=True)
class Settings:
    backoff: tuple[float, ...] = settings.Settings.webhook_backoff
    give_up: float = settings.Settings.webhook_give_up_seconds
    lease: float = settings.Settings.webhook_lease_seconds
    timeout: float = settings.Settings.webhook_timeout_seconds  # one request, connecting included
    allow_private: bool = False
    concurrency: int = CONCURRENCY

    @classmethod
    def of(cls, configured: settings.Settings) -> Settings:
        """The server's: PRICKLE_WEBHOOK_* and --allow-private-webhooks (`app.settings`)."""
        return cls(
            backoff=configured.webhook_backoff,
            give_up=configured.webhook_give_up_seconds,
            lease=configured.webhook_lease_seconds,
            timeout=configured.webhook_timeout_seconds,
            allow_private=configured.allow_private_webhooks,
        )


@dataclass(frozen=True)
class Batch:
    """The events to send, each with the task as it is now, and the seq read up to."""

    events: list[Event]
    end: int
    members_version: int


class Deliverer(DurableReader):
    """Each webhook a durable reader of the log (`DurableReader`); its work,
    POSTing its events."""

    name = "webhooks"
    what = "webhooks"
    failed = "delivering webhook {} failed; another round will retry"

    def __init__(
        self,
        store: Store,
        settings: Settings,
        members_version: Callable[[], int] = lambda: 0,
        clock: Clock = now,
        bodies: Mapping[str, Body] | None = None,
    ) -> None:
        super().__init__(store, settings.lease, clock)
        self.bodies = dict(bodies or {})  # by webhook payload, beside Prickle's `task.event`
        self.settings = settings
        self.members_version = members_version  # moves when a project's members change
        self._slots = asyncio.Semaphore(settings.concurrency)
        self._http: httpx.AsyncClient | None = None

    def leases(self, tx: Tx) -> Leases:
        return tx.webhooks

    def watch(self) -> list[Callable[[], None]]:
        return [on_change(self.store, self.claim_now), self.store.health.on_back(self.back)]

    async def start(self) -> None:
        settings = self.settings
        self._http = client(settings.allow_private, settings.concurrency, settings.timeout)
        await super().start()

    async def stop(self) -> None:
        await super().stop()
        if self._http is not None:
            await self._http.aclose()
            self._http = None

    # one webhook

    async def work(self, webhook_id: str, wake: asyncio.Event) -> None:
        acknowledged: list[Delivery] = []  # 2xx answers not yet written (`_settle`)
        try:
            while not self._stopping.is_set():
                wake.clear()
                if not await self._round(webhook_id, acknowledged):
                    return
                await woken(wake, self.settings.lease / 3)
        except asyncio.CancelledError:
            with contextlib.suppress(Exception):  # stopping: what was answered is kept
                await self._settle(webhook_id, acknowledged)
            raise

    async def _round(self, webhook_id: str, acknowledged: list[Delivery]) -> bool:
        """Deliver what there is; False when this process no longer delivers the webhook.
        The 2xx answers are written together (`_settle`): at the end of each batch, before a
        failure is, and at least every SETTLE_SECONDS."""
        while True:
            webhook = await self._held(webhook_id)
            if webhook is None:
                return False
            if webhook.next_attempt_at is not None and not await self._until(
                webhook.next_attempt_at
            ):
                return False
            batch = await self._next(webhook)
            if batch.end == webhook.read_to:
                return True
            whole, settled_at = True, time.monotonic()
            for event in batch.events:
                if self.members_version() != batch.members_version:
                    whole = False  # judge the rest again with the memberships as they are now
                    break
                delivered = await self._deliver(webhook, event, acknowledged)
                if delivered is None:
                    return False
                webhook = delivered
                if time.monotonic() - settled_at >= SETTLE_SECONDS:
                    if not await self._settle(webhook.id, acknowledged):
                        return False
                    settled_at = time.monotonic()
            read_to = batch.end if whole and batch.end > webhook.read_to else None
            if not await self._settle(webhook.id, acknowledged, read_to):
                return False

    async def _held(self, webhook_id: str) -> Webhook | None:
        """The webhook, while it is enabled and its lease is this process's."""
        async with self.store.read() as tx:
            webhook = await tx.webhooks.get(webhook_id)
            holder = await tx.webhooks.holder(webhook_id)
        if webhook is None or not webhook.enabled or holder != self.holder:
            return None
        return webhook

    async def _until(self, moment: datetime) -> bool:
        """Wait until the moment; False when the server stops meanwhile."""
        seconds = (moment - self.clock()).total_seconds()
        if seconds > 0:
            await woken(self._stopping, seconds)
        return not self._stopping.is_set()

    async def _next(self, webhook: Webhook) -> Batch:
        """The next events after the webhook's cursor it is sent, judged now."""
        version = self.members_version()
        async with self.store.read() as tx:
            head = await tx.events.last_seq()
            read = await log_after(
                tx, webhook.read_to, BATCH, task_id=webhook.filters.task_id, upto=head
            )
            current = {t.id: t for t in await tx.tasks.get_many(sorted({e.task_id for e in read}))}
            member_of = await _projects(tx, webhook)
        end = read[-1].seq if len(read) == BATCH else max(head, read[-1].seq if read else 0)
        sent = [e for e in read if wanted(webhook, e, current.get(e.task_id), member_of)]
        return Batch(sent, max(end, webhook.read_to), version)

    async def _still_wanted(self, webhook: Webhook, event: Event) -> bool:
        async with self.store.read() as tx:
            found = await tx.tasks.get_many([event.task_id])
            member_of = await _projects(tx, webhook)
        return wanted(webhook, event, found[0] if found else None, member_of)

    async def _deliver(
        self, webhook: Webhook, event: Event, acknowledged: list[Delivery]
    ) -> Webhook | None:
        """POST the event until a 2xx, which joins `acknowledged`; the webhook as it is then
        (its cursor past the event), or None when this process no longer delivers it
        (disabled, deleted, its lease lost, the server stopping)."""
        while True:
            attempt = webhook.failures + 1
            status, error, duration = await self._post(webhook, event)
            at = self.clock()
            delivery = Delivery(0, webhook.id, event.cursor, attempt, status, error, duration, at)
            if error is None:
                acknowledged.append(delivery)
                return _recovered(replace(webhook, last_cursor=event.seq), event.seq)
            if not await self._settle(webhook.id, acknowledged):  # they come before it
                return None
            since = webhook.failing_since or at
            failed = {
                "failures": attempt,
                "failing_since": rfc3339(since),
                "last_error": error,
            }
            if (at - since).total_seconds() >= self.settings.give_up:
                reason = f"no 2xx since {rfc3339(since)}; the last attempt: {error}"
                disabled = {"enabled": False, "disabled_reason": reason, "next_attempt_at": None}
                await self._record(webhook, delivery, {**failed, **disabled})
                await self.release(webhook.id)
                return None
            retry_at = at + timedelta(seconds=backoff(attempt, self.settings.backoff))
            failed["next_attempt_at"] = rfc3339(retry_at)
            if not await self._record(webhook, delivery, failed):
                return None
            if not await self._until(retry_at):
                return None
            fresh = await self._held(webhook.id)  # its secret may have been rotated
            if fresh is None:
                return None
            webhook = fresh
            if not await self._still_wanted(webhook, event):  # not sent: the cursor moves on
                async with self.store.write() as tx:
                    moved = await tx.webhooks.change_held(
                        webhook.id, self.holder, read_to=event.seq, **_RECOVERED
                    )
                return _recovered(webhook, event.seq) if moved else None

    async def _record(
        self, webhook: Webhook, delivery: Delivery, values: Mapping[str, object]
    ) -> bool:
        async with self.store.write() as tx:
            if not await tx.webhooks.change_held(webhook.id, self.holder, **values):
                return False
            await tx.webhooks.record(webhook.id, [delivery])
        return True

    async def _settle(
        self, webhook_id: str, acknowledged: list[Delivery], read_to: int | None = None
    ) -> bool:
        """Write the acknowledged attempts and move the cursor past them (and on to
        `read_to`, the end of a batch whose other events were not for this webhook), in one
        transaction, if this process still holds the lease; whether it does. Taken off the
        list first: if the write fails, their events are sent again (same `webhook-id`)."""
        taken = acknowledged[:]
        acknowledged.clear()
        values: dict[str, object] = {}
        if taken:
            last = int(taken[-1].event_cursor)
            values = {"last_cursor": last, "read_to": max(last, read_to or 0), **_RECOVERED}
        elif read_to is not None:
            values = {"read_to": read_to}
        if not values:
            return True
        async with self.store.write() as tx:
            if not await tx.webhooks.change_held(webhook_id, self.holder, **values):
                return False
            await tx.webhooks.record(webhook_id, taken)
        return True

    async def _post(self, webhook: Webhook, event: Event) -> tuple[int | None, str | None, int]:
        """One attempt: the status (None without an answer), the error (None for a 2xx), and
        how long it took in milliseconds."""
        assert self._http is not None
        msg_id = message_id(webhook.id, event.seq)
        stamp = int(time.time())
        shape = self.bodies.get(webhook.payload)
        task, moment = task_of(event), rfc3339(self.clock())
        body = shape(event, task, moment, webhook.owner) if shape else body_of(event, task, moment)
        headers = {
            "content-type": "application/json",
            "webhook-id": msg_id,
            "webhook-timestamp": str(stamp),
            "webhook-signature": sign(webhook.secret, msg_id, stamp, body),
        }
        if webhook.push_token is not None:
            headers[PUSH_TOKEN_HEADER] = webhook.push_token
        if webhook.push_auth is not None:  # an A2A push config's authentication
            headers["authorization"] = webhook.push_auth
        async with self._slots:
            started = time.monotonic()
            try:
                async with asyncio.timeout(self.settings.timeout):  # the whole request
                    response = await self._http.post(webhook.url, content=body, headers=headers)
                status: int | None = response.status_code
                error = None if 200 <= response.status_code < 300 else f"HTTP {status}"
            except TimeoutError:
                status, error = None, f"no answer within {self.settings.timeout:g} s"
            except httpx.HTTPError as failure:
                status, error = None, f"{type(failure).__name__}: {failure}"[:500]
            except Exception as failure:  # e.g. the address refused at connect time
                status, error = None, f"{type(failure).__name__}: {failure}"[:500]
            duration = int((time.monotonic() - started) * 1000)
        return status, error, duration


_RECOVERED = {"failures": 0, "failing_since": None, "next_attempt_at": None}


def _recovered(webhook: Webhook, read_to: int) -> Webhook:
    """The webhook past the event at `read_to`, its failures forgotten."""
    return replace(webhook, read_to=read_to, failures=0, failing_since=None, next_attempt_at=None)


async def _projects(tx: Tx, webhook: Webhook) -> Container[str]:
    if not webhook.owner.is_person:
        return ()
    return set(await tx.projects.projects_of(webhook.owner.id))
