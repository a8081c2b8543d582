"""Webhooks, their delivery attempts, and the lease of the process delivering each
(`Leases`: an enabled webhook is claimed when its lease is free or
expired). Every change that process makes to a webhook's cursor is conditional on still
holding the lease: a process that lost its lease changes nothing.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime
from typing import Any

from sqlalchemy import BigInteger, Select, bindparam, delete, func, insert, select, update

from app.domain.clock import parse_rfc3339, rfc3339
from app.domain.principals import Principal
from app.domain.webhooks import Delivery, Webhook, WebhookFilters
from app.storage.repositories.base import Repository
from app.storage.repositories.leases import Leases
from app.storage.tables import WebhookDeliveryRow, WebhookRow, table_of

webhooks = table_of(WebhookRow)
webhook_deliveries = table_of(WebhookDeliveryRow)

KEPT_DELIVERIES = 1000

_BY_ID = select(webhooks).where(webhooks.c.id == bindparam("webhook_id"))
_BEHIND = bindparam("last_seq", type_=BigInteger) - webhooks.c.last_cursor
_BACKLOG: Select[int] = select(func.coalesce(func.sum(_BEHIND), 0)).where(webhooks.c.enabled)
_LEASES = Leases(webhooks, "id", webhooks.c.enabled.is_(True))
_HELD = _LEASES.held(bindparam("webhook_id"), bindparam("holder"))
_OLDEST_KEPT = (
    select(webhook_deliveries.c.id)
    .where(webhook_deliveries.c.webhook_id == bindparam("webhook_id"))
    .order_by(webhook_deliveries.c.id.desc())
    .offset(KEPT_DELIVERIES - 1)
    .limit(1)
)


def _moment(text: str | None) -> datetime | None:
    return None if text is None else parse_rfc3339(text)


def webhook_from_row(row: Any) -> Webhook:
    m = row._mapping
    kinds = m["kinds"]
    return Webhook(
        id=m["id"],
        owner=Principal(m["owner_kind"], m["owner"]),
        url=m["url"],
        filters=WebhookFilters(
            m["project"], m["task_id"], m["assignee"], None if kinds is None else tuple(kinds)
        ),
        description=m["description"],
        secret=m["secret"],
        enabled=m["enabled"],
        disabled_reason=m["disabled_reason"],
        last_cursor=m["last_cursor"],
        read_to=m["read_to"],
        last_error=m["last_error"],
        failures=m["failures"],
        failing_since=_moment(m["failing_since"]),
        next_attempt_at=_moment(m["next_attempt_at"]),
        created_at=parse_rfc3339(m["created_at"]),
        payload=m["payload"],
        push_token=m["push_token"],
        push_auth=m["push_auth"],
    )


def delivery_from_row(row: Any) -> Delivery:
    m = row._mapping
    return Delivery(
        id=m["id"],
        webhook_id=m["webhook_id"],
        event_cursor=str(m["event_cursor"]),
        attempt=m["attempt"],
        status_code=m["status_code"],
        error=m["error"],
        duration_ms=m["duration_ms"],
        at=parse_rfc3339(m["at"]),
    )


class Webhooks(Repository):
    __slots__ = ()

    async def backlog(self, last_seq: int) -> int:
        """Events after each enabled webhook's last delivered one, summed: what delivery has
        still to send or judge (an upper bound: some may not match a webhook's filters)."""
        found = await self.tx.one(_BACKLOG, {"last_seq": last_seq})
        return int(found[0]) if found else 0

    async def insert(self, webhook: Webhook) -> None:
        f = webhook.filters
        values = {
            "id": webhook.id,
            "owner": webhook.owner.id,
            "owner_kind": webhook.owner.kind,
            "url": webhook.url,
            "project": f.project,
            "task_id": f.task_id,
            "assignee": f.assignee,
            "kinds": None if f.kinds is None else list(f.kinds),
            "description": webhook.description,
            "secret": webhook.secret,
            "enabled": webhook.enabled,
            "disabled_reason": webhook.disabled_reason,
            "last_cursor": webhook.last_cursor,
            "read_to": webhook.read_to,
            "last_error": None,
            "failures": 0,
            "created_at": rfc3339(webhook.created_at),
            "payload": webhook.payload,
            "push_token": webhook.push_token,
            "push_auth": webhook.push_auth,
        }
        await self.tx.conn.execute(insert(webhooks).values(**values))

    async def get(self, webhook_id: str) -> Webhook | None:
        row = await self.tx.one(_BY_ID, {"webhook_id": webhook_id})
        return webhook_from_row(row) if row else None

    async def of(self, owner: Principal) -> list[Webhook]:
        stmt = select(webhooks).where(webhooks.c.owner == owner.id).order_by(webhooks.c.id)
        return [webhook_from_row(r) for r in await self.tx.rows(stmt)]

    async def delete(self, webhook_id: str) -> bool:
        params = {"webhook_id": webhook_id}
        where = webhook_deliveries.c.webhook_id == bindparam("webhook_id")
        await self.tx.conn.execute(delete(webhook_deliveries).where(where), params)
        done = await self.tx.conn.execute(
            delete(webhooks).where(webhooks.c.id == bindparam("webhook_id")), params
        )
        return bool(done.rowcount)

    async def change(self, webhook_id: str, **values: Any) -> None:
        """Set columns of the webhook, whoever holds its lease (the owner's verbs)."""
        stmt = update(webhooks).where(webhooks.c.id == webhook_id).values(**values)
        await self.tx.conn.execute(stmt)

    async def change_held(self, webhook_id: str, holder: str, **values: Any) -> bool:
        """Set columns of the webhook if `holder` still holds its lease; whether it did."""
        stmt = update(webhooks).where(*_HELD).values(**values)
        done = await self.tx.conn.execute(stmt, {"webhook_id": webhook_id, "holder": holder})
        return bool(done.rowcount)

    async def claim(self, holder: str, now: datetime, until: datetime, limit: int) -> list[str]:
        """Claim up to `limit` enabled webhooks whose lease is free or expired, for `holder`
        until `until`; their ids."""
        return await _LEASES.claim(self.tx, holder, now, until, limit)

    async def renew(self, holder: str, until: datetime) -> set[str]:
        """Extend every lease `holder` still holds; the ids of those webhooks."""
        return await _LEASES.renew(self.tx, holder, until)

    async def holder(self, webhook_id: str) -> str | None:
        """The id of the process holding the webhook's lease (None: nobody)."""
        row = await self.tx.one(select(webhooks.c.leased_by).where(webhooks.c.id == webhook_id))
        return None if row is None else row[0]

    async def release_all(self, holder: str) -> None:
        await _LEASES.release_all(self.tx, holder)

    async def release(self, webhook_id: str, holder: str) -> None:
        await _LEASES.release(self.tx, webhook_id, holder)

    async def record(self, webhook_id: str, deliveries: Sequence[Delivery]) -> None:
        """Add the webhook's attempts, in order; keep its last KEPT_DELIVERIES."""
        rows = [
            {
                "webhook_id": webhook_id,
                "event_cursor": int(delivery.event_cursor),
                "attempt": delivery.attempt,
                "status_code": delivery.status_code,
                "error": delivery.error,
                "duration_ms": delivery.duration_ms,
                "at": rfc3339(delivery.at),
            }
            for delivery in deliveries
        ]
        if not rows:
            return
        await self.tx.conn.execute(insert(webhook_deliveries), rows)
        oldest = await self.tx.one(_OLDEST_KEPT, {"webhook_id": webhook_id})
        if oldest is not None:
            stmt = delete(webhook_deliveries).where(
                webhook_deliveries.c.webhook_id == webhook_id,
                webhook_deliveries.c.id < oldest[0],
            )
            await self.tx.conn.execute(stmt)

    async def deliveries(self, webhook_id: str, first: int, after: int | None) -> list[Delivery]:
        """Up to `first` attempts, oldest first, after the attempt `after`."""
        stmt = select(webhook_deliveries).where(webhook_deliveries.c.webhook_id == webhook_id)
        if after is not None:
            stmt = stmt.where(webhook_deliveries.c.id > after)
        stmt = stmt.order_by(webhook_deliveries.c.id).limit(first)
        return [delivery_from_row(r) for r in await self.tx.rows(stmt)]
