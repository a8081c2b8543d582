"""The webhooks' storage: one holder per lease, and the last 1,000 attempts kept."""

from __future__ import annotations

from datetime import timedelta

from app.domain.clock import now
from app.domain.principals import person
from app.domain.webhooks import Delivery, Webhook, WebhookFilters, new_secret
from app.storage.store import Store


def webhook(webhook_id: str) -> Webhook:
    return Webhook(
        id=webhook_id,
        owner=person("alice"),
        url="http://127.0.0.1/hook",
        filters=WebhookFilters(),
        description=None,
        secret=new_secret(),
        enabled=True,
        disabled_reason=None,
        last_cursor=0,
        read_to=0,
        last_error=None,
        failures=0,
        failing_since=None,
        next_attempt_at=None,
        created_at=now(),
    )


async def test_a_lease_has_one_holder_until_it_runs_out(store: Store) -> None:
    at = now()
    async with store.write() as tx:
        await tx.webhooks.insert(webhook("W1"))
        assert await tx.webhooks.claim("one", at, at + timedelta(seconds=10), 10) == ["W1"]
        assert await tx.webhooks.claim("two", at, at + timedelta(seconds=10), 10) == []
        assert not await tx.webhooks.change_held("W1", "two", read_to=5)
        assert await tx.webhooks.change_held("W1", "one", read_to=5)
    later = at + timedelta(seconds=11)
    async with store.write() as tx:
        assert await tx.webhooks.claim("two", later, later + timedelta(seconds=10), 10) == ["W1"]
        assert await tx.webhooks.renew("one", later) == set()  # "one" lost it
        assert await tx.webhooks.renew("two", later) == {"W1"}
        assert (await tx.webhooks.get("W1")).read_to == 5  # type: ignore[union-attr]


async def test_only_the_last_thousand_attempts_are_kept(store: Store) -> None:
    async with store.write() as tx:
        await tx.webhooks.insert(webhook("W1"))
        for seq in range(1, 1006):
            await tx.webhooks.record("W1", [Delivery(0, "W1", str(seq), 1, 200, None, 1, now())])
        kept = await tx.webhooks.deliveries("W1", 2000, None)
    assert [d.event_cursor for d in kept] == [str(s) for s in range(6, 1006)]
